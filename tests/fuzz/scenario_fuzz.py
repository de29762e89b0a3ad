#!/usr/bin/env python3
"""Deterministic fuzzer of simcore's scenario files, model parameters and command-line overrides.

Each case takes one shipped scenario (SOURCE/scenarios/<model>/*.xml), copies it into a
temporary folder (its relative platform and file paths rewritten to absolute ones, its output
going to that folder), applies one or two mutations drawn from the model's parameter spec
(`simcore models --json`):

  param      a parameter set to a value drawn from its spec (min, max, just past them, 0,
             negative, huge, nan, inf, empty, wrong type, odd units, long strings, regex
             specials, missing / empty / corrupted files), in the file or with --set
  section    the same for an attribute of a model element (<stream>, <reader>, ...)
  remove     a parameter removed (a required one when the model has one)
  unknown    an unknown parameter
  xml        XML structure: duplicates, missing attributes, unknown attributes, text in
             elements, comments, CDATA, entity references, BOM, declared encodings, deep
             nesting, empty or truncated files, odd line endings, <platform>/<output>/
             <calibration> variants
  seed       seed variants (scenario attribute or --seed)
  config     <config> SimGrid items (valid and invalid) or --cfg / --log
  cli        odd --set syntax

then runs

  1. simcore validate scenario.xml [overrides] --max-memory LIMIT
  2. if that exits 0: simcore run scenario.xml [overrides] --quiet --max-memory LIMIT

and checks simcore's contract: every input either works (exit 0, summary.json written,
nothing on stderr with --quiet) or is refused with exit code 2 and ONE stderr line
'simcore: error: WHERE: ... expected ...' where WHERE is FILE:LINE, a command-line option or 'command line' (argument syntax), or the
scenario file alone for the whole-run memory limit (a run past it, or one its model is sure to
take past it).
Anything else is flagged: signal, exit1, timeout, exit2-no-location, exit2-no-expected,
noise (several stderr lines, or stderr output on success), no-summary, other. A timeout of a
case that set a count (an integer parameter or list element) to >= 1e5 is reported as `slow`,
not flagged; so is the timeout of a run whose counts grew by a factor that, times the run time
of its seed scenario (measured once), reaches half the timeout (e.g. halo iterations 10 -> 324
on a seed of 1.2 s: 39 s expected, a valid run that outlasts 30 s). Flagged cases are grouped by a normalised message.

Only the standard library; the same --seed gives the same cases byte for byte (--dump DIR
writes them without running anything).

  /usr/bin/python3 tests/fuzz/scenario_fuzz.py --bin build/simcore --cases 300 --seed 1 --keep /tmp/sfuzz_keep

Exit status: 0 when nothing was flagged, 1 otherwise (2 on bad usage).
"""

import collections
import concurrent.futures
import copy
import glob
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

from fuzz_messages import failure_class, flagged_key, fuzzer_parser, run_command, stage_summaries, stages_report

SCENARIO = "scenario.xml"
FLAGGED = ["signal", "exit1", "timeout", "exit2-no-location", "exit2-no-expected", "noise", "no-summary", "other"]
CLASSES = ["ok", "refused", "slow"] + FLAGGED
SLOW_COUNT = 1e5

# Markers for bytes that are not valid UTF-8, replaced after encoding.
BAD_BYTES = {"\ue000": b"\xff", "\ue001": b"\xc0\xaf", "\ue002": b"\xed\xa0\x80", "\ue003": b"\xe9"}


# --------------------------------------------------------------------------------------------
# A tiny XML tree, one element per line (so that line numbers mean something)
# --------------------------------------------------------------------------------------------


def esc(v):
    return v.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


class Node:
    """attrs: [name, raw value] pairs (raw: already escaped, written as is); raw: a line."""

    __slots__ = ("tag", "attrs", "children", "text", "raw")

    def __init__(self, tag=None, attrs=None, children=None, text=None, raw=None):
        self.tag = tag
        self.attrs = [list(a) for a in (attrs or [])]
        self.children = list(children or [])
        self.text = text
        self.raw = raw

    def get(self, name):
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    def set(self, name, value, raw=False):
        v = value if raw else esc(value)
        for a in self.attrs:
            if a[0] == name:
                a[1] = v
                return
        self.attrs.append([name, v])

    def drop(self, name):
        self.attrs = [a for a in self.attrs if a[0] != name]

    def elements(self):
        return [c for c in self.children if c.raw is None]

    def walk(self, parent=None):
        yield self, parent
        for c in self.children:
            if c.raw is None:
                yield from c.walk(self)


def from_et(e):
    n = Node(e.tag, [(k, esc(v)) for k, v in e.attrib.items()])
    if e.text and e.text.strip() and len(e) == 0:
        n.text = esc(e.text.strip()).replace(">", "&gt;")
    n.children = [from_et(c) for c in e]
    return n


class Doc:
    def __init__(self, root):
        self.decl = '<?xml version="1.0"?>'
        self.prolog = []     # raw lines between the declaration and the root
        self.root = root
        self.epilog = []     # raw lines after the root

    def text(self):
        out = []
        if self.decl is not None:
            out.append(self.decl)
        out.extend(self.prolog)

        def emit(n, depth):
            ind = "  " * depth
            if n.raw is not None:
                out.append(ind + n.raw)
                return
            head = "<" + n.tag + "".join(f' {k}="{v}"' for k, v in n.attrs)
            if not n.children and n.text is None:
                out.append(ind + head + "/>")
            elif not n.children:
                out.append(ind + head + ">" + n.text + "</" + n.tag + ">")
            else:
                out.append(ind + head + ">" + (n.text or ""))
                for c in n.children:
                    emit(c, depth + 1)
                out.append(ind + "</" + n.tag + ">")

        emit(self.root, 0)
        out.extend(self.epilog)
        return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Models and seeds
# --------------------------------------------------------------------------------------------


class Model:
    def __init__(self, js):
        self.name = js["name"]
        self.params = {p["name"]: p for p in js.get("parameters", [])}
        self.sections = {}            # element name -> {attribute name: spec}
        self.children = {}            # element name -> child element names

        def walk(els):
            for e in els:
                attrs = {}
                for a in e.get("attributes", []):
                    a = dict(a)
                    base = self.params.get(a["name"])
                    for k in ("min", "max", "choices"):
                        if k not in a and base is not None and base.get("type") == a.get("type") and k in base:
                            a[k] = base[k]
                    attrs[a["name"]] = a
                self.sections[e["element"]] = attrs
                self.children[e["element"]] = [c["element"] for c in e.get("children", [])]
                walk(e.get("children", []))

        walk(js.get("elements", []))


def load_models(binary):
    p = subprocess.run([binary, "models", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        sys.exit(f"scenario_fuzz: '{binary} models --json' failed ({p.returncode}): {p.stderr.decode()[:300]}")
    js = json.loads(p.stdout)
    if isinstance(js, dict):
        js = js.get("models", [])
    return {m["name"]: Model(m) for m in js}


class Seed:
    """A shipped scenario, its relative paths made absolute."""

    def __init__(self, source, path, model):
        self.rel = os.path.relpath(path, source)
        self.model = model
        base = os.path.dirname(os.path.abspath(path))
        with open(path, encoding="utf-8") as f:
            # expat refuses '--' inside comments, which pugixml (and simcore) accept
            root = ET.fromstring(re.sub(r"<!--.*?-->", "", f.read(), flags=re.S).encode())
        self.tree = from_et(root)
        self.files = {}        # param or attribute name -> absolute path of the original file

        def absolute(v):
            return v if not v or os.path.isabs(v) else os.path.normpath(os.path.join(base, v))

        for n, _ in self.tree.walk():
            if n.tag in ("platform", "calibration") and n.get("file") is not None:
                n.set("file", absolute(ET_unesc(n.get("file"))))
            elif n.tag == "param" and n.get("name") is not None:
                spec = model.params.get(ET_unesc(n.get("name")))
                if spec and spec["type"] == "file" and n.get("value"):
                    p = absolute(ET_unesc(n.get("value")))
                    n.set("value", p)
                    self.files[spec["name"]] = p
            elif n.tag in model.sections:
                for k, v in list(n.attrs):
                    spec = model.sections[n.tag].get(k)
                    if spec and spec["type"] == "file" and v:
                        p = absolute(ET_unesc(v))
                        n.set(k, p)
                        self.files[k] = p
        plat = next((n for n, _ in self.tree.walk() if n.tag == "platform"), None)
        self.platform = ET_unesc(plat.get("file")) if plat is not None and plat.get("file") else None


def ET_unesc(v):
    return v.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def load_seeds(source, models, wanted):
    seeds = []
    for name in sorted(models):
        if wanted and name not in wanted:
            continue
        for path in sorted(glob.glob(os.path.join(source, "scenarios", name, "*.xml"))):
            try:
                seeds.append(Seed(source, path, models[name]))
            except ET.ParseError as e:
                print(f"scenario_fuzz: skipping seed {path}: {e}", file=sys.stderr)
    return seeds


# --------------------------------------------------------------------------------------------
# Values drawn from a parameter's spec
# --------------------------------------------------------------------------------------------

GENERIC = ["", " ", "abc", "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e300", "1e400", "-1e400", "0", "-0",
           "-1", "1e-320", "0x10", "9" * 400, "true", "\u0663", " 1", "1 ", "+1", "1\t", "\x01", "1,5", "1e",
           "\ue000", "1\n2"]
INTEGER = ["1e3", "1.0", "1.5", "10k", "2147483647", "2147483648", "4294967296", "9223372036854775807",
           "9223372036854775808", "18446744073709551616", "-9223372036854775809", "100000", "1000000", "007",
           "1_000"]
REAL = ["1e-308", "2.2e-308", "5e-324", "1.", ".5", "1e+", "0x1p3", "1e308", "1.7976931348623157e308",
        "1.8e308", "0.000001", "1e-9", "3.14", "-1e-300"]
UNIT_VALUES = {
    "time": ["1Gf", "1 s", "1e3ms", "1ms", "1us", "1ns", "1ps", "1h", "1d", "1w", "1m", "1min", "30d", "1e300d",
             "1e306w", "-1s", "infs", "inf s", "nans", "1 GB", "s", "1.5.5s", "1sec", "1S", "1MS", "1e-320s",
             "1e-310ms", "1e400ns", "0s", "1hr", "1y", "10 ms", "1s1", "1e3s", "-0s"],
    "size": ["1 GB", "1e3MB", "1KiB", "1kB", "1KB", "1.5B", "-1B", "1e300TiB", "1e20EiB", "1Bps", "1b", "1Gf",
             "0.5B", "1e-300B", "16EiB", "1YB", "1GiB", "8B", "1B", "1e3B", "0B", "1kb", "1 KiB", "1e-310B",
             "1048577B", "1MiB", "infB", "nanB", "B"],
    "bandwidth": ["1GBps", "1Gbps", "1 GBps", "0Bps", "1e300TBps", "1GB", "1Mf", "1e-310Bps", "1Bps", "-1GBps",
                  "1GiBps", "100Mbps", "1e400Bps", "infBps", "Bps", "1kBps", "1e3MBps", "1GBps/s", "1 GB/s"],
    "flops": ["1Gf", "1e300Pf", "1GB", "1 Gf", "-1f", "1Ef", "1e-320f", "1flop", "1flops", "1Gflops", "0f", "1f",
              "1e400f", "inff", "1 Gf", "1GFlop", "1Yf", "1e3Mf"],
}
UNIT_OF = {"time": "s", "size": "B", "bandwidth": "Bps", "flops": "f"}
BOOLEAN = ["true", "false", "1", "0", "yes", "no", "TRUE", "True", "on", "off", "", "2", "truee", " true", "1.0",
           "-1", "t"]
REGEX = [".*", "", "(", ")", "[", "]", "[z-a]", "*", "+", "?", "a{1000000}", "(a*)*$", "(a|a)*b", "\\", "\\1",
         "(?=x)", "(?<=x)", "ana-[0-3", "sim-.*|ana-.*", "nomatch-.*", "^$", "a" * 20000, "(" * 3000, "(" * 3000 + ")" * 3000,
         ".{0,100000}", "[[:alpha:]].*", "[[:bogus:]]", "x{2,1}", "\\d+", "\u00e9.*", "sim-0", "ft-0", "ana-1",
         ".*-[0-9]+", "(.*)*", "((((((((((.*))))))))))", "[^]", "a**", ".*\ue000", "\\Q.*\\E", "(?i)SIM-.*", "*.*",
         "{}", "\\", "|", "|.*", "(?P<x>a)", "[\\w-]+", ".*\n", " .*", "sim-.*,ana-.*"]
STRINGS = ["", " ", "x", "a" * 10000, "a b", "\u00e9", "0:0:0:1:1", "1:2;3:4", ";", ":", "1;", "-1", "<&>", "\t",
           "\ue000", "star-0", "host-0", "ana-0", "sim-0", "ft-0", ".*", "'", '"', "\\", "%s%n%s", "$(id)"]
INT_LISTS = ["64,64,64", "", ",", "1,,2", "0,0,0", "-1,1,1", "1x1x1", "4x4x2", "1,2,3,4", "1,2", "1",
             "1000000000000,1000000000000,1000000000000", "1000000,1000000,1000000", "1e3,1,1", "a,b",
             ",".join(["1"] * 10000), "1 , 2 , 3", "1,2,", "x", "4x", "2x2x2x2", "99999999999999999999,1,1",
             "2,2,2", "1, 2,3", "1;2;3", "1.5,1,1", "0", "-0", "4294967296,1,1", "9223372036854775807,2,1",
             "3037000500,3037000500,1", "2097152,2097152,2097152", "1,1,1,,", "nan,1,1", "1\t,1,1", "+1,+1,+1"]
CHOICE_EXTRA = ["", "bogus", " ", "nan", "0", "1"]


def num(v, integer):
    if integer:
        return str(int(v))
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def spec_values(spec):
    """Values that the spec itself suggests (min, max, just past them)."""
    t = spec.get("type", "")
    integer = t in ("integer", "integer list")
    vals = []
    for k in ("min", "max"):
        if k in spec and spec[k] is not None:
            v = float(spec[k])
            vals.append(num(v, integer))
            if integer:
                vals.append(num(v - 1 if k == "min" else v + 1, True))
            else:
                d = math.nextafter(v, -math.inf if k == "min" else math.inf)
                vals.append(repr(d))
                vals.append(num(v * (0.999 if k == "min" else 1.001) if v else (-1e-9 if k == "min" else 1e-9), False))
            if t in UNIT_OF:
                vals.append(num(v, False) + UNIT_OF[t])
    if spec.get("default") not in (None, ""):
        vals.append(spec["default"])
    return vals


def in_range(spec, rng):
    """A valid value, to get past validation into the run."""
    t = spec.get("type", "")
    lo = float(spec["min"]) if spec.get("min") is not None else 0.0
    hi = float(spec["max"]) if spec.get("max") is not None else 1e6
    if t == "integer":
        lo_i, hi_i = int(lo), int(min(hi, 1e6))
        if hi_i < lo_i:
            return None
        v = int(round(math.exp(rng.uniform(math.log(max(lo_i, 0) + 1), math.log(hi_i + 1))) - 1))
        return str(min(max(v, lo_i), hi_i))
    if t in ("real",) + tuple(UNIT_OF):
        hi = min(hi, 1e6)
        if hi < lo:
            return None
        v = rng.choice([lo, hi, rng.uniform(lo, hi), lo + (hi - lo) * 10 ** rng.uniform(-9, 0)])
        return f"{v:.6g}" + (UNIT_OF.get(t, "") if rng.random() < 0.5 and v != 0 else "")
    if t == "boolean":
        return rng.choice(["true", "false"])
    if t == "choice" and spec.get("choices"):
        return rng.choice(spec["choices"])
    return None


def gen_value(spec, rng, case, name):
    """A value for a parameter (or attribute) with this spec; may add auxiliary files to the case."""
    t = spec.get("type", "string")
    r = rng.random()
    if t == "file":
        return gen_file(rng, case, name)
    sv = spec_values(spec)
    if r < 0.2:
        v = in_range(spec, rng)
        if v is not None:
            return v
    r = rng.random()
    if r < 0.3 and sv:
        return rng.choice(sv)
    if r < 0.45:
        return rng.choice(GENERIC)
    if t == "integer":
        return rng.choice(INTEGER + sv + ["0", "1", "2", "-1", "100000"])
    if t == "real":
        return rng.choice(REAL + sv)
    if t in UNIT_VALUES:
        return rng.choice(UNIT_VALUES[t] + REAL[:6])
    if t == "boolean":
        return rng.choice(BOOLEAN)
    if t == "choice":
        ch = list(spec.get("choices") or [])
        opts = ch + [c.upper() for c in ch] + [c + " " for c in ch] + [c[:-1] for c in ch if c] + CHOICE_EXTRA
        if len(ch) > 1:
            opts.append(",".join(ch))
        return rng.choice(opts)
    if t == "integer list":
        mx = spec.get("max")
        extra = [] if mx is None else [f"{int(mx)},{int(mx)},{int(mx)}", f"{int(mx) + 1},1,1", f"{int(mx)}"]
        mn = spec.get("min")
        if mn is not None:
            extra += [f"{int(mn) - 1},1,1", f"{int(mn)},{int(mn)},{int(mn)}"]
        return rng.choice(INT_LISTS + extra)
    if t == "string":
        if "hosts" in name or name in ("master",):
            return rng.choice(REGEX)
        return rng.choice(STRINGS + REGEX[:10])
    return rng.choice(GENERIC + STRINGS)


def mutate_text_file(data, rng):
    """A corrupted copy of a data file (SWF trace, JSON profile, platform)."""
    text = data.decode("utf-8", "replace")
    k = rng.randrange(8)
    if k == 0:
        return b"", "empty"
    if k == 1:
        cut = rng.randrange(1, max(2, min(len(data), 4000)))
        return data[:cut], f"truncated at {cut}"
    if k == 2:
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 16, 300]))), "binary garbage"
    nums = list(re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text[:20000]))
    if k in (3, 4, 5) and nums:
        m = rng.choice(nums)
        rep = rng.choice(["-1", "0", "nan", "inf", "1e300", "1e400", "abc", "", "99999999999999999999", "-0",
                          "1.5", "-5", "1e-320", "4294967296", '"x"', "null", "[]", "2147483648"])
        return (text[:m.start()] + rep + text[m.end():]).encode(), f"number {m.group(0)!r} at {m.start()} -> {rep!r}"
    if k == 6:
        lines = text.splitlines(True)[:400]
        if lines:
            i = rng.randrange(len(lines))
            lines.insert(i, rng.choice([lines[i], "\n", "junk line\n", "1 2 3\n", ";\n", "{}\n", "  \t\n",
                                        " ".join(["1"] * 40) + "\n"]))
        return "".join(lines).encode(), "line inserted / duplicated (first 400 lines)"
    return text.replace("\n", "\r\n").encode(), "CRLF"


def gen_file(rng, case, name):
    orig = case.seed.files.get(name)
    r = rng.randrange(12)
    if r == 0:
        return "does_not_exist.dat"
    if r == 1:
        return "/nonexistent/dir/x.dat"
    if r == 2:
        return rng.choice([".", "/", "data/"])
    if r == 3:
        return "/dev/null"
    if r == 4:
        return ""
    if r == 5:
        return "a" * rng.choice([300, 5000])
    if r == 6:
        return case.seed.platform or "/dev/null"      # a file of the wrong kind
    if r == 7:
        return SCENARIO                               # the scenario itself
    src = orig or case.seed.platform
    if not src or not os.path.isfile(src):
        return "does_not_exist.dat"
    with open(src, "rb") as f:
        data = f.read()
    if r == 8:
        return src                                    # the original, valid
    body, how = mutate_text_file(data, rng)
    fname = f"aux{len(case.aux)}{os.path.splitext(src)[1]}"
    case.aux[fname] = body
    case.notes.append(f"{fname}: {os.path.basename(src)} {how}")
    return fname


# --------------------------------------------------------------------------------------------
# A case and its mutations
# --------------------------------------------------------------------------------------------


class Case:
    def __init__(self, n, seed):
        self.n = n
        self.seed = seed
        self.model = seed.model
        self.doc = Doc(copy.deepcopy(seed.tree))
        self.aux = {}            # file name -> bytes, written beside the scenario
        self.args = []           # extra command-line arguments (validate and run)
        self.byte_edits = []     # functions bytes -> bytes
        self.labels = []         # one per mutation
        self.notes = []          # details (aux files)
        self.counts = []         # (name, value) counts set >= SLOW_COUNT
        self.growth = {}         # count name -> its value over the seed's (integers and lists)
        self.slow_estimate = None  # seconds the run was expected to take, where that explains a timeout
        self.out_arg = False     # pass --out out (else the scenario's <output dir>)
        self.out_dir = "out"
        self.data = None

    def params(self):
        return [c for c in self.doc.root.elements() if c.tag == "param"]

    def param_node(self, name):
        for c in self.params():
            if c.get("name") == esc(name):
                return c
        return None

    def note_count(self, spec, value, param=True):
        """Notes a count set to `value`: >= SLOW_COUNT, and (for a <param>: `param`) its growth
        over the seed's value of that parameter."""
        if spec.get("type") not in ("integer", "integer list"):
            return
        grown = count_product(value) if param else None
        node = next((p for p in self.seed.tree.elements() if p.tag == "param"
                     and ET_unesc(p.get("name") or "") == spec["name"]), None)
        was = count_product(ET_unesc(node.get("value") or "") if node is not None else str(spec.get("default") or ""))
        if grown is not None and was:
            self.growth[spec["name"]] = grown / was
        for part in re.split(r"[,x]", value):
            try:
                if float(part) >= SLOW_COUNT:
                    self.counts.append((spec["name"], value if len(value) < 40 else value[:37] + "..."))
                    return
            except ValueError:
                pass


def short(v, n=40):
    r = repr(v)
    return r if len(r) <= n else repr(v[: n - 12]) + f"...({len(v)} chars)"


def count_product(value):
    """The product of a count's parts ("324", "64,64,64", "2x2x1"); None unless all are positive numbers."""
    product = 1.0
    for part in re.split(r"[,x]", value.strip()):
        try:
            number = float(part)
        except ValueError:
            return None
        if not number > 0 or number == float("inf"):
            return None
        product *= number
    return product


SEED_SECONDS = {}
SEED_LOCK = threading.Lock()


def seed_seconds(seed, args):
    """The wall time of `simcore run` of the seed scenario as shipped, measured once (None where
    it does not end well within the timeout)."""
    with SEED_LOCK:
        if seed.rel in SEED_SECONDS:
            return SEED_SECONDS[seed.rel]
        d = tempfile.mkdtemp(prefix="seed-")
        try:
            res = run_command([args.bin, "run", os.path.join(args.source, seed.rel), "--out", "out", "--quiet",
                               "--max-memory", args.max_memory], d, args.timeout, stdout=False)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        SEED_SECONDS[seed.rel] = res["seconds"] if res["rc"] == 0 and not res["timeout"] else None
        return SEED_SECONDS[seed.rel]


def expected_seconds(case, args):
    """What the case's run should take if time grows with its counts: the seed's time times the
    product of the counts' growth (where they grew)."""
    factor = 1.0
    for ratio in case.growth.values():
        factor *= max(1.0, ratio)
    if factor <= 1.0:
        return None
    seconds = seed_seconds(case.seed, args)
    return None if seconds is None else seconds * factor


def m_param(case, rng):
    model = case.model
    names = sorted(model.params)
    present = [ET_unesc(p.get("name") or "") for p in case.params() if ET_unesc(p.get("name") or "") in model.params]
    name = rng.choice(present) if present and rng.random() < 0.6 else rng.choice(names)
    spec = model.params[name]
    value = gen_value(spec, rng, case, name)
    case.note_count(spec, value)
    if rng.random() < 0.25 and not any(ch in value for ch in "\x00" + "".join(BAD_BYTES)):
        case.args += ["--set", f"{name}={value}"]
        case.labels.append(f"--set {name}={short(value)}")
        return
    node = case.param_node(name)
    if node is None:
        node = Node("param", [("name", esc(name))])
        case.doc.root.children.insert(rng.randrange(len(case.doc.root.children) + 1), node)
    node.set("value", value)
    case.labels.append(f"param {name}={short(value)}")


def m_section(case, rng):
    els = [(n, p) for n, p in case.doc.root.walk() if n.tag in case.model.sections and n is not case.doc.root]
    if not els:
        return m_param(case, rng)
    node, _ = rng.choice(els)
    specs = case.model.sections[node.tag]
    present = [k for k, _ in node.attrs if k in specs]
    if rng.random() < 0.08:
        k = rng.choice(["bogus", "Name", "ranksx", "value"])
        node.set(k, "1")
        case.labels.append(f"<{node.tag}> unknown attribute {k}")
        return
    name = rng.choice(present) if present and rng.random() < 0.6 else rng.choice(sorted(specs))
    spec = specs[name]
    value = gen_value(spec, rng, case, name)
    case.note_count(spec, value, param=False)
    node.set(name, value)
    case.labels.append(f"<{node.tag}> {name}={short(value)}")


def m_remove(case, rng):
    required = [n for n, s in case.model.params.items() if s.get("required") and case.param_node(n)]
    r = rng.random()
    if required and r < 0.6:
        name = rng.choice(sorted(required))
        case.doc.root.children.remove(case.param_node(name))
        case.labels.append(f"remove required param {name}")
    elif r < 0.75:
        plat = [c for c in case.doc.root.elements() if c.tag == "platform"]
        for p in plat:
            case.doc.root.children.remove(p)
        case.labels.append("remove <platform>")
    elif r < 0.82:
        sec = [c for c in case.doc.root.elements() if c.tag in case.model.sections]
        if sec:
            case.doc.root.children.remove(rng.choice(sec))
            case.labels.append("remove a model element")
        else:
            case.doc.root.children = [c for c in case.doc.root.children if c.tag != "param"]
            case.labels.append("remove every param")
    else:
        ps = case.params()
        if ps:
            p = rng.choice(ps)
            case.doc.root.children.remove(p)
            case.labels.append(f"remove param {ET_unesc(p.get('name') or '')}")
        else:
            case.labels.append("remove (nothing)")


def m_unknown(case, rng):
    names = sorted(case.model.params)
    base = rng.choice(names)
    other = sorted({p for m in MODELS.values() for p in m.params} - set(names)) or ["bogus"]
    name = rng.choice([base + "x", base.upper(), base[:-1], " " + base, base + " ", "bogus", "", "a" * 3000,
                       "x=y", "param", rng.choice(other), base.replace("_", "-"), "\u00e9", "name"])
    value = rng.choice(["1", "", "true", "abc"])
    if rng.random() < 0.3:
        case.args += ["--set", f"{name}={value}"]
        case.labels.append(f"unknown --set {short(name)}={value!r}")
    else:
        node = Node("param", [("name", esc(name)), ("value", esc(value))])
        case.doc.root.children.insert(rng.randrange(len(case.doc.root.children) + 1), node)
        case.labels.append(f"unknown param {short(name)}={value!r}")


SEEDS = ["-1", "0", "1", "18446744073709551615", "18446744073709551616", "1e3", "abc", "", " 1", "0x10", "+1",
         "-0", "99999999999999999999999", "1.5", "\u0663", "4294967296", "9223372036854775808", "1 ", "01"]


def m_seed(case, rng):
    v = rng.choice(SEEDS)
    r = rng.random()
    if r < 0.4:
        case.args += ["--seed", v]
        case.labels.append(f"--seed {v!r}")
    elif r < 0.5:
        case.doc.root.drop("seed")
        case.labels.append("no seed attribute")
    else:
        case.doc.root.set("seed", v)
        case.labels.append(f"seed={v!r}")


CONFIGS = [
    ("network/latency-factor", "1"), ("network/bandwidth-factor", "0.97"), ("network/model", "CM02"),
    ("network/model", "SMPI"), ("network/model", "LV08"), ("network/model", "Constant"), ("network/model", "IB"),
    ("network/model", "ns-3"), ("network/model", "bogus"), ("network/model", ""), ("cpu/model", "Cas01"),
    ("cpu/optim", "Full"), ("cpu/optim", "TI"), ("network/optim", "Full"), ("network/optim", "Lazy"),
    ("network/crosstraffic", "0"), ("network/crosstraffic", "maybe"), ("network/TCP-gamma", "0"),
    ("network/TCP-gamma", "-1"), ("network/weight-S", "0"), ("precision/timing", "1e-9"),
    ("precision/timing", "0"), ("precision/work-amount", "1e-5"), ("precision/work-amount", "-1"),
    ("maxmin/concurrency-limit", "1"), ("maxmin/concurrency-limit", "-5"), ("contexts/factory", "thread"),
    ("contexts/factory", "raw"), ("contexts/factory", "boost"), ("contexts/factory", "ucontext"),
    ("contexts/factory", "bogus"), ("contexts/nthreads", "2"), ("contexts/nthreads", "0"),
    ("contexts/stack-size", "16"), ("contexts/stack-size", "1"), ("contexts/stack-size", "abc"),
    ("contexts/guard-size", "0"), ("host/model", "ptask_L07"), ("host/model", "compound"),
    ("host/model", "bogus"), ("network/loopback-lat", "0"), ("network/loopback-bw", "0"),
    ("network/latency-factor", "-1"), ("network/latency-factor", "nan"), ("network/latency-factor", "abc"),
    ("network/latency-factor", "1e400"), ("network/latency-factor", ""), ("network/latency-factor", "0;1000:2"),
    ("network/latency-factor", "0:1;1000:2"), ("network/bandwidth-factor", "0"),
    ("network/bandwidth-factor", "inf"), ("smpi/bw-factor", "65472:0.9;0:1"), ("smpi/lat-factor", "abc"),
    ("debug/breakpoint", "0.1"), ("exception/cutpath", "1"), ("tracing", "yes"), ("tracing/filename", "t.paje"),
    ("plugin", "host_energy"), ("plugin", "link_energy"), ("plugin", "bogus"), ("path", "/tmp"),
    ("bogus/key", "1"), ("", "1"), ("maxmin/precision", "0"), ("surf/precision", "0"),
    ("cpu/maxmin-selective-update", "yes"), ("network/maxmin-selective-update", "maybe"),
    ("verbose-exit", "0"), ("clean-atexit", "0"), ("model-check", "1"), ("model-check/reduction", "none"),
    ("smpi/host-speed", "1Gf"), ("storage/max_file_descriptors", "0"), ("vm/model", "bogus"),
    ("help", "1"), ("version", ""), ("help-cfg", "1"), ("network/latency-factor ", "1"),
    ("Network/Latency-Factor", "1"), ("network/latency-factor", " 1"), ("xbt/log", "root.thres:critical"),
]
CLI_EXTRA = [["--cfg=network/latency-factor:1"], ["--cfg=bogus"], ["--cfg=a:b:c"], ["--cfg="],
             ["--cfg=network/model:CM02"], ["--cfg=contexts/factory:thread"], ["--log=root.thres:critical"],
             ["--log=bogus.thres:foo"], ["--log=root.fmt:%m%n"], ["--cfg=precision/timing:0"],
             ["--cfg=debug/breakpoint:0.01"], ["--cfg=network/latency-factor:1", "--cfg=network/latency-factor:2"],
             ["--calibration", ""], ["--calibration", "does_not_exist.json"], ["--calibration", SCENARIO],
             ["--cfg", "network/latency-factor:1"], ["--log", "root.thres:critical"]]


def m_config(case, rng):
    r = rng.random()
    if r < 0.3:
        extra = rng.choice(CLI_EXTRA)
        case.args += extra
        case.labels.append("cli " + " ".join(repr(a) if not a else a for a in extra))
        return
    k, v = rng.choice(CONFIGS)
    node = Node("config", [("name", esc(k)), ("value", esc(v))])
    sub = rng.random()
    label = f"<config {k}={v!r}>"
    if sub < 0.1:
        node.drop("value")
        label += " without value"
    elif sub < 0.18:
        node.drop("name")
        label += " without name"
    elif sub < 0.25:
        case.doc.root.children.insert(0, copy.deepcopy(node))
        label += " twice"
    case.doc.root.children.insert(rng.randrange(len(case.doc.root.children) + 1), node)
    case.labels.append(label)


ODD_SETS = [["--set"], ["--set", "tasks"], ["--set", "=5"], ["--set", "NAME==5"], ["--set", "NAME=5=6"],
            ["--set", "NAME=1", "--set", "NAME=2"], ["--set", ""], ["--set", " NAME=1"], ["--set", "NAME =1"],
            ["--set=NAME=1"], ["--bogus"], ["--seed"], ["--set", "NAME"], ["-s", "NAME=1"]]


def m_cli(case, rng):
    name = rng.choice(sorted(case.model.params))
    extra = [a.replace("NAME", name) for a in rng.choice(ODD_SETS)]
    case.args += extra
    case.labels.append("cli " + " ".join(repr(a) for a in extra))


def _rand_elem(case, rng, with_root=True):
    els = [n for n, _ in case.doc.root.walk() if with_root or n is not case.doc.root]
    return rng.choice(els)


def m_xml(case, rng):
    root = case.doc.root
    k = rng.randrange(40)
    params = case.params()
    label = None
    if k == 0 and params:
        p = rng.choice(params)
        d = copy.deepcopy(p)
        if rng.random() < 0.5:
            d.set("value", rng.choice(["1", "", "abc"]))
        root.children.insert(root.children.index(p) + 1, d)
        label = f"duplicate param {ET_unesc(p.get('name') or '')}"
    elif k in (1, 2):  # a <param> without its value, or without its name
        dropped = "value" if k == 1 else "name"
        p = rng.choice(params) if params else Node("param", [("name", "x") if k == 1 else ("value", "1")])
        if p not in root.children:
            root.children.append(p)
        p.drop(dropped)
        label = f"param {ET_unesc(p.get('name') or '')} without value" if k == 1 else "param without name"
    elif k == 3:
        e = _rand_elem(case, rng)
        e.attrs.insert(rng.randrange(len(e.attrs) + 1), [rng.choice(["foo", "Value", "xmlns", "xml:lang", "a-b"]),
                                                          "1"])
        label = f"unknown attribute on <{e.tag}>"
    elif k == 4:
        e = _rand_elem(case, rng)
        if e.attrs:
            a = rng.choice(e.attrs)
            e.attrs.append([a[0], rng.choice([a[1], "2", ""])])
            label = f"duplicate attribute {a[0]} on <{e.tag}>"
        else:
            e.attrs.append(["x", "1"])
            e.attrs.append(["x", "2"])
            label = f"duplicate attribute x on <{e.tag}>"
    elif k == 5:
        e = _rand_elem(case, rng)
        if e.children:
            e.children.insert(rng.randrange(len(e.children) + 1), Node(raw=rng.choice(["some text", "&amp;", "1"])))
        else:
            e.text = rng.choice(["some text", " ", "1", "&lt;x&gt;", "\n"])
        label = f"text inside <{e.tag}>"
    elif k == 6:
        e = _rand_elem(case, rng)
        child = rng.choice([Node("param", [("name", "tasks"), ("value", "1")]), Node("x"),
                            Node("description", text="d"), Node("platform", [("file", "x.xml")])])
        e.children.append(child)
        e.text = None if e.text is not None and not e.text.strip() else e.text
        label = f"<{child.tag}> inside <{e.tag}>"
    elif k == 7:
        e = _rand_elem(case, rng)
        c = rng.choice(["<!-- a comment -->", "<!-- a -- b -->", "<!-- unclosed", "<!---->", "<!-- -->-->",
                        "<!-- \ue000 -->", "<!-- " + "x" * 100000 + " -->"])
        e.children.insert(rng.randrange(len(e.children) + 1), Node(raw=c))
        label = f"comment {short(c, 24)} in <{e.tag}>"
    elif k == 8:
        e = rng.choice([n for n, _ in root.walk()])
        c = rng.choice(["<![CDATA[text]]>", "<![CDATA[]]>", "<![CDATA[<param name=\"tasks\" value=\"1\"/>]]>",
                        "<![CDATA[unclosed", "<![CDATA[ ]]>"])
        if e.tag == "description" or rng.random() < 0.5:
            desc = [n for n in root.elements() if n.tag == "description"]
            e = desc[0] if desc else e
        if not e.children and e.text is not None:
            e.text = e.text + c
        else:
            e.children.insert(0, Node(raw=c))
        label = f"CDATA {short(c, 30)} in <{e.tag}>"
    elif k == 9:
        e = rng.choice([n for n, _ in root.walk()])
        e.children.insert(0, Node(raw=rng.choice(["<?foo bar?>", "<?xml version=\"1.0\"?>", "<?pi", "<? ?>"])))
        label = f"processing instruction in <{e.tag}>"
    elif k in (10, 11, 12):
        ent = rng.choice(["&amp;", "&lt;5", "&#49;&#48;", "&#x31;", "&#0;", "&#x0;", "&#x00;", "&#1114112;",
                          "&#xD800;", "&undefined;", "&", "&#;", "&#x;", "&#xFFFFFFFFF;", "&#99999999999;",
                          "&quot;", "&apos;", "1&#x20;", "&#9;1", "&#10;", "&x;", "&#65279;1", "&#x7f;"])
        targets = [(n, a) for n, _ in root.walk() for a in n.attrs]
        n, a = rng.choice(targets)
        a[1] = rng.choice([ent, a[1] + ent, ent + a[1]])
        label = f"entity {ent!r} in <{n.tag} {a[0]}>"
    elif k == 13:
        name = rng.choice(["x", "lol"])
        if name == "x":
            case.doc.prolog.append('<!DOCTYPE scenario [<!ENTITY x "5">]>')
        else:
            case.doc.prolog.append('<!DOCTYPE scenario [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">'
                                   '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]>')
            name = "lol3"
        targets = [(n, a) for n, _ in root.walk() for a in n.attrs]
        n, a = rng.choice(targets)
        a[1] = f"&{name};"
        label = f"DOCTYPE entity &{name}; in <{n.tag} {a[0]}>"
    elif k == 14:
        case.byte_edits.append(("bom", lambda b: b"\xef\xbb\xbf" + b))
        label = "UTF-8 BOM"
    elif k == 15:
        enc = rng.choice(["ISO-8859-1", "UTF-16", "bogus", "ascii", "UTF-32", "Shift_JIS", "utf-8"])
        case.doc.decl = f'<?xml version="1.0" encoding="{enc}"?>'
        desc = [n for n in root.elements() if n.tag == "description"]
        if desc and rng.random() < 0.6:
            desc[0].text = (desc[0].text or "") + "\ue003t\u00e9"
        label = f"encoding={enc}"
    elif k == 16:
        codec = rng.choice(["utf-16", "utf-16-le", "utf-32"])
        case.byte_edits.append(("recode", lambda b, c=codec: b.decode("utf-8", "replace").encode(c)))
        label = f"file in {codec}"
    elif k == 17:
        targets = [(n, a) for n, _ in root.walk() for a in n.attrs]
        n, a = rng.choice(targets)
        bad = rng.choice(sorted(BAD_BYTES))
        a[1] = a[1] + bad
        label = f"invalid UTF-8 {BAD_BYTES[bad]!r} in <{n.tag} {a[0]}>"
    elif k in (18, 19):
        depth = rng.choice([10, 1000, 20000, 100000])
        secs = [n for n, _ in root.walk() if n.tag in case.model.sections and n is not root]
        where = rng.choice(secs) if secs and rng.random() < 0.5 else root
        tag = rng.choice(["x"] + sorted(case.model.children.get(where.tag, [])) + sorted(case.model.sections))
        opened = "".join(f"<{tag}>" for _ in range(depth))
        closed = "".join(f"</{tag}>" for _ in range(depth))
        where.children.append(Node(raw=opened + closed))
        label = f"<{tag}> nested {depth} deep in <{where.tag}>"
    elif k == 20:
        body = rng.choice([b"", b" ", b"\n\n", b'<?xml version="1.0"?>\n'])
        case.byte_edits.append(("empty", lambda b, body=body: body))
        label = f"empty file {body!r}"
    elif k in (21, 22):
        frac = rng.random()
        case.byte_edits.append(("truncate", lambda b, f=frac: b[: int(len(b) * f)]))
        label = f"truncated at {frac:.2f}"
    elif k == 23:
        case.doc.epilog.append(rng.choice(["<scenario model=\"batch\"/>", "trailing text", "<!-- c -->", "</scenario>",
                                           "\x00"]))
        label = f"after the root: {case.doc.epilog[-1]!r}"
    elif k == 24:
        nl = rng.choice([b"\r\n", b"\r", b"\n\n"])
        case.byte_edits.append(("newlines", lambda b, nl=nl: b.replace(b"\n", nl)))
        label = f"line endings {nl!r}"
    elif k == 25:
        r = rng.randrange(5)
        if r == 0:
            root.tag = rng.choice(["Scenario", "platform", "scenarios"])
            label = f"root <{root.tag}>"
        elif r == 1:
            root.drop("model")
            label = "no model attribute"
        else:
            others = sorted(MODELS)
            v = rng.choice(["", "bogus", case.model.name.upper(), case.model.name + " "] + others)
            root.set("model", v)
            label = f"model={v!r}"
    elif k in (26, 27):
        plat = [c for c in root.elements() if c.tag == "platform"]
        r = rng.randrange(9)
        if r == 0 and plat:
            root.children.append(copy.deepcopy(plat[0]))
            label = "second <platform>"
        elif r == 1 and plat:
            plat[0].drop("file")
            label = "<platform> without file"
        elif plat:
            v = gen_file(rng, case, "__platform__")
            plat[0].set("file", v)
            label = f"<platform file={short(v)}>"
        else:
            label = "platform (none)"
    elif k in (28, 29):
        outs = [c for c in root.elements() if c.tag == "output"]
        o = outs[0] if outs else Node("output")
        if not outs:
            root.children.append(o)
        r = rng.randrange(6)
        if r == 0:
            v = rng.choice(["", SCENARIO, "/proc/simcore-fuzz", "a/b/c", "out/./x", "x" * 300, "\u00fc-out",
                            " out ", "out\n"])
            o.set("dir", v)
            case.out_dir = None if v in (SCENARIO, "/proc/simcore-fuzz") or len(v) > 255 else v
            label = f"<output dir={short(v)}>"
        elif r == 1:
            v = rng.choice(["yes", "1", "TRUE", "", "false", "true"])
            o.set("trace", v)
            label = f"<output trace={v!r}>"
        elif r == 2:
            v = rng.choice(["yes", "1", "TRUE", "", "false", "true"])
            o.set("csv", v)
            label = f"<output csv={v!r}>"
        elif r == 3:
            root.children.append(Node("output", [("csv", "true")]))
            label = "second <output>"
        elif r == 4:
            case.out_arg = True
            label = "--out out (and <output dir>)"
        else:
            o.set("trace", "true")
            o.set("csv", "true")
            label = "<output trace csv>"
    elif k in (30, 31):
        r = rng.randrange(8)
        cal = Node("calibration")
        profiles = [p for p in CALIBRATIONS if os.path.isfile(p)]
        if r < 3 and profiles:
            src = rng.choice(profiles)
            with open(src, "rb") as f:
                body, how = mutate_text_file(f.read(), rng)
            fname = f"aux{len(case.aux)}.json"
            case.aux[fname] = body
            case.notes.append(f"{fname}: {os.path.basename(src)} {how}")
            cal.set("file", fname)
        elif r < 5 and profiles:
            cal.set("file", rng.choice(profiles))
        elif r == 5:
            cal.set("file", rng.choice(["missing.json", "", ".", "/dev/null", SCENARIO]))
        else:
            cal.set("file", rng.choice(profiles) if profiles else "missing.json")
            root.children.append(copy.deepcopy(cal))
        root.children.insert(1, cal)
        label = f"<calibration file={short(ET_unesc(cal.get('file') or ''))}>"
    elif k == 32:
        desc = [n for n in root.elements() if n.tag == "description"]
        d = desc[0] if desc else Node("description")
        if not desc:
            root.children.insert(0, d)
        d.text = rng.choice(["x" * 1000000, "", "&lt;&gt;&amp;", "\ue000", "a\nb\nc", "\t"])
        label = f"<description> text {short(d.text, 24)}"
    elif k == 33:
        d = Node("description", text="second")
        root.children.append(d)
        label = "second <description>"
    elif k == 34:
        el = rng.choice(["model", "parameter", "Param", "output_dir", "include", "stream", "reader", "variable"])
        root.children.append(Node(el, [("name", "x")]))
        label = f"element <{el}> in <scenario>"
    elif k == 35:
        case.doc.decl = rng.choice([None, '<?xml version="2.0"?>', '<?xml version="1.0" standalone="maybe"?>',
                                    ' <?xml version="1.0"?>', '<?xml?>', '<?XML version="1.0"?>'])
        label = f"declaration {case.doc.decl!r}"
    elif k == 36:
        ordered = list(root.children)
        rng.shuffle(ordered)
        root.children = ordered
        label = "children shuffled"
    elif k == 37:
        e = _rand_elem(case, rng)
        if e.attrs:
            a = rng.choice(e.attrs)
            a[1] = rng.choice([" " + a[1], a[1] + " ", "\t" + a[1] + "\n", a[1] + a[1]])
            label = f"padded/doubled attribute {a[0]} on <{e.tag}>"
        else:
            label = "padding (nothing)"
    elif k == 38:
        # many params: the same param name list again with numbered names
        for i in range(rng.choice([100, 5000])):
            root.children.append(Node("param", [("name", f"p{i}"), ("value", "1")]))
        label = "thousands of unknown params"
    else:
        # a model element where it does not belong, or an empty one
        secs = sorted(case.model.sections)
        if secs:
            tag = rng.choice(secs)
            root.children.append(Node(tag))
            label = f"empty <{tag}> in <scenario>"
        else:
            root.children.append(Node("stream"))
            label = "<stream> in a model without elements"
    case.labels.append(label or f"xml {k} (nothing)")


MUTATORS = [(m_param, 34), (m_section, 6), (m_remove, 6), (m_unknown, 6), (m_xml, 30), (m_seed, 6),
            (m_config, 9), (m_cli, 3)]
MODELS = {}
CALIBRATIONS = []


def make_case(n, seeds, seed):
    rng = random.Random(f"scenario_fuzz/{seed}/{n}")
    s = rng.choice(seeds)
    case = Case(n, s)
    # the output goes to the case's folder
    outs = [c for c in case.doc.root.elements() if c.tag == "output"]
    if outs:
        outs[0].set("dir", "out")
    else:
        case.doc.root.children.append(Node("output", [("dir", "out")]))
    for _ in range(1 if rng.random() < 0.6 else 2):
        f = rng.choices([m for m, _ in MUTATORS], [w for _, w in MUTATORS])[0]
        f(case, rng)
    text = case.doc.text()
    data = text.encode("utf-8", "surrogatepass")
    for mark, b in BAD_BYTES.items():
        data = data.replace(mark.encode("utf-8"), b)
    for _, f in case.byte_edits:
        data = f(data)
    case.data = data
    if case.out_arg:
        case.out_dir = "out"
    return case


# --------------------------------------------------------------------------------------------
# Running and classifying
# --------------------------------------------------------------------------------------------

LIVE = set()
LIVE_LOCK = threading.Lock()
STOP = threading.Event()


def run_cmd(cmd, cwd, timeout):
    return run_command(cmd, cwd, timeout, stdout=False, env=dict(os.environ, LC_ALL="C"), live=(LIVE, LIVE_LOCK))


PREFIX = "simcore: error: "
LOC_FILE = re.compile(r"^[^\s:][^:]*:\d+(:\d+)?( \([^)]*\))?: ")
LOC_OPTION = re.compile(r"^(--[A-Za-z][\w-]*|command line: )")
MEMORY = re.compile(r"^[^:]+: the run (took .* of memory, past|needs at least .* of memory: .*; past) its limit")


def classify(res, stage, case, cwd):
    if res["timeout"]:
        return "slow" if case.counts or (stage == "run" and case.slow_estimate) else "timeout"
    failed, lines = failure_class(res)
    if failed:
        return failed
    rc = res["rc"]
    if rc == 0:
        if lines:
            return "noise"
        if stage == "run" and case.out_dir is not None and not any(
                "summary.json" in files for _, _, files in os.walk(cwd)):
            return "no-summary"
        return "ok"
    line = lines[0]
    if not line.startswith(PREFIX):
        return "exit2-no-location"
    msg = line[len(PREFIX):]
    if not (LOC_FILE.match(msg) or LOC_OPTION.match(msg) or MEMORY.match(msg)):
        return "exit2-no-location"
    if "expected" not in msg:
        return "exit2-no-expected"
    return "refused"


def normalise(res, cls, case):
    if cls == "timeout":
        return "timeout: " + ", ".join(sorted({re.sub(r"[=(].*", "", l) for l in case.labels}))

    def unmask(text):
        for a in sorted(set(case.args), key=len, reverse=True):
            if len(a) > 3 and not (a.startswith("--") and "=" not in a):
                text = text.replace(a, "<ARG>")
        return text

    return flagged_key(res, cls, unmask)


def run_case(case, args, root):
    if STOP.is_set():
        return None
    d = tempfile.mkdtemp(prefix=f"c{case.n:04d}-", dir=root)
    try:
        with open(os.path.join(d, SCENARIO), "wb") as f:
            f.write(case.data)
        for name, body in case.aux.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(body)
        mm = ["--max-memory", args.max_memory]
        stages = []
        cmd = [args.bin, "validate", SCENARIO] + case.args + mm
        res = run_cmd(cmd, d, args.timeout)
        cls = classify(res, "validate", case, d)
        stages.append(("validate", cls, res))
        if res["rc"] == 0 and not res["timeout"]:
            cmd = [args.bin, "run", SCENARIO] + case.args + (["--out", "out"] if case.out_arg else []) + ["--quiet"] + mm
            res = run_cmd(cmd, d, args.timeout)
            if res["timeout"] and not case.counts:
                expected = expected_seconds(case, args)
                if expected is not None and expected >= 0.5 * args.timeout:
                    case.slow_estimate = expected
            cls = classify(res, "run", case, d)
            stages.append(("run", cls, res))
        flagged = [s for s in stages if s[1] in FLAGGED]
        if flagged and args.keep:
            dest = os.path.join(args.keep, f"s{args.seed}-{case.n:04d}")
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            for name in [SCENARIO] + sorted(case.aux):
                shutil.copy(os.path.join(d, name), dest)
            with open(dest + ".txt", "w") as f:
                f.write(f"case {case.n} (seed {args.seed}) from {case.seed.rel}\nmutations: {'; '.join(case.labels)}\n")
                for n in case.notes:
                    f.write(f"  {n}\n")
                if case.counts:
                    f.write(f"counts >= {SLOW_COUNT:g}: {case.counts}\n")
                f.write(stages_report(stages, dest))
        return {"n": case.n, "labels": case.labels, "counts": case.counts, "slow_estimate": case.slow_estimate,
                "seed": case.seed.rel,
                "stages": stage_summaries(stages, lambda r, c: normalise(r, c, case) if c in FLAGGED or c == "refused"
                                          else None)}
    finally:
        shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def main():
    ap = fuzzer_parser(__doc__, 300, 30, "folder for the flagged cases' files and a .txt each",
                       "scenarios/<model>/*.xml")
    ap.add_argument("--max-memory", default="2GiB", help="passed to simcore (default 2GiB)")
    ap.add_argument("--models", help="comma-separated models (default: every model with a scenario)")
    ap.add_argument("--show-refused", type=int, default=0, metavar="K",
                    help="also list the K most common (normalised) refusals, to see how deep the cases get")
    ap.add_argument("--dump", help="write the generated cases to this folder and run nothing")
    args = ap.parse_args()
    if not args.bin:
        ap.error("--bin or SIMCORE_BIN is required")
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        ap.error(f"{args.bin} is not executable")
    if args.cases < 0 or args.jobs < 1 or args.timeout <= 0:
        ap.error("--cases >= 0, --jobs >= 1 and --timeout > 0 expected")
    args.source = os.path.abspath(args.source)
    if args.keep:
        args.keep = os.path.abspath(args.keep)
        os.makedirs(args.keep, exist_ok=True)

    MODELS.update(load_models(args.bin))
    CALIBRATIONS.extend(sorted(glob.glob(os.path.join(args.source, "tests", "data", "*", "*.json")))
                        + sorted(glob.glob(os.path.join(args.source, "calibration", "traces", "*", "*.json"))))
    wanted = set(args.models.split(",")) if args.models else None
    if wanted and wanted - set(MODELS):
        ap.error(f"unknown models: {', '.join(sorted(wanted - set(MODELS)))}")
    seeds = load_seeds(args.source, MODELS, wanted)
    if not seeds:
        ap.error(f"no seed scenario under {args.source}/scenarios/<model>/")
    cases = [make_case(n, seeds, args.seed) for n in range(1, args.cases + 1)]

    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        h = hashlib.sha256()
        for c in cases:
            base = os.path.join(args.dump, f"{c.n:04d}")
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(base, SCENARIO), "wb") as f:
                f.write(c.data)
            for name, body in c.aux.items():
                with open(os.path.join(base, name), "wb") as f:
                    f.write(body)
            meta = json.dumps({"seed": c.seed.rel, "args": c.args, "labels": c.labels, "notes": c.notes},
                              ensure_ascii=True)
            with open(os.path.join(base, "case.json"), "w") as f:
                f.write(meta + "\n")
            h.update(c.data)
            h.update(meta.encode())
            for name in sorted(c.aux):
                h.update(name.encode() + c.aux[name])
        print(f"{len(cases)} cases written to {args.dump}; sha256 {h.hexdigest()}")
        return 0

    root = tempfile.mkdtemp(prefix=f"sfuzz-s{args.seed}-")
    results = {}
    t0 = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = {ex.submit(run_case, c, args, root): c.n for c in cases}
            done = 0
            for fut in concurrent.futures.as_completed(futs):
                r = fut.result()
                done += 1
                if r is not None:
                    results[r["n"]] = r
                if not args.quiet and (done % 25 == 0 or done == len(cases)):
                    nflag = sum(1 for x in results.values() if any(c in FLAGGED for _, c, _ in x["stages"]))
                    print(f"[{time.monotonic() - t0:6.0f} s] {done}/{len(cases)} cases, {nflag} flagged",
                          file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        STOP.set()
        with LIVE_LOCK:
            for p in list(LIVE):
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        print("interrupted", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)

    # ---- report
    table = collections.Counter()
    groups = collections.OrderedDict()
    slow = []
    for n in sorted(results):
        r = results[n]
        for stage, cls, info in r["stages"]:
            table[(stage, cls)] += 1
            if cls in FLAGGED:
                groups.setdefault(info["key"], []).append((r, stage, info))
            if cls == "slow":
                slow.append((r, stage))
    print(f"scenario_fuzz: seed {args.seed}, {len(results)} cases, binary {args.bin}, "
          f"{time.monotonic() - t0:.0f} s")
    print(f"{'class':20} {'validate':>9} {'run':>6}")
    for cls in CLASSES:
        v, rr = table[("validate", cls)], table[("run", cls)]
        if v or rr:
            print(f"{cls:20} {v:9} {rr:6}{'   <- flagged' if cls in FLAGGED else ''}")
    if slow:
        print(f"\nslow (timed out with a count >= {SLOW_COUNT:g}, or counts that grew the seed's run time past "
              f"half the timeout; not flagged): {len(slow)}")
        for r, stage in slow[:10]:
            why = f" (expected {r['slow_estimate']:.0f} s)" if r.get("slow_estimate") else ""
            print(f"  case {r['n']} [{stage}] {r['seed']}: {'; '.join(r['labels'])[:150]}{why}")
    nflag = sum(1 for r in results.values() if any(c in FLAGGED for _, c, _ in r["stages"]))
    if args.show_refused:
        refused = collections.Counter(f"[{stage}] {info['key']}" for r in results.values()
                                      for stage, cls, info in r["stages"] if cls == "refused")
        print(f"\nmost common refusals ({sum(refused.values())} in all, {len(refused)} distinct):")
        for key, cnt in refused.most_common(args.show_refused):
            print(f"  {cnt:4} {key[:160]}")
    if groups:
        print(f"\n{len(groups)} distinct flagged problems in {nflag} cases:")
        for i, (key, items) in enumerate(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])), 1):
            print(f"\n#{i} ({len(items)} cases) {key}")
            for r, stage, info in items[:3]:
                print(f"  case {r['n']} [{stage}, exit {info['rc']}, {info['seconds']:.1f} s] {r['seed']}: "
                      f"{'; '.join(r['labels'])[:200]}")
                print(f"    stderr: {info['stderr'][:200]!r}")
    else:
        print("\nnothing flagged")
    if args.keep and groups:
        print(f"\nflagged cases kept in {args.keep} (s{args.seed}-NNNN/ and s{args.seed}-NNNN.txt)")
    return 1 if nflag else 0


if __name__ == "__main__":
    sys.exit(main())
