"""batch model: hand-computed schedules, invariants on the hpc2n trace, bad input."""

import os
import pathlib

import numpy as np
import pytest

import simcore

HERE = pathlib.Path(__file__).resolve().parent
ROOT = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
TWO_NODES = HERE / "data" / "two_nodes.xml"  # 2 nodes x 2 cores
HPC2N = ROOT / "scenarios" / "batch"


def swf_line(job, submit, run, cores, requested, user=1, status=1):
    return "%d %g -1 %g %d -1 -1 %d %g -1 %d %d 1 -1 1 1 -1 -1" % (job, submit, run, cores, cores, requested, status,
                                                                    user)


def run_jobs(tmp_path, jobs, **params):
    """jobs: (submit, run, cores, requested) per job, numbered from 1. Returns {id: row} and metrics."""
    n = len(list(tmp_path.glob("w*.swf")))
    swf = tmp_path / ("w%d.swf" % n)
    swf.write_text("; MaxProcs: 4\n" + "\n".join(swf_line(i + 1, *j) for i, j in enumerate(jobs)) + "\n")
    p = dict(workload=swf.name, bf_interval=0, bf_resolution=0)
    p.update(params)
    lines = ['<?xml version="1.0"?>', '<scenario model="batch" seed="1">', '  <platform file="%s"/>' % TWO_NODES]
    lines += ['  <param name="%s" value="%s"/>' % (k, v) for k, v in p.items()]
    lines.append("</scenario>")
    path = tmp_path / ("s%d.xml" % n)
    path.write_text("\n".join(lines) + "\n")
    res = simcore.load(path).run()
    rows = {int(r["id"]): r for r in res.table("jobs")}
    return rows, res.metrics


def starts(rows):
    return {i: float(r["start"]) for i, r in rows.items()}


# A 2-core job runs until 100; a 4-core job waits for it; a short 2-core job fits before.
EASY_BACKFILLS = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 50, 2, 50), (3, 200, 2, 200)]


def test_easy_backfills_where_fcfs_does_not(tmp_path):
    fcfs, _ = run_jobs(tmp_path, EASY_BACKFILLS, policy="fcfs")
    easy, m = run_jobs(tmp_path, EASY_BACKFILLS, policy="easy")
    assert starts(fcfs) == {1: 0, 2: 100, 3: 110, 4: 110}
    assert starts(easy) == {1: 0, 2: 100, 3: 2, 4: 110}
    assert int(easy[3]["backfilled"]) == 1 and m["backfilled_jobs"] == 1
    assert float(easy[2]["reservation"]) == 100  # the head's reservation, kept


def test_easy_backfills_where_conservative_does_not(tmp_path):
    # Job 2 (head) is reserved at 100; job 3 needs the whole machine after it. Job 4 (1 core,
    # long) does not delay the head, so EASY starts it; it would delay job 3's reservation at
    # 110, so conservative does not.
    jobs = [(0, 100, 3, 100), (1, 10, 3, 10), (2, 10, 4, 10), (3, 1000, 1, 1000)]
    easy, _ = run_jobs(tmp_path, jobs, policy="easy")
    conservative, _ = run_jobs(tmp_path, jobs, policy="conservative")
    assert starts(easy) == {1: 0, 2: 100, 3: 1003, 4: 3}
    assert starts(conservative) == {1: 0, 2: 100, 3: 110, 4: 120}
    assert float(conservative[3]["reservation"]) == 110


def test_backfilled_job_never_delays_the_head(tmp_path):
    # Job 3 fits now but would still run at 100, when the head's reservation starts.
    jobs = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 200, 2, 200)]
    easy, m = run_jobs(tmp_path, jobs, policy="easy")
    assert starts(easy) == {1: 0, 2: 100, 3: 110}
    assert m["backfilled_jobs"] == 0


def test_backfill_trusts_the_requested_time_not_the_run_time(tmp_path):
    # Job 3 would end at 52 but asks for 200: backfilling cannot know it is short.
    jobs = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 50, 2, 200)]
    easy, _ = run_jobs(tmp_path, jobs, policy="easy")
    assert starts(easy) == {1: 0, 2: 100, 3: 110}


def test_walltime_kill(tmp_path):
    rows, m = run_jobs(tmp_path, [(0, 500, 4, 100), (0, 10, 4, 10)], policy="fcfs")
    assert float(rows[1]["end"]) == 100 and int(rows[1]["killed"]) == 1
    assert float(rows[1]["runtime"]) == 100
    assert starts(rows)[2] == 100
    assert m["killed_at_requested_time"] == 1


def test_bf_window_cuts_the_reservation_off(tmp_path):
    jobs = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 200, 2, 200)]
    wide, _ = run_jobs(tmp_path, jobs, policy="easy", bf_window="1d")
    narrow, _ = run_jobs(tmp_path, jobs, policy="easy", bf_window="60s")
    assert starts(wide) == {1: 0, 2: 100, 3: 110}
    # The head's start (100) lies beyond the 60 s window: no reservation, job 3 goes first.
    assert np.isnan(float(narrow[2]["reservation"]))
    assert starts(narrow) == {1: 0, 2: 202, 3: 2}


def test_bf_interval_delays_backfilling_to_the_next_pass(tmp_path):
    rows, _ = run_jobs(tmp_path, EASY_BACKFILLS, policy="easy", bf_interval=30)
    # A pass ran at 0 (job 1 submitted); the next one runs 30 s later and starts job 3.
    assert starts(rows) == {1: 0, 2: 100, 3: 30, 4: 110}


def test_bf_resolution_rounds_the_plan_up(tmp_path):
    # Job 3 would end at 107, after the head's reservation at 100: an exact plan keeps it out.
    # In a plan of 60 s steps job 1 and job 3 both end at 120, so it fits, and the head starts
    # at 107 instead of 100 (what a coarse bf_resolution costs).
    jobs = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 105, 2, 105)]
    exact, _ = run_jobs(tmp_path, jobs, policy="easy")
    coarse, _ = run_jobs(tmp_path, jobs, policy="easy", bf_resolution=60)
    assert starts(exact) == {1: 0, 2: 100, 3: 110}
    assert starts(coarse) == {1: 0, 2: 107, 3: 2}


def test_scheduler_prediction_is_recorded_at_the_first_plan(tmp_path):
    rows, m = run_jobs(tmp_path, EASY_BACKFILLS, policy="easy")
    assert float(rows[2]["predicted_start_scheduler"]) == 100
    assert np.isnan(float(rows[1]["predicted_start_scheduler"]))  # started before any pass tested it
    assert m["scheduler_predictions"] == 3


def test_whole_node_allocation(tmp_path):
    # Two 1-core jobs: by cores they share a node; by nodes each takes one, a third waits.
    jobs = [(0, 100, 1, 100), (0, 100, 1, 100), (0, 100, 1, 100)]
    cores, _ = run_jobs(tmp_path, jobs, policy="fcfs")
    nodes, _ = run_jobs(tmp_path, jobs, policy="fcfs", allocation="nodes")
    assert starts(cores) == {1: 0, 2: 0, 3: 0}
    assert starts(nodes) == {1: 0, 2: 0, 3: 100}


def test_multifactor_fairshare_favours_the_light_user(tmp_path):
    # User 1 has used the machine; when it frees up, user 2's job goes before user 1's second.
    jobs = [(0, 100, 4, 100, 1), (1, 100, 4, 100, 1), (2, 100, 4, 100, 2)]
    fcfs, _ = run_jobs(tmp_path, jobs, policy="easy")
    fair, _ = run_jobs(tmp_path, jobs, policy="easy", priority="multifactor", priority_weight_fairshare=1000)
    assert starts(fcfs) == {1: 0, 2: 100, 3: 200}
    assert starts(fair) == {1: 0, 2: 200, 3: 100}


def test_tsafrir_prediction_backfills_a_user_with_short_history(tmp_path):
    # User 7 asks for 1000 s but ran 10 s twice before: predicted 10 s, it fits before the head.
    jobs = [(0, 10, 1, 1000, 7), (20, 10, 1, 1000, 7), (40, 100, 2, 100, 1), (41, 10, 4, 10, 2),
            (42, 10, 2, 1000, 7)]
    req, _ = run_jobs(tmp_path, jobs, policy="easy")
    tsafrir, _ = run_jobs(tmp_path, jobs, policy="easy", runtime_prediction="tsafrir")
    assert starts(req)[5] == 150
    assert starts(tsafrir)[5] == 42


# hpc2n: invariants over the whole trace.

@pytest.fixture(scope="module")
def hpc2n_runs():
    out = {}
    for policy in ("fcfs", "easy", "conservative", "slurm"):
        s = simcore.load(HPC2N / ("hpc2n_%s.xml" % policy))
        res = s.run()
        out[policy] = (res.metrics, res.table("jobs"))
    return out


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "slurm"])
def test_hpc2n_never_exceeds_the_machine(hpc2n_runs, policy):
    metrics, jobs = hpc2n_runs[policy]
    events = sorted([(float(j["start"]), 1, int(j["cores"])) for j in jobs] +
                    [(float(j["end"]), 0, -int(j["cores"])) for j in jobs])  # ends before starts at a tie
    busy, peak = 0, 0
    for _, _, delta in events:
        busy += delta
        peak = max(peak, busy)
    assert peak <= 240 and metrics["peak_busy_cores"] == peak
    assert (jobs["start"] >= jobs["submit"]).all()
    assert np.allclose(jobs["end"] - jobs["start"], jobs["runtime"])
    assert metrics["jobs"] + metrics["skipped_unknown"] + metrics["skipped_too_large"] == 3170


def test_hpc2n_easy_head_starts_by_its_reservation(hpc2n_runs):
    metrics, jobs = hpc2n_runs["easy"]
    reserved = ~np.isnan(jobs["reservation"])
    assert reserved.sum() > 100
    assert (jobs["start"][reserved] <= jobs["reservation"][reserved]).all()
    assert metrics["started_after_reservation"] == 0


def test_hpc2n_backfilling_orderings(hpc2n_runs):
    fcfs, easy = hpc2n_runs["fcfs"][0], hpc2n_runs["easy"][0]
    assert fcfs["backfilled_jobs"] == 0 < easy["backfilled_jobs"]
    assert easy["wait_mean"] < fcfs["wait_mean"]
    assert easy["bounded_slowdown_mean"] < fcfs["bounded_slowdown_mean"]


def test_hpc2n_reruns_are_bit_identical(tmp_path):
    s = simcore.load(HPC2N / "hpc2n_slurm.xml")
    s.run(out=tmp_path / "a")
    s.run(out=tmp_path / "b")
    assert (tmp_path / "a" / "trace.h5").read_bytes() == (tmp_path / "b" / "trace.h5").read_bytes()


# Bad input.

@pytest.mark.parametrize("line, message", [
    ("1 0 -1 10 2 -1 -1 2 10", "has 9 fields; expected the 18 fields of SWF 2.2"),
    ("1 zero -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 1 -1 -1", "field 2 (submit time) is 'zero'; expected a number"),
    ("1 0 -1 10 2.5 -1 -1 2 10 -1 1 1 1 -1 1 1 -1 -1", "field 5 (allocated processors) is '2.5'; expected an integer"),
    ("1 -5 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 1 1 -1 -1", "field 2 (submit time) is -5; expected a time >= 0"),
])
def test_malformed_swf_lines_name_file_and_line(tmp_path, line, message):
    swf = tmp_path / "bad.swf"
    swf.write_text("; MaxProcs: 4\n" + swf_line(1, 0, 10, 2, 10) + "\n" + line + "\n")
    scenario = tmp_path / "s.xml"
    scenario.write_text('<?xml version="1.0"?>\n<scenario model="batch" seed="1">\n  <platform file="%s"/>\n'
                        '  <param name="workload" value="bad.swf"/>\n</scenario>\n' % TWO_NODES)
    with pytest.raises(simcore.InputError) as e:
        simcore.load(scenario).run()
    assert "%s:3" % swf in str(e.value)
    assert message in str(e.value)


def test_extra_fields_are_accepted_and_counted(tmp_path):
    rows, m = run_jobs(tmp_path, [(0, 10, 2, 10)], policy="fcfs")
    swf = tmp_path / "extra.swf"
    swf.write_text(swf_line(1, 0, 10, 2, 10) + " 7 8\n" + swf_line(2, 1, 10, 2, 10) + "\n")
    scenario = tmp_path / "e.xml"
    scenario.write_text('<?xml version="1.0"?>\n<scenario model="batch" seed="1">\n  <platform file="%s"/>\n'
                        '  <param name="workload" value="extra.swf"/>\n</scenario>\n' % TWO_NODES)
    res = simcore.load(scenario).run()
    assert res.metrics["lines_with_extra_fields"] == 1 and res.metrics["jobs"] == 2


def test_a_workload_without_jobs_is_refused_and_an_unknown_machine_size_not_reported(tmp_path):
    """An empty trace (or one whose jobs were all filtered out) ran to a wait of 0 s, a
    utilisation of 0 and trace_max_procs = -1 (SWF's "unknown"), exit 0."""
    scenario = tmp_path / "s.xml"
    for name, text in (("empty.swf", ""), ("big.swf", swf_line(1, 0, 10, 8, 10) + "\n")):
        (tmp_path / name).write_text(text)
        scenario.write_text('<?xml version="1.0"?>\n<scenario model="batch" seed="1">\n  <platform file="%s"/>\n'
                            '  <param name="workload" value="%s"/>\n</scenario>\n' % (TWO_NODES, name))
        with pytest.raises(simcore.InputError) as e:
            simcore.load(scenario).run()
        assert "s.xml:4: %s: no job to simulate (" % (tmp_path / name) in str(e.value), str(e.value)
    assert "1 kept of the trace, 1 of them too large for the 4 cores" in str(e.value)
    (tmp_path / "one.swf").write_text(swf_line(1, 0, 10, 2, 10) + "\n")  # no MaxProcs line
    scenario.write_text(scenario.read_text().replace("big.swf", "one.swf"))
    res = simcore.load(scenario).run()
    assert res.metrics["jobs"] == 1 and "trace_max_procs" not in res.metrics
    assert run_jobs(tmp_path, [(0, 10, 2, 10)])[1]["trace_max_procs"] == 4


def test_jobs_larger_than_the_machine_are_skipped_and_counted(tmp_path):
    rows, m = run_jobs(tmp_path, [(0, 10, 2, 10), (1, 10, 8, 10), (2, 10, 4, 10)], policy="fcfs")
    assert sorted(rows) == [1, 3]
    assert m["skipped_too_large"] == 1 and m["jobs"] == 2


def test_hpc2n_ml_split_uses_no_job_that_ends_in_the_evaluation_period(hpc2n_runs):
    metrics, jobs = hpc2n_runs["easy"]
    split = metrics["ml_split_time"]
    train, evaluation = jobs[jobs["ml_set"] == 1], jobs[jobs["ml_set"] == 2]
    assert len(train) == metrics["ml_training_jobs"] > 500
    assert len(evaluation) == metrics["ml_evaluation_jobs"] > 500
    assert (train["end"] < split).all()
    assert (evaluation["submit"] >= split).all()
    assert np.isnan(jobs["predicted_start_xgboost"][jobs["ml_set"] != 2]).all()
    assert (evaluation["predicted_start_xgboost"] >= evaluation["submit"]).all()
    # The reported errors are those of the table's predictions.
    mae = np.mean(np.abs(evaluation["predicted_start_xgboost"] - evaluation["start"]))
    assert metrics["xgboost_mae"] == pytest.approx(mae, rel=1e-9)
    ridge = np.mean(np.abs(evaluation["predicted_start_ridge"] - evaluation["start"]))
    assert metrics["ridge_mae"] == pytest.approx(ridge, rel=1e-9)
    assert metrics["scheduler_to_xgboost_error_ratio"] > 0


def test_ml_beats_a_constant_on_hpc2n(hpc2n_runs):
    metrics, jobs = hpc2n_runs["easy"]
    evaluation = jobs[jobs["ml_set"] == 2]
    waits = evaluation["start"] - evaluation["submit"]
    train = jobs[jobs["ml_set"] == 1]
    constant = np.median(train["start"] - train["submit"])  # the best constant for absolute error
    assert metrics["xgboost_mae"] < np.mean(np.abs(waits - constant))


def test_runtime_predictors_on_hpc2n():
    out = {}
    for kind in ("requested", "tsafrir", "ml"):
        s = simcore.load(HPC2N / "hpc2n_easy.xml")
        s.set(runtime_prediction=kind, predict_waits="false")
        out[kind] = s.run().metrics
    # Users ask for far more than they use: both learned predictors are closer.
    assert out["tsafrir"]["runtime_prediction_mae"] < out["requested"]["runtime_prediction_mae"]
    assert out["ml"]["runtime_prediction_mae"] < out["requested"]["runtime_prediction_mae"]
    assert out["ml"]["runtime_model_refits"] == 3145 // 200  # one refit per 200 finished jobs
    assert out["requested"]["runtime_model_refits"] == 0
    # With requested times the plan never promises too much; with shorter predictions it may.
    assert out["requested"]["started_after_reservation"] == 0


def test_bf_max_job_test_and_bf_continue(tmp_path):
    # Passes every 30 s test one job each. Without bf_continue every pass tests the head
    # again and job 3 waits for the head to finish; with it, the pass at 60 tests job 3.
    jobs = [(0, 100, 2, 100), (1, 10, 4, 10), (2, 30, 2, 30)]
    common = dict(policy="easy", bf_interval=30, bf_max_job_test=1)
    plain, _ = run_jobs(tmp_path, jobs, **common)
    resumed, _ = run_jobs(tmp_path, jobs, **common, bf_continue="true")
    unlimited, _ = run_jobs(tmp_path, jobs, policy="easy", bf_interval=30)
    assert starts(plain) == {1: 0, 2: 100, 3: 110}
    assert starts(resumed) == {1: 0, 2: 100, 3: 60}
    assert starts(unlimited) == {1: 0, 2: 100, 3: 30}


def test_workload_options(tmp_path):
    jobs = [(0, 10, 1, 10), (100, 10, 1, 10), (200, 10, 1, 10, 1, 5), (300, 10, 1, 10, 1, 0), (400, 10, 1, 10)]
    first, m = run_jobs(tmp_path, jobs, policy="fcfs", first_jobs=2)
    assert sorted(first) == [1, 2]
    window, _ = run_jobs(tmp_path, jobs, policy="fcfs", window_start=100, window_end=300)
    assert sorted(window) == [2, 3]
    assert float(window[2]["submit"]) == 0  # times start at the first kept job
    dropped, m = run_jobs(tmp_path, jobs, policy="fcfs", keep_cancelled="false")
    assert sorted(dropped) == [1, 2, 5] and m["dropped_cancelled_or_failed"] == 2
    denser, _ = run_jobs(tmp_path, jobs, policy="fcfs", load_factor=4)
    assert [float(denser[i]["submit"]) for i in sorted(denser)] == [0, 25, 50, 75, 100]
