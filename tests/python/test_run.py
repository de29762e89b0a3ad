"""Scenario.run(), Result, run_many(): values checked against master_worker's closed form."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import simcore
from conftest import STAR_SCENARIO

# Communication-bound (W*c > c+x) and compute-bound (c+x > W*c) cases with factors 1,
# task counts that are not multiples of the worker count.
COMM_BOUND = {"tasks": 11, "task_flops": "10Mf", "task_bytes": "100MB", "workers": 4}
COMPUTE_BOUND = {"tasks": 13, "task_flops": "1Gf", "task_bytes": "100MB", "workers": 4}


def _expected(sc, star, default_factors=False):
    p = sc.params
    lf, bf = (star.lat_factor, star.bw_factor) if default_factors else (1.0, 1.0)
    return p["tasks"], p["workers"], p["task_flops"], p["task_bytes"], lf, bf


# --- one run ----------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [COMM_BOUND, COMPUTE_BOUND], ids=["comm_bound", "compute_bound"])
def test_run_matches_closed_form_with_unit_factors(write_scenario, tmp_path, star, schedule, params):
    sc = simcore.load(write_scenario(params=params))
    N, W, flops, nbytes, lf, bf = _expected(sc, star)
    s, c, x = schedule(N, W, flops, nbytes, lf, bf)
    # The two cases really are on either side of the max().
    assert (W * c > c + x) == (params is COMM_BOUND)

    res = sc.run(out=tmp_path / "out")
    assert isinstance(res, simcore.Result)
    assert res.out == str(tmp_path / "out")
    makespan = float(s[-1] + c + x)
    assert res.metrics["makespan"] == pytest.approx(makespan, rel=star.rel)
    assert res.metrics["tasks"] == N and type(res.metrics["tasks"]) is int
    assert res.metrics["workers"] == W and type(res.metrics["workers"]) is int
    assert res.metrics["throughput"] == pytest.approx(N / makespan, rel=star.rel)
    assert res.metrics["worker_utilisation"] == pytest.approx(N * x / (makespan * W), rel=star.rel)
    assert res.units == {"makespan": "s", "tasks": "", "workers": "", "throughput": "task/s",
                         "worker_utilisation": ""}

    t = res.series["tasks"]
    np.testing.assert_array_equal(t["task"], np.arange(N))
    np.testing.assert_array_equal(t["worker"], np.arange(N) % W)
    np.testing.assert_allclose(t["send_end"], s + c, rtol=star.rel)
    np.testing.assert_allclose(t["compute_end"], s + c + x, rtol=star.rel)
    np.testing.assert_array_equal(t["send_start"][0], 0.0)
    np.testing.assert_array_equal(t["send_start"][1:], t["send_end"][:-1])  # the master puts back to back
    assert t["compute_end"].max() == res.metrics["makespan"]
    assert res.simulated_time >= res.metrics["makespan"]

    w = res.series["workers"]
    done = np.bincount(np.arange(N) % W, minlength=W)
    np.testing.assert_array_equal(w["worker"], np.arange(W))
    np.testing.assert_array_equal(w["tasks"], done)
    np.testing.assert_allclose(w["busy_time"], done * x, rtol=star.rel)


def test_run_star_with_default_factors(star_scenario_path, tmp_path, star, makespan_of):
    sc = simcore.load(star_scenario_path)
    res = sc.run(out=tmp_path / "star")
    expected = makespan_of(200, 16, 1e9, 1e7, star.lat_factor, star.bw_factor)
    assert res.metrics["makespan"] == pytest.approx(expected, rel=star.rel)
    # Guard against a closed form that would pass with any factors.
    assert abs(makespan_of(200, 16, 1e9, 1e7) - expected) > 1e-3
    assert res.series["tasks"]["compute_end"].max() == res.metrics["makespan"]
    assert res.summary["simgrid_config"] == {}


@pytest.mark.parametrize("params", [COMM_BOUND, COMPUTE_BOUND], ids=["comm_bound", "compute_bound"])
def test_run_with_default_factors_after_overrides(write_scenario, tmp_path, star, makespan_of, params):
    sc = simcore.load(write_scenario(params=params, unit_factors=False))
    res = sc.run(out=tmp_path / "o")
    assert res.metrics["makespan"] == pytest.approx(makespan_of(*_expected(sc, star, True)), rel=star.rel)
    assert res.metrics["makespan"] != pytest.approx(makespan_of(*_expected(sc, star)), rel=1e-6)


def test_series_and_table_types(write_scenario, tmp_path):
    sc = simcore.load(write_scenario(params=COMM_BOUND))
    res = sc.run(out=tmp_path)
    assert set(res.series) == {"tasks", "workers"}
    t = res.series["tasks"]
    assert list(t) == ["task", "worker", "flops", "send_start", "send_end", "compute_end"]
    for col in ("task", "worker"):
        assert isinstance(t[col], np.ndarray) and t[col].dtype == np.int64 and t[col].shape == (11,)
    for col in ("send_start", "send_end", "compute_end"):
        assert isinstance(t[col], np.ndarray) and t[col].dtype == np.float64 and t[col].shape == (11,)
    assert res.series["workers"]["tasks"].dtype == np.int64
    assert res.series["workers"]["busy_time"].dtype == np.float64
    assert len(res.series["workers"]["worker"]) == 4

    table = res.table("tasks")
    assert isinstance(table, np.ndarray) and table.shape == (11,)
    assert table.dtype.names == ("task", "worker", "flops", "send_start", "send_end", "compute_end")
    assert table.dtype["task"] == np.int64 and table.dtype["compute_end"] == np.float64
    for col in table.dtype.names:
        np.testing.assert_array_equal(table[col], t[col])
    # A copy: changing the table leaves the series alone.
    table["compute_end"][:] = -1
    assert (res.series["tasks"]["compute_end"] > 0).all()
    with pytest.raises(KeyError):
        res.table("nope")


def test_summary_content(write_scenario, tmp_path, star):
    path = write_scenario(params={"tasks": 6, "workers": 2, "task_bytes": "2MB"}, seed=31)
    sc = simcore.load(path).set(tasks=9, task_flops="0.5Gf")
    sc.seed = 77
    res = sc.run(out=tmp_path / "o")
    summ = res.summary
    assert summ["seed"] == 77
    assert summ["parameters"] == {"tasks": 9, "task_flops": 5e8, "task_bytes": 2e6, "workers": 2, "master": "", "flops_jitter": 0.0}
    assert summ["parameters"] == sc.params
    assert summ["simgrid_version"] == "3.32.0"
    assert summ["simcore_version"] == simcore.__version__
    assert summ["scenario"]["path"] == str(path)
    assert summ["scenario"]["sha256"] == sc.sha256
    assert summ["scenario"]["model"] == "master_worker"
    assert summ["scenario"]["platform"] == str(star.platform.resolve())
    assert summ["simgrid_config"] == {"network/latency-factor": "1", "network/bandwidth-factor": "1"}
    assert summ["outputs"] == {"dir": str(tmp_path / "o"), "summary": "summary.json", "trace": "trace.h5"}
    assert summ["tables"]["tasks"]["rows"] == 9
    assert summ["tables"]["workers"]["rows"] == 2
    assert summ["tables"]["tasks"]["columns"]["compute_end"] == "s"
    assert res.simulated_time == summ["simulated_time"]
    with open(tmp_path / "o" / "summary.json") as f:
        assert json.load(f) == summ
    assert sorted(os.listdir(tmp_path / "o")) == ["summary.json", "trace.h5"]


def test_run_without_trace(write_scenario, tmp_path):
    sc = simcore.load(write_scenario(params=COMM_BOUND, trace=False))
    res = sc.run(out=tmp_path / "o")
    assert res.series == {}
    assert os.listdir(tmp_path / "o") == ["summary.json"]
    assert res.summary["outputs"]["trace"] == ""
    assert res.metrics["tasks"] == 11


def test_run_without_out_keeps_results_in_memory_only(write_scenario, tmp_path, monkeypatch):
    sc = simcore.load(write_scenario(params=COMM_BOUND))
    # A temporary folder of our own: other test processes use the shared one meanwhile.
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    a, b = sc.run(), sc.run()
    assert a.out is None and b.out is None
    assert a.metrics == b.metrics
    assert len(a.series["tasks"]["compute_end"]) == sc.params["tasks"]
    assert list(private.iterdir()) == []  # no temporary folder left behind


def test_run_many_rejects_two_runs_into_one_folder(write_scenario, tmp_path):
    sc = simcore.load(write_scenario(params=COMM_BOUND))
    with pytest.raises(ValueError, match="same folder"):
        simcore.run_many([sc, sc.with_params(tasks=2)], out=[tmp_path / "x", tmp_path / "y" / ".." / "x"])
    assert not (tmp_path / "x").exists()


# --- determinism and the forked child ---------------------------------------------------------

def test_same_seed_gives_identical_results(write_scenario, tmp_path):
    sc = simcore.load(write_scenario(params=COMPUTE_BOUND, seed=5))
    r1 = sc.run(out=tmp_path / "a")
    r2 = sc.run(out=tmp_path / "b")
    assert r1.metrics == r2.metrics
    for name in r1.series:
        for col in r1.series[name]:
            np.testing.assert_array_equal(r1.series[name][col], r2.series[name][col])
    t1 = (tmp_path / "a" / "trace.h5").read_bytes()
    t2 = (tmp_path / "b" / "trace.h5").read_bytes()
    assert len(t1) > 0 and t1 == t2


def test_parent_process_can_run_again(write_scenario, tmp_path, star, makespan_of):
    """Each run is in its own child: a second SimGrid engine in this process would fail."""
    sc = simcore.load(write_scenario(params=COMM_BOUND))
    pid = os.getpid()
    results = [sc.run(out=tmp_path / str(i)) for i in range(3)]
    results.append(simcore.run_many([sc], out=tmp_path / "many")[0])
    results.append(sc.with_params(tasks=3).run(out=tmp_path / "last"))
    assert os.getpid() == pid
    for r in results[:4]:
        assert r.metrics["makespan"] == pytest.approx(makespan_of(*_expected(sc, star)), rel=star.rel)
    assert results[4].metrics["makespan"] == pytest.approx(makespan_of(3, 4, 1e7, 1e8), rel=star.rel)


# --- run_many ---------------------------------------------------------------------------------

def test_run_many_order_and_closed_forms(write_scenario, tmp_path, star, makespan_of):
    base = simcore.load(write_scenario(params=COMM_BOUND))
    variants = [
        base.with_params(tasks=40, task_flops="2Gf"),  # slowest first: a finish-order bug would show
        base.copy(),
        base.with_params(workers=1, tasks=3),
        base.with_params(task_bytes="1kB", workers=16, tasks=17),
        base.with_params(task_flops=0, tasks=5),
    ]
    out = tmp_path / "batch"
    results = simcore.run_many(variants, jobs=2, out=out)
    assert len(results) == len(variants)
    for i, (sc, res) in enumerate(zip(variants, results)):
        assert isinstance(res, simcore.Result)
        assert res.out == os.path.join(str(out), "run-%03d" % i)
        assert res.summary["outputs"]["dir"] == res.out
        assert res.summary["parameters"] == sc.params
        assert res.metrics["tasks"] == sc.params["tasks"]
        assert res.metrics["makespan"] == pytest.approx(makespan_of(*_expected(sc, star)), rel=star.rel), i
        assert len(res.series["tasks"]["compute_end"]) == sc.params["tasks"]
    assert sorted(os.listdir(out)) == ["run-%03d" % i for i in range(len(variants))]
    # The inputs were not touched (run_many works on copies).
    assert variants[1].params == base.params


def test_run_many_accepts_list_of_folders_and_generators(write_scenario, tmp_path, star, makespan_of):
    base = simcore.load(write_scenario(params=COMM_BOUND))
    dirs = [tmp_path / "x", tmp_path / "y" / "z"]
    results = simcore.run_many((base.with_params(tasks=n) for n in (2, 7)), jobs=3, out=dirs)
    assert [r.out for r in results] == [str(d) for d in dirs]
    assert [r.metrics["tasks"] for r in results] == [2, 7]
    assert results[1].metrics["makespan"] == pytest.approx(makespan_of(7, 4, 1e7, 1e8), rel=star.rel)
    with pytest.raises(ValueError):
        simcore.run_many([base, base], out=[tmp_path / "only-one"])
    assert simcore.run_many([], jobs=2) == []


def test_run_many_jobs_one_and_default(write_scenario, tmp_path):
    base = simcore.load(write_scenario(params=COMM_BOUND))
    a = simcore.run_many([base, base.with_params(tasks=1)], jobs=1, out=tmp_path / "a")
    b = simcore.run_many([base, base.with_params(tasks=1)], out=tmp_path / "b")
    assert [r.metrics for r in a] == [r.metrics for r in b]
    assert a[1].metrics["tasks"] == 1


# --- failing runs -----------------------------------------------------------------------------

def test_run_setup_error_raises_input_error_like_cli(star_scenario_path, tmp_path, simcore_cli, cli_error_of):
    sc = simcore.load(star_scenario_path).set(master="nohost")
    with pytest.raises(simcore.InputError) as e:
        sc.run(out=tmp_path / "o")
    # Located where the value came from: the set() call here, --set on the command line.
    detail = ("parameter 'master' names host 'nohost', which the platform %s does not have; expected the name of "
              "one of its hosts" % sc.platform)
    assert str(e.value) == "set(master='nohost'): " + detail
    assert not os.path.exists(tmp_path / "o" / "summary.json")
    cli = simcore_cli("run", star_scenario_path, "--set", "master=nohost", "--out", tmp_path / "cli", "--quiet")
    assert cli_error_of(cli) == "--set master=nohost: " + detail


def test_run_too_many_workers_is_input_error(star_scenario_path, tmp_path):
    sc = simcore.load(star_scenario_path).set(workers=17)
    with pytest.raises(simcore.InputError) as e:
        sc.run(out=tmp_path)
    assert str(e.value) == ("set(workers=17): parameter 'workers' = 17 but the platform has only 16 hosts besides the "
                            "master; expected at most that")


def test_run_many_errors_in_place(star_scenario_path, tmp_path, star, makespan_of):
    good = simcore.load(star_scenario_path).set(tasks=20)
    bad = good.with_params(master="nohost")
    results = simcore.run_many([bad, good, bad], jobs=2, out=tmp_path, raise_on_error=False)
    assert len(results) == 3
    assert isinstance(results[0], simcore.InputError) and isinstance(results[2], simcore.InputError)
    assert "names host 'nohost'" in str(results[0]) and str(results[0]) == str(results[2])
    assert isinstance(results[1], simcore.Result)
    assert results[1].metrics["makespan"] == pytest.approx(
        makespan_of(20, 16, 1e9, 1e7, star.lat_factor, star.bw_factor), rel=star.rel)
    # Default: the first failure is raised.
    with pytest.raises(simcore.InputError):
        simcore.run_many([good, bad], jobs=2, out=tmp_path / "again")


def test_output_folder_that_is_a_file(write_scenario, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    sc = simcore.load(write_scenario(params=COMM_BOUND))
    with pytest.raises(simcore.InputError) as e:
        sc.run(out=blocker / "sub")
    assert str(e.value) == ("%s: output folder: '%s' is not a directory; expected a folder path"
                            % (blocker / "sub", blocker))
    assert not (blocker / "sub").exists()


def test_exit_codes_map_to_exceptions(star_scenario_path, tmp_path, monkeypatch):
    """The Python side of run_many: exit code 2 -> InputError(message as is), any other failure
    (1, or 128+signal) -> SimulationError("path: message"). The child outcomes are stubbed, since
    no valid input makes master_worker fail."""
    sc = simcore.load(star_scenario_path)
    outcomes = [(simcore._simcore.EXIT_BAD_INPUT, "f.xml:3: bad", ""), (1, "model exploded", ""),
                (139, "child process ended with status 139", "")]
    seen = {}

    def fake(cores, jobs, progress, fork_lock=None, max_memory=""):
        seen.update(n=len(cores), jobs=jobs, progress=progress, dirs=[c.output_dir for c in cores],
                    max_memory=max_memory)
        return outcomes

    monkeypatch.setattr(simcore._simcore, "run_in_children", fake)
    res = simcore.run_many([sc, sc, sc], jobs=5, out=tmp_path, raise_on_error=False, progress=True,
                           max_memory="2GiB")
    assert seen == {"n": 3, "jobs": 5, "progress": True, "max_memory": "2GiB",
                    "dirs": [str(tmp_path / ("run-%03d" % i)) for i in range(3)]}
    assert simcore._simcore.EXIT_BAD_INPUT == 2
    assert type(res[0]) is simcore.InputError and str(res[0]) == "f.xml:3: bad"
    assert type(res[1]) is simcore.SimulationError and str(res[1]) == "%s: model exploded" % sc.path
    assert type(res[2]) is simcore.SimulationError
    assert str(res[2]) == "%s: child process ended with status 139" % sc.path
    with pytest.raises(simcore.InputError):
        simcore.run_many([sc, sc, sc], out=tmp_path)
    outcomes.pop(0)
    with pytest.raises(simcore.SimulationError, match="model exploded"):
        simcore.run_many([sc, sc], out=tmp_path)


def test_output_csv_writes_every_table(tmp_path):
    import csv
    import pathlib

    src = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "scenarios" / "batch" / "hpc2n_fcfs.xml"
    res = simcore.load(src).run(out=tmp_path / "o")
    with open(tmp_path / "o" / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    table = res.table("jobs")
    assert len(rows) == len(table)
    assert [float(r["start"]) for r in rows[:50]] == list(table["start"][:50])
    assert rows[0]["predicted_start_scheduler"] == "nan"


def test_runs_end_where_the_caller_ignores_sigchld(tmp_path):
    """With SIGCHLD ignored the system reaps the run's child at once, and run() waited for it
    without end; the route check's child too. Run in a fresh interpreter: the setting is the
    process's."""
    code = ("import signal, simcore\n"
            "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
            f"r = simcore.load({str(STAR_SCENARIO)!r}).run(out={str(tmp_path / 'o')!r})\n"
            "print(r.metrics['tasks'], signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["200", "True"]  # the caller's setting is back


# --- memory limit -----------------------------------------------------------------------------

def test_a_run_past_max_memory_raises_input_error_and_leaves_no_result(star_scenario_path, tmp_path):
    big = simcore.load(star_scenario_path).set(tasks=20_000_000)  # about 320 MiB before it starts
    with pytest.raises(simcore.InputError) as e:
        big.run(out=tmp_path / "o", max_memory="200MB")
    message = str(e.value)
    assert message.startswith(f"{big.path}: the run took "), message
    assert "past its limit of 191 MiB (set by max_memory); expected a smaller scenario" in message
    assert not (tmp_path / "o" / "summary.json").exists()
    results = simcore.run_many([big, simcore.load(star_scenario_path)], jobs=2, out=tmp_path / "many",
                               max_memory=200 * 10**6, raise_on_error=False)
    assert isinstance(results[0], simcore.InputError) and "past its limit of 191 MiB" in str(results[0])
    assert results[1].metrics["tasks"] == 200


def test_a_run_sure_to_pass_max_memory_is_refused_before_it_starts(star_scenario_path, tmp_path):
    big = simcore.load(star_scenario_path).set(tasks=4_000_000)  # 168 MiB set up, 244 MiB more
    with pytest.raises(simcore.InputError) as e:
        big.run(out=tmp_path / "o", max_memory="300MiB")
    assert "the tasks table (4000000 tasks x 64 B); past its limit of 300 MiB (set by max_memory)" in str(e.value)
    assert not (tmp_path / "o" / "summary.json").exists()
    [result] = simcore.run_many([big], out=tmp_path / "many", max_memory="300MiB", raise_on_error=False)
    assert isinstance(result, simcore.InputError) and "the run needs at least " in str(result)


def test_max_memory_values(star_scenario_path, tmp_path):
    sc = simcore.load(star_scenario_path)
    limits = {}
    for name, value in [("int", 3 * 2**30), ("text", "3GiB"), ("none", "none")]:
        sc.run(out=tmp_path / name, max_memory=value)
        limits[name] = json.loads((tmp_path / name / "summary.json").read_text())["memory_limit_bytes"]
    assert limits == {"int": 3 * 2**30, "text": 3 * 2**30, "none": None}
    for bad, expected in [(0, "max_memory=0B: a limit of 0 B; expected a size from 1MiB"),
                          ("lots", "max_memory=lots: 'lots' is not valid"),
                          ("", "run_many(max_memory=''): expected a number of bytes"),
                          (1.5, "run_many(max_memory=1.5): expected"), (True, "run_many(max_memory=True)")]:
        with pytest.raises(simcore.InputError) as e:
            sc.run(out=tmp_path / "bad", max_memory=bad)
        assert expected in str(e.value)
    assert not (tmp_path / "bad").exists()


def test_the_default_limit_is_shared_by_the_runs_at_once(star_scenario_path, tmp_path):
    sc = simcore.load(star_scenario_path)
    alone = sc.run(out=tmp_path / "alone")
    pair = simcore.run_many([sc, sc], jobs=2, out=tmp_path / "pair")
    limit = [json.loads((d / "summary.json").read_text())["memory_limit_bytes"]
             for d in (tmp_path / "alone", tmp_path / "pair" / "run-000", tmp_path / "pair" / "run-001")]
    assert limit[1] == limit[2]  # made once, for both
    assert 0.35 < limit[1] / limit[0] < 0.65, limit
    assert alone.metrics == pair[0].metrics
