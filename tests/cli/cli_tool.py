"""The command line tool as the tests under tests/cli run it: SIMCORE_BIN (the built tool) in a
folder of the test's, its exit code and its one-line error."""

import os
import pathlib
import subprocess

SOURCE_DIR = pathlib.Path(os.environ.get("SIMCORE_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
BIN = os.environ.get("SIMCORE_BIN", "")


def simcore(*args, cwd):
    """Runs the tool with `args` in `cwd` (at most 120 s)."""
    assert BIN, "SIMCORE_BIN is not set: run these tests through ctest"
    return subprocess.run([BIN, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def refused(*args, cwd):
    """The error of a run that must end with exit code 2 (bad input)."""
    res = simcore(*args, cwd=cwd)
    assert res.returncode == 2, (res.returncode, res.stderr)
    return res.stderr
