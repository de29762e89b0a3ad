"""What a results folder holds after bad input, a failure, or a killed run."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "support"))
from small_disk import run_on_small_disk  # noqa: E402

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


def _run_on_a_small_disk(tmp_path, size, *args):
    """simcore run with its output folder on a disk of `size`; the run, and what it left there."""
    proc, left = run_on_small_disk(tmp_path, size, [SIMCORE, "run", *args, "--out", "{disk}/out", "--quiet"],
                                   cwd=tmp_path)
    return proc, [p[len("out/"):] for p in left if p.startswith("out/")]


def _star_with_csv(tmp_path):
    text = pathlib.Path(STAR).read_text().replace('<platform file="../../platforms/star.xml"/>',
                                                  f'<platform file="{SOURCE}/platforms/star.xml"/>')
    path = tmp_path / "star_csv.xml"
    path.write_text(text.replace("</scenario>", '  <output csv="true"/>\n</scenario>'))
    return str(path)


def test_a_full_disk_while_the_trace_is_written_is_reported_and_leaves_nothing(tmp_path):
    """A disk with room for what the check before the run counts (the trace's values, 960,384 B
    for 20,000 tasks) but not for the whole file (HDF5's own records too): the write itself
    fails. HDF5's failed write was an internal error (exit 1) without a reason."""
    first = run("run", STAR, "--set", "tasks=20000", "--out", str(tmp_path / "first"), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    need = json.loads((tmp_path / "first" / "summary.json").read_text())["disk_need"]["bytes"]
    pages = -(-need // 4096)  # a tmpfs counts whole pages
    assert (tmp_path / "first" / "trace.h5").stat().st_size > pages * 4096, "the file fits: no test"
    proc, left = _run_on_a_small_disk(tmp_path, f"{pages * 4}k", STAR, "--set", "tasks=20000")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().endswith(
        "/disk/out/trace.h5: cannot write the file (No space left on device); expected a folder with room for it, "
        "on a file system that may be written"), proc.stderr
    assert left == []


def test_a_full_disk_while_a_table_is_written_removes_the_trace_written_before(tmp_path):
    """1,500 KiB hold the trace but not tasks.csv (1.7 MB) too (the check before the run counts
    2 B a value of a CSV table, a lower bound, and lets it start). The trace stayed, without a
    summary.json, as a part of a result; the message did not say the disk was full."""
    proc, left = _run_on_a_small_disk(tmp_path, "1500k", _star_with_csv(tmp_path), "--set", "tasks=20000")
    assert proc.returncode == 2, proc.stderr
    assert "/disk/out/tasks.csv: cannot write the file (No space left on device, through " in proc.stderr
    assert proc.stderr.strip().endswith("expected a path in an existing, writable folder with room for it")
    assert left == []


def test_a_disk_that_holds_the_result_holds_all_of_it(tmp_path):
    """The same run with room enough: the check above is not a disk too small for anything."""
    proc, left = _run_on_a_small_disk(tmp_path, "8m", _star_with_csv(tmp_path), "--set", "tasks=20000")
    assert proc.returncode == 0, proc.stderr
    assert sorted(left) == ["summary.json", "tasks.csv", "trace.h5", "workers.csv"]
