"""simcore.load(), Scenario properties, set(), copy(), with_params(), seed, and input errors."""

import hashlib
import os

import pytest

import simcore

STAR_PARAMS = {"tasks": 200, "task_flops": 1e9, "task_bytes": 1e7, "workers": 16, "master": "", "flops_jitter": 0.0}


# --- load -------------------------------------------------------------------------------------

def test_load_star_scenario(star_scenario_path, star):
    sc = simcore.load(str(star_scenario_path))
    assert isinstance(sc, simcore.Scenario)
    assert sc.model == "master_worker"
    assert sc.seed == 1
    assert sc.path == str(star_scenario_path.resolve())
    assert sc.platform == str(star.platform.resolve())
    assert sc.calibration == ""
    assert sc.sha256 == hashlib.sha256(star_scenario_path.read_bytes()).hexdigest()
    assert repr(sc) == "<simcore.Scenario %s model=master_worker seed=1>" % sc.path


def test_params_in_base_units_and_types(star_scenario_path):
    params = simcore.load(star_scenario_path).params
    assert params == STAR_PARAMS
    assert type(params["tasks"]) is int and type(params["workers"]) is int
    assert type(params["task_flops"]) is float and type(params["task_bytes"]) is float
    assert type(params["master"]) is str


def test_defaults_fill_unset_params(write_scenario):
    sc = simcore.load(write_scenario(params={"workers": 3}))
    # Defaults of master_worker: tasks 100, task_flops 1Gf, task_bytes 1MB (10^6 B), master "".
    assert sc.params == {"tasks": 100, "task_flops": 1e9, "task_bytes": 1e6, "workers": 3, "master": "", "flops_jitter": 0.0}
    assert sc.seed == 7


def test_load_accepts_pathlike_and_relative_paths(write_scenario, tmp_path, monkeypatch, star):
    # The platform path is relative to the scenario file, not to the working directory.
    path = write_scenario("rel.xml", params={"tasks": 4}, platform=os.path.relpath(star.platform, tmp_path))
    monkeypatch.chdir(tmp_path)
    a = simcore.load("rel.xml")
    b = simcore.load(path)  # a pathlib.Path
    assert a.path == b.path == str(path)
    assert os.path.isabs(a.platform) and os.path.isfile(a.platform)
    assert a.platform == str(star.platform.resolve())
    assert a.sha256 == b.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_sha256_follows_file_bytes(write_scenario):
    p1 = write_scenario("a.xml", params={"tasks": 5})
    p2 = write_scenario("b.xml", params={"tasks": 6})
    s1, s2 = simcore.load(p1), simcore.load(p2)
    assert s1.sha256 == hashlib.sha256(p1.read_bytes()).hexdigest()
    assert s2.sha256 == hashlib.sha256(p2.read_bytes()).hexdigest()
    assert s1.sha256 != s2.sha256
    # set() changes parameters, not the identity of the file.
    assert s1.set(tasks=6).sha256 == hashlib.sha256(p1.read_bytes()).hexdigest()


# --- set --------------------------------------------------------------------------------------

def test_set_positional_and_keywords(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    assert sc.set("tasks", 10) is sc
    assert sc.params["tasks"] == 10
    assert sc.set(task_bytes="4MB", task_flops=2.5e8, workers=3, master="node-5") is sc
    assert sc.params == {"tasks": 10, "task_flops": 2.5e8, "task_bytes": 4e6, "workers": 3, "master": "node-5", "flops_jitter": 0.0}


@pytest.mark.parametrize("name, value, expected", [
    ("tasks", 42, 42),
    ("tasks", "  17 ", 17),
    ("workers", 0, 0),
    ("task_bytes", "10MB", 1e7),
    ("task_bytes", "4MiB", 4.0 * 1024 ** 2),
    ("task_bytes", "512B", 512.0),
    ("task_bytes", "1kB", 1e3),
    ("task_bytes", 123, 123.0),
    ("task_bytes", 0.5, 0.5),
    ("task_bytes", 1e-05, 1e-05),
    ("task_flops", "2.5Tf", 2.5e12),
    ("task_flops", "1e9", 1e9),
    ("task_flops", 3e9, 3e9),
    ("task_flops", 0, 0.0),
    ("master", "node-16", "node-16"),
    ("master", "", ""),
])
def test_set_values_and_units(star_scenario_path, name, value, expected):
    sc = simcore.load(star_scenario_path).set(name, value)
    got = sc.params[name]
    assert got == expected
    assert type(got) is type(expected)


def test_set_float_round_trips_exactly(star_scenario_path):
    value = 0.1 + 0.2  # 0.30000000000000004: needs all 17 digits
    assert simcore.load(star_scenario_path).set(task_bytes=value).params["task_bytes"] == value


def test_set_bool_goes_through_as_boolean_text(star_scenario_path):
    # master_worker has no boolean parameter: True becomes 'true', which an integer rejects.
    sc = simcore.load(star_scenario_path)
    with pytest.raises(simcore.InputError) as e:
        sc.set(tasks=True)
    assert str(e.value) == ("set(tasks=True): parameter 'tasks' = 'true' is not an integer; "
                            "expected a whole number such as 42")
    assert sc.params["tasks"] == 200


@pytest.mark.parametrize("kw, message", [
    ({"taskz": 3}, "set(taskz=3): unknown parameter 'taskz'; expected one of: tasks, task_flops, task_bytes, "
                   "workers, master, flops_jitter"),
    ({"tasks": 0}, "set(tasks=0): parameter 'tasks' = '0' is out of range; expected a value between 1 and 100000000"),
    ({"tasks": 100000001}, "set(tasks=100000001): parameter 'tasks' = '100000001' is out of range; "
                           "expected a value between 1 and 100000000"),
    ({"tasks": 2.0}, "set(tasks=2.0): parameter 'tasks' = '2.0' is not an integer; "
                     "expected a whole number such as 42"),
    ({"workers": "x"}, "set(workers='x'): parameter 'workers' = 'x' is not an integer; "
                       "expected a whole number such as 42"),
    ({"task_bytes": -1}, "set(task_bytes=-1): parameter 'task_bytes' = '-1' is out of range; "
                         "expected a value at least 0 B"),
    ({"task_bytes": "10furlongs"}, "set(task_bytes='10furlongs'): '10furlongs' is not valid (unknown unit: "
                                   "furlongs); expected a size such as 512B, 4kB, 4KiB, 1GB"),
    ({"task_flops": "-1Gf"}, "set(task_flops='-1Gf'): parameter 'task_flops' = '-1Gf' is out of range; "
                             "expected a value at least 0 flop"),
])
def test_set_errors(star_scenario_path, kw, message):
    sc = simcore.load(star_scenario_path)
    with pytest.raises(simcore.InputError) as e:
        sc.set(**kw)
    assert isinstance(e.value, ValueError)
    assert str(e.value) == message
    assert sc.params == STAR_PARAMS


def test_set_error_text_matches_cli_set(star_scenario_path, simcore_cli, cli_error_of):
    """Only the location differs: 'set(name=value)' here, '--set name=value' on the command line."""
    sc = simcore.load(star_scenario_path)
    for name, value in [("tasks", "0"), ("task_bytes", "3parsecs"), ("nope", "1")]:
        with pytest.raises(simcore.InputError) as e:
            sc.set(name, value)
        cli = cli_error_of(simcore_cli("validate", star_scenario_path, "--set", "%s=%s" % (name, value)))
        py_where, py_detail = str(e.value).split(": ", 1)
        cli_where, cli_detail = cli.split(": ", 1)
        assert py_where == "set(%s=%r)" % (name, value)
        assert cli_where == "--set %s=%s" % (name, value)
        assert py_detail == cli_detail


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "nan", "inf"])
def test_set_rejects_non_finite_quantities(star_scenario_path, value):
    with pytest.raises(simcore.InputError):
        simcore.load(star_scenario_path).set(task_bytes=value)


# --- copy / with_params -----------------------------------------------------------------------

def test_copy_is_independent(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    cp = sc.copy()
    assert isinstance(cp, simcore.Scenario) and cp is not sc
    assert cp.params == sc.params and cp.seed == sc.seed and cp.path == sc.path and cp.sha256 == sc.sha256
    cp.set(tasks=3, task_bytes="1kB")
    cp.seed = 99
    assert sc.params == STAR_PARAMS and sc.seed == 1
    sc.set(workers=2)
    assert cp.params["workers"] == 16
    assert cp.params["tasks"] == 3 and cp.seed == 99


def test_with_params_leaves_original(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    other = sc.with_params(tasks=5, task_flops="2Gf")
    assert other is not sc
    assert other.params == dict(STAR_PARAMS, tasks=5, task_flops=2e9)
    assert sc.params == STAR_PARAMS
    with pytest.raises(simcore.InputError):
        sc.with_params(tasks=-5)
    assert sc.params == STAR_PARAMS


def test_params_is_a_snapshot(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    p = sc.params
    p["tasks"] = 1
    assert sc.params["tasks"] == 200


# --- seed -------------------------------------------------------------------------------------

def test_seed_setter(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    sc.seed = 12345
    assert sc.seed == 12345
    sc.seed = 0
    assert sc.seed == 0
    sc.seed = 2 ** 64 - 1
    assert sc.seed == 2 ** 64 - 1


@pytest.mark.parametrize("bad", [-1, -(2 ** 70), 1.0, "3", None])
def test_seed_setter_rejects_non_integers_and_negatives(star_scenario_path, bad):
    sc = simcore.load(star_scenario_path)
    with pytest.raises(simcore.InputError) as e:
        sc.seed = bad
    assert str(e.value) == "seed: expected a non-negative integer below 2^64, got %r" % (bad,)
    assert sc.seed == 1


@pytest.mark.parametrize("bad", [True, 2 ** 64])
def test_seed_setter_rejects_bool_and_too_large(star_scenario_path, bad):
    sc = simcore.load(star_scenario_path)
    with pytest.raises(simcore.InputError):
        sc.seed = bad
    assert sc.seed == 1


def test_seed_from_file(write_scenario):
    assert simcore.load(write_scenario(seed=0)).seed == 0
    assert simcore.load(write_scenario(seed=424242)).seed == 424242


# --- load errors: same text as the command line tool -------------------------------------------

BAD_FILES = {
    # name: (text, expected message after the path)
    "malformed.xml": (
        '<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n  <platform file="{plat}"/>\n'
        '  <param name="tasks" value="3"\n</scenario>\n',
        ":5: malformed XML (Error parsing start element tag); expected a <scenario> document"),
    "unknown_param.xml": (
        '<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n  <platform file="{plat}"/>\n'
        '  <param name="taskz" value="3"/>\n</scenario>\n',
        ":4: unknown parameter 'taskz'; expected one of: tasks, task_flops, task_bytes, workers, master, flops_jitter"),
    "bad_unit.xml": (
        '<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n  <platform file="{plat}"/>\n\n'
        '  <param name="task_bytes" value="10furlongs"/>\n</scenario>\n',
        ":5: '10furlongs' is not valid (unknown unit: furlongs); expected a size such as 512B, 4kB, 4KiB, 1GB"),
    "out_of_range.xml": (
        '<?xml version="1.0"?>\n<scenario model="master_worker" seed="1">\n  <platform file="{plat}"/>\n'
        '  <param name="tasks" value="0"/>\n</scenario>\n',
        ":4: parameter 'tasks' = '0' is out of range; expected a value between 1 and 100000000"),
    "bad_seed.xml": (
        '<?xml version="1.0"?>\n\n<scenario model="master_worker" seed="-4">\n  <platform file="{plat}"/>\n'
        '</scenario>\n',
        ":3: seed '-4' is not valid; expected a non-negative integer below 2^64"),
    "unknown_model.xml": (
        '<?xml version="1.0"?>\n<scenario model="no_such_model">\n  <platform file="{plat}"/>\n</scenario>\n',
        ":2: unknown model 'no_such_model'; expected one of: "),
    "no_platform_file.xml": (
        '<?xml version="1.0"?>\n<scenario model="master_worker">\n  <platform file="nowhere.xml"/>\n'
        '</scenario>\n',
        ":3: platform file '{dir}/nowhere.xml' does not exist; expected a path relative to the scenario file"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_load_errors_match_cli(tmp_path, star, name, simcore_cli, cli_error_of):
    text, tail = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text.format(plat=star.platform))
    with pytest.raises(simcore.InputError) as e:
        simcore.load(str(path))
    msg = str(e.value)
    expected = str(path) + tail.format(dir=tmp_path)
    if name == "unknown_model.xml":
        assert msg.startswith(expected) and "master_worker" in msg[len(expected):]
    else:
        assert msg == expected
    assert isinstance(e.value, ValueError)
    # The CLI reports the very same "file:line: what; expected" text.
    assert cli_error_of(simcore_cli("validate", path)) == msg


def test_load_missing_file(tmp_path, simcore_cli, cli_error_of):
    path = tmp_path / "missing.xml"
    with pytest.raises(simcore.InputError) as e:
        simcore.load(path)
    assert str(e.value) == "%s: cannot read the scenario file; expected an existing XML file" % path
    assert cli_error_of(simcore_cli("validate", path)) == str(e.value)


def test_load_directory_is_an_input_error(tmp_path):
    with pytest.raises(simcore.InputError) as e:
        simcore.load(tmp_path)
    assert str(e.value) == "%s: cannot read the scenario file; expected an existing XML file" % tmp_path


def test_load_error_keeps_path_as_given(tmp_path, monkeypatch, simcore_cli, cli_error_of):
    (tmp_path / "m.xml").write_text('<?xml version="1.0"?>\n<scenario model="master_worker">\n<oops>\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(simcore.InputError) as e:
        simcore.load("m.xml")
    assert str(e.value).startswith("m.xml:")
    assert "malformed XML" in str(e.value)
    assert cli_error_of(simcore_cli("validate", "m.xml", cwd=tmp_path)) == str(e.value)


def test_input_error_is_catchable_as_value_error(tmp_path):
    with pytest.raises(ValueError):
        simcore.load(tmp_path / "absent.xml")
