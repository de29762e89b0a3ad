"""Command line details: --cfg and --log checks, symlinked scenario folders, the install script."""

import json
import os
import pathlib
import subprocess

SIMCORE = os.environ["SIMCORE_BIN"]
SOURCE = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
STAR = str(SOURCE / "scenarios" / "master_worker" / "star.xml")


def run(*args, cwd):
    return subprocess.run([SIMCORE, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_cfg_items_are_checked_and_recorded(tmp_path):
    proc = run("run", STAR, "--set", "tasks=3", "--cfg=network/latency-factor:1", "--out", tmp_path / "o", "--quiet",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["simgrid_config"] == {"network/latency-factor": "1"}

    proc = run("run", STAR, "--cfg=network/bogus:1", "--out", tmp_path / "bad", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("simcore: error: --cfg=network/bogus:1: SimGrid configuration 'network/bogus' = '1' "
                                  "is not accepted (")
    assert proc.stderr.count("\n") == 1
    assert not (tmp_path / "bad").exists()

    proc = run("validate", STAR, "--cfg=nocolon", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--cfg=nocolon: expected --cfg=NAME:VALUE" in proc.stderr


def test_bad_log_setting_is_bad_input(tmp_path):
    proc = run("validate", STAR, "--log=foo.thres:bar", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("simcore: error: command line: SimGrid rejected '--log=foo.thres:bar' (")


def test_scenario_in_a_symlinked_folder_resolves_relative_paths_from_the_real_file(tmp_path):
    link = tmp_path / "mw"
    link.symlink_to(SOURCE / "scenarios" / "master_worker")
    proc = run("validate", "mw/star.xml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "platform %s" % (SOURCE / "platforms" / "star.xml") in proc.stdout


def test_install_script_is_idempotent():
    # The suite runs after scripts/test.sh installed everything: a second pass touches nothing.
    proc = subprocess.run([str(SOURCE / "scripts" / "install-deps.sh")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == "simcore: all Debian packages present\n"
