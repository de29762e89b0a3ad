"""A calibration profile attached from Python changes the simulated platform."""

import pytest

import simcore

from conftest import SOURCE_DIR, STAR_SCENARIO

PROFILE = SOURCE_DIR / "tests" / "data" / "calibration" / "star_2x.json"


def test_calibration_setter_attaches_and_detaches():
    sc = simcore.load(STAR_SCENARIO).with_params(tasks=16, workers=16, task_bytes="1kB")
    assert sc.calibration == ""
    plain = sc.run()
    sc.calibration = PROFILE
    assert sc.calibration == str(PROFILE)
    fast = sc.run()
    assert fast.summary["scenario"]["calibration"] == str(PROFILE)
    # One round of 16 tasks: 1 s of work at 1 Gflop/s, 0.5 s at the profile's 2 Gflop/s; the
    # profile also sets factors 1 and 10 us links: c = 2 * 10 us + 1000 B / 2.5 GBps.
    c = 2 * 10e-6 + 1000 / 2.5e9
    assert fast.metrics["makespan"] == pytest.approx(16 * c + 0.5, rel=1e-12)
    assert plain.metrics["makespan"] > 1.0
    sc.calibration = None
    assert sc.calibration == ""
    with pytest.raises(simcore.InputError, match="calibration file .* does not exist"):
        sc.calibration = "/nonexistent/profile.json"


def test_calibrate_fits_traces_like_the_command_line(tmp_path):
    """simcore.calibrate gives the profile `simcore calibrate` writes, and writes it when asked."""
    import json
    import os
    import subprocess

    traces = sorted((SOURCE_DIR / "calibration" / "traces" / "vm").glob("*.h5"))
    out = tmp_path / "profile.json"
    profile = simcore.calibrate(traces, out=out)
    assert json.loads(out.read_text()) == profile
    cli = tmp_path / "cli.json"
    subprocess.run([os.environ["SIMCORE_BIN"], "calibrate", *map(str, traces), "-o", str(cli)], check=True, capture_output=True)
    # The same bytes (the file was once compact JSON here and indented there).
    assert cli.read_bytes() == out.read_bytes()
    # Options as keywords, errors as InputError (a ValueError) naming the file.
    pp = simcore.calibrate(traces, network_pattern="pingpong")
    assert pp["quality"]["network"]["pattern"] == "pingpong"
    kept = simcore.calibrate(traces, outlier_tolerance=0)  # this machine's trace has no stray size
    assert kept["quality"]["network"]["excluded_sizes"] == profile["quality"]["network"]["excluded_sizes"] == []
    assert kept["simgrid_config"] == profile["simgrid_config"]
    with pytest.raises(simcore.InputError, match="outlier tolerance"):
        simcore.calibrate(traces, outlier_tolerance=-1)
    typed = simcore.calibrate(traces, hosts=["node-.*"] * len(traces))
    assert typed["hosts"][0]["match"] == "node-.*"
    with pytest.raises(simcore.InputError, match="missing.h5"):
        simcore.calibrate([tmp_path / "missing.h5"])
    with pytest.raises(simcore.InputError, match="network pattern"):
        simcore.calibrate(traces, network_pattern="both")
    for segments in (0, 65):
        with pytest.raises(simcore.InputError, match=f"max segments: {segments}; expected a whole number from 1 to 64"):
            simcore.calibrate(traces, max_segments=segments)
    # A folder that is not there: InputError (it was FileNotFoundError), nothing written.
    with pytest.raises(simcore.InputError, match="cannot write the file"):
        simcore.calibrate(traces, out=tmp_path / "no" / "profile.json")
    assert not (tmp_path / "no").exists()


def test_calibrate_never_replaces_a_trace(tmp_path):
    """out= naming one of the traces once replaced its measurements with the profile's JSON."""
    import shutil

    trace = tmp_path / "stream.h5"
    shutil.copy(SOURCE_DIR / "calibration" / "traces" / "vm" / "stream.h5", trace)
    before = trace.read_bytes()
    with pytest.raises(simcore.InputError, match="is also a trace to fit"):
        simcore.calibrate([trace], out=trace)
    with pytest.raises(simcore.InputError, match="is also a trace to fit"):
        simcore.calibrate([trace], out=tmp_path / "." / "stream.h5")
    assert trace.read_bytes() == before
