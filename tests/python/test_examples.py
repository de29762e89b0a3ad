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
