"""Runs a command whose files go to a disk of a given size: a tmpfs of its own, mounted in a
mount namespace of its own (unshare -rm, or -m as root), so that a full disk can be tested
without filling a real one."""

import pathlib
import subprocess

import pytest

SCRIPT = ('mount -t tmpfs -o size="$1" simcore-test "$2" || exit 90; disk="$2"; shift 2; "$@"; rc=$?; '
          'echo "--- left on the disk"; (cd "$disk" && find . -mindepth 1 | sort); exit $rc')


def run_on_small_disk(tmp_path, size, command, **kw):
    """Runs `command` (a list; "{disk}" in an argument is replaced by the disk's folder) with a
    tmpfs of `size` (e.g. "512k") at tmp_path/disk. Returns the finished process (its stdout
    without the listing) and the paths left on the disk once it ended, relative to it (the
    tmpfs goes with the namespace). Skips the test where no such namespace can be made."""
    disk = pathlib.Path(tmp_path) / "disk"
    disk.mkdir(exist_ok=True)
    command = [str(a).replace("{disk}", str(disk)) for a in command]
    proc = None
    for unshare in (["unshare", "-rm"], ["unshare", "-m"]):
        try:
            proc = subprocess.run([*unshare, "sh", "-c", SCRIPT, "small-disk", size, str(disk), *command],
                                  capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)
        except FileNotFoundError:
            pytest.skip("no unshare(1) here to give a command a small disk of its own")
        if "--- left on the disk\n" in proc.stdout:
            out, listing = proc.stdout.split("--- left on the disk\n", 1)
            proc.stdout = out
            return proc, [line[2:] for line in listing.split("\n") if line.startswith("./")]
    pytest.skip(f"no mount namespace with a tmpfs of its own here: {proc.stderr.strip()}")
