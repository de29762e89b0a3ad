"""What a results folder holds after bad input, a failure, or a killed run."""

import json
import os
import pathlib
import signal
import subprocess
import time

SIMCORE = os.environ["SIMCORE_BIN"]
SOURCE = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
STAR = str(SOURCE / "scenarios" / "master_worker" / "star.xml")


def run(*args, cwd):
    return subprocess.run([SIMCORE, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_bad_input_keeps_the_previous_result(tmp_path):
    out = tmp_path / "out"
    assert run("run", STAR, "--set", "tasks=5", "--out", str(out), "--quiet", cwd=tmp_path).returncode == 0
    before = (out / "summary.json").read_bytes(), (out / "trace.h5").read_bytes()
    proc = run("run", STAR, "--set", "tasks=-5", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert ((out / "summary.json").read_bytes(), (out / "trace.h5").read_bytes()) == before


def test_a_killed_run_leaves_no_result_that_looks_complete(tmp_path):
    out = tmp_path / "out"
    assert run("run", STAR, "--set", "tasks=5", "--out", str(out), "--quiet", cwd=tmp_path).returncode == 0
    assert json.loads((out / "summary.json").read_text())["parameters"]["tasks"] == 5
    # A run long enough to be killed in the middle (about 6 s of wall time here).
    proc = subprocess.Popen([SIMCORE, "run", STAR, "--set", "tasks=1000000", "--set", "task_flops=1Mf",
                             "--out", str(out), "--quiet"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while (out / "summary.json").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        assert not (out / "summary.json").exists()  # the previous result went when the simulation started
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "summary.json").exists()
    assert not (out / "trace.h5").exists()
    assert [p for p in out.iterdir() if not p.name.startswith(("summary.json.tmp.", "trace.h5.tmp."))] == []
