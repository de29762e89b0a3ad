"""Calibration: benchmarks write traces h5py reads, `simcore calibrate` fits them, a profile
changes a simulation the way it should, bad input is refused."""

import json
import os
import pathlib
import platform
import resource
import shutil
import subprocess

import h5py
import numpy as np
import pytest

BIN = pathlib.Path(os.environ["SIMCORE_BIN"]).resolve().parent
ROOT = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
SIMCORE = str(BIN / "simcore")
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def calibrate(tmp_path, *traces):
    out = tmp_path / "profile.json"
    res = subprocess.run([SIMCORE, "calibrate", *map(str, traces), "-o", str(out)], capture_output=True, text=True)
    return res, out


def synthetic_trace(path):
    """A new trace file (an open h5py.File) with the root attributes the fitter reads."""
    f = h5py.File(path, "w")
    f.attrs["schema"] = "simcore-calibration-trace/1"
    f.attrs["host"] = "synthetic"
    return f


def fitted(tmp_path, *traces):
    """The profile `simcore calibrate` fits from `traces`, which must succeed."""
    res, out = calibrate(tmp_path, *traces)
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text())


def write_synthetic_pingpong(path, latency, bandwidth, noise=0.0, placement="inter-node"):
    """A trace as h5py writes it: one-way time = latency + size / bandwidth."""
    rng = np.random.default_rng(3)
    sizes = 2.0 ** np.arange(0, 25)
    one_way = latency + sizes / bandwidth
    rt = 2 * one_way[:, None] * (1 + noise * rng.standard_normal((len(sizes), 5)))
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = placement
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"


def test_stream_benchmark_writes_a_readable_trace(tmp_path):
    trace = tmp_path / "stream.h5"
    subprocess.run([str(BIN / "calib_stream"), "--bytes", "4000000", "--threads", "1,2", "--repetitions", "2", "-o",
                    str(trace)], check=True, capture_output=True)
    with h5py.File(trace, "r") as f:
        for key in ("host", "cpu_model", "isa", "gpu", "compiler", "flags", "date", "git_revision", "schema"):
            assert key in f.attrs
        # The revision of the build that measured (taken at build time, "-dirty" for local changes).
        revision = f.attrs["git_revision"]
        revision = revision.decode() if isinstance(revision, bytes) else revision
        source = os.environ["SIMCORE_SOURCE_DIR"]
        if (pathlib.Path(source) / ".git").exists():
            commit = revision.removesuffix("-dirty")
            assert len(commit) >= 7 and all(c in "0123456789abcdef" for c in commit), revision
            assert subprocess.run(["git", "-C", source, "cat-file", "-e", commit + "^{commit}"]).returncode == 0
        # How it was built: the build type's flags and its own -O3 (the release flags were
        # recorded whatever the build type), and no GPU where the driver lists none.
        flags = f.attrs["flags"]
        assert "-O3" in flags.split() and flags == " ".join(flags.split()), flags
        if not pathlib.Path("/proc/driver/nvidia/gpus").exists() and not pathlib.Path("/dev/nvidia0").exists():
            assert f.attrs["gpu"] == "none"
        g = f["stream"]
        assert list(g["threads"][()]) == [1, 2]
        assert g["copy_bandwidth"].shape == (2, 2)
        assert g["copy_bandwidth"].attrs["unit"] in (b"Bps", "Bps")
        assert (g["triad_bandwidth"][()] > 1e8).all()


@pytest.mark.skipif(shutil.which("mpirun") is None or not (BIN / "calib_pingpong").exists(), reason="no MPI")
def test_pingpong_benchmark_and_fit_on_this_machine(tmp_path):
    trace = tmp_path / "pp.h5"
    subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(BIN / "calib_pingpong"), "--max", "1048576",
                    "--repetitions", "3", "--per-octave", "2", "-o", str(trace)], check=True, capture_output=True,
                   env=MPI_ENV, timeout=300)
    # Powers of two from 1 B to 1 MiB and the sizes halfway between (3, 6, 12, ...).
    expected = sorted({2**k for k in range(21)} | {3 * 2**k for k in range(19)})
    with h5py.File(trace, "r") as f:
        assert f["pingpong"].attrs["placement"] in (b"intra-node", "intra-node")
        assert f["pingpong"].attrs["buffers"] in (b"per-size", "per-size")  # the default
        assert list(f["pingpong/size"][()]) == expected
        assert f["pingpong/round_trip"].shape == (len(expected), 3)
        assert f["pingping/time"].shape == (len(expected), 3)
        assert f["one_way/time"].shape == (len(expected), 3)
        assert (f["pingping/time"][()] > 0).all()
    p = fitted(tmp_path, trace)
    assert p["simgrid_config"]["network/model"] == "SMPI"
    assert float(p["simgrid_config"]["network/loopback-bw"]) > 1e8
    # Fit quality depends on how quiet the machine is (shared here): only its presence is checked.
    q = p["quality"]["network"]
    assert {"r2", "median_rel_error", "max_rel_error", "segments"} <= set(q) and len(q["segments"]) >= 1
    assert q["pattern"] == "pingping" and "pingpong_fit_not_applied" in q
    assert q["buffers"] == "per-size"
    # Asked for, the ping-pong times are applied instead.
    res2 = subprocess.run([str(BIN / "simcore"), "calibrate", str(trace), "-o", str(tmp_path / "pp.json"),
                           "--network-pattern", "pingpong"], capture_output=True, text=True)
    assert res2.returncode == 0, res2.stderr
    assert json.loads((tmp_path / "pp.json").read_text())["quality"]["network"]["pattern"] == "pingpong"
    # One large buffer for every size, as asked, says so; it measures the same sizes.
    shared = tmp_path / "shared.h5"
    subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(BIN / "calib_pingpong"), "--max", "65536",
                    "--repetitions", "2", "--buffers", "shared", "-o", str(shared)], check=True, capture_output=True,
                   env=MPI_ENV, timeout=300)
    with h5py.File(shared, "r") as f:
        assert f["pingpong"].attrs["buffers"] in (b"shared", "shared")
        sizes = list(f["pingpong/size"][()])
        assert sizes[0] == 1 and sizes[-1] == 65536 and sizes == sorted(set(sizes))
        assert f["pingping/time"].shape == (len(sizes), 2)
        assert (f["one_way/time"][()] > 0).all()


def test_fitter_recovers_a_synthetic_network(tmp_path):
    trace = tmp_path / "synthetic.h5"
    write_synthetic_pingpong(trace, 5e-6, 2e9, noise=0.01)
    p = fitted(tmp_path, trace)
    link = p["links"][0]
    assert link["match"] == ".*"
    assert float(link["latency"].rstrip("s")) == pytest.approx(5e-6, rel=0.05)
    assert float(link["bandwidth"].rstrip("Bps")) == pytest.approx(2e9, rel=0.02)
    assert p["quality"]["network"]["median_rel_error"] < 0.02
    assert p["quality"]["network"]["protocol_switch"] == 0


def run_halo(tmp_path, name, params, profile=None, metric="makespan", extra=(), platform=None):
    """One metric of a 2-rank halo scenario on platforms/single_node.xml (1 Gf cores) with the
    given <param> values (name: value; None leaves one out) and, optionally, a profile."""
    platform = platform or ROOT / "platforms" / "single_node.xml"
    scenario = tmp_path / ("halo_%s.xml" % name)
    calibration = "" if profile is None else f'<calibration file="{profile}"/>'
    lines = "\n".join(f'  <param name="{k}" value="{v}"/>' for k, v in params.items() if v is not None)
    scenario.write_text(f"""<?xml version="1.0"?>
<scenario model="halo" seed="1">
  <platform file="{platform}"/>
  {calibration}
  <param name="ranks" value="2"/>
  <param name="procs" value="2,1,1"/>
{lines}
</scenario>
""")
    out = subprocess.run([SIMCORE, "run", str(scenario), "--json", "--quiet", "--out", str(tmp_path / name), *extra],
                         capture_output=True, text=True, check=True).stdout
    metrics = json.loads(out)["metrics"]
    return metrics if metric is None else metrics[metric]


def halo_time(tmp_path, profile):
    """Makespan of one transfer-bound exchange (SMPI mode, 1 x 500 x 500 cells, no compute)."""
    return run_halo(tmp_path, profile.stem, {"ranks_per_node": 2, "local_cells": "1,500,500", "periodic": "false",
                                             "variables": 1, "iterations": 1, "flops_per_cell": 0, "mode": "smpi"},
                    profile)


def test_profile_doubling_the_bandwidth_halves_a_transfer_bound_time(tmp_path):
    profiles = {}
    for name, bw in (("slow", 1e9), ("fast", 2e9)):
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {
            "network/model": "CM02", "network/loopback-bw": str(bw), "network/loopback-lat": "0"}}))
    slow, fast = halo_time(tmp_path, profiles["slow"]), halo_time(tmp_path, profiles["fast"])
    assert slow == pytest.approx(2e6 / 1e9, rel=1e-6)  # one 2 MB face over the loopback
    assert fast == pytest.approx(slow / 2, rel=1e-9)


def test_a_fitted_protocol_switch_sets_the_halo_eager_limit_in_detailed_mode(tmp_path):
    """A 12.8 kB face between two ranks of one node: a single copy under the default 4 KiB
    eager limit; eager under a profile whose intra-node switch lies at 16 KiB; a single copy
    again where the scenario sets the limit itself, or in SMPI mode."""
    profile = tmp_path / "switch.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
        "network_protocol_switch_intra_node": {"value": 16384, "unit": "B"}}}))
    params = {"ranks_per_node": 2, "local_cells": "1,40,40", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0}

    def messages(name, extra, prof):
        m = run_halo(tmp_path, name, {**params, **extra}, prof, metric=None)
        return m.get("intra_eager_messages", 0), m.get("intra_single-copy_messages", 0)

    assert messages("plain", {}, None) == (0, 2)
    assert messages("fitted", {}, profile) == (2, 0)
    assert messages("given", {"intra_eager_limit": "4KiB"}, profile) == (0, 2)  # the scenario's value wins
    # SMPI mode keeps SMPI's own detached threshold: the profile changes nothing there.
    smpi = run_halo(tmp_path, "smpi", {**params, "mode": "smpi"}, profile, metric="makespan")
    smpi_plain = run_halo(tmp_path, "smpi_plain", {**params, "mode": "smpi"}, None, metric="makespan")
    assert smpi == smpi_plain


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such trace file"),
    (lambda p: p.write_text("not hdf5"), "is not an HDF5 file; expected a calibration trace"),
    (lambda p: h5py.File(p, "w").close(), "root attribute 'schema' is ''; expected 'simcore-calibration-trace/1'"),
])
def test_bad_traces_are_refused(tmp_path, make, message):
    trace = tmp_path / "bad.h5"
    make(trace)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) in res.stderr and message in res.stderr
    assert not out.exists()


def _array_root_attribute(f):
    f.attrs["host"] = np.array([b"node-a"] * 1000)


def _list_of_texts(f):
    f["pingpong"].attrs["placement"] = ["intra-node"] * 64


def _two_fixed_texts(f):
    f["pingpong"].attrs["placement"] = np.array([b"intra-node", b"inter-node"])


def _unit_as_list(f):
    f["pingpong/round_trip"].attrs["unit"] = ["s", "s"]


def _boolean(f):
    f["pingpong"].attrs["flag"] = True


@pytest.mark.parametrize("spoil, where, message", [
    (_array_root_attribute, "(root)", "attribute 'host' holds 1000 values"),  # read past one value: a crash
    (_list_of_texts, "(pingpong)", "attribute 'placement' holds 64 values"),  # looped for ever
    (_two_fixed_texts, "(pingpong)", "attribute 'placement' holds 2 values"),  # fitted as the first
    (_unit_as_list, "(pingpong) (dataset round_trip)", "attribute 'unit' holds 2 values"),
    (_boolean, "(pingpong)", "attribute 'flag' is neither text nor a number (HDF5: an enum (h5py's bool is one))"),
])
def test_attributes_of_more_than_one_value_or_of_no_known_kind_are_refused(tmp_path, spoil, where, message):
    """h5py stores a list as an array attribute: the reader once read such a root attribute into
    room for one value (a segmentation fault), looped on a list of texts, and fitted two
    placements as the first. Each is bad input now, naming the file, the object and the
    attribute; nothing is written."""
    trace = tmp_path / "bad.h5"
    write_synthetic_pingpong(trace, 2e-6, 1e9)
    with h5py.File(trace, "a") as f:
        spoil(f)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2, res.stderr
    assert f"{trace} {where}: {message}; expected one value, a text or a number" in res.stderr
    assert not out.exists()


def test_numeric_attributes_are_read_as_their_numbers(tmp_path):
    """A parameter h5py writes as a number (miss_rate = 0.9) was dropped: the profile said "?"
    and traces of different workloads were pooled. Numbers now read as text that reads back to
    the same value: integers exactly, floats in the fewest digits that do."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_hash(a, 1e8, 2e8, 100e-9)
    write_synthetic_hash(b, 1e8, 2e8, 100e-9)
    for path, miss in ((a, 0.9), (b, 0.5)):
        with h5py.File(path, "a") as f:
            f["hash_table"].attrs["miss_rate"] = miss
            f["hash_table"].attrs["buckets"] = np.int64(2 ** 40 + 1)
    doc = fitted(tmp_path, a)["rates"]["hash_lookup_rate"]["doc"]
    assert "90 % misses" in doc or "0.9" in doc, doc
    json_trace = tmp_path / "a.json"
    subprocess.run([str(BIN / "calib_trace_convert"), str(a), "-o", str(json_trace)], check=True)
    params = json.loads(json_trace.read_text())["benchmarks"]["hash_table"]["parameters"]
    assert params["miss_rate"] == "0.9" and params["buckets"] == str(2 ** 40 + 1)
    res, out = calibrate(tmp_path, a, b)
    assert res.returncode == 2 and "expected the same workload on every node of a host type" in res.stderr


def test_the_profile_never_replaces_a_trace_or_a_folder(tmp_path):
    """-o naming one of the traces once replaced its measurements with the profile's JSON, and
    -o naming a folder ended with an internal error (exit 1)."""
    trace = tmp_path / "s.h5"
    write_synthetic_pingpong(trace, 2e-6, 1e9)
    before = trace.read_bytes()
    for out, message in ((trace, f"-o {trace} is also a trace to fit ({trace})"),
                         (tmp_path, f"{tmp_path}: is a folder; expected the path of a file to write")):
        res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out)], capture_output=True, text=True)
        assert res.returncode == 2 and message in res.stderr, res.stderr
    assert trace.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]


@pytest.mark.parametrize("benchmark, dataset, message", [
    ("pingpong", "copy/bandwidth", "dataset 'copy/bandwidth'; expected a name that is not empty, not '.', without '/'"),
    ("a/b", "size", "benchmark 'a/b'; expected a name"),
    ("pingpong", "", "dataset ''; expected a name"),
])
def test_trace_convert_refuses_names_hdf5_cannot_hold(tmp_path, benchmark, dataset, message):
    """A name with '/' or an empty one made HDF5 fail with its error stack and exit 1."""
    src = tmp_path / "bad.json"
    src.write_text(json.dumps({"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {
        benchmark: {"parameters": {}, "datasets": {dataset: {"unit": "B", "shape": [1], "values": [1]}}}}}))
    out = tmp_path / "out.h5"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and message in res.stderr and "HDF5-DIAG" not in res.stderr, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_units_are_read_and_converted(tmp_path):
    """The fitter reads each dataset's unit: times in us and bandwidths in GB/s give the profile
    that s and B/s give (it once took 2 us as 2 s and 5 GB/s as 5 B/s)."""
    law = two_segment_law(1e-6, 5e9, 65536, 1e-5, 1e10)
    si, scaled = tmp_path / "si.h5", tmp_path / "scaled.h5"
    write_synthetic_network(si, POWERS, law, law)
    write_synthetic_network(scaled, POWERS, law, law)
    stream_si = tmp_path / "stream_si.h5"
    write_synthetic_stream(stream_si, 2e10, 3e10)
    with h5py.File(scaled, "a") as f:
        for group, name in (("pingpong", "round_trip"), ("pingping", "time")):
            d = f[group][name]
            d[...] = d[()] * 1e6
            d.attrs["unit"] = "us"
        f["pingpong/size"][...] = f["pingpong/size"][()] / 1024
        f["pingpong/size"].attrs["unit"] = "KiB"
        f["pingping/size"][...] = f["pingping/size"][()] / 1024
        f["pingping/size"].attrs["unit"] = "KiB"
    stream_gb = tmp_path / "stream_gb.h5"
    write_synthetic_stream(stream_gb, 2e10, 3e10)
    with h5py.File(stream_gb, "a") as f:
        for name in ("copy_bandwidth", "triad_bandwidth"):
            d = f["stream"][name]
            d[...] = d[()] / 1e9
            d.attrs["unit"] = "GB/s"
    a = fitted(tmp_path, si, stream_si)
    (tmp_path / "b").mkdir()
    b = fitted(tmp_path / "b", scaled, stream_gb)
    assert b["network_factors"] == a["network_factors"]
    for x, y in zip(a["quality"]["network"]["segments"], b["quality"]["network"]["segments"]):
        assert y["from"] == x["from"]
        assert y["latency"] == pytest.approx(x["latency"], rel=1e-9)
        assert y["bandwidth"] == pytest.approx(x["bandwidth"], rel=1e-9)
    assert b["rates"]["memcpy_bandwidth"]["value"] == pytest.approx(a["rates"]["memcpy_bandwidth"]["value"], rel=1e-9)


@pytest.mark.parametrize("dataset, unit, expected", [
    ("round_trip", "fortnights", "expected 's', 'ms', 'us', '\u00b5s', 'ns'"),
    ("round_trip", "", "expected 's', 'ms'"),  # a time without a unit
    ("size", "bytes", "expected 'B', 'kB', 'KiB', 'MB', 'MiB', 'GB', 'GiB'"),
])
def test_a_unit_the_fitter_does_not_know_is_refused(tmp_path, dataset, unit, expected):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        f["pingpong"][dataset].attrs["unit"] = unit
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert f"{trace} (pingpong): dataset '{dataset}' has unit '{unit}'; {expected}" in res.stderr, res.stderr
    assert not out.exists()


def test_calibrate_needs_traces_and_an_output(tmp_path):
    res = subprocess.run([SIMCORE, "calibrate"], capture_output=True, text=True)
    assert res.returncode == 2 and "expected simcore calibrate TRACE.h5... -o PROFILE.json" in res.stderr


def test_dgemm_benchmark_sets_the_host_speed(tmp_path):
    trace = tmp_path / "dgemm.h5"
    subprocess.run([str(BIN / "calib_dgemm"), "--sizes", "64,128", "--repetitions", "2", "-o", str(trace)], check=True,
                   capture_output=True)
    with h5py.File(trace, "r") as f:
        g = f["dgemm"]
        assert g.attrs["path"] in ("avx512", "portable")
        if platform.machine() == "x86_64":  # the AVX-512 kernel's own flags are recorded
            assert "-mavx512f" in f.attrs["flags"], f.attrs["flags"]
        assert float(g.attrs["max_rel_error_vs_reference"]) < 1e-10
        gflops = g["gflops"][()]
    p = fitted(tmp_path, trace)
    speed = float(p["hosts"][0]["speed"].rstrip("f"))
    assert speed == pytest.approx(np.median(gflops[1]) * 1e9, rel=1e-5)


@pytest.mark.skipif(not (BIN / "calib_hash").exists(), reason="calib_hash needs Abseil, oneTBB and Boost")
def test_hash_benchmark_compares_every_structure_on_one_workload(tmp_path):
    trace = tmp_path / "hash.h5"
    subprocess.run([str(BIN / "calib_hash"), "--buckets", "4096", "--queries", "100000", "--repetitions", "1", "-o",
                    str(trace)], check=True, capture_output=True)
    with h5py.File(trace, "r") as f:
        g = f["hash_table"]
        names = g.attrs["structures"].split(",")
        assert names[:3] == ["simd_table", "simd_table_batched", "simd_table_batched_scalar"]
        assert {"absl_flat_hash_map", "std_unordered_map", "tbb_concurrent_hash_map"} <= set(names)
        hits = g["hit_share"][()]
        assert len(hits) == len(names) == 9
        # Same answers, exactly: at load 0.7 the default layout (1/8 secondary) stores every key.
        assert (hits == hits[0]).all() and abs(hits[0] - 0.1) < 0.01  # 90 % misses
        assert list(g["refused_key_queries"][()]) == [0, 0, 0]
        assert (g["lookup_rate"][()] > 0).all()
        assert list(g["secondary_share"][()]) == [0, 0.125, 0.25, 0.5]
        keys = int(g.attrs["keys"])
        failures = g["insert_failure_rate"][()] * keys
        assert np.array_equal(failures, np.round(failures))  # whole keys
        # One secondary bucket (share 0) takes 16 of the keys both primary buckets pass on:
        # at this load more pass on, where the default layout refuses none.
        assert failures[1] == 0 and failures[0] > 0
        lines = g["random_line_rate"][()]
        assert list(g["chains"][()])[0] == 1 and lines.max() >= lines[0] > 0  # overlapped misses: at least as fast
        # Parameters written as numbers keep their digits (a latency of 5 ns is not "0.000000").
        assert float(g.attrs["memory_latency_s"]) == pytest.approx(1 / lines[0], rel=1e-8)
        assert float(g.attrs["memory_bound_lines_per_s"]) == pytest.approx(lines.max(), rel=1e-8)
        huge = g["huge_page_share"][()]  # of the pipelined table's memory, per repetition (a 1 MiB table: none)
        assert huge.shape == (1,) and 0 <= huge[0] <= 1
        # The loop alone, in the caches: a table of at most 2048 buckets (here 2048 of 4096).
        assert int(g.attrs["in_cache_buckets"]) == 2048
        in_cache = g["in_cache_lookup_rate"]
        assert in_cache.shape == (1,) and in_cache.attrs["unit"] in (b"1/s", "1/s") and in_cache[0] > 0
        # Each round's own bound, next to its structures: one chain (the latency), then many.
        latency, bound = g["round_memory_latency"][()], g["round_random_line_rate"][()]
        assert latency.shape == bound.shape == (1,) and bound[0] * latency[0] > 1
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    rates = json.loads(out.read_text())["rates"]
    with h5py.File(trace, "r") as f:
        batched = np.median(f["hash_table/lookup_rate"][()][1])
    assert rates["hash_lookup_rate"]["value"] == pytest.approx(batched)
    assert rates["random_line_rate"]["value"] == pytest.approx(lines.max())
    assert rates["memory_latency"]["value"] == pytest.approx(1 / lines[0])
    # The insertion failures per layout, carried into the quality section as measured.
    layouts = json.loads(out.read_text())["quality"]["hash"]["insert_failure_rate_by_layout"]
    assert [x["secondary_share"] for x in layouts] == [0, 0.125, 0.25, 0.5]
    assert [x["insert_failure_rate"] for x in layouts] == pytest.approx(list(failures / int(keys)), rel=1e-12)


@pytest.mark.skipif(not (BIN / "calib_hash").exists(), reason="calib_hash needs Abseil, oneTBB and Boost")
def test_hash_benchmark_accounts_for_the_keys_the_table_refuses(tmp_path):
    """At load 0.95 the table refuses keys: it must find what the maps find less the queries of
    those keys, exactly (else exit 1 and no trace), and the seeded workload repeats."""
    runs = []
    for name in ("a.h5", "b.h5"):
        trace = tmp_path / name
        res = subprocess.run([str(BIN / "calib_hash"), "--buckets", "4096", "--load", "0.95", "--queries", "100000",
                              "--repetitions", "1", "-o", str(trace)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
        with h5py.File(trace, "r") as f:
            g = f["hash_table"]
            queries, keys = int(g.attrs["queries"]), int(g.attrs["keys"])
            runs.append({d: g[d][()] for d in ("hit_share", "refused_key_queries", "insert_failure_rate")})
    hits = np.round(runs[0]["hit_share"] * queries)
    refused = runs[0]["refused_key_queries"]
    assert refused[0] > 0 and (refused == refused[0]).all()  # the three variants refuse the same keys
    assert (hits[3:] == hits[3]).all()  # the maps: what std::unordered_map finds
    assert (hits[:3] == hits[3] - refused).all()
    # Failures per layout (share 0, 1/8, 1/4, 1/2), in keys: the default 1/8 refuses fewest, a
    # larger secondary region more (the primary one fills), a single secondary bucket most (the
    # same order at loads 0.95 and 1, float and double keys, 1024 to 16384 buckets).
    failures = np.round(runs[0]["insert_failure_rate"] * keys)
    assert 0 < failures[1] < failures[2] < failures[3] < failures[0]
    for d in runs[0]:  # seeded: the same keys, queries and answers each run
        assert np.array_equal(runs[0][d], runs[1][d]), d


def write_synthetic_stencil(path, cells, rates, stencil="7-point", variables=5):
    """A calib_stencil trace as h5py writes it: `rates` holds one row of repetitions per size."""
    rates = np.asarray(rates, dtype=float)
    with synthetic_trace(path) as f:
        g = f.create_group("stencil")
        g.attrs["stencil"] = stencil
        g.attrs["variables"] = str(variables)
        g.attrs["flops_per_cell_nominal"] = str(8 * variables)
        g.create_dataset("cells", data=np.asarray(cells, dtype=float)).attrs["unit"] = ""
        cubes = np.asarray(cells, dtype=float)[:, None] ** 3
        g.create_dataset("seconds", data=cubes / rates).attrs["unit"] = "s"
        g.create_dataset("cell_rate", data=rates).attrs["unit"] = "1/s"


def write_synthetic_dgemm(path, sizes, gflops):
    with synthetic_trace(path) as f:
        g = f.create_group("dgemm")
        g.attrs["path"] = "portable"
        g.create_dataset("size", data=np.asarray(sizes, dtype=float)).attrs["unit"] = ""
        g.create_dataset("gflops", data=np.asarray(gflops, dtype=float)).attrs["unit"] = "Gflop/s"


# Three sizes, five repetitions; the largest (64) is not the last row, and its median (2e8)
# is neither its first nor its mean.
STENCIL_CELLS = [16, 64, 32]
STENCIL_RATES = [[4.0e8, 4.1e8, 3.9e8, 4.0e8, 4.2e8],
                 [2.1e8, 1.9e8, 2.0e8, 2.5e8, 1.5e8],
                 [3.0e8, 3.0e8, 3.1e8, 2.9e8, 3.0e8]]


@pytest.mark.parametrize("dgemm_first", [False, True])
def test_fitter_turns_stencil_and_dgemm_traces_into_flops_per_cell(tmp_path, dgemm_first):
    stencil, dgemm = tmp_path / "stencil.h5", tmp_path / "dgemm.h5"
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    write_synthetic_dgemm(dgemm, [256, 512], [[30.0, 31.0, 29.0], [41.0, 40.0, 43.0]])
    p = fitted(tmp_path, *((dgemm, stencil) if dgemm_first else (stencil, dgemm)))
    speed = float(p["hosts"][0]["speed"].rstrip("f"))  # the speed the simulation applies
    assert speed == pytest.approx(41e9, rel=1e-5)
    rate = p["rates"]["stencil_cell_rate"]["value"]
    assert rate == 2.0e8  # the median at the largest size, 64
    assert p["rates"]["flops_per_cell"]["value"] == speed / rate
    assert p["rates"]["flops_per_cell"]["value"] == pytest.approx(205.0, rel=1e-5)
    # The halo model's cells x flops_per_cell / speed gives back the measured time per cell.
    assert 64 ** 3 * p["rates"]["flops_per_cell"]["value"] / speed == pytest.approx(64 ** 3 / 2.0e8, rel=1e-14)
    q = p["quality"]["stencil"]
    assert q["cells_used"] == 64
    assert [r["cells"] for r in q["cell_rate_by_size"]] == STENCIL_CELLS
    assert [r["cell_rate"] for r in q["cell_rate_by_size"]] == [4.0e8, 2.0e8, 3.0e8]
    spreads = [abs(x - m) / m for row, m in zip(STENCIL_RATES, (4.0e8, 2.0e8, 3.0e8)) for x in row]
    assert q["median_rel_spread"] == pytest.approx(np.median(spreads), rel=1e-12)
    assert q["max_rel_spread"] == pytest.approx(0.25, rel=1e-12)
    assert "note" not in q


def rate_quality(work, rates, rate):
    """R^2 and relative errors of the times work / rate against the times work / rates, as
    the profile defines them (an independent reckoning of the same definition)."""
    work, rates = np.asarray(work, dtype=float), np.asarray(rates, dtype=float)
    t, pred = work / rates, work / rate
    err = np.abs(pred - t) / t
    return 1 - ((pred - t) ** 2).sum() / ((t - t.mean()) ** 2).sum(), err.max(), np.median(err)


def test_every_part_of_the_profile_has_its_fit_quality(tmp_path):
    """R^2, max and median relative error for compute, stencil, memory and hash lookups, as
    for the network: each rate applied to what was measured, as a simulation applies it."""
    stencil, dgemm, stream, hashes = (tmp_path / f"{n}.h5" for n in ("stencil", "dgemm", "stream", "hash"))
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    gflops = [[30.0, 31.0, 29.0], [41.0, 40.0, 43.0]]
    write_synthetic_dgemm(dgemm, [256, 512], gflops)
    with synthetic_trace(stream) as f:  # two thread counts: the fitted rate is the faster one's
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([1.0, 2.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.array([[10e9, 11e9, 9e9], [20e9, 22e9, 18e9]])).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((2, 3), 30e9)).attrs["unit"] = "Bps"
    with synthetic_trace(hashes) as f:
        g = f.create_group("hash_table")
        g.attrs["structures"] = "simd_table,simd_table_batched"
        g.attrs["miss_rate"] = "0.9"
        g.create_dataset("lookup_rate", data=np.array([[1e7] * 3, [1.0e8, 1.2e8, 0.9e8]])).attrs["unit"] = "1/s"
    p = fitted(tmp_path, stencil, dgemm, stream, hashes)
    q = p["quality"]

    # DGEMM: the speed (41 Gflop/s, the median at n = 512) times every size's every repetition.
    work = [2 * n ** 3 for n in (256, 512) for _ in range(3)]
    r2, mx, med = rate_quality(work, np.ravel(gflops) * 1e9, 41e9)
    c = q["compute"][0]
    assert c["r2"] == pytest.approx(r2, rel=1e-9) and 0.9 < r2 < 1
    assert c["max_rel_error"] == pytest.approx(12 / 41, rel=1e-12) == pytest.approx(mx, rel=1e-12)
    assert c["median_rel_error"] == pytest.approx(6 / 41, rel=1e-12) == pytest.approx(med, rel=1e-12)
    assert c["samples"] == 6

    # Stencil: the cell rate (2e8, at 64^3) applied to every size, and at 64^3 alone.
    cubes = [n ** 3 for n, row in zip(STENCIL_CELLS, STENCIL_RATES) for _ in row]
    r2, mx, med = rate_quality(cubes, np.ravel(STENCIL_RATES), 2e8)
    st = q["stencil"]
    assert st["r2"] == pytest.approx(r2, rel=1e-9)
    assert st["max_rel_error"] == pytest.approx(1.1, rel=1e-12)  # 4.2e8 cells/s at 16^3: 2.1 x the rate
    assert st["median_rel_error"] == pytest.approx(med, rel=1e-12)
    assert st["at_largest_size"]["max_rel_error"] == pytest.approx(0.25, rel=1e-12)
    assert st["at_largest_size"]["median_rel_error"] == pytest.approx(0.05, rel=1e-12)
    assert "r2" not in st["at_largest_size"]

    # Memory: memcpy_bandwidth (22 GB/s / 2... the median of the 2-thread row, 20e9 / 2)
    # against that row's repetitions; one array size, so no R^2.
    assert p["rates"]["memcpy_bandwidth"]["value"] == 10e9
    m = q["memory"]
    assert m["max_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert m["median_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert m["r2"] is None and "undefined" in m["r2_note"]

    # Hash lookups: the pipelined table's median (1e8/s) against its repetitions.
    h = q["hash"]
    assert p["rates"]["hash_lookup_rate"]["value"] == 1e8
    assert h["max_rel_error"] == pytest.approx(0.2, rel=1e-12)
    assert h["median_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert h["r2"] is None


def test_one_way_streaming_is_fitted_for_comparison(tmp_path):
    """calib_pingpong's one_way group (a window of MPI_Isend): the time per message of a
    stream, fitted beside the applied fit and not applied."""
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        g = f.create_group("one_way")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        g.create_dataset("time", data=np.repeat((0.5e-6 + POWERS / 8e9)[:, None], 5, axis=1)).attrs["unit"] = "s"
    p = fitted(tmp_path, trace)
    o = p["quality"]["network"]["one_way_fit_not_applied"]
    assert len(o["segments"]) == 1
    assert o["segments"][0]["latency"] == pytest.approx(0.5e-6, rel=1e-6)
    assert o["segments"][0]["bandwidth"] == pytest.approx(8e9, rel=1e-6)
    assert o["r2"] == pytest.approx(1, abs=1e-12) and o["max_rel_error"] < 1e-6
    lat, bw = link_of(p)  # the applied fit is still the ping-pong's
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


def test_a_one_way_group_the_fitter_cannot_read_leaves_only_that_fit_out(tmp_path):
    """The one_way fit is only compared: a zero time there costs a note, not the profile."""
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        g = f.create_group("one_way")
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        times = np.repeat((0.5e-6 + POWERS / 8e9)[:, None], 5, axis=1)
        times[3, 2] = 0
        g.create_dataset("time", data=times).attrs["unit"] = "s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["network"]
    assert "one_way_fit_not_applied" not in q
    assert "one_way not fitted" in q["note"] and "expected positive times" in q["note"]
    assert "note (network): one_way not fitted" in res.stderr
    lat, bw = link_of(json.loads(out.read_text()))
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


@pytest.mark.parametrize("sizes, gflops, message", [
    ([0.0, 256.0], [[10.0] * 3, [20.0] * 3], "dataset 'size' holds 0 at index 0; expected positive matrix orders"),
    ([-64.0], [[10.0] * 3], "dataset 'size' holds -64 at index 0"),
    ([256.0], np.zeros((1, 0)), "dataset 'gflops' has 1 rows of 0 values; expected 1 rows of repetitions"),
])
def test_dgemm_traces_with_bad_sizes_or_no_repetition_are_refused(tmp_path, sizes, gflops, message):
    trace = tmp_path / "d.h5"
    write_synthetic_dgemm(trace, sizes, gflops)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2 and "d.h5 (dgemm)" in res.stderr and message in res.stderr, res.stderr
    assert not out.exists()


def test_fitter_without_a_dgemm_trace_gives_only_the_cell_rate(tmp_path):
    stencil = tmp_path / "stencil.h5"
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    p = fitted(tmp_path, stencil)
    assert p["rates"]["stencil_cell_rate"]["value"] == 2.0e8
    assert "flops_per_cell" not in p["rates"] and "hosts" not in p
    assert "no dgemm trace" in p["quality"]["stencil"]["note"]


@pytest.mark.parametrize("rates, message", [
    ([[1e8, 0.0], [1e8, 1e8]], "cell_rate[0][1] = 0; expected cells per second, a positive number"),
    ([[1e8, 1e8]], "expected one row of repetitions per size"),
])
def test_bad_stencil_traces_are_refused(tmp_path, rates, message):
    trace = tmp_path / "stencil.h5"
    with h5py.File(trace, "w") as f:
        f.attrs["schema"] = "simcore-calibration-trace/1"
        g = f.create_group("stencil")
        g.create_dataset("cells", data=[8.0, 16.0])
        g.create_dataset("cell_rate", data=np.asarray(rates)).attrs["unit"] = "1/s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) + " (stencil)" in res.stderr and message in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("points, flops", [(7, 8), (27, 30)])
def test_stencil_benchmark_writes_a_readable_trace(tmp_path, points, flops):
    trace = tmp_path / "stencil.h5"
    subprocess.run([str(BIN / "calib_stencil"), "--stencil", str(points), "--variables", "2", "--sizes", "8,12",
                    "--repetitions", "3", "-o", str(trace)], check=True, capture_output=True, timeout=60)
    with h5py.File(trace, "r") as f:
        for key in ("host", "cpu_model", "isa", "compiler", "flags", "date", "schema"):
            assert key in f.attrs
        g = f["stencil"]
        assert g.attrs["stencil"] == "%d-point" % points
        assert g.attrs["variables"] == "2"
        assert g.attrs["flops_per_cell_nominal"] == str(2 * flops)
        assert float(g.attrs["max_rel_error_vs_reference"]) < 1e-12
        assert list(g["cells"][()]) == [8, 12]
        seconds, rate = g["seconds"][()], g["cell_rate"][()]
        assert seconds.shape == rate.shape == (2, 3)
        assert g["seconds"].attrs["unit"] == "s" and g["cell_rate"].attrs["unit"] == "1/s"
        assert (rate > 1e5).all()
        assert np.allclose(seconds * rate, np.array([8.0, 12.0])[:, None] ** 3, rtol=1e-12)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["rates"]["stencil_cell_rate"]["value"] == pytest.approx(np.median(rate[1]),
                                                                                              rel=1e-12)


@pytest.mark.parametrize("args", [["--stencil", "9"], ["--sizes", "8,x"], ["--variables", "0"], ["--frobnicate", "1"],
                                  ["--sizes", "8"]])
def test_stencil_benchmark_refuses_bad_options(tmp_path, args):
    res = subprocess.run([str(BIN / "calib_stencil"), *args, *([] if args == ["--sizes", "8"] else ["-o", "x.h5"])],
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 2
    assert "usage: calib_stencil" in res.stderr
    assert not (tmp_path / "x.h5").exists()


def halo_compute_time(tmp_path, name, profile, flops_param=None, cli_set=None):
    """compute_time_mean (s per iteration) of a 2-rank halo scenario on one node of 1 Gf cores."""
    extra = [] if cli_set is None else ["--set", "flops_per_cell=%s" % cli_set]
    return run_halo(tmp_path, name, {"ranks_per_node": 2, "local_cells": "10,10,10", "iterations": 2,
                                     "flops_per_cell": flops_param},
                    profile, metric="compute_time_mean", extra=extra)


def test_profile_flops_per_cell_sets_the_halo_compute_time_unless_the_scenario_gives_it(tmp_path):
    profiles = {}
    for name, flops in (("cheap", 100.0), ("dear", 200.0)):
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps({"schema": "simcore-profile/1", "rates": {
            "flops_per_cell": {"value": flops, "unit": "flop"}}}))
    no_rate = tmp_path / "no_rate.json"
    no_rate.write_text(json.dumps({"schema": "simcore-profile/1", "rates": {"memcpy_bandwidth": 20e9}}))
    cheap = halo_compute_time(tmp_path, "cheap", profiles["cheap"])
    dear = halo_compute_time(tmp_path, "dear", profiles["dear"])
    assert cheap == pytest.approx(1000 * 100.0 / 1e9, rel=1e-12)  # 10^3 cells per rank, 1 Gf
    assert dear == pytest.approx(2 * cheap, rel=1e-12)
    # Without the rate, or without a profile: the default, 50.
    assert halo_compute_time(tmp_path, "no_rate", no_rate) == pytest.approx(1000 * 50.0 / 1e9, rel=1e-12)
    assert halo_compute_time(tmp_path, "none", None) == pytest.approx(1000 * 50.0 / 1e9, rel=1e-12)
    # Given in the scenario or with --set, even at the default's value, the parameter wins.
    for name, kwargs in (("param_50", dict(flops_param=50)), ("param_300", dict(flops_param=300)),
                         ("set_50", dict(cli_set=50))):
        expected = 1000 * float(kwargs.get("flops_param", kwargs.get("cli_set"))) / 1e9
        for profile in profiles.values():
            assert halo_compute_time(tmp_path, name + profile.stem, profile, **kwargs) == pytest.approx(expected,
                                                                                                        rel=1e-12)


def write_synthetic_network(path, sizes, pingpong, pingping=None, placement="inter-node", reps=5, buffers=None):
    """A calib_pingpong-like trace as h5py writes it, without noise: `pingpong` and `pingping` are
    functions of the size (array) giving the one-way time (s); the ping-ping group is left out
    when `pingping` is None; `buffers` (calib_pingpong --buffers) is left out when None, as
    traces written before the option have it."""
    sizes = np.asarray(sizes, dtype=float)
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = placement
        if buffers is not None:
            g.attrs["buffers"] = buffers
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=np.repeat(2 * pingpong(sizes)[:, None], reps, axis=1)).attrs["unit"] = "s"
        if pingping is not None:
            h = f.create_group("pingping")
            h.attrs["placement"] = placement
            h.create_dataset("size", data=sizes).attrs["unit"] = "B"
            h.create_dataset("time", data=np.repeat(pingping(sizes)[:, None], reps, axis=1)).attrs["unit"] = "s"


# Ping-pong: a message alone; ping-ping: the same link with both directions busy (half the bandwidth).
PP_LAT, PP_BW = 2e-6, 4e9
PI_LAT, PI_BW = 3e-6, 2e9
POWERS = 2.0 ** np.arange(0, 25)


def pingpong_law(s):
    return PP_LAT + s / PP_BW


def pingping_law(s):
    return PI_LAT + s / PI_BW


def link_of(profile):
    assert len(profile["links"]) == 1
    link = profile["links"][0]
    assert link["match"] == ".*"
    return float(link["latency"].rstrip("s")), float(link["bandwidth"].rstrip("Bps"))


def test_default_pattern_applies_the_pingping_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    assert q["pattern"] == "pingping" and q["placement"] == "inter-node" and q["traces"] == 1
    assert len(q["segments"]) == 1
    assert q["segments"][0]["latency"] == pytest.approx(PI_LAT, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(PI_BW, rel=1e-6)
    # The links (written with 6 significant digits; these values need fewer).
    lat, bw = link_of(p)
    assert lat == pytest.approx(PI_LAT, rel=1e-6) and bw == pytest.approx(PI_BW, rel=1e-6)
    assert p["rates"]["network_latency"]["value"] == pytest.approx(PI_LAT, rel=1e-6)
    assert p["rates"]["network_bandwidth"]["value"] == pytest.approx(PI_BW, rel=1e-6)
    assert p["network_factors"] == {"inter-node": {"latency": "0:1", "bandwidth": "0:1"}}
    assert not {"smpi/lat-factor", "smpi/bw-factor"} & set(p["simgrid_config"])
    assert p["simgrid_config"]["network/crosstraffic"] == "0"  # ping-ping holds the reverse traffic
    # The ping-pong fit, not applied, kept for comparison.
    other = q["pingpong_fit_not_applied"]
    assert len(other["segments"]) == 1
    assert other["segments"][0]["bandwidth"] == pytest.approx(PP_BW, rel=1e-6)
    assert other["segments"][0]["latency"] == pytest.approx(PP_LAT, rel=1e-6)
    assert "pingping_fit_not_applied" not in q


def test_traces_of_one_placement_measured_with_different_buffers_are_not_pooled(tmp_path):
    """Where a message's memory lies changes its time (calib_pingpong --buffers): one fit of
    per-size and shared traces would be neither's, so it is refused, naming both traces; a trace
    without the attribute was measured with one shared buffer; the profile says which."""
    per_size, shared, old = tmp_path / "per_size.h5", tmp_path / "shared.h5", tmp_path / "old.h5"
    write_synthetic_network(per_size, POWERS, pingpong_law, pingping_law, buffers="per-size")
    write_synthetic_network(shared, POWERS, pingpong_law, pingping_law, buffers="shared")
    write_synthetic_network(old, POWERS, pingpong_law, pingping_law)
    res, out = calibrate(tmp_path, per_size, shared)
    assert res.returncode == 2 and not out.exists()
    assert (f"{shared} (pingpong): measured with shared buffers, but {per_size} (also inter-node) with per-size "
            "ones" in res.stderr)
    res, out = calibrate(tmp_path, old, per_size)
    assert res.returncode == 2 and "measured with per-size buffers" in res.stderr and not out.exists()
    # The same kind pools; a trace without the attribute is of the shared kind.
    for traces, kind in (((per_size, per_size), "per-size"), ((old, shared), "shared")):
        res, out = calibrate(tmp_path, *traces)
        assert res.returncode == 0, res.stderr
        q = json.loads(out.read_text())["quality"]["network"]
        assert q["buffers"] == kind and q["traces"] == 2
    # Different kinds in different placements are two fits, each of one kind.
    intra = tmp_path / "intra.h5"
    write_synthetic_network(intra, POWERS, pingpong_law, pingping_law, placement="intra-node", buffers="shared")
    res, out = calibrate(tmp_path, per_size, intra)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]
    assert q["network"]["buffers"] == "per-size" and q["network_intra_node"]["buffers"] == "shared"
    bad = tmp_path / "bad.h5"
    write_synthetic_network(bad, POWERS, pingpong_law, pingping_law, buffers="pinned")
    res, out = calibrate(tmp_path, bad)
    assert res.returncode == 2 and f"{bad} (pingpong): buffers 'pinned'; expected 'per-size' or 'shared'" in res.stderr


def test_network_pattern_pingpong_applies_the_pingpong_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    out = tmp_path / "pp.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), "--network-pattern", "pingpong"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    q = p["quality"]["network"]
    assert q["pattern"] == "pingpong"
    lat, bw = link_of(p)
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(PP_BW, rel=1e-6)
    assert q["pingping_fit_not_applied"]["segments"][0]["bandwidth"] == pytest.approx(PI_BW, rel=1e-6)
    assert "pingpong_fit_not_applied" not in q


def test_auto_pattern_without_a_pingping_group_uses_the_pingpong_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    assert q["pattern"] == "pingpong"
    assert "pingpong_fit_not_applied" not in q and "pingping_fit_not_applied" not in q
    lat, bw = link_of(p)
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


def test_network_pattern_pingping_needs_a_pingping_group(tmp_path):
    trace = tmp_path / "only_pingpong.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), "--network-pattern", "pingping"],
                         capture_output=True, text=True)
    assert res.returncode == 2
    assert str(trace) in res.stderr and "no 'pingping' group" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("args", [["--network-pattern", "bogus"], ["--network-pattern"]])
def test_bad_network_pattern_is_refused(tmp_path, args):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), *args], capture_output=True, text=True)
    assert res.returncode == 2
    assert "expected auto, pingp" in res.stderr
    if len(args) == 2:
        assert "'bogus'" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("even_first", [True, False])
def test_traces_of_one_placement_are_pooled_into_one_fit(tmp_path, even_first):
    lat, bw = 4e-6, 8e9
    even, odd = tmp_path / "even.h5", tmp_path / "odd.h5"
    write_synthetic_network(even, 2.0 ** np.arange(0, 25, 2), lambda s: lat + s / bw, reps=3)  # 1, 4, 16, ...
    write_synthetic_network(odd, 2.0 ** np.arange(1, 24, 2), lambda s: lat + s / bw, reps=4)  # 2, 8, 32, ...
    p = fitted(tmp_path, *((even, odd) if even_first else (odd, even)))
    q = p["quality"]["network"]
    assert q["traces"] == 2 and q["pattern"] == "pingpong"
    assert len(q["segments"]) == 1
    assert q["segments"][0]["from"] == 1.0  # the smallest size of both traces
    assert q["segments"][0]["latency"] == pytest.approx(lat, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(bw, rel=1e-6)
    assert q["median_rel_spread_of_repetitions"] == 0
    assert q["protocol_switch"] == 0
    l2, b2 = link_of(p)  # one link: one fit for the placement
    assert l2 == pytest.approx(lat, rel=1e-6) and b2 == pytest.approx(bw, rel=1e-6)
    assert p["meta"]["traces"] == [str(t) for t in ((even, odd) if even_first else (odd, even))]


def parse_factors(text):
    """SMPI's "size:factor;size:factor" as a list of (size, factor)."""
    pairs = []
    for item in text.split(";"):
        size, factor = item.split(":")
        pairs.append((float(size), float(factor)))
    return pairs


def test_smpi_factor_bounds_of_a_two_segment_fit(tmp_path):
    # 1 us + s / 5 GB/s below 64 KiB, 10 us + s / 10 GB/s from 64 KiB up; four sizes per octave.
    sizes = np.unique(np.round(2.0 ** (np.arange(0, 97) / 4)))
    assert 65536.0 in sizes and (sizes < 65536).sum() >= 20 and (sizes >= 65536).sum() >= 20

    def law(s):
        return np.where(s < 65536, 1e-6 + s / 5e9, 1e-5 + s / 1e10)

    trace = tmp_path / "two.h5"
    write_synthetic_network(trace, sizes, law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    segs = q["segments"]
    assert len(segs) == 2
    assert segs[0]["from"] == 1.0 and segs[1]["from"] == 65536.0
    assert segs[0]["latency"] == pytest.approx(1e-6, rel=1e-6)
    assert segs[0]["bandwidth"] == pytest.approx(5e9, rel=1e-6)
    assert segs[1]["latency"] == pytest.approx(1e-5, rel=1e-6)
    assert segs[1]["bandwidth"] == pytest.approx(1e10, rel=1e-6)
    assert q["protocol_switch"] == 65536.0
    # The switch as a rate that models read (the halo model's eager limit in detailed mode),
    # and each placement's own latency and bandwidth.
    assert p["rates"]["network_protocol_switch_inter_node"]["value"] == 65536.0
    assert "network_protocol_switch_intra_node" not in p["rates"]
    assert p["rates"]["network_latency_inter_node"]["value"] == pytest.approx(1e-6, rel=1e-6)
    assert p["rates"]["network_bandwidth_inter_node"]["value"] == pytest.approx(1e10, rel=1e-6)
    cfg = p["simgrid_config"]
    assert cfg["network/model"] == "SMPI"
    nf = p["network_factors"]["inter-node"]
    lat_f, bw_f = parse_factors(nf["latency"]), parse_factors(nf["bandwidth"])
    # SMPI applies "X:f" to messages larger than X: the segment from 65536 B is written 65535.
    assert [s for s, _ in lat_f] == [65535.0, 0.0]
    assert [s for s, _ in bw_f] == [65535.0, 0.0]
    assert [s for s, _ in lat_f if s != 0] == [65535.0] and [s for s, _ in bw_f if s != 0] == [65535.0]
    # Factors against the first segment's latency (1 us) and the last segment's bandwidth (10 GB/s).
    assert lat_f[0][1] == pytest.approx(10.0, rel=1e-5) and lat_f[1][1] == pytest.approx(1.0, rel=1e-5)
    assert bw_f[0][1] == pytest.approx(1.0, rel=1e-5) and bw_f[1][1] == pytest.approx(0.5, rel=1e-5)
    lat, bw = link_of(p)
    assert lat == pytest.approx(1e-6, rel=1e-6) and bw == pytest.approx(1e10, rel=1e-6)
    # What SMPI would compute with these factors gives back the law on both sides of the switch.
    for s in (1000.0, 65535.0, 65536.0, 1e6):
        lf = next(f for bound, f in lat_f if s > bound or bound == 0)
        bf = next(f for bound, f in bw_f if s > bound or bound == 0)
        assert lat * lf + s / (bw * bf) == pytest.approx(float(law(np.array(s))), rel=1e-5)


def write_pingpong_with_strays(path, strays, factor):
    """A TCP-like ping-pong (20 us + s / 1 GB/s up to 64 KiB, 60 us + s / 1.2 GB/s above), four
    sizes per octave up to 4 MiB, 2 % noise, the sizes in `strays` taking `factor` x as long in
    every repetition (what a network that stalls at a few sizes gives)."""
    rng = np.random.default_rng(3)
    sizes = np.unique(np.round(2.0 ** (np.arange(0, 23 * 4) / 4)))
    one_way = np.where(sizes <= 65536, 20e-6 + sizes / 1e9, 60e-6 + sizes / 1.2e9)
    for s in strays:
        one_way[np.argmin(abs(sizes - s))] *= factor
    rt = 2 * one_way[:, None] * (1 + 0.02 * rng.standard_normal((len(sizes), 5)))
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"
    return sizes


@pytest.mark.parametrize("strays, factor", [([393216], 1.7), ([393216], 3.0), ([98304, 1572864], 2.0),
                                            ([393216, 466357], 2.0), ([393216], 0.5)])
def test_sizes_that_stray_alone_are_left_out_of_the_network_fit(tmp_path, strays, factor):
    trace = tmp_path / "t.h5"
    sizes = write_pingpong_with_strays(trace, strays, factor)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["network"]
    expected = sorted(float(sizes[np.argmin(abs(sizes - s))]) for s in strays)
    assert [e["size"] for e in q["excluded_sizes"]] == expected
    assert "left out of the inter-node fit" in res.stderr  # the note, on stderr too
    # The law comes back as if the strays had not been measured: two segments, the switch.
    segs = q["segments"]
    assert len(segs) == 2 and q["protocol_switch"] == pytest.approx(77936, rel=0.01)
    assert segs[0]["latency"] == pytest.approx(20e-6, rel=0.02) and segs[0]["bandwidth"] == pytest.approx(1e9, rel=0.02)
    assert segs[1]["latency"] == pytest.approx(60e-6, rel=0.1) and segs[1]["bandwidth"] == pytest.approx(1.2e9, rel=0.02)
    assert q["max_rel_error"] < 0.1


def test_outlier_tolerance_zero_keeps_every_size_and_bad_values_are_refused(tmp_path):
    trace = tmp_path / "t.h5"
    write_pingpong_with_strays(trace, [393216], 1.7)
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "p.json"), "--outlier-tolerance", "0"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    q = json.loads((tmp_path / "p.json").read_text())["quality"]["network"]
    assert q["excluded_sizes"] == [] and "note" not in q
    assert len(q["segments"]) > 2  # the stray size pulls segments of its own
    for bad in ("-1", "x", "nan", ""):
        res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "q.json"), "--outlier-tolerance", bad],
                             capture_output=True, text=True)
        assert res.returncode == 2 and "--outlier-tolerance" in res.stderr and "expected a share >= 0" in res.stderr
        assert not (tmp_path / "q.json").exists()


CUDA_GFLOPS = {
    "gemm_fp32": [19.5, 18.0, 21.25, 20.0, 17.0],  # median 19.5, not the first
    "gemm_tf32_wmma": [150.0, 149.0, 160.0, 151.5, 100.0],  # median 150
    "conv3d_ncdhw": [9.75, 10.5, 11.0, 9.0, 10.25],  # median 10.25
    "conv3d_ndhwc": [12.0, 12.0, 13.5, 11.0, 12.125],  # median 12.0
}


def test_cuda_trace_gives_one_rate_per_kernel(tmp_path):
    trace = tmp_path / "cuda.h5"
    with synthetic_trace(trace) as f:
        f.attrs["gpu"] = "Test GPU"
        g = f.create_group("cuda")
        g.attrs["device"] = "Test GPU"
        g.attrs["compute_capability"] = "9.0"
        for kernel, values in CUDA_GFLOPS.items():
            g.create_dataset(kernel, data=np.asarray(values)).attrs["unit"] = "Gflop/s"
    p = fitted(tmp_path, trace)
    rates = p["rates"]
    assert set(rates) == {"gpu_%s_flops" % k for k in CUDA_GFLOPS}
    for kernel, values in CUDA_GFLOPS.items():
        r = rates["gpu_%s_flops" % kernel]
        assert r["value"] == pytest.approx(np.median(values) * 1e9, rel=1e-12)
        assert r["unit"] == "flops"
        assert kernel in r["doc"] and "Test GPU" in r["doc"]
    assert "links" not in p and "hosts" not in p
    assert "network" not in p["quality"]
    gpu = p["quality"]["gpu"]
    assert set(gpu) == set(CUDA_GFLOPS)
    assert all(set(q) & SHARES == {"flops"} for q in gpu.values())  # no peak, no cuBLAS measured
    # Each kernel's median rate against its repetitions (one work size: no R^2).
    for kernel, values in CUDA_GFLOPS.items():
        med = np.median(values)
        errors = [abs(v / med - 1) for v in values]
        assert gpu[kernel]["max_rel_error"] == pytest.approx(max(errors), rel=1e-12, abs=1e-15)
        assert gpu[kernel]["median_rel_error"] == pytest.approx(np.median(errors), rel=1e-12, abs=1e-15)
        assert gpu[kernel]["r2"] is None and "r2_note" in gpu[kernel]


SHARES = {"flops", "share_of_peak", "share_of_cublas", "share_of_cudnn"}


def shares(q):
    """A GPU kernel's rate and shares, without its fit quality."""
    return {k: v for k, v in q.items() if k in SHARES}


def cuda_trace_as_the_device_writes_it(path, rates):
    """The JSON form of a trace (what calib_cuda_device writes on a bare GPU machine)."""
    trace = {"attributes": {"schema": "simcore-calibration-trace/1", "host": "gpu-node", "gpu": "Test GPU",
                            "cpu_model": "x", "isa": "", "compiler": "nvcc", "flags": "-O3",
                            "date": "2026-12-04T00:00:00Z", "git_revision": "abc1234"},
             "benchmarks": {"cuda": {"parameters": {"device": "Test GPU", "compute_capability": "9.0",
                                                    "check_gemm_fp32": "1.2e-07"},
                                     "datasets": {k: {"unit": "Gflop/s", "shape": [len(v)], "values": v}
                                                  for k, v in rates.items()}}}}
    path.write_text(json.dumps(trace))


def test_gpu_rates_in_another_unit_of_flops_are_converted(tmp_path):
    """A kernel's rate in Tflop/s was left out of the profile without a word (only Gflop/s
    counted); it now converts, and a dataset of another kind (seconds) is still no rate."""
    gflops, tflops = tmp_path / "g.json", tmp_path / "t.json"
    cuda_trace_as_the_device_writes_it(gflops, {"cublas_sgemm": [48000.0] * 3, "gemm_fp32": [8000.0] * 3})
    cuda_trace_as_the_device_writes_it(tflops, {"cublas_sgemm": [48.0] * 3, "gemm_fp32": [8000.0] * 3})
    data = json.loads(tflops.read_text())
    data["benchmarks"]["cuda"]["datasets"]["cublas_sgemm"]["unit"] = "Tflop/s"
    data["benchmarks"]["cuda"]["datasets"]["launch_time"] = {"unit": "s", "shape": [3], "values": [1e-6] * 3}
    tflops.write_text(json.dumps(data))
    a = fitted(tmp_path, gflops)["rates"]
    (tmp_path / "t").mkdir()
    b = fitted(tmp_path / "t", tflops)["rates"]
    assert b["gpu_cublas_sgemm_flops"]["value"] == pytest.approx(a["gpu_cublas_sgemm_flops"]["value"], rel=1e-12)
    assert b["gpu_cublas_sgemm_flops"]["value"] == pytest.approx(48e12, rel=1e-12)
    assert not any("launch_time" in k for k in b)


def test_sizes_in_decimal_units_stay_whole_bytes(tmp_path):
    """1.001 kB times 1000 is 1000.9999999999999 in doubles, which the whole-byte check refused."""
    si, kb = tmp_path / "si.h5", tmp_path / "kb.h5"
    sizes = np.array([1.0, 10.0, 100.0, 1001.0, 10007.0, 100003.0, 1000003.0])
    write_synthetic_network(si, sizes, pingpong_law)
    write_synthetic_network(kb, sizes, pingpong_law)
    with h5py.File(kb, "a") as f:
        f["pingpong/size"][...] = sizes / 1000
        f["pingpong/size"].attrs["unit"] = "kB"
    a = fitted(tmp_path, si)
    (tmp_path / "kb").mkdir()
    b = fitted(tmp_path / "kb", kb)
    assert b["network_factors"] == a["network_factors"] and b["links"] == a["links"]


def test_gpu_kernels_are_rated_against_the_peak_and_cublas_of_the_same_run(tmp_path):
    rates = {"gemm_fp32_blocked": [12000.0, 11000.0, 13000.0], "peak_fp32_fma": [60000.0] * 3,
             "cublas_sgemm": [48000.0] * 3, "gemm_tf32_wmma_blocked": [150000.0] * 3,
             "peak_tf32_mma_sync": [300000.0] * 3, "cublas_gemm_tf32": [400000.0] * 3,
             "conv3d_ndhwc": [5000.0] * 3, "cudnn_conv3d_ndhwc": [20000.0] * 3,
             "cudnn_conv3d_ndhwc_tf32": [90000.0] * 3, "conv3d_ncdhw": [4000.0] * 3}
    trace = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(trace, rates)
    data = json.loads(trace.read_text())
    data["benchmarks"]["cuda"]["datasets"]["check_seconds"] = {"unit": "s", "shape": [1], "values": [0.5]}
    trace.write_text(json.dumps(data))
    p = fitted(tmp_path, trace)  # the fitter reads the JSON form as it is
    assert set(p["rates"]) == {"gpu_%s_flops" % k for k in rates}  # a dataset in seconds is no rate
    gpu = p["quality"]["gpu"]
    assert shares(gpu["gemm_fp32_blocked"]) == pytest.approx({"flops": 12e12, "share_of_peak": 0.2, "share_of_cublas": 0.25})
    assert shares(gpu["gemm_tf32_wmma_blocked"]) == pytest.approx(
        {"flops": 150e12, "share_of_peak": 0.5, "share_of_cublas": 0.375})
    assert shares(gpu["cublas_gemm_tf32"]) == pytest.approx({"flops": 400e12, "share_of_peak": 4 / 3})
    assert shares(gpu["conv3d_ndhwc"]) == pytest.approx({"flops": 5e12, "share_of_peak": 5 / 60, "share_of_cudnn": 0.25})
    assert shares(gpu["conv3d_ncdhw"]) == pytest.approx({"flops": 4e12, "share_of_peak": 4 / 60})  # no cuDNN in its layout
    assert shares(gpu["cudnn_conv3d_ndhwc_tf32"]) == pytest.approx({"flops": 90e12, "share_of_peak": 0.3})
    assert shares(gpu["peak_fp32_fma"]) == {"flops": 60e12}


def test_a_json_trace_converts_to_hdf5_that_h5py_reads_and_the_fitter_fits_alike(tmp_path):
    convert = str(BIN / "calib_trace_convert")
    src = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(src, {"gemm_fp32": [1.0 / 3, 2.5, 0.1], "conv3d_ncdhw": [7.0]})
    h5 = tmp_path / "cuda.h5"
    res = subprocess.run([convert, str(src), "-o", str(h5)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with h5py.File(h5) as f:
        assert f.attrs["schema"] == "simcore-calibration-trace/1" and f.attrs["gpu"] == "Test GPU"
        g = f["cuda"]
        assert g.attrs["check_gemm_fp32"] == "1.2e-07"
        assert g["gemm_fp32"].attrs["unit"] == "Gflop/s"
        assert list(g["gemm_fp32"][()]) == [1.0 / 3, 2.5, 0.1]  # bit for bit
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert fitted(tmp_path / "a", src)["rates"] == fitted(tmp_path / "b", h5)["rates"]
    # And back: HDF5 to JSON gives the same document.
    back = tmp_path / "back.json"
    assert subprocess.run([convert, str(h5), "-o", str(back)]).returncode == 0
    assert json.loads(back.read_text()) == json.loads(src.read_text())


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ('{"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {"cuda": {"parameters": {}, '
     '"datasets": {"gemm_fp32": {"unit": "Gflop/s", "shape": [2], "values": [1]}}}}}',
     "benchmarks.cuda.datasets.gemm_fp32.values holds 1 numbers; expected 2"),
])
def test_trace_convert_refuses_bad_json_and_writes_nothing(tmp_path, text, message):
    src = tmp_path / "bad.json"
    src.write_text(text)
    out = tmp_path / "out.h5"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2
    assert str(src) in res.stderr and message in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_trace_convert_never_overwrites(tmp_path):
    src = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(src, {"gemm_fp32": [1.0]})
    out = tmp_path / "cuda.h5"
    out.write_text("kept")
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and "exists already" in res.stderr
    assert out.read_text() == "kept"


@pytest.mark.parametrize("structures, rows", [
    ("simd_table,std_unordered_map", 2),  # the batched table is not there
    ("simd_table_batched_scalar,absl_flat_hash_map", 2),  # a longer name is not the one
    (None, 2),  # no list of structures
    ("simd_table,simd_table_batched", 1),  # named, but no row of rates for it
])
def test_hash_trace_without_the_batched_table_is_refused(tmp_path, structures, rows):
    trace = tmp_path / "hash.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("hash_table")
        if structures is not None:
            g.attrs["structures"] = structures
        g.create_dataset("lookup_rate", data=np.full((rows, 3), 1e7)).attrs["unit"] = "1/s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) + " (hash_table)" in res.stderr
    assert "no 'simd_table_batched' row among the structures" in res.stderr
    assert not out.exists()


def test_host_types_get_one_rule_each_specific_ones_first(tmp_path):
    """--hosts REGEX names the host type of the traces that follow: one rule per type (the
    median of its DGEMM traces), the catch-all last since a profile's first matching rule wins."""
    a1, a2, b1, rest = (tmp_path / f"{n}.h5" for n in ("a1", "a2", "b1", "rest"))
    write_synthetic_dgemm(a1, [256], [[10.0, 10.0, 10.0]])
    write_synthetic_dgemm(a2, [256], [[30.0, 30.0, 30.0]])
    write_synthetic_dgemm(b1, [256], [[50.0, 50.0, 50.0]])
    write_synthetic_dgemm(rest, [256], [[7.0, 7.0, 7.0]])
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(rest), "--hosts", "cpu-.*", str(a1), str(a2), "--hosts", "gpu-.*",
                          str(b1), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    rules = [(h["match"], float(h["speed"].rstrip("f"))) for h in p["hosts"]]
    assert rules == [("cpu-.*", 20e9), ("gpu-.*", 50e9), (".*", 7e9)]
    assert [c["match"] for c in p["quality"]["compute"]] == [".*", "cpu-.*", "cpu-.*", "gpu-.*"]


def write_synthetic_stream(path, copy, triad):
    """A calib_stream trace: one thread count (1), three repetitions of each rate (B/s)."""
    with synthetic_trace(path) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([1.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.full((1, 3), copy)).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((1, 3), triad)).attrs["unit"] = "Bps"


def host_type_traces(tmp_path):
    """Two host types measured on their own: cpu-* (DGEMM 40 Gf, stencil 2e8 cells/s, copy
    10 GB/s) and gpu-* (DGEMM 10 Gf, stencil 1e8 cells/s, copy 30 GB/s)."""
    traces = {}
    for kind, gf, cells, copy in (("cpu", 40.0, 2e8, 20e9), ("gpu", 10.0, 1e8, 60e9)):
        d, st, m = (tmp_path / f"{kind}-{n}.h5" for n in ("dgemm", "stencil", "stream"))
        write_synthetic_dgemm(d, [256], [[gf] * 3])
        write_synthetic_stencil(st, [32], [[cells] * 3])
        write_synthetic_stream(m, copy, 1.5 * copy)
        traces[kind] = [d, st, m]
    return traces


def test_each_host_type_gets_its_own_rates(tmp_path):
    """Rates of the traces after --hosts REGEX go to that type's host rule: flops_per_cell from
    the type's own speed and cell rate. Without a catch-all type, the profile-wide rates are
    the first type's."""
    t = host_type_traces(tmp_path)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", "--hosts", "gpu-.*", *map(str, t["gpu"]), "--hosts", "cpu-.*",
                          *map(str, t["cpu"]), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    rules = {h["match"]: h for h in p["hosts"]}
    assert [h["match"] for h in p["hosts"]] == ["gpu-.*", "cpu-.*"]
    assert float(rules["cpu-.*"]["speed"].rstrip("f")) == pytest.approx(40e9)
    assert float(rules["gpu-.*"]["speed"].rstrip("f")) == pytest.approx(10e9)
    cpu, gpu = rules["cpu-.*"]["rates"], rules["gpu-.*"]["rates"]
    assert cpu["flops_per_cell"]["value"] == pytest.approx(40e9 / 2e8, rel=1e-5)
    assert gpu["flops_per_cell"]["value"] == pytest.approx(10e9 / 1e8, rel=1e-5)
    assert cpu["memcpy_bandwidth"]["value"] == 10e9 and gpu["memcpy_bandwidth"]["value"] == 30e9
    assert cpu["stencil_cell_rate"]["value"] == 2e8 and gpu["dgemm_flops"]["value"] == 10e9
    wide = p["rates"]
    assert wide["memcpy_bandwidth"]["value"] == 30e9 and "hosts matching 'gpu-.*'" in wide["memcpy_bandwidth"]["doc"]
    assert [q["match"] for q in p["quality"]["memory"]] == ["gpu-.*", "cpu-.*"]
    assert [q["cells_used"] for q in p["quality"]["stencil"]] == [32, 32]


def write_synthetic_hash(path, lookups, lines, latency):
    """A calib_hash trace: the pipelined table's lookups/s (3 repetitions), the line rates of 1
    and 2 chains (the first gives the latency)."""
    with synthetic_trace(path) as f:
        g = f.create_group("hash_table")
        g.attrs["structures"] = "simd_table,simd_table_batched"
        g.attrs["miss_rate"] = "0.9"
        g.create_dataset("lookup_rate", data=np.array([[1e7] * 3, [lookups] * 3])).attrs["unit"] = "1/s"
        g.create_dataset("random_line_rate", data=np.array([1 / latency, lines])).attrs["unit"] = "1/s"


def node_traces(tmp_path, node, gflops, cells, copy, lookups, gpu=None):
    """The node benchmarks of one node: DGEMM, stencil (7-point, 5 variables, 32^3), STREAM
    and hash lookups, and a CUDA trace when `gpu` (Gflop/s of gemm_fp32, 3 repetitions)."""
    paths = [tmp_path / f"{node}-{n}.h5" for n in ("dgemm", "stencil", "stream", "hash")]
    write_synthetic_dgemm(paths[0], [256], [[gflops] * 3])
    write_synthetic_stencil(paths[1], [32], [[cells] * 3])
    write_synthetic_stream(paths[2], copy, 1.5 * copy)
    write_synthetic_hash(paths[3], lookups, 2 * lookups, 100e-9)
    if gpu is not None:
        paths.append(tmp_path / f"{node}-cuda.h5")
        with synthetic_trace(paths[-1]) as f:
            g = f.create_group("cuda")
            g.attrs["device"] = "Test GPU"
            g.create_dataset("gemm_fp32", data=np.asarray(gpu, dtype=float)).attrs["unit"] = "Gflop/s"
    return paths


def test_the_node_traces_of_one_host_type_are_pooled(tmp_path):
    """Three nodes of one type (calibrate.sbatch runs the node benchmarks on every node): every
    rate is the median of the nodes, flops_per_cell the median speed / the median cell rate,
    and the quality says how many traces and how far the nodes stray from the median."""
    nodes = [node_traces(tmp_path, "n0", 40.0, 1.0e8, 20e9, 1e8, gpu=[10.0, 11.0, 12.0]),
             node_traces(tmp_path, "n1", 42.0, 1.2e8, 24e9, 1.2e8, gpu=[13.0, 14.0, 15.0]),
             node_traces(tmp_path, "n2", 41.0, 1.1e8, 22e9, 1.1e8, gpu=[16.0, 17.0, 18.0])]
    p = fitted(tmp_path, *[t for node in nodes for t in node])
    rates, q = p["rates"], p["quality"]
    assert float(p["hosts"][0]["speed"].rstrip("f")) == pytest.approx(41e9, rel=1e-5)
    assert rates["stencil_cell_rate"]["value"] == 1.1e8
    assert rates["flops_per_cell"]["value"] == pytest.approx(41e9 / 1.1e8, rel=1e-5)
    assert rates["memcpy_bandwidth"]["value"] == 11e9 and rates["stream_triad_bandwidth"]["value"] == 1.5 * 22e9
    assert rates["hash_lookup_rate"]["value"] == 1.1e8 and rates["random_line_rate"]["value"] == 2.2e8
    assert rates["memory_latency"]["value"] == pytest.approx(100e-9)
    assert rates["gpu_gemm_fp32_flops"]["value"] == 14e9  # the median of all nine repetitions
    for part, spread in (("memory", 2 / 22), ("stencil", 0.1 / 1.1), ("hash", 0.1 / 1.1)):
        assert q[part]["traces"] == 3 and q[part]["node_rel_spread"] == pytest.approx(spread)
        assert len(q[part]["by_trace"]) == 3 and "note" not in q[part]
    assert [b["trace"] for b in q["stencil"]["by_trace"]] == [str(n[1]) for n in nodes]
    assert [b["stencil_cell_rate"] for b in q["stencil"]["by_trace"]] == [1.0e8, 1.2e8, 1.1e8]


def test_each_host_type_gets_its_own_hash_and_gpu_rates(tmp_path):
    """Hash lookups measured on both types and CUDA kernels on one: each rule carries its own
    type's rates, the GPU rates only on the GPU type's rule, and the quality sections list one
    entry per type that measured them, each naming its pattern."""
    t = host_type_traces(tmp_path)
    for kind, lookups in (("cpu", 1e8), ("gpu", 4e7)):
        h = tmp_path / f"{kind}-hash.h5"
        write_synthetic_hash(h, lookups, 2 * lookups, 100e-9 if kind == "cpu" else 200e-9)
        t[kind].append(h)
    cuda = tmp_path / "gpu-cuda.h5"
    with synthetic_trace(cuda) as f:
        g = f.create_group("cuda")
        g.attrs["device"] = "Test GPU"
        g.create_dataset("gemm_fp32", data=np.array([9000.0, 10000.0, 11000.0])).attrs["unit"] = "Gflop/s"
    t["gpu"].append(cuda)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", "--hosts", "cpu-.*", *map(str, t["cpu"]), "--hosts", "gpu-.*",
                          *map(str, t["gpu"]), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    rules = {h["match"]: h["rates"] for h in p["hosts"]}
    assert rules["cpu-.*"]["hash_lookup_rate"]["value"] == 1e8
    assert rules["gpu-.*"]["hash_lookup_rate"]["value"] == 4e7
    assert rules["cpu-.*"]["memory_latency"]["value"] == pytest.approx(100e-9)
    assert rules["gpu-.*"]["memory_latency"]["value"] == pytest.approx(200e-9)
    assert rules["gpu-.*"]["gpu_gemm_fp32_flops"]["value"] == 10000e9
    assert not any(k.startswith("gpu_") for k in rules["cpu-.*"])
    assert [q["match"] for q in p["quality"]["hash"]] == ["cpu-.*", "gpu-.*"]
    assert [q["match"] for q in p["quality"]["gpu"]] == ["gpu-.*"]
    assert p["quality"]["gpu"][0]["gemm_fp32"]["max_rel_error"] == pytest.approx(0.1, rel=1e-12)
    # Profile-wide rates: the first type's (no catch-all), saying so.
    assert p["rates"]["hash_lookup_rate"]["value"] == 1e8
    assert "hosts matching 'cpu-.*'" in p["rates"]["hash_lookup_rate"]["doc"]


def test_nodes_of_one_type_that_differ_widely_get_a_note(tmp_path):
    """The two host types' traces given without --hosts: pooled as one type (median of two),
    and the quality section points at --hosts."""
    t = host_type_traces(tmp_path)
    res, out = calibrate(tmp_path, *t["cpu"], *t["gpu"])
    assert res.returncode == 0, res.stderr
    assert "simcore calibrate: note (stencil): the nodes' stencil_cell_rate differ by up to 33.3 %" in res.stderr
    assert "simcore calibrate: note (memory): " in res.stderr
    p = json.loads(out.read_text())
    assert p["rates"]["stencil_cell_rate"]["value"] == pytest.approx(1.5e8)
    for part in ("memory", "stencil"):
        assert "--hosts" in p["quality"][part]["note"] and p["quality"][part]["traces"] == 2
    assert "differ by up to 33.3 %" in p["quality"]["stencil"]["note"]


def test_without_dgemm_the_nodes_note_is_kept_beside_the_missing_speed(tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_stencil(a, [32], [[1e8] * 3])
    write_synthetic_stencil(b, [32], [[2e8] * 3])
    note = fitted(tmp_path, a, b)["quality"]["stencil"]["note"]
    assert "differ by up to 33.3 %" in note and "no dgemm trace among the inputs" in note


@pytest.mark.parametrize("attribute, value", [("miss_rate", "0.5"), ("key", "double")])
def test_hash_traces_of_one_type_that_measured_different_workloads_are_refused(tmp_path, attribute, value):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_hash(a, 1e8, 2e8, 100e-9)
    write_synthetic_hash(b, 1e8, 2e8, 100e-9)
    with h5py.File(b, "a") as f:
        f["hash_table"].attrs[attribute] = value
    res, out = calibrate(tmp_path, a, b)
    assert res.returncode == 2 and "b.h5 (hash_table)" in res.stderr and str(a) in res.stderr
    assert "expected the same workload on every node of a host type" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("stencil, variables, cells", [("27-point", 5, 32), ("7-point", 3, 32), ("7-point", 5, 64)])
def test_stencil_traces_of_one_type_that_measured_different_sweeps_are_refused(tmp_path, stencil, variables, cells):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_stencil(a, [32], [[1e8] * 3])
    write_synthetic_stencil(b, [cells], [[1e8] * 3], stencil=stencil, variables=variables)
    res, out = calibrate(tmp_path, a, b)
    assert res.returncode == 2 and "b.h5 (stencil)" in res.stderr and str(a) in res.stderr
    assert "expected the same sweep on every node of a host type" in res.stderr
    assert not out.exists()


TWO_TYPES_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="cpu-0" speed="1Gf"/>
    <host id="gpu-0" speed="1Gf"/>
    <link id="wire" bandwidth="1GBps" latency="10us"/>
    <route src="cpu-0" dst="gpu-0"><link_ctn id="wire"/></route>
  </zone>
</platform>
"""


def test_halo_computes_at_each_host_types_fitted_cost(tmp_path):
    """One rank on a host of each type: its compute time is cells / the type's measured cell
    rate (cells x flops_per_cell / the type's speed), whatever the platform's speed."""
    t = host_type_traces(tmp_path)
    profile = tmp_path / "p.json"
    subprocess.run([SIMCORE, "calibrate", "--hosts", "cpu-.*", *map(str, t["cpu"]), "--hosts", "gpu-.*",
                    *map(str, t["gpu"]), "-o", str(profile)], check=True, capture_output=True)
    platform = tmp_path / "two_types.xml"
    platform.write_text(TWO_TYPES_PLATFORM)
    mean = run_halo(tmp_path, "types", {"ranks_per_node": 1, "local_cells": "10,10,10", "iterations": 1},
                    profile, metric="compute_time_mean", platform=platform)
    assert mean == pytest.approx((1000 / 2e8 + 1000 / 1e8) / 2, rel=1e-5)


def test_a_bad_host_pattern_is_refused(tmp_path):
    trace = tmp_path / "d.h5"
    write_synthetic_dgemm(trace, [256], [[10.0]])
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", "--hosts", "cpu-(", str(trace), "-o", str(out)], capture_output=True,
                         text=True)
    assert res.returncode == 2
    assert "cpu-(" in res.stderr and "regular expression" in res.stderr
    assert not out.exists()


def test_the_shipped_traces_of_this_machine_fit_into_a_whole_profile(tmp_path):
    """calibration/traces/vm: every benchmark measured here, fitted together."""
    vm = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces" / "vm"
    traces = sorted(vm.glob("*.h5"))
    assert {t.stem for t in traces} >= {"stream", "dgemm", "stencil", "pingpong-intra", "hash"}
    p = fitted(tmp_path, *traces)
    q, rates = p["quality"], p["rates"]
    assert q["network"]["placement"] == "intra-node" and q["network"]["pattern"] == "pingping"
    assert "network/loopback-bw" in p["simgrid_config"] and "links" not in p
    speed = float(p["hosts"][0]["speed"].rstrip("f"))
    assert rates["dgemm_flops"]["value"] == pytest.approx(speed, rel=1e-5)
    assert rates["flops_per_cell"]["value"] == pytest.approx(speed / rates["stencil_cell_rate"]["value"], rel=1e-5)
    assert 0 < q["compute"][0]["share_of_measured_peak"] <= 1.05
    assert rates["random_line_rate"]["value"] >= rates["hash_lookup_rate"]["value"] > 0
    assert rates["memcpy_bandwidth"]["value"] > 1e9


def test_the_shipped_h200_trace_fits_into_gpu_rates_with_their_shares(tmp_path):
    """calibration/traces/h200/cuda.h5, measured on an H200 by cuda/run_on_device.sh: every
    kernel's rate is the median of its repetitions as h5py reads them, and the shares are the
    ratios of those medians. What the run showed is pinned too: the blocked kernels beat the
    plain ones, no kernel of ours passes the peak of its units, cuBLAS's TF32 passes the
    mma.sync peak (Hopper's warp-group instructions, which WMMA does not reach), and cuDNN's
    tensor-core convolution is faster channels-last while ours is faster channels-first."""
    trace = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces" / "h200" / "cuda.h5"
    with h5py.File(trace) as f:
        assert f.attrs["gpu"] == "NVIDIA H200" and f["cuda"].attrs["compute_capability"] == "9.0"
        assert f["cuda"].attrs["cudnn"].startswith("libcudnn.so.9")
        medians = {k: float(np.median(f["cuda"][k][()])) * 1e9 for k in f["cuda"]}
        assert all(f["cuda"][k].attrs["unit"] == "Gflop/s" for k in f["cuda"])
    assert set(medians) == {"gemm_fp32", "gemm_fp32_blocked", "gemm_tf32_wmma", "gemm_tf32_wmma_blocked",
                            "cublas_sgemm", "cublas_gemm_tf32", "conv3d_ncdhw", "conv3d_ndhwc", "cudnn_conv3d_ncdhw",
                            "cudnn_conv3d_ndhwc", "cudnn_conv3d_ncdhw_tf32", "cudnn_conv3d_ndhwc_tf32",
                            "peak_fp32_fma", "peak_tf32_mma_sync"}
    p = fitted(tmp_path, trace)
    assert {k: r["value"] for k, r in p["rates"].items()} == pytest.approx(
        {"gpu_%s_flops" % k: v for k, v in medians.items()}, rel=1e-12)
    gpu = p["quality"]["gpu"]
    for kernel, q in gpu.items():
        units = "peak_tf32_mma_sync" if "tf32" in kernel else "peak_fp32_fma"
        if kernel != units:
            assert q["share_of_peak"] == pytest.approx(medians[kernel] / medians[units], rel=1e-12)
        if kernel.startswith("gemm"):
            lib = "cublas_gemm_tf32" if "tf32" in kernel else "cublas_sgemm"
            assert q["share_of_cublas"] == pytest.approx(medians[kernel] / medians[lib], rel=1e-12)
            assert q["share_of_peak"] < 1
        if kernel.startswith("conv3d"):
            assert q["share_of_cudnn"] == pytest.approx(medians[kernel] / medians["cudnn_" + kernel], rel=1e-12)
    assert medians["gemm_fp32_blocked"] > 3 * medians["gemm_fp32"]
    assert medians["gemm_tf32_wmma_blocked"] > 3 * medians["gemm_tf32_wmma"]
    assert gpu["cublas_gemm_tf32"]["share_of_peak"] > 1 > gpu["cublas_sgemm"]["share_of_peak"]
    assert medians["cudnn_conv3d_ndhwc_tf32"] > medians["cudnn_conv3d_ncdhw_tf32"]
    assert medians["conv3d_ncdhw"] > medians["conv3d_ndhwc"]
    # Golden: the medians of that run (Gflop/s), as the README quotes them.
    assert medians["peak_fp32_fma"] / 1e9 == pytest.approx(61046.8, rel=1e-5)
    assert medians["gemm_tf32_wmma_blocked"] / 1e9 == pytest.approx(83325.9, rel=1e-5)
    assert medians["cublas_gemm_tf32"] / 1e9 == pytest.approx(343218.9, rel=1e-5)
    assert medians["cudnn_conv3d_ndhwc_tf32"] / 1e9 == pytest.approx(124348.4, rel=1e-5)


SMPI_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="n0" speed="1Gf"/>
    <host id="n1" speed="1Gf"/>
    <link id="wire" bandwidth="1GBps" latency="10us" sharing_policy="{policy}"/>
    <route src="n0" dst="n1"><link_ctn id="wire"{direction}/></route>
  </zone>
</platform>
"""


@pytest.mark.skipif(shutil.which("smpirun") is None or not (BIN / "calib_pingpong_smpi").exists(),
                    reason="needs SimGrid's smpirun and calib_pingpong_smpi")
@pytest.mark.parametrize("policy", ["SPLITDUPLEX", "SHARED"])
def test_the_benchmark_on_a_simulated_network_is_fitted_back_to_its_links(tmp_path, policy):
    """Inter-node calibration without a cluster: calib_pingpong under smpirun on two hosts and
    one link of 10 us and 1 GB/s (SMPI's factors set to 1, every message eager) gives an
    inter-node trace; the ping-pong fit recovers the link, and the ping-ping fit tells a
    full-duplex link (each direction 1 GB/s) from a shared one (0.5 GB/s each way)."""
    platform = tmp_path / "two_hosts.xml"
    platform.write_text(SMPI_PLATFORM.format(policy=policy, direction=' direction="UP"' if policy == "SPLITDUPLEX" else ""))
    hostfile = tmp_path / "hosts"
    hostfile.write_text("n0\nn1\n")
    trace = tmp_path / "pp.h5"
    res = subprocess.run(["smpirun", "-np", "2", "-platform", str(platform), "-hostfile", str(hostfile),
                          "--cfg=smpi/privatization:0", "--cfg=smpi/simulate-computation:no",
                          "--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1", "--cfg=network/crosstraffic:0",
                          "--cfg=smpi/async-small-thresh:2000000", "--cfg=smpi/send-is-detached-thresh:2000000",
                          "--log=root.thres:critical", str(BIN / "calib_pingpong_smpi"), "--max", "1048576",
                          "--repetitions", "2", "--per-octave", "2", "-o", str(trace)],
                         capture_output=True, text=True, env=MPI_ENV, timeout=300)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "pingpong.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "--network-pattern", "pingpong", "-o", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    assert p["quality"]["network"]["placement"] == "inter-node"
    assert all(s["latency"] == pytest.approx(10e-6, rel=0.01) for s in p["quality"]["network"]["segments"])
    lat, bw = link_of(p)
    assert lat == pytest.approx(10e-6, rel=0.01)  # MPI_Wtime's own simulated cost: 30 ns
    assert bw == pytest.approx(1e9, rel=1e-3)
    res, out = calibrate(tmp_path, trace)  # ping-ping: both directions at once
    assert res.returncode == 0, res.stderr
    largest = json.loads(out.read_text())["quality"]["network"]["segments"][-1]
    assert largest["bandwidth"] == pytest.approx(1e9 if policy == "SPLITDUPLEX" else 0.5e9, rel=1e-3)


@pytest.mark.parametrize("flaw", ["rows", "negative", "nan"])
def test_a_malformed_pingpong_trace_is_refused(tmp_path, flaw):
    trace = tmp_path / "bad.h5"
    sizes = 2.0 ** np.arange(0, 10)
    rt = np.tile(2e-6 + sizes[:, None] / 1e9, (1, 3))
    if flaw == "rows":
        rt = rt[:-2]
    elif flaw == "negative":
        rt[3, 1] = -1e-6
    else:
        rt[5, 0] = np.nan
    with h5py.File(trace, "w") as f:
        f.attrs["schema"] = "simcore-calibration-trace/1"
        g = f.create_group("pingpong")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert "bad.h5 (pingpong)" in res.stderr and ("rows" in res.stderr or "positive times" in res.stderr)
    assert not out.exists()


def test_a_trailing_host_pattern_is_refused(tmp_path):
    a, out = tmp_path / "a.h5", tmp_path / "p.json"
    write_synthetic_stencil(a, STENCIL_CELLS, STENCIL_RATES)
    res = subprocess.run([SIMCORE, "calibrate", str(a), "--hosts", "cpu-.*", "-o", str(out)], capture_output=True,
                         text=True)
    assert res.returncode == 2 and "followed by no trace" in res.stderr
    assert not out.exists()


@pytest.mark.skipif(not (BIN / "calib_hash").exists(), reason="calib_hash needs Abseil, oneTBB and Boost")
@pytest.mark.parametrize("args", [["--buckets"], ["--queries", "0"], ["--buckets", "2", "--load", "0.01"]])
def test_hash_benchmark_refuses_bad_options(tmp_path, args):
    trace = tmp_path / "h.h5"
    res = subprocess.run([str(BIN / "calib_hash"), "-o", str(trace), *args], capture_output=True, text=True)
    assert res.returncode == 2 and "calib_hash" in res.stderr
    assert not trace.exists()


@pytest.mark.parametrize("bad, message", [
    (float("nan"), "holds nan at index 3"),
    (float("inf"), "holds inf at index 3"),
    (-5.0, "holds -5 at index 3"),
    (2.5, "holds 2.5 at index 3"),
    (4294967296.0, "holds 4.29497e+09 at index 3"),
])
def test_message_sizes_must_be_whole_bytes_an_mpi_count_holds(tmp_path, bad, message):
    """A NaN size once made the fitter loop, allocating until the machine ran out of memory; an
    infinite or negative one gave a profile of nonsense, one beyond 2^31 - 1 a factor SMPI cannot
    read. Each is refused, naming the trace, the dataset and the index."""
    trace = tmp_path / "pp.h5"
    sizes = 2.0 ** np.arange(0, 12)
    sizes[3] = bad
    with synthetic_trace(trace) as f:
        g = f.create_group("pingpong")
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=np.full((len(sizes), 3), 1e-5)).attrs["unit"] = "s"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "p.json")], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2, res.stderr
    assert f"{trace} (pingpong)" in res.stderr and "dataset 'size' " + message in res.stderr
    assert "expected whole message sizes in bytes from 0 to 2147483647" in res.stderr
    assert not (tmp_path / "p.json").exists()


def test_one_message_size_cannot_be_fitted(tmp_path):
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, [1024.0], pingpong_law)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2 and "1 message size(s); expected at least 2 distinct sizes" in res.stderr
    assert not out.exists()


def test_network_traces_the_fitter_cannot_place_are_refused(tmp_path):
    only_pingping = tmp_path / "pingping.h5"
    with synthetic_trace(only_pingping) as f:
        g = f.create_group("pingping")
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        g.create_dataset("time", data=np.repeat(pingping_law(POWERS)[:, None], 3, axis=1)).attrs["unit"] = "s"
    res, _ = calibrate(tmp_path, only_pingping)
    assert res.returncode == 2 and f"{only_pingping} (pingping): a 'pingping' group without 'pingpong'" in res.stderr
    odd = tmp_path / "odd.h5"
    write_synthetic_network(odd, POWERS, pingpong_law, placement="inter-rack")
    res, _ = calibrate(tmp_path, odd)
    assert res.returncode == 2
    assert "placement 'inter-rack'; expected 'intra-node' or 'inter-node'" in res.stderr


def test_a_time_that_falls_with_size_gives_a_flat_segment_the_simulation_follows(tmp_path):
    """Times that fall from 256 B to 64 KiB once gave a segment of negative slope, written as
    bandwidth factor 1: SMPI then added s / bandwidth, 2.7 x the fitted time at 64 KiB. Now no
    segment falls, and a flat one's bytes cost nothing in SMPI's factors either."""
    sizes = 2.0 ** np.arange(0, 25)
    def law(s):
        s = np.asarray(s, dtype=float)
        return np.where(s < 256, 2e-6 + s / 4e9, np.where(s <= 65536, 5e-6 - 1e-11 * s, 1e-5 + s / 1e10))
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, sizes, law)
    p = fitted(tmp_path, trace)
    segs = p["quality"]["network"]["segments"]
    assert all(seg["bandwidth"] >= 0 and seg["latency"] >= 0 for seg in segs)
    lat, bw = link_of(p)
    lat_f = parse_factors(p["network_factors"]["inter-node"]["latency"])
    bw_f = parse_factors(p["network_factors"]["inter-node"]["bandwidth"])
    # What SMPI computes from the factors is what the fitted segments say, at every size.
    for s in sizes:
        lf = next(f for bound, f in lat_f if s > bound or bound == 0)
        bf = next(f for bound, f in bw_f if s > bound or bound == 0)
        seg = [g for g in segs if g["from"] <= s][-1]
        fitted_time = seg["latency"] + (s / seg["bandwidth"] if seg["bandwidth"] > 0 else 0)
        assert lat * lf + s / (bw * bf) == pytest.approx(fitted_time, rel=1e-4, abs=1e-10)


@pytest.mark.parametrize("threads, copy, message", [
    ([1.0, 2.0, 4.0, 8.0], np.full((2, 5), 1e10), "dataset 'copy_bandwidth' has 2 rows of 5 values; expected 4 rows"),
    ([1.0], np.zeros((1, 3)), "dataset 'copy_bandwidth' holds 0 at index 0; expected positive bandwidths"),
    ([0.0], np.full((1, 3), 1e10), "dataset 'threads' holds 0; expected thread counts >= 1"),
])
def test_bad_stream_traces_are_refused(tmp_path, threads, copy, message):
    """Rows the thread counts lack were once read past the end of the data, and zero
    bandwidths written into a profile that simcore run then refused."""
    trace = tmp_path / "stream.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array(threads)).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=copy).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((len(threads), 3), 1e10)).attrs["unit"] = "Bps"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2 and f"{trace} (stream): " + message in res.stderr
    assert not out.exists()


def test_stream_without_a_one_thread_run_gives_no_one_core_rate(tmp_path):
    trace = tmp_path / "stream.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([2.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.full((1, 3), 2e10)).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((1, 3), 3e10)).attrs["unit"] = "Bps"
    rates = fitted(tmp_path, trace)["rates"]
    assert rates["memcpy_bandwidth"]["value"] == 1e10 and "memcpy_bandwidth_one_core" not in rates


def test_a_hash_trace_with_a_zero_line_rate_is_refused(tmp_path):
    """It once gave "memory_latency": null, a profile simcore run refused."""
    trace = tmp_path / "hash.h5"
    write_synthetic_hash(trace, 5e7, 2e8, 1e-7)
    with h5py.File(trace, "a") as f:
        f["hash_table/random_line_rate"][0] = 0.0
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert f"{trace} (hash_table): dataset 'random_line_rate' holds 0 at index 0" in res.stderr
    assert not out.exists()


def test_an_output_in_a_missing_folder_is_bad_input(tmp_path):
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    out = tmp_path / "missing" / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and str(out) in res.stderr and "expected a path in an existing, writable folder" \
        in res.stderr


def test_a_link_rule_leaves_the_loopback_to_its_configuration(tmp_path):
    """A profile fitted from both placements has a link rule '.*' (inter-node) and the loopback
    configuration (intra-node). The rule once matched SimGrid's __loopback__ too, and two ranks
    on one host then ran at the inter-node link's speed."""
    profile = tmp_path / "both.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1",
                                   "links": [{"match": ".*", "bandwidth": "0.5GBps", "latency": "0s"}],
                                   "simgrid_config": {"network/model": "CM02", "network/loopback-bw": "1e9",
                                                      "network/loopback-lat": "0"}}))
    assert halo_time(tmp_path, profile) == pytest.approx(2e6 / 1e9, rel=1e-6)  # the loopback's 1 GB/s


def two_segment_law(latency, bandwidth, switch, latency2, bandwidth2):
    """One-way time of an eager protocol up to `switch` bytes and a rendezvous above it."""
    return lambda s: np.where(np.asarray(s, dtype=float) < switch, latency + np.asarray(s, dtype=float) / bandwidth,
                              latency2 + np.asarray(s, dtype=float) / bandwidth2)


def test_a_profile_of_both_placements_predicts_each_as_its_own_profile_does(tmp_path):
    """Fitted from an intra-node and an inter-node trace together, a profile carries each fit's
    factors in network_factors (not SimGrid's one set, smpi/*-factor, which would shape the
    messages within a host with the inter-node fit). A halo exchange of 2 ranks on one host then
    takes exactly what the intra-node profile alone gives, and on two hosts what the inter-node
    one gives, at every face size from 128 B to 2 MB; and the two placements differ."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles, fits = {}, {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,)), ("inter", (inter,))):
        (tmp_path / name).mkdir()
        fits[name] = fitted(tmp_path / name, *traces)
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fits[name]))
    both = fits["both"]
    assert not {"smpi/lat-factor", "smpi/bw-factor"} & set(both["simgrid_config"])
    for placement, alone in (("intra-node", fits["intra"]), ("inter-node", fits["inter"])):
        assert both["network_factors"][placement] == alone["network_factors"][placement]
        assert list(alone["network_factors"]) == [placement]
    assert "note" not in both["quality"]["network_intra_node"]
    platform = ROOT / "platforms" / "two_nodes.xml"
    for cells in (4, 16, 64, 128, 256, 500):  # faces of 8 x cells^2 bytes
        times = {}
        for ranks_per_node, alone in ((2, "intra"), (1, "inter")):
            params = {"ranks_per_node": ranks_per_node, "local_cells": f"1,{cells},{cells}", "periodic": "false",
                      "variables": 1, "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
            t = run_halo(tmp_path, f"both-{alone}-{cells}", params, profiles["both"], platform=platform)
            assert t == pytest.approx(run_halo(tmp_path, f"{alone}-{cells}", params, profiles[alone],
                                               platform=platform), rel=1e-9)
            times[alone] = t
        assert times["inter"] > 1.5 * times["intra"]


@pytest.mark.parametrize("model, cfg", [("SMPI", "smpi/lat-factor:0:3"), (None, "network/latency-factor:3"),
                                        (None, "smpi/bw-factor:0:2"), ("SMPI", "network/bandwidth-factor:0.5")])
def test_network_factors_and_configured_factors_together_are_refused(tmp_path, model, cfg):
    """SimGrid takes its configured factors or the callbacks that network_factors become, not
    both; each model reads its own pair of keys, and a value set for the other would be recorded
    in summary.json as if it applied: any of the four beside network_factors is bad input."""
    profile = tmp_path / "nf.json"
    profile.write_text(json.dumps({"schema": "simcore-profile/1",
                                   "simgrid_config": {"network/model": model} if model else {},
                                   "network_factors": {"inter-node": {"latency": "0:2", "bandwidth": "0:0.5"}}}))
    params = {"ranks_per_node": 1, "local_cells": "1,8,8", "periodic": "false", "variables": 1, "iterations": 1,
              "flops_per_cell": 0, "mode": "smpi"}
    with pytest.raises(subprocess.CalledProcessError) as e:
        run_halo(tmp_path, "mixed", params, profile, extra=("--cfg=" + cfg,), platform=ROOT / "platforms" / "two_nodes.xml")
    assert e.value.returncode == 2
    key = cfg.split(":")[0]
    assert f"{profile} (network_factors): {key} is set too (by the profile, the scenario or --cfg)" in e.value.stderr
    assert not (tmp_path / "mixed" / "summary.json").exists()


CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="c-" suffix="" radical="0-1" speed="1Gf" core="2" bw="1GBps" lat="10us"
           bb_bw="10GBps" bb_lat="1us"{loopback}/>
</platform>
"""


def test_on_a_cluster_messages_within_a_node_follow_the_intra_node_fit_over_its_loopback(tmp_path):
    """A <cluster> with loopback_bw gives each node a loopback link (c_link_N_loopback), which the
    intra-node fit's network/loopback-* set as they set SimGrid's own: two ranks on one node of
    the cluster take exactly what they take on single_node.xml with the intra-node profile, and
    one rank a node what the inter-node profile gives there. Without loopback_bw a node reaches
    itself over its links to the backbone, which carry the inter-node fit: its messages to
    itself then take the inter-node factors too, and the run says so."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles = {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,)), ("inter", (inter,))):
        (tmp_path / name).mkdir()
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fitted(tmp_path / name, *traces)))
    with_loopback, without = tmp_path / "cluster_lo.xml", tmp_path / "cluster.xml"
    with_loopback.write_text(CLUSTER.format(loopback=' loopback_bw="1GBps" loopback_lat="50us"'))
    without.write_text(CLUSTER.format(loopback=""))
    for cells in (16, 128, 500):
        params = {"local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1, "iterations": 1,
                  "flops_per_cell": 0, "mode": "smpi"}
        within = dict(params, ranks_per_node=2)
        across = dict(params, ranks_per_node=1)
        t = run_halo(tmp_path, f"lo-in-{cells}", within, profiles["both"], platform=with_loopback)
        assert t == pytest.approx(run_halo(tmp_path, f"single-{cells}", within, profiles["intra"]), rel=1e-9)
        t = run_halo(tmp_path, f"lo-across-{cells}", across, profiles["both"], platform=with_loopback)
        assert t == pytest.approx(run_halo(tmp_path, f"inter-across-{cells}", across, profiles["inter"],
                                           platform=with_loopback), rel=1e-9)
        t = run_halo(tmp_path, f"no-lo-in-{cells}", within, profiles["both"], platform=without)
        assert t == pytest.approx(run_halo(tmp_path, f"inter-in-{cells}", within, profiles["inter"], platform=without),
                                  rel=1e-9)
    scenario = tmp_path / "halo_no-lo-in-16.xml"
    res = subprocess.run([SIMCORE, "run", str(scenario), "--out", str(tmp_path / "again")], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert "2 host(s) reach themselves over links, not a loopback (c-0: c_link_0_UP c_backbone c_link_0_DOWN)" \
        in res.stderr and "declare loopback_bw and loopback_lat on the <cluster>" in res.stderr
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert summary["network_factors"] == json.loads(profiles["both"].read_text())["network_factors"]
    # simcore validate, which starts no simulation, checks the same (the check runs when a
    # simulation starts, once the platform is sealed, and validate calls it itself).
    res = subprocess.run([SIMCORE, "validate", str(scenario)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "2 host(s) reach themselves over links, not a loopback" in res.stderr


SHIPPED_CLUSTERS = ("small_cluster.xml", "two_clusters.xml", "fat_tree.xml", "fat_tree_144.xml", "large_cluster.xml")


def test_on_the_shipped_clusters_messages_within_a_node_follow_the_intra_node_fit(tmp_path):
    """Every shipped platform whose nodes hold several cores declares a loopback per node: with a
    profile of both placements, two ranks on one of its nodes take exactly what they take on
    single_node.xml with the intra-node profile alone (the profile's loopback values replace the
    platform's), and no run warns that a host reaches itself over its NIC links."""
    intra, inter = tmp_path / "intra.h5", tmp_path / "inter.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 4e-6, 2e10), placement="intra-node")
    write_synthetic_network(inter, POWERS, two_segment_law(2e-6, 3e9, 16384, 9e-6, 1e10), placement="inter-node")
    profiles = {}
    for name, traces in (("both", (intra, inter)), ("intra", (intra,))):
        (tmp_path / name).mkdir()
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps(fitted(tmp_path / name, *traces)))
    within = {"ranks_per_node": 2, "local_cells": "1,128,128", "periodic": "false", "variables": 1, "iterations": 1,
              "flops_per_cell": 0, "mode": "smpi"}
    expected = run_halo(tmp_path, "single", within, profiles["intra"])
    for platform in SHIPPED_CLUSTERS:
        name = platform.split(".")[0]
        assert run_halo(tmp_path, name, within, profiles["both"], platform=ROOT / "platforms" / platform) == \
            pytest.approx(expected, rel=1e-9), platform
        res = subprocess.run([SIMCORE, "run", str(tmp_path / f"halo_{name}.xml"), "--out", str(tmp_path / (name + "2"))],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert "reach themselves over links" not in res.stderr, platform


def test_a_profile_of_one_placement_leaves_the_other_placement_alone(tmp_path):
    """A profile fitted within a node carries its factors for messages within a host only:
    SimGrid's smpi/*-factor would scale every message, and this machine's intra-node fit (a
    latency factor of 1425 from 6 MB on) once made a 2 MB face between two nodes take 157 ms
    instead of 45. Between two nodes such a profile gives what SMPI's network model gives with
    factors of 1 and no profile, at every face size; within a node it changes the time."""
    intra = tmp_path / "intra.h5"
    write_synthetic_network(intra, POWERS, two_segment_law(0.4e-6, 8e9, 65536, 40e-6, 2e10), placement="intra-node")
    profile = tmp_path / "intra.json"
    profile.write_text(json.dumps(fitted(tmp_path, intra)))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {
        "network/model": "SMPI", "smpi/lat-factor": "0:1", "smpi/bw-factor": "0:1"}}))
    platform = ROOT / "platforms" / "two_nodes.xml"
    for cells in (16, 128, 512):
        params = {"local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1, "iterations": 1,
                  "flops_per_cell": 0, "mode": "smpi"}
        across = dict(params, ranks_per_node=1)
        assert run_halo(tmp_path, f"intra-across-{cells}", across, profile, platform=platform) == \
            pytest.approx(run_halo(tmp_path, f"plain-across-{cells}", across, plain, platform=platform), rel=1e-12)
        within = dict(params, ranks_per_node=2)
        assert run_halo(tmp_path, f"intra-within-{cells}", within, profile, platform=platform) != \
            pytest.approx(run_halo(tmp_path, f"plain-within-{cells}", within, plain, platform=platform), rel=1e-3)


def test_a_simulated_exchange_between_two_nodes_takes_the_fitted_ping_ping_time(tmp_path):
    """Ping-ping times include what the traffic the other way costs: the profile turns off
    SimGrid's cross-traffic, which charged each message 5 % of the reverse one on top. A halo
    exchange of one face each way between the two hosts of two_nodes.xml then takes the fitted
    law's time for the face, on both sides of the protocol switch (before: 655 kB took 88.8 us
    against the law's 85.5)."""
    law = two_segment_law(5e-6, 5e9, 65536, 20e-6, 1e10)
    trace = tmp_path / "inter.h5"
    write_synthetic_network(trace, POWERS, law, law, placement="inter-node")
    p = fitted(tmp_path, trace)
    assert p["simgrid_config"]["network/crosstraffic"] == "0"
    profile = tmp_path / "inter.json"
    profile.write_text(json.dumps(p))
    for cells in (16, 64, 143, 286):  # faces of 2, 32, 164 and 655 kB
        params = {"ranks_per_node": 1, "local_cells": f"1,{cells},{cells}", "periodic": "false", "variables": 1,
                  "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
        face = 8 * cells * cells
        t = run_halo(tmp_path, f"exchange-{cells}", params, profile, platform=ROOT / "platforms" / "two_nodes.xml")
        assert t == pytest.approx(float(law(face)), rel=2e-3), face


def test_a_factor_left_out_of_network_factors_is_one(tmp_path):
    """Both callbacks are installed whenever network_factors are: a bandwidth factor given for
    neither placement is 1, not the default model's 0.97 (LV08), as the README says."""
    platform = ROOT / "platforms" / "two_nodes.xml"
    params = {"ranks_per_node": 1, "local_cells": "1,500,500", "periodic": "false", "variables": 1,
              "iterations": 1, "flops_per_cell": 0, "mode": "smpi"}
    times = {}
    for name, factors in (("latency-only", {"latency": "0:1"}), ("both", {"latency": "0:1", "bandwidth": "0:1"})):
        profile = tmp_path / (name + ".json")
        profile.write_text(json.dumps({"schema": "simcore-profile/1", "network_factors": {"inter-node": factors}}))
        times[name] = run_halo(tmp_path, name, params, profile, platform=platform)
    assert times["latency-only"] == times["both"]


def test_the_halo_models_own_predictions_see_network_factors(tmp_path):
    """The halo model's dynamic policy predicts each route's time with the network's factors. A
    profile whose network_factors are all 1 under the default model (LV08, whose configured
    factors 13.01 and 0.97 the callbacks replace) simulates the network of CM02 without factors,
    and the policy must choose as it does there: the same protocols and the same times."""
    scenario = ROOT / "scenarios" / "halo" / "one_rank_per_node_dynamic.xml"
    ones = tmp_path / "ones.json"
    ones.write_text(json.dumps({"schema": "simcore-profile/1", "network_factors": {
        p: {"latency": "0:1", "bandwidth": "0:1"} for p in ("intra-node", "inter-node")}}))
    cm02 = tmp_path / "cm02.json"
    cm02.write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {"network/model": "CM02"}}))
    metrics = {}
    for profile in (ones, cm02):
        out = subprocess.run([SIMCORE, "run", str(scenario), "--calibration", str(profile), "--json", "--quiet",
                              "--out", str(tmp_path / profile.stem)], capture_output=True, text=True, check=True)
        metrics[profile.stem] = json.loads(out.stdout)["metrics"]
    assert metrics["ones"] == metrics["cm02"]
    m = metrics["ones"]
    assert m.get("inter_eager_messages", 0) + m.get("inter_rendezvous_messages", 0) == 192


@pytest.mark.parametrize("program, args, message", [
    ("calib_stream", ["--threads", "abc,1"], "--threads abc,1: expected thread counts"),
    ("calib_stream", ["--bytes", "1e9"], "--bytes 1e9: expected a whole number of bytes"),
    ("calib_stream", ["--repetitions"], "missing value after --repetitions"),
    ("calib_dgemm", ["--sizes", "-64"], "--sizes -64: expected matrix orders"),
    ("calib_dgemm", ["--sizes", "64.9"], "--sizes 64.9: expected matrix orders"),
    ("calib_dgemm", ["--sizes", "64", "--repetitions"], "missing value after --repetitions"),
    ("calib_dgemm", ["--peak-gflops", "fast"], "--peak-gflops fast: expected a positive number"),
    ("calib_hash", ["--queries", "1e6"], "--queries 1e6: expected a whole number"),
    ("calib_hash", ["--load", "0.7x"], "--load 0.7x: expected a share of the slots"),
    ("calib_hash", ["--key", "int"], "--key int: expected float or double"),
    ("calib_cuda", ["--size", "1e4"], "--size 1e4: expected a matrix size from 128 to 16384"),
    ("calib_cuda", ["--size", "64"], "--size 64: expected a matrix size from 128 to 16384"),
    ("calib_cuda", ["--check", "--repetitions", "0"], "--repetitions 0: expected a whole number of repetitions"),
    ("calib_cuda", ["--repetitions"], "missing value after --repetitions"),
    ("calib_cuda", ["--sizes", "4096"], "unknown option --sizes"),
])
def test_benchmarks_take_an_option_value_whole_or_refuse_it(tmp_path, program, args, message):
    """atof and strtoull once read "1e6" queries as 1 and a size of "64.9" as 64 (writing 64.9 in
    the trace); "-64" crashed calib_dgemm, and "abc" threads ran as 0. Each now exits 2 before
    measuring anything, naming the option, and writes no trace."""
    if not (BIN / program).exists():
        pytest.skip(f"{program} is not built here")
    trace = tmp_path / "t.h5"
    res = subprocess.run([str(BIN / program), *args, "-o", str(trace)] if args[-1] != "--repetitions" else
                         [str(BIN / program), "-o", str(trace), *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and f"{program}: {message}" in res.stderr and "usage:" in res.stderr
    assert not trace.exists()


@pytest.mark.parametrize("args, message", [
    (["--max", "1e6"], "--max 1e6: expected a whole number of bytes from 1 to 2147483647"),
    (["--max", "64", "--repetitons", "3"], "unknown option --repetitons"),
    (["--per-octave", "9"], "--per-octave 9: expected a whole number from 1 to 8"),
    (["--buffers", "pinned"], "--buffers pinned: expected per-size or shared"),
])
def test_pingpong_refuses_bad_options_on_every_rank(tmp_path, args, message):
    if not (BIN / "calib_pingpong").exists() or shutil.which("mpirun") is None:
        pytest.skip("calib_pingpong needs Open MPI")
    trace = tmp_path / "p.h5"
    res = subprocess.run(["mpirun", "-np", "2", str(BIN / "calib_pingpong"), *args, "-o", str(trace)],
                         capture_output=True, text=True, env=MPI_ENV, timeout=120)
    assert res.returncode != 0 and f"calib_pingpong: {message}" in res.stderr
    assert not trace.exists()


def limited_address_space(mib):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))


def test_pingpong_that_cannot_have_its_buffers_stops_before_measuring(tmp_path):
    """Per size, the buffers are allocated as each size comes; the sweep's largest are tried
    first, so a sweep that does not fit stops at once (exit 2, naming them), no trace written.
    The largest one-way window is not the largest size's: with --window 64 and --max 8 MiB it is
    4 MiB x 64 = 256 MiB (8 MiB messages go one at a time), which 400 MiB of address space a
    process (Open MPI's own: about 200 MiB here) cannot hold, where 8 + 8 MiB would fit."""
    if not (BIN / "calib_pingpong").exists() or shutil.which("mpirun") is None:
        pytest.skip("calib_pingpong needs Open MPI")
    trace = tmp_path / "p.h5"
    res = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(BIN / "calib_pingpong"), "--max", "8388608",
                          "--window", "64", "--per-octave", "1", "--repetitions", "1", "-o", str(trace)],
                         capture_output=True, text=True, env=MPI_ENV, timeout=120, preexec_fn=limited_address_space(400))
    assert res.returncode == 2, res.stderr
    assert "cannot allocate 268435456 bytes for the largest one-way window" in res.stderr
    assert "expected a --max (or --window) that fits in memory" in res.stderr
    assert not trace.exists()


@pytest.mark.skipif(shutil.which("smpirun") is None or not (BIN / "calib_pingpong_smpi").exists(),
                    reason="needs SimGrid's smpirun and calib_pingpong_smpi")
def test_pingpong_under_smpi_that_cannot_have_its_buffers_exits_2(tmp_path):
    """Under SMPI too (whose MPI_Abort would end one rank and leave the other deadlocked, exit
    0): every rank learns that one could not allocate and all stop, exit 2, no trace."""
    platform = tmp_path / "two_hosts.xml"
    platform.write_text(SMPI_PLATFORM.format(policy="SHARED", direction=""))
    hostfile = tmp_path / "hosts"
    hostfile.write_text("n0\nn1\n")
    trace = tmp_path / "pp.h5"
    res = subprocess.run(["smpirun", "-np", "2", "-platform", str(platform), "-hostfile", str(hostfile),
                          "--cfg=smpi/privatization:0", "--log=root.thres:critical", str(BIN / "calib_pingpong_smpi"),
                          "--max", "2147483647", "--per-octave", "1", "--repetitions", "1", "-o", str(trace)],
                         capture_output=True, text=True, env=MPI_ENV, timeout=120,
                         preexec_fn=limited_address_space(1536))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "cannot allocate 2147483647 bytes for the largest send buffer" in res.stderr
    assert not trace.exists()


@pytest.mark.parametrize("args, message", [
    (["--rounds", "0"], "--rounds 0: expected at least 1"),
    (["--sizes", "16,x"], "--sizes 16,x: expected cells per rank side"),
    (["--max-bytes", "3000000000"], "--max-bytes 3000000000: expected a size from 1 to 2147483647"),
])
def test_predict_loop_refuses_bad_options_before_measuring(tmp_path, args, message):
    out = tmp_path / "loop"
    res = subprocess.run(["/usr/bin/python3", str(ROOT / "calibration" / "predict_loop.py"), str(out), *args],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("program", ["calib_stream", "calib_dgemm", "calib_stencil", "calib_hash"])
def test_an_output_that_cannot_be_written_is_refused_before_measuring(tmp_path, program):
    """A trace into a folder that is not there was found only after the measurement (minutes of
    calib_hash lost). With the default options each program would run for seconds to minutes:
    the refusal comes at once."""
    if not (BIN / program).exists():
        pytest.skip(f"{program} is not built here")
    out = tmp_path / "missing" / "t.h5"
    res = subprocess.run([str(BIN / program), "-o", str(out)], capture_output=True, text=True, timeout=20)
    assert res.returncode == 2 and f"-o {out}: cannot write in {out.parent}" in res.stderr
    assert "HDF5" not in res.stderr and not out.parent.exists()


def hdf5_with_text_dataset(f):
    f.create_group("stream").create_dataset("threads", data=np.array([b"one", b"two"]))


def hdf5_with_root_dataset(f):
    f.create_dataset("size", data=np.arange(4.0))


def hdf5_with_3d_dataset(f):
    f.create_group("pingpong").create_dataset("round_trip", data=np.ones((2, 2, 2)))


@pytest.mark.parametrize("make, message", [
    (hdf5_with_text_dataset, "(stream): dataset 'threads' does not hold numbers; expected a dataset of numbers"),
    (hdf5_with_root_dataset, "'size' at the root is not a group; expected one group per benchmark"),
    (hdf5_with_3d_dataset, "(pingpong): dataset 'round_trip' has 3 dimensions; expected a dataset of numbers with 1 or 2"),
])
def test_malformed_hdf5_traces_are_refused_naming_the_object(tmp_path, make, message):
    """A text dataset once ended in HDF5's error stack and exit 1, a dataset at the root was
    dropped, and a 3-D one converted to JSON that did not convert back."""
    src = tmp_path / "bad.h5"
    with synthetic_trace(src) as f:
        make(f)
    out = tmp_path / "out.json"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and f"{src}" in res.stderr and message in res.stderr, res.stderr
    assert "HDF5-DIAG" not in res.stderr and not out.exists()
    res, profile = calibrate(tmp_path, src)
    assert res.returncode == 2 and message in res.stderr and not profile.exists()
