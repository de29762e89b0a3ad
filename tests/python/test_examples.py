"""The Python examples run as the README shows and write their plots."""

import os
import pathlib
import subprocess
import sys

import pytest

import simcore

PYTHONPATH = str(pathlib.Path(simcore.__file__).resolve().parents[1])

EXAMPLES = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "examples"


@pytest.mark.parametrize("script, expected", [
    ("master_worker_sweep.py", "plot:"),
    ("dtl_transport_sweep.py", "plot:"),
    ("halo_ranks_per_node.py", "ranks/node"),
    ("batch_wait_predictors.py", "scheduler / XGBoost error"),
    ("calibrated_halo.py", "comm, fitted"),
])
def test_example_runs_and_plots(tmp_path, script, expected):
    png = tmp_path / "plot.png"
    res = subprocess.run([sys.executable, str(EXAMPLES / script), "--out", str(png)], capture_output=True, text=True,
                         cwd=tmp_path, env=dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=PYTHONPATH), timeout=600)
    assert res.returncode == 0, res.stderr
    assert expected in res.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrated_halo_shows_the_periodic_copies_contend_in_the_detailed_mode_only(tmp_path):
    """The example's periodic table: SMPI mode (a fat-pipe loopback) gives six faces a rank what
    one face each way costs (the first table's fitted column); the detailed mode, whose copies
    share the node's memory, is slower at every size."""
    res = subprocess.run([sys.executable, str(EXAMPLES / "calibrated_halo.py"), "--out", str(tmp_path / "p.png")],
                         capture_output=True, text=True, cwd=tmp_path,
                         env=dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=PYTHONPATH), timeout=600)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    first = [line for line in lines[2:6]]
    start = lines.index("periodic, with the profile (six faces a rank):")
    periodic = lines[start + 2:start + 6]
    for one_face, six in zip(first, periodic):
        fitted = float(one_face.split("|")[1].split()[2])
        smpi, detailed = (float(v) for v in six.split("|")[1].split()[::2])
        assert smpi == fitted
        assert detailed > 1.5 * smpi
