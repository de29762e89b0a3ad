"""`simcore calibrate` notes traces of one host type that name more than one CPU configuration
(a profile of two machines), and says nothing where they name one."""

import json
import os
import pathlib
import shutil
import subprocess

import h5py

from calibration_test_support import SIMCORE, calibrate, fitted

TRACES = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces"


def copy_with(tmp_path, trace, name, **attrs):
    """A copy of `trace` whose root attributes `attrs` are changed (None: removed)."""
    out = tmp_path / name
    shutil.copy(trace, out)
    with h5py.File(out, "r+") as f:
        for k, v in attrs.items():
            if v is None:
                del f.attrs[k]
            else:
                f.attrs[k] = v
    return out


def test_the_quiet_host_beside_the_busy_one_is_noted(tmp_path):
    """The set shipped until 2026-12-06: the quiet host's compute traces (its ISA lists sse4a,
    its traces predate cpu_id) with a ping-pong of the machine since. The profile is written
    (a note, not an error); the note names both configurations and their traces."""
    quiet = sorted((TRACES / "vm-quiet").glob("*.h5"))
    busy = TRACES / "vm" / "pingpong-intra.h5"
    res, out = calibrate(tmp_path, *quiet, busy)
    assert res.returncode == 0, res.stderr
    entry, = json.loads(out.read_text())["quality"]["configurations"]
    assert entry["match"] == ".*"
    first, second = entry["configurations"]
    assert first["traces"] == [str(t) for t in quiet] and first["core"] == ""
    assert "sse4a" in first["isa"].split() and "sse4a" not in second["isa"].split()
    assert second["traces"] == [str(busy)] and second["core"] == "AuthenticAMD family 26 model 2"
    assert "simcore calibrate: note (configurations, hosts matching '.*'): the traces come from 2 CPU configurations" \
        in res.stderr
    assert "--hosts REGEX" in res.stderr


def test_one_sitting_on_one_machine_is_not_noted(tmp_path):
    assert "configurations" not in fitted(tmp_path, *sorted((TRACES / "vm").glob("*.h5")))["quality"]


def test_a_trace_that_does_not_record_its_core_matches_one_of_the_same_isa(tmp_path):
    """Traces before 2026-12-06 lack cpu_id: with the same ISA they count as the same machine."""
    vm = TRACES / "vm"
    old = copy_with(tmp_path, vm / "stream.h5", "stream.h5", cpu_id=None)
    assert "configurations" not in fitted(tmp_path, old, vm / "dgemm.h5", vm / "pingpong-intra.h5")["quality"]


def test_another_core_is_noted_unless_it_is_a_host_type_of_its_own(tmp_path):
    """A node of another core in a pool of one type is noted; under its own --hosts it is not,
    and neither is a stepping apart (the same core)."""
    vm = TRACES / "vm"
    intel = copy_with(tmp_path, vm / "dgemm.h5", "intel.h5", cpu_id="GenuineIntel family 6 model 143 stepping 8")
    stepping = copy_with(tmp_path, vm / "stream.h5", "stepping.h5", cpu_id="AuthenticAMD family 26 model 2 stepping 2")
    noted = fitted(tmp_path, vm / "dgemm.h5", intel, vm / "stream.h5")["quality"]["configurations"]
    assert [c["core"] for c in noted[0]["configurations"]] == ["AuthenticAMD family 26 model 2",
                                                                "GenuineIntel family 6 model 143"]
    assert "configurations" not in fitted(tmp_path, vm / "dgemm.h5", stepping)["quality"]
    out = tmp_path / "types.json"
    res = subprocess.run([SIMCORE, "calibrate", "--hosts", "amd-.*", str(vm / "dgemm.h5"), str(vm / "stream.h5"),
                          "--hosts", "intel-.*", str(intel), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "configurations" not in json.loads(out.read_text())["quality"] and "configurations" not in res.stderr
