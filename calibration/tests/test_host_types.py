"""Host types (--hosts REGEX): one rule each with its own rates, the nodes of one type pooled,
traces of one type that measured different things refused."""

import json
import subprocess

import h5py
import numpy as np
import pytest

from calibration_test_support import (
    SIMCORE, STENCIL_CELLS, cuda_trace_as_the_device_writes_it, STENCIL_RATES, calibrate, fitted, run_halo, synthetic_trace, write_synthetic_dgemm,
    two_host_platform, write_synthetic_hash, write_synthetic_stencil, write_synthetic_stream)


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
    # DGEMM: the first trace's entry gives the nodes' spread (42 and 40 against 41), no note.
    assert q["compute"][0]["node_rel_spread"] == pytest.approx(1 / 41)
    assert "note" not in q["compute"][0] and "node_rel_spread" not in q["compute"][1]
    # CUDA: each kernel's node medians (11, 14, 17 Gflop/s: 3/14 from their median).
    gpu = q["gpu"]["gemm_fp32"]
    assert gpu["traces"] == 3 and gpu["node_rel_spread"] == pytest.approx(3 / 14)
    assert [b["gpu_gemm_fp32_flops"] for b in gpu["by_trace"]] == [11e9, 14e9, 17e9]
    assert "differ by up to 21.4 %" in gpu["note"]


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


def test_dgemm_and_gpu_nodes_that_differ_widely_get_a_note(tmp_path):
    """DGEMM and CUDA traces of two kinds of node given as one type were pooled in silence (a
    host speed of 70 Gflop/s from nodes of 40 and 100, which neither reached); their quality
    now gives the nodes' spread with the note pointing at --hosts, as the other parts do, and
    the command prints it."""
    d40, d100, g1, g2 = (tmp_path / n for n in ("d40.h5", "d100.h5", "g1.json", "g2.json"))
    write_synthetic_dgemm(d40, [128, 256], [[80.0] * 3, [40.0] * 3])
    write_synthetic_dgemm(d100, [128, 256], [[80.0] * 3, [100.0] * 3])
    cuda_trace_as_the_device_writes_it(g1, {"gemm_fp32": [10000.0] * 3, "peak_fp32_fma": [50000.0] * 3})
    cuda_trace_as_the_device_writes_it(g2, {"gemm_fp32": [20000.0] * 3, "peak_fp32_fma": [51000.0] * 3})
    res, out = calibrate(tmp_path, d40, d100, g1, g2)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]
    assert float(json.loads(out.read_text())["hosts"][0]["speed"].rstrip("f")) == pytest.approx(70e9)
    assert q["compute"][0]["node_rel_spread"] == pytest.approx(30 / 70)
    assert "the nodes' DGEMM rates differ by up to 42.9 %" in q["compute"][0]["note"]
    assert "--hosts" in q["compute"][0]["note"] and "note" not in q["compute"][1]
    gemm, peak = q["gpu"]["gemm_fp32"], q["gpu"]["peak_fp32_fma"]
    assert gemm["node_rel_spread"] == pytest.approx(1 / 3) and "differ by up to 33.3 %" in gemm["note"]
    assert peak["node_rel_spread"] == pytest.approx(0.5 / 50.5) and "note" not in peak
    assert [b["trace"] for b in gemm["by_trace"]] == [str(g1), str(g2)]
    assert "simcore calibrate: note (compute, hosts matching '.*'): the nodes' DGEMM rates differ" in res.stderr
    assert "simcore calibrate: note (gpu gemm_fp32): the nodes' gpu_gemm_fp32_flops differ" in res.stderr
    assert "peak_fp32_fma)" not in res.stderr
    # One trace a part: no spread to give, the entries as before.
    single = fitted(tmp_path, d40, g1)["quality"]
    assert "node_rel_spread" not in single["compute"][0] and "traces" not in single["gpu"]["gemm_fp32"]


def test_dgemm_traces_of_different_cores_given_as_one_type_get_a_note(tmp_path):
    """Traces record which core measured (cpu_id: a virtual machine's model name, "AMD EPYC",
    does not tell two generations apart) and its caches. Nodes of one type whose cores or
    caches differ are pooled into one speed however close their rates: the quality names them
    and the note points at --hosts; with a spread note already there, both are said. A
    stepping apart is the same core, and emulated traces name none."""
    a, b, c, d = (tmp_path / n for n in ("a.h5", "b.h5", "c.h5", "d.h5"))
    zen4, zen5 = "AuthenticAMD family 25 model 17 stepping 1", "AuthenticAMD family 26 model 2 stepping 1"
    write_synthetic_dgemm(a, [128, 256], [[80.0] * 3, [100.0] * 3], cpu_id=zen4)
    write_synthetic_dgemm(b, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id=zen5)
    write_synthetic_dgemm(c, [128, 256], [[80.0] * 3, [102.0] * 3], cpu_id=zen4)
    res, out = calibrate(tmp_path, a, b, c)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["compute"]
    assert q[0]["cpu_id"] == zen4 and q[1]["cpu_id"] == zen5 and "caches" not in q[0]
    assert q[0]["cpu_ids"] == [zen4, zen5] and "cpu_ids" not in q[1]
    assert q[0]["note"] == (f"the nodes' traces name 2 different cores or caches ({zen4} | {zen5}): one speed stands "
                            "for them all. Give each type its own --hosts REGEX")
    assert ("simcore calibrate: note (compute, hosts matching '.*'): the nodes' traces name 2 different cores"
            in res.stderr)
    # Given a type each, no note; one core throughout, or traces from before cpu_id, none either.
    res, out = calibrate(tmp_path, "--hosts", "old-.*", a, c, "--hosts", "new-.*", b)
    assert res.returncode == 0, res.stderr
    assert all("note" not in e and "cpu_ids" not in e for e in json.loads(out.read_text())["quality"]["compute"])
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [40.0] * 3])
    for traces in ((a, c), (a, d)):
        q = fitted(tmp_path, *traces)["quality"]["compute"]
        assert "cpu_ids" not in q[0] and "different cores" not in q[0].get("note", "")
    # Cores and rates that both differ: both said, in one note.
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [40.0] * 3], cpu_id=zen5)
    q = fitted(tmp_path, a, d)["quality"]["compute"]
    assert q[0]["note"].startswith("the nodes' DGEMM rates differ by up to")
    assert q[0]["note"].endswith(f"; the nodes' traces name 2 different cores or caches ({zen4} | {zen5}): one speed "
                                 "stands for them all")
    # Another stepping is the same core; emulated traces are no core's: no note.
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id=zen4.replace("stepping 1", "stepping 2"))
    assert "cpu_ids" not in fitted(tmp_path, a, d)["quality"]["compute"][0]
    write_synthetic_dgemm(c, [128, 256], [[80.0] * 3, [102.0] * 3], cpu_id="emulated (/proc/cpuinfo is the host's: x)")
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id="emulated (/proc/cpuinfo is the host's: y)")
    assert "cpu_ids" not in fitted(tmp_path, c, d)["quality"]["compute"][0]
    # The same core presented with other caches (a hypervisor's choice): noted, caches given.
    write_synthetic_dgemm(c, [128, 256], [[80.0] * 3, [102.0] * 3], cpu_id=zen5, caches="L2 1024K, L3 32768K")
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id=zen5, caches="L2 1024K, L3 16384K")
    q = fitted(tmp_path, c, d)["quality"]["compute"]
    assert q[0]["caches"] == "L2 1024K, L3 32768K"
    assert q[0]["cpu_ids"] == [f"{zen5}, L2 1024K, L3 32768K", f"{zen5}, L2 1024K, L3 16384K"]
    # Not different cores: one trace without caches (no sysfs); a big.LITTLE node with a core
    # offline; POWER revisions; a stepping the kernel calls unknown. Any of them a very long
    # id (the note's parsing once overflowed the stack on 40,000 digits).
    little_big = "4 x implementer 0x41 variant 0x0 part 0xd03 revision 4; 2 x implementer 0x41 variant 0x0 part 0xd08 revision 2"
    power = "cpu POWER9 (architected), altivec supported revision "
    for first, second in [((zen5, "L2 1024K"), (zen5, None)),
                          ((little_big, None), (little_big.replace("4 x", "3 x").replace("revision 2", "revision 3"), None)),
                          ((power + "2.2 (pvr 004e 1202)", None), (power + "2.3 (pvr 004e 1203)", None)),
                          ((zen5, None), (zen5.replace("stepping 1", "stepping unknown"), None)),
                          ((zen5, None), (zen5.replace("stepping 1", "stepping " + "7" * 50000), None))]:
        write_synthetic_dgemm(c, [128, 256], [[80.0] * 3, [102.0] * 3], cpu_id=first[0], caches=first[1])
        write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id=second[0], caches=second[1])
        assert "cpu_ids" not in fitted(tmp_path, c, d)["quality"]["compute"][0], (first, second)
    # A big.LITTLE node against one of its cores alone: different.
    write_synthetic_dgemm(d, [128, 256], [[80.0] * 3, [101.0] * 3], cpu_id=little_big.split("; ")[0])
    assert len(fitted(tmp_path, c, d)["quality"]["compute"][0]["cpu_ids"]) == 2


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


def test_halo_computes_at_each_host_types_fitted_cost(tmp_path):
    """One rank on a host of each type: its compute time is cells / the type's measured cell
    rate (cells x flops_per_cell / the type's speed), whatever the platform's speed."""
    t = host_type_traces(tmp_path)
    profile = tmp_path / "p.json"
    subprocess.run([SIMCORE, "calibrate", "--hosts", "cpu-.*", *map(str, t["cpu"]), "--hosts", "gpu-.*",
                    *map(str, t["gpu"]), "-o", str(profile)], check=True, capture_output=True)
    platform = two_host_platform(tmp_path / "two_types.xml", hosts=("cpu-0", "gpu-0"))
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


def test_a_trailing_host_pattern_is_refused(tmp_path):
    a, out = tmp_path / "a.h5", tmp_path / "p.json"
    write_synthetic_stencil(a, STENCIL_CELLS, STENCIL_RATES)
    res = subprocess.run([SIMCORE, "calibrate", str(a), "--hosts", "cpu-.*", "-o", str(out)], capture_output=True,
                         text=True)
    assert res.returncode == 2 and "followed by no trace" in res.stderr
    assert not out.exists()
