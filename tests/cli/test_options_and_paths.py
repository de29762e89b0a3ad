"""Command line details: --cfg and --log checks, symlinked scenario folders, the install script."""

import hashlib
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


def test_calibration_option_replaces_the_scenarios_profile(tmp_path):
    profile = SOURCE / "tests" / "data" / "calibration" / "star_2x.json"
    plain = run("run", STAR, "--set", "tasks=20", "--json", "--out", tmp_path / "a", cwd=tmp_path)
    calibrated = run("run", STAR, "--set", "tasks=20", "--json", "--out", tmp_path / "b", "--calibration", profile,
                     cwd=tmp_path)
    assert plain.returncode == 0 and calibrated.returncode == 0, calibrated.stderr
    a, b = json.loads(plain.stdout), json.loads(calibrated.stdout)
    assert b["scenario"]["calibration"] == str(profile)
    # The profile's bytes, so that a profile edited in place shows in the results.
    assert b["scenario"]["calibration_sha256"] == hashlib.sha256(profile.read_bytes()).hexdigest()
    # 2 Gflop/s hosts halve the 1 s tasks; 16 workers, 20 tasks: two rounds of (c + 0.5 s).
    assert b["metrics"]["makespan"] < 0.6 * a["metrics"]["makespan"]
    proc = run("validate", STAR, "--calibration", "nope.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--calibration nope.json: calibration file '%s' does not exist" % (tmp_path / "nope.json") in proc.stderr


def test_validate_prints_no_simgrid_noise(tmp_path):
    proc = run("validate", STAR, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr == ""


def test_empty_out_is_rejected(tmp_path):
    for args in (["--out", ""], ["--out="]):
        proc = run("run", STAR, *args, cwd=tmp_path)
        assert proc.returncode == 2
        assert "--out: empty folder name; expected a folder path" in proc.stderr


def test_duplicate_attribute_is_rejected(tmp_path):
    path = tmp_path / "dup.xml"
    path.write_text('<scenario model="master_worker" seed="1" seed="2">\n  <platform file="%s"/>\n</scenario>\n'
                    % (SOURCE / "platforms" / "star.xml"))
    proc = run("validate", path, cwd=tmp_path)
    assert proc.returncode == 2
    assert "%s:1: <scenario> has attribute 'seed' twice; expected it at most once" % path in proc.stderr


def test_platform_without_doctype_or_with_wrong_root(tmp_path):
    nodoc = tmp_path / "nodoc.xml"
    nodoc.write_text('<?xml version="1.0"?>\n<platform version="4.1">\n  <zone id="z" routing="Full"/>\n</platform>\n')
    proc = run("platform", nodoc, cwd=tmp_path)
    assert proc.returncode == 2
    assert ":2: <platform> without a <!DOCTYPE platform SYSTEM" in proc.stderr
    proc = run("platform", STAR, cwd=tmp_path)
    assert proc.returncode == 2
    text = pathlib.Path(STAR).read_text()
    line = 1 + text[:text.index("<scenario ")].count("\n")
    assert f"{STAR}:{line}: root element is <scenario>; expected a SimGrid platform" in proc.stderr, proc.stderr


def test_hex_numbers_are_not_numbers(tmp_path):
    proc = run("validate", STAR, "--set", "task_bytes=0x10", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'0x10' is not valid; expected a size" in proc.stderr


def test_every_shipped_scenario_validates(tmp_path):
    scenarios = sorted((SOURCE / "scenarios").glob("*/*.xml")) + sorted((SOURCE / "models").glob("*/bench/*.xml"))
    assert len(scenarios) >= 11
    for path in scenarios:
        proc = run("validate", path, cwd=tmp_path)
        assert proc.returncode == 0, "%s: %s" % (path, proc.stderr)


def test_every_shipped_platform_loads(tmp_path):
    for path in sorted((SOURCE / "platforms").glob("*.xml")):
        proc = run("platform", path, "--json", cwd=tmp_path)
        assert proc.returncode == 0, "%s: %s" % (path, proc.stderr)
        assert json.loads(proc.stdout)["totals"]["hosts"] > 0
