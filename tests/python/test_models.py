"""simcore.models() and the package's public surface."""

import json

import simcore


def _master_worker():
    found = [m for m in simcore.models() if m["name"] == "master_worker"]
    assert len(found) == 1, [m["name"] for m in simcore.models()]
    return found[0]


def test_package_surface():
    assert simcore.InputError is simcore._simcore.InputError
    assert issubclass(simcore.InputError, ValueError)
    assert issubclass(simcore.SimulationError, RuntimeError)
    assert not issubclass(simcore.SimulationError, ValueError)
    assert simcore.__version__ == simcore._simcore.__version__
    assert isinstance(simcore.__version__, str) and simcore.__version__.count(".") == 2
    for name in simcore.__all__:
        assert hasattr(simcore, name), name


def test_models_lists_master_worker_with_summary():
    m = _master_worker()
    assert m["summary"] == "master hands tasks out to workers in round robin (SimGrid's classic example)"
    assert [p["name"] for p in m["parameters"]] == ["tasks", "task_flops", "task_bytes", "workers", "master", "flops_jitter"]


def test_master_worker_parameter_declarations():
    params = {p["name"]: p for p in _master_worker()["parameters"]}
    expected = {
        # name: (type, unit, default, min, max)
        "tasks": ("integer", "", "100", 1.0, 1e8),
        "task_flops": ("flops", "flop", "1Gf", 0.0, None),
        "task_bytes": ("size", "B", "1MB", 0.0, None),
        "workers": ("integer", "", "0", 0.0, None),
        "master": ("string", "", "", None, None),
        "flops_jitter": ("real", "", "0", 0.0, 0.999),
    }
    for name, (type_, unit, default, lo, hi) in expected.items():
        p = params[name]
        assert p["type"] == type_, name
        assert p["unit"] == unit, name
        assert p["default"] == default, name
        assert p["min"] == lo, name
        assert p["max"] == hi, name
        assert p["required"] is False, name
        assert p["choices"] == [], name
        assert isinstance(p["doc"], str) and p["doc"], name
    assert params["tasks"]["doc"] == "number of tasks"
    assert set(params["tasks"]) == {"name", "type", "unit", "default", "required", "min", "max", "choices", "doc"}


def test_models_agree_with_cli(simcore_cli):
    proc = simcore_cli("models", "--json")
    assert proc.returncode == 0, proc.stderr
    cli = {m["name"]: m for m in json.loads(proc.stdout)}
    py = {m["name"]: m for m in simcore.models()}
    assert set(cli) == set(py)
    for name, m in py.items():
        assert m["summary"] == cli[name]["summary"]
        assert len(m["parameters"]) == len(cli[name]["parameters"])
        for p, c in zip(m["parameters"], cli[name]["parameters"]):
            for key in ("name", "type", "unit", "default", "required", "doc"):
                assert p[key] == c[key], (name, p["name"], key)
            assert p["min"] == c.get("min")
            assert p["max"] == c.get("max")
            assert p["choices"] == c.get("choices", [])


def test_models_returns_fresh_lists():
    a = simcore.models()
    a[0]["parameters"].clear()
    assert _master_worker()["parameters"], "models() must not hand out shared state"
