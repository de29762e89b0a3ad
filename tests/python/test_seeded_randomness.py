"""Seeded randomness through a model: master_worker's flops_jitter draws every task's work
from the kernel's stream 'task_flops'."""

import numpy as np

import simcore

from conftest import HOST_SPEED, STAR_SCENARIO


def _jittered(seed, tasks=64, jitter=0.5):
    sc = simcore.load(STAR_SCENARIO).with_params(tasks=tasks, workers=8, flops_jitter=jitter)
    sc.seed = seed
    return sc


def test_same_seed_same_draws_different_seed_different_draws(tmp_path):
    a, b, c = simcore.run_many([_jittered(11), _jittered(11), _jittered(12)], jobs=2, out=tmp_path)
    assert np.array_equal(a.series["tasks"]["flops"], b.series["tasks"]["flops"])
    assert a.metrics == b.metrics
    assert (tmp_path / "run-000" / "trace.h5").read_bytes() == (tmp_path / "run-001" / "trace.h5").read_bytes()
    assert not np.array_equal(a.series["tasks"]["flops"], c.series["tasks"]["flops"])
    assert a.metrics["makespan"] != c.metrics["makespan"]


def test_jittered_work_is_within_bounds_and_conserved():
    res = _jittered(5, tasks=400, jitter=0.25).run()
    flops = res.series["tasks"]["flops"]
    assert flops.min() >= 0.75e9 and flops.max() < 1.25e9
    assert len(np.unique(flops)) == 400
    # Every flop drawn is computed once: total busy time = total work / host speed.
    busy = res.series["workers"]["busy_time"].sum()
    assert busy == np.float64(flops.sum() / HOST_SPEED) or abs(busy - flops.sum() / HOST_SPEED) < 1e-9 * busy
    # Mean of U(0.75, 1.25) GFlop over 400 draws: standard error 0.144/20 = 7.2e-3 GFlop; 5 sigma.
    assert abs(flops.mean() / 1e9 - 1.0) < 0.036


def test_no_jitter_means_no_draw_effect():
    a = _jittered(1, jitter=0.0).run()
    b = _jittered(2, jitter=0.0).run()
    assert np.all(a.series["tasks"]["flops"] == 1e9)
    assert a.metrics == b.metrics  # the seed only matters where randomness is used
