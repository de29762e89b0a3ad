#!/usr/bin/env python3
"""Deterministic fuzzer of `simcore calibrate`: the HDF5 traces it fits profiles from.

Each case takes one to three of the shipped traces (SOURCE/calibration/traces/*/*.h5, mostly of
one host), copies them into a temporary folder and changes one or two of them with h5py:

  attr       a root or benchmark attribute removed, or set to another text ("", "nan", "1e400",
             " 2", "0x10", a long one, ...) or type (a number, an array)
  dataset    a dataset removed, its values changed (nan, inf, 0, negative, 1e308, denormal, in
             one place or everywhere), its shape (empty, a row less or more, transposed,
             flattened, one dimension more, a scalar) or its type (float32, integers, booleans,
             strings, complex)
  unit       a dataset's unit removed or replaced
  group      a benchmark group renamed (to another benchmark's name or an unknown one), copied
             under another name, emptied, or given an unknown dataset
  order      sizes reversed or repeated
  file       the file cut short, bytes overwritten, emptied, or replaced by text
  args       a trace given twice

then runs

  1. simcore calibrate TRACES... -o profile.json
  2. if that exits 0: simcore validate SCENARIO --calibration profile.json (the halo scenario
     of two ranks on one node: a profile the fitter writes must be one the loader reads)

and checks the contract: a trace set is fitted (exit 0, a profile that parses) or refused with
exit code 2 and ONE stderr line 'simcore: error: WHERE: ... expected ...' where WHERE names a
trace file (or an option), leaving no profile behind. Anything else is flagged: signal, exit1,
timeout, exit2-no-location, exit2-no-expected, noise, left-file (a profile or a temporary file
after a refusal), bad-profile (exit 0 without a profile that parses), null-in-profile (a NaN
or infinity of a trace let through, which JSON writes as null; an undefined R^2 and a
stencil's unrecorded variables are null by design), profile-refused (the loader refused what the fitter wrote), other.

h5py from Debian (/usr/bin/python3); the same --seed gives the same cases (--dump DIR writes
their descriptions without running anything).

  /usr/bin/python3 tests/fuzz/trace_fuzz.py --bin build/bin/simcore --cases 300 --seed 1 --keep /tmp/tfuzz

Exit status: 0 when nothing was flagged, 1 otherwise (2 on bad usage).
"""

import collections
import concurrent.futures
import glob
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time

import h5py
import numpy as np

from fuzz_messages import failure_class, flagged_key, fuzzer_parser, run_command, stage_summaries, stages_report

FLAGGED = ["signal", "exit1", "timeout", "exit2-no-location", "exit2-no-expected", "noise", "left-file",
           "bad-profile", "null-in-profile", "profile-refused", "other"]
CLASSES = ["ok", "refused"] + FLAGGED
PROFILE = "profile.json"
LIVE, LIVE_LOCK = set(), threading.Lock()

TEXTS = ["", "nan", "inf", "-1", "0", "1e400", "abc", " 2", "2 ", "0x10", "1,2", "\u00e9t\u00e9", "x" * 5000,
         "2.5", "-0", "1e-320", "yes", "none", "0-3", ";"]
VALUES = [float("nan"), float("inf"), float("-inf"), 0.0, -1.0, 1e308, 5e-324, 1e20, -0.0, 1e-300]
UNITS = ["", "GB", "s", "Gflop/s", "1/s", "B", "Bps", "furlongs", "MB/s", "ns", "flop"]


# --------------------------------------------------------------------------------------------
# Changes, each applied to an open h5py.File (or to the file's bytes for the `file` kind)
# --------------------------------------------------------------------------------------------


def groups_of(f):
    return sorted(k for k in f.keys() if isinstance(f[k], h5py.Group))


def datasets_of(g):
    return sorted(k for k in g.keys() if isinstance(g[k], h5py.Dataset))


def pick_text(rng):
    return rng.choice(TEXTS)


def c_attr(f, rng, names):
    holder = f if rng.random() < 0.3 or not groups_of(f) else f[rng.choice(groups_of(f))]
    keys = sorted(holder.attrs.keys())
    if not keys:
        return "attr: none"
    key = rng.choice(keys)
    where = f"{holder.name}@{key}"
    r = rng.random()
    if r < 0.35:
        del holder.attrs[key]
        return f"attr {where} removed"
    if r < 0.8:
        v = pick_text(rng)
        holder.attrs[key] = v
        return f"attr {where} = {v[:20]!r}"
    v = rng.choice([7, 2.5, np.array([1.0, 2.0]), np.int64(-3)])
    holder.attrs[key] = v
    return f"attr {where} = {type(v).__name__} {v!r}"[:80]


def _dataset(f, rng):
    pairs = [(g, d) for g in groups_of(f) for d in datasets_of(f[g])]
    return rng.choice(pairs) if pairs else (None, None)


def _replace(group, name, data, unit=True):
    attrs = dict(group[name].attrs) if unit else {}
    del group[name]
    group.create_dataset(name, data=data)
    for k, v in attrs.items():
        group[name].attrs[k] = v


def c_dataset(f, rng, names):
    g, d = _dataset(f, rng)
    if g is None:
        return "dataset: none"
    group, ds = f[g], f[g][d]
    data = ds[()]
    where = f"{g}/{d}"
    r = rng.random()
    if r < 0.15:
        del group[d]
        return f"dataset {where} removed"
    if r < 0.55 and np.asarray(data).size and np.asarray(data).dtype.kind == "f":
        data = np.array(data, dtype=np.float64)
        v = rng.choice(VALUES)
        if rng.random() < 0.7:
            idx = tuple(rng.randrange(n) for n in data.shape)
            data[idx] = v
            label = f"dataset {where}{list(idx)} = {v!r}"
        else:
            data[...] = v
            label = f"dataset {where} all = {v!r}"
        _replace(group, d, data)
        return label
    if r < 0.85:
        data = np.asarray(data)
        shapes = ["empty", "row less", "row more", "transposed", "flat", "one more dimension", "scalar"]
        kind = rng.choice(shapes)
        if kind == "empty":
            new = data[:0]
        elif kind == "row less":
            new = data[:-1] if data.ndim and len(data) else data
        elif kind == "row more":
            new = np.concatenate([data, data[-1:]]) if data.ndim and len(data) else data
        elif kind == "transposed":
            new = data.T
        elif kind == "flat":
            new = data.reshape(-1)
        elif kind == "one more dimension":
            new = data.reshape(data.shape + (1,))
        else:
            new = np.float64(data.reshape(-1)[0]) if data.size else np.float64(1)
        _replace(group, d, new)
        return f"dataset {where} {kind} {data.shape}->{np.shape(new)}"
    types = ["float32", "int64", "int8", "bool", "strings", "complex"]
    kind = rng.choice(types)
    data = np.asarray(data)
    if kind == "strings":
        new = np.array([str(x).encode() for x in data.reshape(-1)] or [b""]).reshape(data.shape or (1,))
    elif kind == "complex":
        new = data.astype(np.complex128)
    else:
        with np.errstate(all="ignore"):
            new = np.nan_to_num(data).astype(kind)
    _replace(group, d, new)
    return f"dataset {where} as {kind}"


def c_unit(f, rng, names):
    g, d = _dataset(f, rng)
    if g is None:
        return "unit: none"
    ds = f[g][d]
    if "unit" in ds.attrs and rng.random() < 0.3:
        del ds.attrs["unit"]
        return f"unit {g}/{d} removed"
    v = rng.choice(UNITS + [1])
    ds.attrs["unit"] = v
    return f"unit {g}/{d} = {v!r}"


def c_group(f, rng, names):
    gs = groups_of(f)
    if not gs:
        return "group: none"
    g = rng.choice(gs)
    r = rng.random()
    if r < 0.3:
        new = rng.choice([n for n in names if n not in gs] + ["pingpng", "Stream", "extra"])
        f.move(g, new)
        return f"group {g} renamed {new}"
    if r < 0.55:
        new = rng.choice([n for n in names if n not in gs] + ["copy"])
        f.copy(g, new)
        return f"group {g} copied as {new}"
    if r < 0.75:
        for d in list(f[g].keys()):
            del f[g][d]
        return f"group {g} emptied"
    f[g].create_dataset(rng.choice(["zzz", "size", "extra"]) + "_x", data=np.arange(3.0))
    return f"group {g} with an unknown dataset"


def c_order(f, rng, names):
    cands = [(g, d) for g in groups_of(f) for d in datasets_of(f[g])
             if d in ("size", "bytes", "cells", "threads", "chains", "lengths") and f[g][d].ndim == 1 and f[g][d].shape[0] > 1]
    if not cands:
        return "order: none"
    g, d = rng.choice(cands)
    data = np.array(f[g][d][()])
    if rng.random() < 0.5:
        data = data[::-1].copy()
        label = "reversed"
    else:
        data[1] = data[0]
        label = "first repeated"
    _replace(f[g], d, data)
    return f"order {g}/{d} {label}"


CHANGES = [(c_attr, 3), (c_dataset, 5), (c_unit, 2), (c_group, 2), (c_order, 1)]


def change_bytes(data, rng):
    if not data:
        return data, "file already empty"
    r = rng.random()
    if r < 0.4:
        n = rng.randrange(len(data))
        return data[:n], f"file cut at {n} of {len(data)} bytes"
    if r < 0.7:
        at = rng.randrange(len(data))
        n = rng.choice([1, 8, 64, 512])
        return data[:at] + bytes(rng.randrange(256) for _ in range(n)) + data[at + n:], f"file: {n} bytes overwritten at {at}"
    if r < 0.85:
        return b"", "file emptied"
    return b"{\"schema\": \"not hdf5\"}\n", "file replaced by text"


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def make_case(n, seeds, seed):
    """A case: the traces it starts from and, for one or two of them, the changes to make,
    each drawn by a generator of its own (the same seed gives the same case)."""
    rng = random.Random(f"trace-fuzz:{seed}:{n}")
    folder = rng.choice(sorted(seeds))
    pool = seeds[folder] if rng.random() < 0.85 else sorted(p for ps in seeds.values() for p in ps)
    picked = rng.sample(pool, min(len(pool), rng.choice([1, 1, 2, 3])))
    changes = []
    for _ in range(rng.choice([1, 1, 2])):
        target = rng.randrange(len(picked))
        kind = "file" if rng.random() < 0.08 else "h5"
        changes.append((target, kind, rng.randrange(2**31)))
    twice = rng.random() < 0.03
    return {"n": n, "traces": picked, "changes": changes, "twice": twice}


def build_case(case, d, names):
    """Writes the case's traces into `d`; returns (file names, labels)."""
    files, labels = [], []
    for i, src in enumerate(case["traces"]):
        name = f"t{i}.h5"
        shutil.copy(src, os.path.join(d, name))
        files.append(name)
    for target, kind, seed in case["changes"]:
        rng = random.Random(seed)
        path = os.path.join(d, files[target])
        if kind == "file":
            with open(path, "rb") as fh:
                data = fh.read()
            data, label = change_bytes(data, rng)
            with open(path, "wb") as fh:
                fh.write(data)
        else:
            try:
                with h5py.File(path, "r+") as f:
                    fn = rng.choices([c for c, _ in CHANGES], weights=[w for _, w in CHANGES])[0]
                    label = fn(f, rng, names)
            except Exception as e:  # an earlier change damaged the file: h5py's errors are of many kinds
                label = f"h5 change skipped ({type(e).__name__})"
        labels.append(f"{files[target]}: {label}")
    if case["twice"]:
        files.append(files[0])
        labels.append(f"{files[0]} given twice")
    return files, labels


# --------------------------------------------------------------------------------------------
# Running and classifying
# --------------------------------------------------------------------------------------------

PREFIX = "simcore: error: "


# Nulls by design: an undefined R^2 (every sample did the same work), a stencil trace's
# variables where the trace does not say.
NULL_BY_DESIGN = {"r2", "variables"}


def nulls(value, key=""):
    """Keys of the nulls in a profile: a NaN or an infinity the fitter let through (nlohmann
    writes them as null), but for those of NULL_BY_DESIGN."""
    if value is None:
        return [key] if key not in NULL_BY_DESIGN else []
    if isinstance(value, dict):
        return [k for name, v in value.items() for k in nulls(v, name)]
    if isinstance(value, list):
        return [k for v in value for k in nulls(v, key)]
    return []


def classify_calibrate(res, files, d):
    if res["timeout"]:
        return "timeout"
    failed, lines = failure_class(res)
    if failed:
        return failed
    left = [n for n in os.listdir(d) if n.startswith(PROFILE)]
    if res["rc"] == 0:
        try:
            with open(os.path.join(d, PROFILE)) as fh:
                profile = json.load(fh)
        except (OSError, ValueError):
            return "bad-profile"
        return "null-in-profile" if nulls(profile) else "ok"
    if left:
        return "left-file"
    line = lines[0]
    if not line.startswith(PREFIX):
        return "other"
    msg = line[len(PREFIX):]
    if not (any(re.search(r"(^|[\s(,])" + re.escape(f) + r"\b", msg) for f in files) or msg.startswith("-")):
        return "exit2-no-location"
    if "expected" not in msg:
        return "exit2-no-expected"
    return "refused"


def run_case(case, args, root, names):
    d = tempfile.mkdtemp(prefix=f"c{case['n']:04d}-", dir=root)
    try:
        files, labels = build_case(case, d, names)
        stages = []
        res = run_command([args.bin, "calibrate", *files, "-o", PROFILE], d, args.timeout, stdout=False,
                          live=(LIVE, LIVE_LOCK))
        cls = classify_calibrate(res, files, d)
        stages.append(("calibrate", cls, res))
        if cls in ("ok", "null-in-profile"):
            res = run_command([args.bin, "validate", args.scenario, "--calibration", PROFILE], d, args.timeout,
                              stdout=False, live=(LIVE, LIVE_LOCK))
            failed, lines = failure_class(res)
            cls = "timeout" if res["timeout"] else failed or ("ok" if res["rc"] == 0 else "profile-refused")
            stages.append(("validate", cls, res))
        flagged = [s for s in stages if s[1] in FLAGGED]
        if flagged and args.keep:
            dest = os.path.join(args.keep, f"t{args.seed}-{case['n']:04d}")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(d, dest)
            with open(dest + ".txt", "w") as fh:
                fh.write(f"case {case['n']} (seed {args.seed})\ntraces: {case['traces']}\nchanges: {'; '.join(labels)}\n")
                fh.write(stages_report(stages, dest))
        return {"n": case["n"], "labels": labels,
                "stages": stage_summaries(stages, lambda r, c: flagged_key(r, c) if c in FLAGGED else None)}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = fuzzer_parser(__doc__, 300, 60, "folder for the flagged cases' files and a .txt each",
                       "calibration/traces/*/*.h5")
    ap.add_argument("--dump", help="write the cases' descriptions (JSON) to this file and run nothing")
    args = ap.parse_args()
    if not args.dump and not args.bin:
        ap.error("--bin or SIMCORE_BIN is required")
    if args.cases < 0 or args.jobs < 1 or args.timeout <= 0:
        ap.error("--cases >= 0, --jobs >= 1 and --timeout > 0 expected")
    args.source = os.path.abspath(args.source)
    args.scenario = os.path.join(args.source, "scenarios", "halo", "two_ranks_one_node.xml")
    seeds = collections.defaultdict(list)
    for p in sorted(glob.glob(os.path.join(args.source, "calibration", "traces", "*", "*.h5"))):
        seeds[os.path.basename(os.path.dirname(p))].append(p)
    if not seeds:
        ap.error(f"no trace under {args.source}/calibration/traces/*/")
    names = sorted({g for ps in seeds.values() for p in ps for g in h5py.File(p, "r").keys()})
    cases = [make_case(n, dict(seeds), args.seed) for n in range(1, args.cases + 1)]
    if args.dump:
        with open(args.dump, "w") as fh:
            json.dump([dict(c, traces=[os.path.relpath(t, args.source) for t in c["traces"]]) for c in cases], fh,
                      indent=1)
        print(f"{len(cases)} cases written to {args.dump}")
        return 0
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        ap.error(f"{args.bin} is not executable")
    if args.keep:
        args.keep = os.path.abspath(args.keep)
        os.makedirs(args.keep, exist_ok=True)

    root = tempfile.mkdtemp(prefix=f"tfuzz-s{args.seed}-")
    results, t0 = {}, time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = [ex.submit(run_case, c, args, root, names) for c in cases]
            for done, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                r = fut.result()
                results[r["n"]] = r
                if not args.quiet and (done % 50 == 0 or done == len(cases)):
                    nflag = sum(1 for x in results.values() if any(c in FLAGGED for _, c, _ in x["stages"]))
                    print(f"[{time.monotonic() - t0:6.0f} s] {done}/{len(cases)} cases, {nflag} flagged",
                          file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    table, groups = collections.Counter(), collections.OrderedDict()
    for n in sorted(results):
        for stage, cls, info in results[n]["stages"]:
            table[(stage, cls)] += 1
            if cls in FLAGGED:
                groups.setdefault(info["key"], []).append((results[n], stage, info))
    print(f"trace_fuzz: seed {args.seed}, {len(results)} cases, binary {args.bin}, {time.monotonic() - t0:.0f} s")
    print(f"{'class':20} {'calibrate':>9} {'validate':>9}")
    for cls in CLASSES:
        a, b = table[("calibrate", cls)], table[("validate", cls)]
        if a or b:
            print(f"{cls:20} {a:9} {b:9}{'   <- flagged' if cls in FLAGGED else ''}")
    nflag = sum(1 for r in results.values() if any(c in FLAGGED for _, c, _ in r["stages"]))
    if groups:
        print(f"\n{len(groups)} distinct flagged problems in {nflag} cases:")
        for i, (key, items) in enumerate(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])), 1):
            print(f"\n#{i} ({len(items)} cases) {key}")
            for r, stage, info in items[:3]:
                print(f"  case {r['n']} [{stage}, exit {info['rc']}, {info['seconds']:.1f} s]: {'; '.join(r['labels'])[:200]}")
                print(f"    stderr: {info['stderr'][:200]!r}")
        if args.keep:
            print(f"\nflagged cases kept in {args.keep} (t{args.seed}-NNNN/ and t{args.seed}-NNNN.txt)")
    else:
        print("\nnothing flagged")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
