"""Shared fixtures for the tests of the Python bindings (package `simcore`).

ctest runs these with SIMCORE_SOURCE_DIR, SIMCORE_BIN and PYTHONPATH=<build>/python set;
without them the source tree is found from this file and the CLI comparisons are skipped.
"""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import simcore

SOURCE_DIR = pathlib.Path(os.environ.get("SIMCORE_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
STAR_PLATFORM = SOURCE_DIR / "platforms" / "star.xml"
STAR_SCENARIO = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"

# platforms/star.xml: hosts of 1 Gflop/s; a route between two hosts is two links of 50 us, 1.25 GBps.
HOST_SPEED = 1e9
ROUTE_LATENCY = 2 * 50e-6
ROUTE_BANDWIDTH = 1.25e9
# SimGrid 3.32's default network model (LV08) factors.
DEFAULT_LATENCY_FACTOR = 13.01
DEFAULT_BANDWIDTH_FACTOR = 0.97

REL = 1e-9


def master_worker_schedule(tasks, workers, task_flops, task_bytes, lat_factor=1.0, bw_factor=1.0):
    """Closed form of master_worker on the star: (s, c, x) with s[k] the start of task k's
    transfer, c the transfer time and x the compute time of one task."""
    c = ROUTE_LATENCY * lat_factor + task_bytes / (ROUTE_BANDWIDTH * bw_factor)
    x = task_flops / HOST_SPEED
    period = max(c + x, workers * c)
    k = np.arange(tasks)
    s = (k // workers) * period + (k % workers) * c
    return s, c, x


def master_worker_makespan(tasks, workers, task_flops, task_bytes, lat_factor=1.0, bw_factor=1.0):
    s, c, x = master_worker_schedule(tasks, workers, task_flops, task_bytes, lat_factor, bw_factor)
    return float(s[-1] + c + x)


@pytest.fixture
def star_scenario_path():
    assert STAR_SCENARIO.is_file(), STAR_SCENARIO
    return STAR_SCENARIO


@pytest.fixture
def write_scenario(tmp_path):
    """write_scenario(name="s.xml", params={...}, unit_factors=True, trace=True, seed=7,
    platform=<absolute star.xml>, extra="") -> path of a master_worker scenario in tmp_path."""

    def write(name="scenario.xml", params=None, unit_factors=True, trace=True, seed=7, platform=None, extra=""):
        lines = ['<?xml version="1.0"?>', '<scenario model="master_worker" seed="%d">' % seed,
                 '  <platform file="%s"/>' % (platform if platform is not None else STAR_PLATFORM)]
        for key, value in (params or {}).items():
            lines.append('  <param name="%s" value="%s"/>' % (key, value))
        if unit_factors:
            lines.append('  <config name="network/latency-factor" value="1"/>')
            lines.append('  <config name="network/bandwidth-factor" value="1"/>')
        if not trace:
            lines.append('  <output trace="false"/>')
        if extra:
            lines.append(extra)
        lines.append("</scenario>")
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        return path

    return write


@pytest.fixture
def simcore_cli():
    """Runs the command line tool; returns the CompletedProcess. Skips when SIMCORE_BIN is unknown."""
    binary = os.environ.get("SIMCORE_BIN")
    if not binary or not os.path.isfile(binary):
        pytest.skip("SIMCORE_BIN is not set to the simcore executable")

    def cli(*args, cwd=None):
        return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)

    return cli


def cli_error(proc):
    """The message after 'simcore: error: ' on the CLI's stderr (exit code 2 is asserted)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("simcore: error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0][len("simcore: error: "):]


@pytest.fixture
def cli_error_of():
    return cli_error


@pytest.fixture
def star():
    """Constants of platforms/star.xml and SimGrid's default factors."""
    import types

    return types.SimpleNamespace(platform=STAR_PLATFORM, scenario=STAR_SCENARIO, source_dir=SOURCE_DIR,
                                 speed=HOST_SPEED, latency=ROUTE_LATENCY, bandwidth=ROUTE_BANDWIDTH,
                                 lat_factor=DEFAULT_LATENCY_FACTOR, bw_factor=DEFAULT_BANDWIDTH_FACTOR, rel=REL)


@pytest.fixture
def schedule():
    return master_worker_schedule


@pytest.fixture
def makespan_of():
    return master_worker_makespan


def pytest_report_header(config):
    return "simcore %s from %s; source dir %s" % (simcore.__version__, os.path.dirname(simcore.__file__), SOURCE_DIR)
