"""calibration/slurm/calibrate.sbatch run on this machine under stand-ins for srun, scontrol,
mpirun and hostname (fake_slurm.py): the node benchmarks on every node, the network within a
node and between node pairs (simulated by SMPI on a platform of known links), the profiles."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

BIN = pathlib.Path(os.environ["SIMCORE_BIN"]).resolve().parent
ROOT = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
SCRIPT = ROOT / "calibration" / "slurm" / "calibrate.sbatch"

pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None or shutil.which("smpirun") is None or not (BIN / "calib_pingpong").exists()
    or not (BIN / "calib_pingpong_smpi").exists(), reason="needs Open MPI, SimGrid's smpirun and both ping-pongs")

# Every pair of nodes joined by its own link of 10 us and 1 GB/s each way.
PLATFORM_HEAD = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="cluster" routing="Full">
"""

SMALL_RUNS = {
    "CALIB_STREAM_ARGS": "--bytes 4194304 --repetitions 2",
    "CALIB_COPY_ARGS": "--max-bytes 1048576 --repetitions 5",
    "CALIB_DGEMM_ARGS": "--sizes 64,128 --repetitions 2",
    "CALIB_STENCIL_ARGS": "--sizes 8,16 --repetitions 1",
    "CALIB_HASH_ARGS": "--buckets 4096 --queries 100000 --repetitions 1",
    "CALIB_PINGPONG_ARGS": "--max 65536 --repetitions 2 --per-octave 1",
    "CALIB_CUDA_ARGS": "--size 256",
}


def gpu_here():
    """Whether calib_cuda finds a GPU on this machine (it exits 77 where none is)."""
    if not (BIN / "calib_cuda").exists():
        return False
    return subprocess.run([str(BIN / "calib_cuda"), "--check"], capture_output=True).returncode != 77


def platform(nodes):
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]]
    return "".join(
        [PLATFORM_HEAD] + ['    <host id="%s" speed="1Gf"/>\n' % n for n in nodes] +
        ['    <link id="%s-%s" bandwidth="1GBps" latency="10us" sharing_policy="SPLITDUPLEX"/>\n' % p for p in pairs] +
        ['    <route src="%s" dst="%s"><link_ctn id="%s-%s" direction="UP"/></route>\n' % (a, b, a, b) for a, b in pairs] +
        ["  </zone>\n</platform>\n"])


def run_script(tmp_path, nodes, plugins="", extra_env=None, as_sbatch=False, out_name="out"):
    """The script under the stand-ins on `nodes`; its result, output folder and logged steps.
    as_sbatch: run a copy of it from a spool folder, as sbatch does, from the checkout."""
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    for name in ("srun", "mpirun", "scontrol", "hostname"):
        (fake / name).symlink_to(ROOT / "calibration" / "tests" / "fake_slurm.py")
    (tmp_path / "cluster.xml").write_text(platform(nodes))
    out, log = tmp_path / out_name, tmp_path / "steps.log"
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"]), REAL_MPIRUN=shutil.which("mpirun"),
               FAKE_SRUN_PLUGINS=plugins, FAKE_SLURM_LOG=str(log), FAKE_PLATFORM=str(tmp_path / "cluster.xml"),
               FAKE_WORK_DIR=str(tmp_path), SLURM_JOB_ID="77", SLURM_JOB_NODELIST=",".join(nodes),
               SLURM_JOB_NUM_NODES=str(len(nodes)), SLURM_NTASKS_PER_NODE="2", SLURM_CPUS_ON_NODE="2",
               SIMCORE_BUILD_DIR=str(BIN.parent), **SMALL_RUNS)
    env.update(extra_env or {})
    for name in [k for k, v in env.items() if v is None]:  # None: left out
        del env[name]
    script = SCRIPT
    if as_sbatch:
        spool = tmp_path / "spool"
        spool.mkdir()
        script = spool / "slurm_script"
        shutil.copy(SCRIPT, script)
        env["SLURM_SUBMIT_DIR"] = str(ROOT)
        if BIN.parent == ROOT / "build":  # the default build folder: found from the checkout
            del env["SIMCORE_BUILD_DIR"]
    res = subprocess.run(["bash", str(script), str(out)], capture_output=True, text=True, env=env, timeout=600,
                         cwd=tmp_path)
    steps = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return res, out, steps


def profile(path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("launcher", ["srun", "mpirun"])
def test_the_script_calibrates_every_node_and_two_node_pairs(tmp_path, launcher):
    nodes = ["n0", "n1", "n2", "n3"]
    env = {"SIMCORE_NETWORK_PAIRS": "2"} if launcher == "mpirun" else {"SIMCORE_NETWORK_PAIRS": "02",
                                                                        "SIMCORE_MPI_LAUNCHER": "srun"}
    res, out, steps = run_script(tmp_path, nodes, "pmi2,pmix", env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "MPI through %s" % launcher in res.stdout
    # Node benchmarks: one srun step each, one task on every node, one trace per node.
    benches = [s for s in steps if s["program"] != "calib_pingpong"]
    built = [p for p in ("calib_stream", "calib_copy", "calib_dgemm", "calib_stencil", "calib_hash", "calib_cuda")
             if (BIN / p).exists()]
    assert [s["program"] for s in benches] == built
    assert all(s["launcher"] == "srun" and s["hosts"] == nodes for s in benches)
    assert [b["options"]["cpus-per-task"] for b in benches[:3]] == ["2", "2", "1"]
    for name in ("stream", "copy", "dgemm", "stencil") + (("hash",) if (BIN / "calib_hash").exists() else ()):
        assert sorted(p.name for p in out.glob(name + "-*.h5")) == ["%s-%s.h5" % (name, n) for n in nodes]
    if (BIN / "calib_cuda").exists() and not gpu_here():  # calib_cuda skipped on every node, no failure
        assert not list(out.glob("cuda-*.h5")) and "calib_cuda found no GPU on any node" in res.stderr
    # Network: two ranks on the first node, then the pairs (n0, n1) and (n2, n3).
    mpi = [s for s in steps if s["program"] == "calib_pingpong"]
    assert [s["launcher"] for s in mpi] == [launcher] * 3
    assert [s["hosts"] for s in mpi] == [["n0", "n0"], ["n0", "n1"], ["n2", "n3"]]
    if launcher == "srun":
        assert all(s["options"]["mpi"] == "pmix" for s in mpi)
    # Profiles: every node's traces pooled; the pairs' traces give the links (10 us, 1 GB/s).
    both, inter, intra = (profile(out / f) for f in ("profile.json", "profile-inter.json", "profile-intra.json"))
    for p in (both, inter, intra):
        assert p["quality"]["memory"]["traces"] == 4 and p["quality"]["stencil"]["traces"] == 4
        assert len(p["quality"]["compute"]) == 4 and p["rates"]["flops_per_cell"]["value"] > 0
    assert intra["quality"]["network"]["placement"] == "intra-node" and "links" not in intra
    for p in (both, inter):
        q = p["quality"]["network"]
        assert q["placement"] == "inter-node" and q["traces"] == 2
        link = p["links"][0]
        assert float(link["bandwidth"].rstrip("Bps")) == pytest.approx(1e9, rel=1e-3)
        assert float(link["latency"].rstrip("s")) == pytest.approx(10e-6, rel=0.05)
    assert both["quality"]["network_intra_node"]["placement"] == "intra-node"
    assert "network/loopback-bw" in both["simgrid_config"] and "network/loopback-bw" not in inter["simgrid_config"]


def test_under_salloc_stream_takes_the_fewest_cpus_a_node_of_the_job_has(tmp_path):
    """salloc's shell may not set SLURM_CPUS_ON_NODE: STREAM once ran on one CPU a node there.
    The job's own list (SLURM_JOB_CPUS_PER_NODE, "4(x2),3": two nodes of 4, one of 3) gives 3."""
    res, out, steps = run_script(tmp_path, ["n0", "n1", "n2"], extra_env={
        "SLURM_CPUS_ON_NODE": None, "SLURM_JOB_CPUS_PER_NODE": "4(x2),3", "FAKE_NODE_CPUS": "3"})
    assert res.returncode == 0, res.stdout + res.stderr
    stream = [s for s in steps if s["program"] == "calib_stream"]
    assert len(stream) == 1 and stream[0]["options"]["cpus-per-task"] == "3"


def test_on_one_node_the_script_measures_within_it_only(tmp_path):
    """Run as sbatch runs it: a copy in a spool folder, simcore found from the submit folder."""
    res, out, steps = run_script(tmp_path, ["solo"], "", {"SIMCORE_NETWORK_PAIRS": "3"}, as_sbatch=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert [s["hosts"] for s in steps if s["program"] == "calib_pingpong"] == [["solo", "solo"]]
    assert not (out / "profile-inter.json").exists()
    assert profile(out / "profile.json") == profile(out / "profile-intra.json")
    assert (out / "dgemm-solo.h5").exists() and (out / "stream-solo.h5").exists()


@pytest.mark.parametrize("env, message", [
    ({"SIMCORE_MPI_LAUNCHER": "ssh"}, "SIMCORE_MPI_LAUNCHER=ssh; expected mpirun or srun"),
    ({"SIMCORE_NETWORK_PAIRS": "two"}, "SIMCORE_NETWORK_PAIRS=two; expected a whole number"),
    ({"SIMCORE_BUILD_DIR": "/nonexistent"}, "no /nonexistent/bin/simcore"),
])
def test_bad_settings_are_refused_before_any_benchmark_runs(tmp_path, env, message):
    res, out, steps = run_script(tmp_path, ["n0", "n1"], "", env)
    assert res.returncode == 2 and message in res.stderr
    assert steps == [] and not out.exists()


@pytest.mark.parametrize("variable, value, program", [
    ("CALIB_PINGPONG_ARGS", "--max 64K --repetitions 2", "calib_pingpong"),
    ("CALIB_HASH_ARGS", "--buckets 1024 --buckets 2048", "calib_hash"),
])
def test_bad_benchmark_options_are_refused_before_anything_is_measured(tmp_path, variable, value, program):
    """A bad CALIB_PINGPONG_ARGS was found after STREAM, copy, DGEMM, stencil and hash had run
    (minutes), with their traces left in a folder that could then not be used again."""
    res, out, steps = run_script(tmp_path, ["n0", "n1"], "", {variable: value})
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"calibrate.sbatch: {program} refuses its options ({value})" in res.stderr, res.stderr
    assert steps == [] and not out.exists()


def test_an_output_folder_named_with_pattern_characters_is_taken_literally(tmp_path):
    """compgen -G read "run[2]" as a pattern: the traces of "run2" stopped the job, and those in
    "run[2]" were pooled."""
    (tmp_path / "run2").mkdir()
    (tmp_path / "run2" / "stream-old.h5").write_bytes(b"")
    # A bad option stops it right after the folder's check, before anything is measured.
    res, out, steps = run_script(tmp_path, ["n0"], "", {"CALIB_PINGPONG_ARGS": "--max 64K"}, out_name="run[2]")
    assert res.returncode == 2 and "already holds traces" not in res.stderr, res.stderr
    assert "calib_pingpong refuses its options" in res.stderr and steps == []


def test_an_output_folder_that_holds_traces_is_refused(tmp_path):
    """The fitter takes every trace in the folder: old ones would be pooled with the new."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stream-old.h5").write_bytes(b"")
    res, out, steps = run_script(tmp_path, ["n0"])
    assert res.returncode == 2 and "already holds traces" in res.stderr and steps == []


@pytest.mark.skipif(shutil.which("qemu-aarch64") is None or not (BIN / "calib_dgemm_sve").exists(),
                    reason="needs the aarch64 cross build of calib_dgemm_sve and qemu-aarch64")
def test_on_arm_nodes_with_sve_the_host_speed_comes_from_the_sve_dgemm(tmp_path):
    """Arm nodes with SVE, played by `uname -m` answering aarch64 and calib_dgemm_sve run under
    qemu-aarch64 -cpu max: its JSON traces replace calib_dgemm's and set the host speed."""
    arm = tmp_path / "arm"
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    arm.mkdir()
    (arm / "uname").write_text('#!/bin/sh\n[ "$1" = -m ] && { echo aarch64; exit 0; }\nexec /usr/bin/uname "$@"\n')
    (arm / "uname").chmod(0o755)
    for program in BIN.iterdir():
        if program.name != "calib_dgemm_sve":
            (build / "bin" / program.name).symlink_to(program)
    sve = build / "bin" / "calib_dgemm_sve"
    sve.write_text('#!/bin/sh\nexec %s -cpu max %s "$@"\n' % (shutil.which("qemu-aarch64"), BIN / "calib_dgemm_sve"))
    sve.chmod(0o755)
    nodes = ["n0", "n1"]
    res, out, steps = run_script(tmp_path, nodes, "", {
        "PATH": "%s:%s:%s" % (arm, tmp_path / "fake-bin", os.environ["PATH"]), "SIMCORE_BUILD_DIR": str(build),
        "CALIB_DGEMM_ARGS": "--peak-gflops 1", "CALIB_DGEMM_SVE_ARGS": "--sizes 32,48 --repetitions 3"})
    assert res.returncode == 0, res.stdout + res.stderr
    programs = [s["program"] for s in steps]
    assert "calib_dgemm_sve" in programs and "calib_dgemm" not in programs
    assert not list(out.glob("dgemm-*.h5"))
    assert sorted(p.name for p in out.glob("dgemm-*.json")) == ["dgemm-n0.json", "dgemm-n1.json"]
    speeds = []
    for n in nodes:
        trace = json.loads((out / ("dgemm-%s.json" % n)).read_text())
        assert "sve" in trace["attributes"]["isa"].split()
        dgemm = trace["benchmarks"]["dgemm"]
        assert dgemm["parameters"]["path"] == "sve" and dgemm["datasets"]["size"]["values"] == [32, 48]
        speeds.append(sorted(dgemm["datasets"]["gflops"]["values"][3:])[1] * 1e9)
    for name in ("profile.json", "profile-inter.json", "profile-intra.json"):
        p = profile(out / name)
        assert [c["path"] for c in p["quality"]["compute"]] == ["sve", "sve"]
        assert p["rates"]["dgemm_flops"]["value"] == pytest.approx(sum(speeds) / 2, rel=1e-12)
