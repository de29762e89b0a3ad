"""halo model: the dynamic policy is never slower than the static one on the same case."""

import os
import pathlib

import pytest

import simcore

SCENARIO = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "scenarios" / "halo" / "minighost_weak.xml"

# (ranks, ranks per node, cells per rank per dimension, variables, stencil, memory bandwidth)
CASES = [
    (32, 1, 50, 5, "7-point", "100GBps"),    # dynamic takes eager for part of the faces: faster
    (32, 1, 100, 1, "7-point", "100GBps"),   # the same, larger faces
    (32, 1, 8, 40, "27-point", "10GBps"),
    (64, 8, 8, 40, "27-point", "100GBps"),
    (64, 8, 50, 5, "7-point", "10GBps"),
    (64, 32, 20, 40, "27-point", "100GBps"),
    (64, 32, 8, 5, "7-point", "10GBps"),
    (128, 16, 20, 40, "27-point", "100GBps"),
    (128, 16, 100, 5, "7-point", "100GBps"),
]


def run(case, policy):
    ranks, per_node, local, variables, stencil, bus = case
    s = simcore.load(SCENARIO)
    for name, value in dict(ranks=ranks, ranks_per_node=per_node, local_cells="%d,%d,%d" % (local, local, local),
                            variables=variables, stencil=stencil, memory_bandwidth=bus, iterations=2,
                            policy=policy).items():
        s.set(name, value)
    return s.run().metrics


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%dr-%dpn-%d^3-%dv-%s-%s" % c)
def test_dynamic_never_slower_than_static(case):
    static, dynamic = run(case, "static"), run(case, "dynamic")
    assert dynamic["iteration_time"] <= static["iteration_time"] * (1 + 1e-12)
    assert dynamic["messages_per_iteration"] == static["messages_per_iteration"]


def test_dynamic_wins_where_the_static_threshold_is_wrong():
    case = CASES[0]
    static, dynamic = run(case, "static"), run(case, "dynamic")
    assert static.get("inter_eager_messages", 0) == 0
    assert dynamic["inter_eager_messages"] > 0
    assert dynamic["iteration_time"] < 0.8 * static["iteration_time"]
