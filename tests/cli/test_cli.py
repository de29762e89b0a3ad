"""Tests of the command line tool `simcore` (run by ctest as `pytest tests/cli`).

SIMCORE_BIN is the built tool and SIMCORE_SOURCE_DIR the source tree; every output and every
scenario written here goes to pytest's tmp_path, and commands run with tmp_path as working
directory so that a stray results/ folder would be seen.
"""

import hashlib
import json
import os
import pathlib
import re
import subprocess

import h5py
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("SIMCORE_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
BIN = os.environ.get("SIMCORE_BIN", "")
STAR_SCENARIO = SOURCE_DIR / "scenarios" / "master_worker" / "star.xml"
STAR_PLATFORM = SOURCE_DIR / "platforms" / "star.xml"
PARAM_NAMES = ["tasks", "task_flops", "task_bytes", "workers", "master", "flops_jitter"]

# platforms/star.xml: 1 Gflop/s hosts; a route is two links of 50 us at 1.25 GBps.
ROUTE_LATENCY = 2 * 50e-6
ROUTE_BANDWIDTH = 1.25e9
HOST_SPEED = 1e9


def project_version():
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    return re.search(r"project\(simcore VERSION (\S+)", text).group(1)


def simcore(*args, cwd, check_rc=None):
    """Runs the tool with `args` in `cwd`; asserts the exit code when `check_rc` is given."""
    assert BIN, "SIMCORE_BIN is not set: run these tests through ctest"
    proc = subprocess.run([BIN, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def write_scenario(directory, name, body, model="master_worker", seed="1", root=None):
    """Writes a scenario file: an XML declaration, a <scenario> root (or `root`), a <platform>
    relative to the file, then the lines of `body`. Returns its path and its lines."""
    rel_platform = os.path.relpath(STAR_PLATFORM, directory)
    lines = ['<?xml version="1.0"?>',
             '<!-- written by tests/cli/test_cli.py -->',
             root or '<scenario model="%s" seed="%s">' % (model, seed),
             '  <platform file="%s"/>' % rel_platform]
    lines += body
    lines.append("</scenario>" if root is None else "</%s>" % root.split()[0][1:].rstrip(">"))
    path = pathlib.Path(directory) / name
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def line_of(lines, marker):
    """1-based line number of the first line containing `marker`."""
    return next(i for i, text in enumerate(lines, 1) if marker in text)


def files_under(directory):
    return sorted(str(p.relative_to(directory)) for p in pathlib.Path(directory).rglob("*"))


def run_json(tmp_path, *args, out="out"):
    proc = simcore("run", *args, "--out", tmp_path / out, "--json", cwd=tmp_path, check_rc=0)
    return json.loads(proc.stdout), tmp_path / out


def closed_form_makespan(tasks, workers, flops, nbytes, lat_factor=1.0, bw_factor=1.0):
    c = ROUTE_LATENCY * lat_factor + nbytes / (ROUTE_BANDWIDTH * bw_factor)
    x = flops / HOST_SPEED
    k = tasks - 1
    return (k // workers) * max(c + x, workers * c) + (k % workers) * c + c + x


# --------------------------------------------------------------------------- help, version


@pytest.mark.parametrize("command,first_line", [
    ([], "simcore: discrete-event simulation"),
    (["run"], "simcore run SCENARIO.xml [options]"),
    (["validate"], "simcore validate SCENARIO.xml [--set NAME=VALUE]... [--seed N]"),
    (["models"], "simcore models [--json]"),
    (["platform"], "simcore platform FILE.xml [--json]"),
])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_of_every_command(tmp_path, command, first_line, flag):
    proc = simcore(*command, flag, cwd=tmp_path, check_rc=0)
    assert proc.stdout.splitlines()[0].startswith(first_line)
    assert proc.stderr == ""


def test_main_help_lists_commands_and_exit_codes(tmp_path):
    out = simcore("--help", cwd=tmp_path, check_rc=0).stdout
    for usage in ["simcore run SCENARIO.xml", "simcore validate SCENARIO.xml", "simcore models [--json]",
                  "simcore platform FILE.xml [--json]", "simcore --version"]:
        assert usage in out
    assert "Exit codes: 0 success, 2 bad input" in out
    assert "1 internal failure" in out


def test_help_wins_over_other_arguments(tmp_path):
    # --help anywhere after the command prints help, even with a broken scenario argument.
    proc = simcore("run", "no_such_file.xml", "--set", "x", "--help", cwd=tmp_path, check_rc=0)
    assert "--set NAME=VALUE" in proc.stdout


def test_no_arguments_is_bad_input_with_help_on_stderr(tmp_path):
    proc = simcore(cwd=tmp_path, check_rc=2)
    assert proc.stdout == ""
    assert "Usage:" in proc.stderr


def test_version(tmp_path):
    proc = simcore("--version", cwd=tmp_path, check_rc=0)
    assert proc.stdout == "simcore %s\n" % project_version()


def test_unknown_command(tmp_path):
    proc = simcore("simulate", cwd=tmp_path, check_rc=2)
    assert "unknown command 'simulate'; expected run, validate, models, platform or calibrate" in proc.stderr


@pytest.mark.parametrize("args,message", [
    (["run"], "command line: no scenario file given; expected simcore run SCENARIO.xml"),
    (["validate"], "command line: no scenario file given; expected simcore validate SCENARIO.xml"),
    (["run", str(STAR_SCENARIO), "--frobnicate"], "command line: unknown option '--frobnicate'; expected an option of --help"),
    (["validate", str(STAR_SCENARIO), "--out", "x"], "command line: unknown option '--out'"),
    (["run", str(STAR_SCENARIO), "second.xml"], "command line: unexpected argument 'second.xml'; expected one scenario file"),
    (["run", str(STAR_SCENARIO), "--set"], "command line: --set needs a value"),
    (["models", "extra"], "command line: unexpected argument 'extra'"),
    (["platform"], "command line: no platform file given; expected simcore platform FILE.xml"),
])
def test_command_line_errors(tmp_path, args, message):
    proc = simcore(*args, cwd=tmp_path, check_rc=2)
    assert "simcore: error: " + message in proc.stderr
    assert files_under(tmp_path) == []


# --------------------------------------------------------------------------- models, platform


def test_models_lists_master_worker_and_its_parameters(tmp_path):
    full = simcore("models", cwd=tmp_path, check_rc=0).stdout
    # One block per model, sorted by name, separated by blank lines.
    blocks = full.strip("\n").split("\n\n")
    names = [b.split(":", 1)[0] for b in blocks]
    assert names == sorted(names) and "master_worker" in names
    out = blocks[names.index("master_worker")]
    assert out.startswith("master_worker: master hands tasks out to workers in round robin")
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("  ")}
    assert rows["tasks"][:5] == ["tasks", "integer", "100", ">=", "1,"]
    assert "<= 1e+08" in out
    assert rows["task_flops"][:4] == ["task_flops", "flops", "flop", "1Gf"]
    assert rows["task_bytes"][:4] == ["task_bytes", "size", "B", "1MB"]
    assert rows["workers"][:3] == ["workers", "integer", "0"]
    assert rows["master"][:2] == ["master", "string"]


def test_models_json(tmp_path):
    models = json.loads(simcore("models", "--json", cwd=tmp_path, check_rc=0).stdout)
    mw = next(m for m in models if m["name"] == "master_worker")
    assert [p["name"] for p in mw["parameters"]] == PARAM_NAMES
    params = {p["name"]: p for p in mw["parameters"]}
    assert params["tasks"] == {"name": "tasks", "type": "integer", "unit": "", "default": "100", "required": False,
                               "doc": "number of tasks", "min": 1.0, "max": 1e8}
    assert params["task_flops"]["unit"] == "flop"
    assert params["task_flops"]["min"] == 0.0
    assert "max" not in params["task_flops"]
    assert params["task_bytes"]["type"] == "size"
    assert params["task_bytes"]["default"] == "1MB"
    assert params["master"]["type"] == "string"
    assert params["master"]["required"] is False
    assert [m["name"] for m in models] == sorted(m["name"] for m in models)


def test_platform_fat_tree(tmp_path):
    path = SOURCE_DIR / "platforms" / "fat_tree.xml"
    out = simcore("platform", path, cwd=tmp_path, check_rc=0).stdout
    assert out.splitlines()[0] == "%s: 64 hosts, 2048 cores, 81.92 Tflop/s total, 257 links, 1 zones" % path
    assert "  ... and 44 more" in out  # 20 of the 64 hosts are listed
    d = json.loads(simcore("platform", path, "--json", cwd=tmp_path, check_rc=0).stdout)
    assert d["totals"]["hosts"] == 64
    assert d["totals"]["cores"] == 2048
    assert d["totals"]["links"] == 257
    assert len(d["hosts"]) == 64
    assert {h["speed"] for h in d["hosts"]} == {40e9}
    assert {h["cores"] for h in d["hosts"]} == {32}
    assert d["hosts"][0]["name"] == "ft-0"


@pytest.mark.parametrize("platform,hosts,cores,links,zones", [
    ("star.xml", 17, 17, 35, 1),
    ("small_cluster.xml", 16, 128, 50, 1),
    ("two_clusters.xml", 40, 640, 124, 3),
])
def test_platform_totals(tmp_path, platform, hosts, cores, links, zones):
    d = json.loads(simcore("platform", "--json", SOURCE_DIR / "platforms" / platform, cwd=tmp_path, check_rc=0).stdout)
    assert (d["totals"]["hosts"], d["totals"]["cores"], d["totals"]["links"], d["totals"]["zones"]) == \
        (hosts, cores, links, zones)


def test_platform_errors(tmp_path):
    bad = SOURCE_DIR / "tests" / "data" / "platforms" / "bad_host_speed.xml"
    proc = simcore("platform", bad, cwd=tmp_path, check_rc=2)
    assert "simcore: error: %s:8: invalid platform: unknown unit: Gx" % bad in proc.stderr
    proc = simcore("platform", tmp_path / "nope.xml", cwd=tmp_path, check_rc=2)
    assert "%s: platform file does not exist" % (tmp_path / "nope.xml") in proc.stderr


# --------------------------------------------------------------------------- validate


def test_validate_good_scenario(tmp_path):
    proc = simcore("validate", STAR_SCENARIO, cwd=tmp_path, check_rc=0)
    assert proc.stdout == "%s: valid (model master_worker, 6 parameters, platform %s)\n" % (STAR_SCENARIO,
                                                                                             STAR_PLATFORM)
    simcore("validate", STAR_SCENARIO, "--set", "tasks=3", "--seed", "9", cwd=tmp_path, check_rc=0)
    assert files_under(tmp_path) == []


# (file name, body lines, marker of the line the error must point at, expected text)
BAD_SCENARIOS = [
    ("unknown_element", ['  <parameter name="tasks" value="10"/>'], "<parameter",
     "unknown element <parameter>; expected <description>, <platform>, <calibration>, <param>, <config>, <output>"),
    ("unknown_attribute", ['  <param name="tasks" value="10"/>', '  <param name="task_bytes" value="1" unit="MB"/>'],
     'unit="MB"', "<param> has unknown attribute 'unit'; expected: name, value"),
    ("unknown_param", ['  <param name="workers" value="2"/>', '  <param name="taks" value="10"/>'], '"taks"',
     "unknown parameter 'taks'; expected one of: tasks, task_flops, task_bytes, workers, master, flops_jitter"),
    ("wrong_type", ['  <param name="tasks" value="ten"/>'], '"ten"',
     "parameter 'tasks' = 'ten' is not an integer; expected a whole number such as 42"),
    ("bad_unit", ['  <param name="tasks" value="10"/>', '  <param name="task_bytes" value="10MBs"/>'], "10MBs",
     "'10MBs' is not valid"),
    ("out_of_range", ['  <param name="workers" value="2"/>', '  <param name="tasks" value="0"/>'], 'value="0"',
     "parameter 'tasks' = '0' is out of range; expected a value between 1 and 100000000"),
    ("duplicate_param", ['  <param name="tasks" value="10"/>', '  <param name="workers" value="2"/>',
                         '  <param name="tasks" value="20"/>'], 'value="20"',
     "parameter 'tasks' is given twice; expected each parameter at most once"),
    ("missing_calibration", ['  <calibration file="no_such_profile.json"/>'], "<calibration",
     "no_such_profile.json' does not exist; expected a path relative to the scenario file"),
    ("second_platform", ['  <platform file="no_such_platform.xml"/>'], "no_such_platform",
     "second <platform>; expected exactly one"),
    ("bad_output", ['  <output dir="x" trace="yes"/>'], "<output", '<output trace="yes"> is not valid; expected true or false'),
    ("param_without_value", ['  <param name="tasks"/>'], '<param name="tasks"/>',
     '<param name="tasks"> needs attribute value="..."'),
]


@pytest.mark.parametrize("name,body,marker,expected", BAD_SCENARIOS, ids=[c[0] for c in BAD_SCENARIOS])
def test_validate_bad_scenario(tmp_path, name, body, marker, expected):
    path, lines = write_scenario(tmp_path, name + ".xml", body)
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert proc.stdout == ""
    assert proc.stderr.startswith("simcore: error: %s:%d: " % (path, line_of(lines, marker))), proc.stderr
    assert expected in proc.stderr
    assert files_under(tmp_path) == [name + ".xml"]  # nothing written
    # run fails the same way and writes nothing either
    proc = simcore("run", path, cwd=tmp_path, check_rc=2)
    assert expected in proc.stderr
    assert files_under(tmp_path) == [name + ".xml"]


def test_validate_malformed_xml(tmp_path):
    path, lines = write_scenario(tmp_path, "malformed.xml", ['  <param name="tasks" value="10"/>',
                                                              '  <param name=workers value="2"/>'])
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert "%s:%d: malformed XML (" % (path, line_of(lines, "name=workers")) in proc.stderr
    assert "); expected a <scenario> document" in proc.stderr


@pytest.mark.parametrize("root,expected", [
    ('<simulation model="master_worker">', "root element is <simulation>; expected <scenario>"),
    ('<scenario model="nbody" seed="1">', "unknown model 'nbody'; expected one of: "),
    ('<scenario seed="1">', '<scenario> needs attribute model="..."'),
    ('<scenario model="master_worker" seed="abc">', "seed 'abc' is not valid; expected a non-negative integer below 2^64"),
    ('<scenario model="master_worker" seed="18446744073709551616">', "seed '18446744073709551616' is not valid"),
    ('<scenario model="master_worker" sede="1">', "<scenario> has unknown attribute 'sede'; expected: model, seed"),
])
def test_validate_bad_root(tmp_path, root, expected):
    path, lines = write_scenario(tmp_path, "root.xml", [], root=root)
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert "simcore: error: %s:3: %s" % (path, expected) in proc.stderr


def test_validate_missing_platform_element(tmp_path):
    path = tmp_path / "no_platform.xml"
    path.write_text('<?xml version="1.0"?>\n\n<scenario model="master_worker">\n  <param name="tasks" value="1"/>\n'
                    '</scenario>\n')
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert "%s:3: no <platform file=\"...\"/>; expected exactly one" % path in proc.stderr


def test_validate_platform_file_missing(tmp_path):
    path = tmp_path / "missing_platform.xml"
    path.write_text('<?xml version="1.0"?>\n<scenario model="master_worker">\n\n'
                    '  <platform file="platforms/none.xml"/>\n</scenario>\n')
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert "%s:4: platform file '%s' does not exist" % (path, tmp_path / "platforms" / "none.xml") in proc.stderr


def test_validate_scenario_file_missing(tmp_path):
    proc = simcore("validate", "nope.xml", cwd=tmp_path, check_rc=2)
    assert "simcore: error: nope.xml: cannot read the scenario file; expected an existing XML file" in proc.stderr


def test_validate_malformed_calibration_profile(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text('{\n  "name": "x",\n  "hosts": [}\n}\n')
    path, _ = write_scenario(tmp_path, "calibrated.xml", ['  <calibration file="profile.json"/>'])
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    assert "simcore: error: %s:3: malformed JSON (" % profile in proc.stderr
    assert "); expected a calibration profile object" in proc.stderr


def test_validate_unknown_simgrid_config(tmp_path):
    path, _ = write_scenario(tmp_path, "config.xml", ['  <config name="network/no-such-item" value="1"/>'])
    proc = simcore("validate", path, cwd=tmp_path, check_rc=2)
    lines = path.read_text().splitlines() if hasattr(path, "read_text") else open(path).read().splitlines()
    line = next(i + 1 for i, text in enumerate(lines) if "no-such-item" in text)
    assert "simcore: error: %s:%d: SimGrid configuration 'network/no-such-item' = '1' is not accepted" % (path, line) \
        in proc.stderr
    assert "\n" not in proc.stderr.strip()  # one line, not SimGrid's list of every item


def test_validate_checks_the_model_on_the_platform(tmp_path):
    proc = simcore("validate", STAR_SCENARIO, "--set", "workers=100", cwd=tmp_path, check_rc=2)
    assert "parameter 'workers' = 100 but the platform has only 16 hosts besides the master" in proc.stderr
    proc = simcore("validate", STAR_SCENARIO, "--set", "master=node-99", cwd=tmp_path, check_rc=2)
    assert "parameter 'master' names host 'node-99'" in proc.stderr


@pytest.mark.parametrize("args,message", [
    (["--set", "tasks=abc"], "--set tasks=abc: parameter 'tasks' = 'abc' is not an integer"),
    (["--set", "nonsense"], "--set nonsense: expected name=value"),
    (["--set=task_bytes=1GBs"], "--set task_bytes=1GBs: '1GBs' is not valid"),
    (["--set", "nope=1"], "--set nope=1: unknown parameter 'nope'; expected one of: tasks, task_flops"),
    (["--seed", "-3"], "--seed -3: seed '-3' is not valid; expected a non-negative integer below 2^64"),
    (["--seed", "12x"], "--seed 12x: seed '12x' is not valid; expected a non-negative integer below 2^64"),
])
def test_validate_bad_overrides(tmp_path, args, message):
    proc = simcore("validate", STAR_SCENARIO, *args, cwd=tmp_path, check_rc=2)
    assert "simcore: error: " + message in proc.stderr


# --------------------------------------------------------------------------- run


def test_run_with_out_set_seed_json(tmp_path):
    summary, out = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=10", "--seed", "5")
    assert summary["seed"] == 5
    assert summary["parameters"]["tasks"] == 10
    assert summary["metrics"]["tasks"] == 10
    assert summary["metrics"]["workers"] == 16
    assert summary["outputs"] == {"dir": str(out), "summary": "summary.json", "trace": "trace.h5"}
    assert files_under(out) == ["summary.json", "trace.h5"]
    # --json prints exactly what summary.json holds
    assert json.loads((out / "summary.json").read_text()) == summary
    assert files_under(tmp_path) == ["out", "out/summary.json", "out/trace.h5"]


def test_run_human_summary(tmp_path):
    out = tmp_path / "human"
    proc = simcore("run", STAR_SCENARIO, "--set", "tasks=20", "--out", out, cwd=tmp_path, check_rc=0)
    lines = proc.stdout.splitlines()
    assert lines[0] == "simcore %s: model master_worker, seed 1" % project_version()
    assert re.match(r"  simulated time\s+\S+ (s|ms|us)$", lines[1])
    assert re.match(r"  wall time\s+\d+\.\d{3} s$", lines[2])
    assert any(re.match(r"  makespan\s+\S+ (s|ms|us)$", l) for l in lines)
    assert any(re.match(r"  tasks\s+20$", l) for l in lines)
    assert lines[-1] == "results: %s/summary.json and %s/trace.h5" % (out, out)
    quiet = simcore("run", STAR_SCENARIO, "--set", "tasks=20", "--out", tmp_path / "q", "--quiet", cwd=tmp_path,
                    check_rc=0)
    assert quiet.stdout == ""
    assert (tmp_path / "q" / "summary.json").is_file()


def test_run_default_output_folder_is_results_of_the_stem(tmp_path):
    simcore("run", STAR_SCENARIO, "--set", "tasks=4", "--quiet", cwd=tmp_path, check_rc=0)
    assert files_under(tmp_path / "results") == ["star", "star/summary.json", "star/trace.h5"]


def test_run_output_dir_from_scenario_is_relative_to_working_directory(tmp_path):
    path, _ = write_scenario(tmp_path, "s.xml", ['  <param name="tasks" value="4"/>', '  <output dir="mine"/>'])
    work = tmp_path / "work"
    work.mkdir()
    simcore("run", path, "--quiet", cwd=work, check_rc=0)
    assert files_under(work) == ["mine", "mine/summary.json", "mine/trace.h5"]


def test_run_bad_set_creates_no_output(tmp_path):
    out = tmp_path / "out"
    proc = simcore("run", STAR_SCENARIO, "--set", "tasks=abc", "--out", out, cwd=tmp_path, check_rc=2)
    assert "simcore: error: --set tasks=abc: parameter 'tasks' = 'abc' is not an integer" in proc.stderr
    assert proc.stdout == ""
    assert not out.exists()
    assert files_under(tmp_path) == []


def test_run_model_setup_failure_exits_2_without_outputs(tmp_path):
    out = tmp_path / "out"
    proc = simcore("run", STAR_SCENARIO, "--set", "workers=100", "--out", out, cwd=tmp_path, check_rc=2)
    assert ("simcore: error: --set workers=100: parameter 'workers' = 100 but the platform has only 16 hosts "
            "besides the master; expected at most that") in proc.stderr
    assert not out.exists()
    simcore("run", STAR_SCENARIO, "--set", "workers=100", cwd=tmp_path, check_rc=2)
    assert files_under(tmp_path) == []


def test_run_is_deterministic(tmp_path):
    a, out_a = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=50", "--seed", "11", out="a")
    b, out_b = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=50", "--seed", "11", out="b")
    assert a["metrics"] == b["metrics"]
    assert a["simulated_time"] == b["simulated_time"]
    assert (out_a / "trace.h5").read_bytes() == (out_b / "trace.h5").read_bytes()
    # Running again into the same folder replaces the results with identical ones.
    c, _ = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=50", "--seed", "11", out="a")
    assert c["metrics"] == a["metrics"]
    assert (out_a / "trace.h5").read_bytes() == (out_b / "trace.h5").read_bytes()


def test_run_without_trace(tmp_path):
    path, _ = write_scenario(tmp_path, "notrace.xml", ['  <param name="tasks" value="5"/>', '  <output trace="false"/>'])
    summary, out = run_json(tmp_path, path)
    assert files_under(out) == ["summary.json"]
    assert summary["outputs"]["trace"] == ""
    assert "trace.h5" not in simcore("run", path, "--out", out, cwd=tmp_path, check_rc=0).stdout


def test_run_without_trace_removes_an_earlier_trace(tmp_path):
    run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=5", out="same")
    path, _ = write_scenario(tmp_path, "notrace.xml", ['  <param name="tasks" value="5"/>', '  <output trace="false"/>'])
    run_json(tmp_path, path, out="same")
    assert files_under(tmp_path / "same") == ["summary.json"]


def test_summary_contents(tmp_path):
    summary, out = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=10", "--set", "task_bytes=2MB", "--seed", "77")
    sc = summary["scenario"]
    assert sc["path"] == str(STAR_SCENARIO)
    assert sc["sha256"] == hashlib.sha256(STAR_SCENARIO.read_bytes()).hexdigest()
    assert sc["model"] == "master_worker"
    assert sc["platform"] == str(STAR_PLATFORM)
    assert sc["calibration"] == "" and sc["calibration_sha256"] == ""
    assert sc["description"] == "SimGrid's classic master/workers on a star of 17 hosts"
    assert summary["parameters"] == {"tasks": 10, "task_flops": 1e9, "task_bytes": 2e6, "workers": 16, "master": "", "flops_jitter": 0.0}
    assert summary["seed"] == 77
    assert summary["simcore_version"] == project_version()
    assert re.fullmatch(r"3\.3[2-9]\.\d+", summary["simgrid_version"])
    assert summary["simulated_time"] >= summary["metrics"]["makespan"] > 0
    assert 0 < summary["wall_time"] < 300
    assert 0 <= summary["simulation_wall_time"] <= summary["wall_time"]
    assert isinstance(summary["peak_memory_bytes"], int) and summary["peak_memory_bytes"] > 1 << 20
    assert summary["metric_units"]["makespan"] == "s"
    assert summary["tables"]["tasks"] == {"rows": 10, "columns": {"task": "", "worker": "", "flops": "flop", "send_start": "s",
                                                                   "send_end": "s", "compute_end": "s"}}
    assert summary["tables"]["workers"]["rows"] == 16
    assert summary["simgrid_config"] == {}
    assert list(summary)[:4] == ["simcore_version", "simgrid_version", "scenario", "seed"]


def test_trace_h5_readable_with_units(tmp_path):
    summary, out = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=24", "--set", "workers=5")
    with h5py.File(out / "trace.h5", "r") as f:
        assert f.attrs["schema"] == "simcore-trace/1"
        assert sorted(f.keys()) == ["tasks", "workers"]
        tasks = f["tasks"]
        assert tasks.dtype.names == ("task", "worker", "flops", "send_start", "send_end", "compute_end")
        assert tasks.shape == (24,)
        assert tasks.attrs["unit:send_start"] == "s"
        assert tasks.attrs["unit:compute_end"] == "s"
        assert tasks.attrs["unit:task"] == ""
        assert tasks.attrs["units"] == "task=,worker=,flops=flop,send_start=s,send_end=s,compute_end=s"
        assert tasks.attrs["doc"] == "one row per task"
        data = tasks[()]
        assert list(data["task"]) == list(range(24))
        assert list(data["worker"]) == [k % 5 for k in range(24)]
        assert max(data["compute_end"]) == summary["metrics"]["makespan"]
        assert all(data["send_end"] >= data["send_start"])
        workers = f["workers"][()]
        assert list(workers["tasks"]) == [5, 5, 5, 5, 4]
        assert f["workers"].attrs["unit:busy_time"] == "s"
        assert sum(workers["busy_time"]) == pytest.approx(24 * 1.0, rel=1e-9)  # 1 Gf tasks on 1 Gf/s hosts


@pytest.mark.parametrize("workers,tasks,flops,nbytes", [
    (4, 10, 1e9, 1e6),    # compute-bound: x > (W-1) c
    (4, 10, 2e8, 1e8),    # master-bound: (W-1) c >= x
])
def test_run_matches_closed_form(tmp_path, workers, tasks, flops, nbytes):
    path, _ = write_scenario(tmp_path, "cf.xml", [
        '  <param name="workers" value="%d"/>' % workers, '  <param name="tasks" value="%d"/>' % tasks,
        '  <param name="task_flops" value="%r"/>' % flops, '  <param name="task_bytes" value="%r"/>' % nbytes,
        '  <config name="network/latency-factor" value="1"/>',
        '  <config name="network/bandwidth-factor" value="1"/>'])
    summary, _ = run_json(tmp_path, path)
    assert summary["metrics"]["makespan"] == pytest.approx(closed_form_makespan(tasks, workers, flops, nbytes),
                                                           rel=1e-9)
    assert summary["simgrid_config"] == {"network/latency-factor": "1", "network/bandwidth-factor": "1"}


def test_run_default_network_factors(tmp_path):
    summary, _ = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=10", "--set", "workers=4", "--set",
                          "task_bytes=1MB")
    assert summary["metrics"]["makespan"] == pytest.approx(
        closed_form_makespan(10, 4, 1e9, 1e6, lat_factor=13.01, bw_factor=0.97), rel=1e-9)


def test_run_cfg_passes_through_to_simgrid(tmp_path):
    summary, _ = run_json(tmp_path, STAR_SCENARIO, "--set", "tasks=10", "--set", "workers=4", "--set",
                          "task_bytes=1MB", "--cfg=network/latency-factor:1", "--cfg=network/bandwidth-factor:1")
    assert summary["metrics"]["makespan"] == pytest.approx(closed_form_makespan(10, 4, 1e9, 1e6), rel=1e-9)


@pytest.mark.parametrize("where", ["attribute", "option"])
def test_negative_seed_behind_a_blank_is_rejected(tmp_path, where):
    seed = " -1"
    path, _ = write_scenario(tmp_path, "seed.xml", [], seed=seed if where == "attribute" else "1")
    args = ["--seed", seed] if where == "option" else []
    proc = simcore("validate", path, *args, cwd=tmp_path)
    assert proc.returncode == 2
