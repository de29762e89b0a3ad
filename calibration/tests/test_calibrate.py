"""Calibration: benchmarks write traces h5py reads, `simcore calibrate` fits them, a profile
changes a simulation the way it should, bad input is refused."""

import json
import os
import pathlib
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


def write_synthetic_pingpong(path, latency, bandwidth, noise=0.0, placement="inter-node"):
    """A trace as h5py writes it: one-way time = latency + size / bandwidth."""
    rng = np.random.default_rng(3)
    sizes = 2.0 ** np.arange(0, 25)
    one_way = latency + sizes / bandwidth
    rt = 2 * one_way[:, None] * (1 + noise * rng.standard_normal((len(sizes), 5)))
    with h5py.File(path, "w") as f:
        f.attrs["schema"] = "simcore-calibration-trace/1"
        f.attrs["host"] = "synthetic"
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
        g = f["stream"]
        assert list(g["threads"][()]) == [1, 2]
        assert g["copy_bandwidth"].shape == (2, 2)
        assert g["copy_bandwidth"].attrs["unit"] in (b"Bps", "Bps")
        assert (g["triad_bandwidth"][()] > 1e8).all()


@pytest.mark.skipif(shutil.which("mpirun") is None or not (BIN / "calib_pingpong").exists(), reason="no MPI")
def test_pingpong_benchmark_and_fit_on_this_machine(tmp_path):
    trace = tmp_path / "pp.h5"
    subprocess.run(["mpirun", "--oversubscribe", "-np", "2", str(BIN / "calib_pingpong"), "--max", "1048576",
                    "--repetitions", "3", "-o", str(trace)], check=True, capture_output=True, env=MPI_ENV, timeout=300)
    with h5py.File(trace, "r") as f:
        assert f["pingpong"].attrs["placement"] in (b"intra-node", "intra-node")
        assert f["pingpong/round_trip"].shape == (21, 3)
        assert f["one_way/time"].shape == (21, 3)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    assert p["simgrid_config"]["network/model"] == "SMPI"
    assert float(p["simgrid_config"]["network/loopback-bw"]) > 1e8
    # Fit quality depends on how quiet the machine is (shared here): only its presence is checked.
    q = p["quality"]["network"]
    assert {"r2", "median_rel_error", "max_rel_error", "segments"} <= set(q) and len(q["segments"]) >= 1


def test_fitter_recovers_a_synthetic_network(tmp_path):
    trace = tmp_path / "synthetic.h5"
    write_synthetic_pingpong(trace, 5e-6, 2e9, noise=0.01)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    link = p["links"][0]
    assert link["match"] == ".*"
    assert float(link["latency"].rstrip("s")) == pytest.approx(5e-6, rel=0.05)
    assert float(link["bandwidth"].rstrip("Bps")) == pytest.approx(2e9, rel=0.02)
    assert p["quality"]["network"]["median_rel_error"] < 0.02
    assert p["quality"]["network"]["protocol_switch"] == 0


def halo_time(tmp_path, profile):
    scenario = tmp_path / ("halo_%s.xml" % profile.stem)
    scenario.write_text(f"""<?xml version="1.0"?>
<scenario model="halo" seed="1">
  <platform file="{ROOT / 'platforms' / 'single_node.xml'}"/>
  <calibration file="{profile}"/>
  <param name="ranks" value="2"/>
  <param name="procs" value="2,1,1"/>
  <param name="local_cells" value="1,500,500"/>
  <param name="periodic" value="false"/>
  <param name="variables" value="1"/>
  <param name="iterations" value="1"/>
  <param name="flops_per_cell" value="0"/>
  <param name="ranks_per_node" value="2"/>
  <param name="mode" value="smpi"/>
</scenario>
""")
    out = subprocess.run([SIMCORE, "run", str(scenario), "--json", "--quiet", "--out", str(tmp_path / profile.stem)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["metrics"]["makespan"]


def test_profile_doubling_the_bandwidth_halves_a_transfer_bound_time(tmp_path):
    profiles = {}
    for name, bw in (("slow", 1e9), ("fast", 2e9)):
        profiles[name] = tmp_path / (name + ".json")
        profiles[name].write_text(json.dumps({"schema": "simcore-profile/1", "simgrid_config": {
            "network/model": "CM02", "network/loopback-bw": str(bw), "network/loopback-lat": "0"}}))
    slow, fast = halo_time(tmp_path, profiles["slow"]), halo_time(tmp_path, profiles["fast"])
    assert slow == pytest.approx(2e6 / 1e9, rel=1e-6)  # one 2 MB face over the loopback
    assert fast == pytest.approx(slow / 2, rel=1e-9)


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
        assert float(g.attrs["max_rel_error_vs_reference"]) < 1e-10
        gflops = g["gflops"][()]
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    speed = float(p["hosts"][0]["speed"].rstrip("f"))
    assert speed == pytest.approx(np.median(gflops[1]) * 1e9, rel=1e-5)


@pytest.mark.skipif(not (BIN / "calib_hash").exists(), reason="calib_hash needs Abseil, oneTBB and Boost")
def test_hash_benchmark_compares_every_structure_on_one_workload(tmp_path):
    trace = tmp_path / "hash.h5"
    subprocess.run([str(BIN / "calib_hash"), "--buckets", "4096", "--queries", "100000", "--repetitions", "1", "-o",
                    str(trace)], check=True, capture_output=True)
    with h5py.File(trace, "r") as f:
        g = f["hash_table"]
        assert g.attrs["structures"].split(",")[0] == "simd_table"
        hits = g["hit_share"][()]
        assert len(hits) == 6 and np.allclose(hits, hits[0]) and abs(hits[0] - 0.1) < 0.01  # same answers, 90 % misses
        assert (g["lookup_rate"][()] > 0).all()
        assert g["insert_failure_rate"].shape == (4,)
