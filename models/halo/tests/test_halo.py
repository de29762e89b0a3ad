"""halo model: closed forms for each protocol, memory-bus contention, bad input."""

import pathlib

import pytest

import simcore

HERE = pathlib.Path(__file__).resolve().parent
TWO_NODES = HERE / "data" / "two_nodes.xml"
L, B, M = 20e-6, 1e9, 10e9  # route latency and bandwidth; memory bus
CTRL = 64


def scenario(tmp_path, **params):
    p = dict(ranks=2, procs="2,1,1", local_cells="1,10,10", periodic="false", variables=1, iterations=1,
             flops_per_cell=0, ranks_per_node=1, memory_bandwidth="10GBps")
    p.update(params)
    lines = ['<?xml version="1.0"?>', '<scenario model="halo" seed="1">', '  <platform file="%s"/>' % TWO_NODES]
    lines += ['  <param name="%s" value="%s"/>' % (k, v) for k, v in p.items()]
    lines += ['  <config name="network/latency-factor" value="1"/>',
              '  <config name="network/bandwidth-factor" value="1"/>',
              '  <config name="network/crosstraffic" value="0"/>', "</scenario>"]
    path = tmp_path / ("s%d.xml" % len(list(tmp_path.glob("s*.xml"))))
    path.write_text("\n".join(lines) + "\n")
    return simcore.load(path)


def test_two_nodes_one_face_eager(tmp_path):
    res = scenario(tmp_path).run()  # a 1 x 10 x 10 face of doubles: 800 B
    assert res.metrics["inter_eager_messages"] == 2
    assert res.metrics["makespan"] == pytest.approx(L + 800 / B, rel=1e-12)


def test_two_nodes_one_face_rendezvous(tmp_path):
    res = scenario(tmp_path, local_cells="1,100,100").run()  # 80,000 B > 64 KiB
    assert res.metrics["inter_rendezvous_messages"] == 2
    # Request, answer, then the data: three latencies.
    assert res.metrics["makespan"] == pytest.approx(3 * L + (2 * CTRL + 80000) / B, rel=1e-12)


def test_eager_limit_is_a_parameter(tmp_path):
    res = scenario(tmp_path, local_cells="1,100,100", inter_eager_limit="100kB").run()
    assert res.metrics["makespan"] == pytest.approx(L + 80000 / B, rel=1e-12)


def test_one_node_single_copy_shares_the_memory_bus(tmp_path):
    two = scenario(tmp_path, local_cells="1,100,100", ranks_per_node=2).run()
    assert two.metrics["intra_single-copy_messages"] == 2
    # Both copies at once on one bus: start-up + 2 S / M.
    assert two.metrics["makespan"] == pytest.approx(2e-6 + 2 * 80000 / M, rel=1e-12)
    four = scenario(tmp_path, ranks=4, procs="4,1,1", local_cells="1,100,100", ranks_per_node=4).run()
    # Six copies at once (ranks 1 and 2 receive two each): three times as long per byte.
    assert four.metrics["makespan"] == pytest.approx(2e-6 + 6 * 80000 / M, rel=1e-12)


def test_one_node_eager_copies_in_and_out(tmp_path):
    res = scenario(tmp_path, ranks_per_node=2).run()  # 800 B <= 4 KiB
    assert res.metrics["intra_eager_messages"] == 2
    assert res.metrics["makespan"] == pytest.approx(2 * 800 / M + 2 * 800 / M, rel=1e-12)


def test_iterations_add_compute_and_exchange(tmp_path):
    res = scenario(tmp_path, iterations=3, flops_per_cell=1000).run()
    per_iteration = 100 * 1000 / 1e9 + L + 800 / B
    assert res.metrics["makespan"] == pytest.approx(3 * per_iteration, rel=1e-12)
    assert list(res.series["iterations"]["end"]) == pytest.approx([per_iteration * k for k in (1, 2, 3)], rel=1e-12)


def test_unbundled_messages_carry_one_variable_each(tmp_path):
    bundled = scenario(tmp_path, variables=4).run()
    split = scenario(tmp_path, variables=4, bundled="false").run()
    assert split.metrics["messages_per_iteration"] == 4 * bundled.metrics["messages_per_iteration"]
    assert split.metrics["inter_bytes_per_iteration"] == bundled.metrics["inter_bytes_per_iteration"] == 2 * 3200


def test_overlap_is_never_slower(tmp_path):
    plain = scenario(tmp_path, local_cells="10,100,100", flops_per_cell=20, iterations=2).run()
    overlapped = scenario(tmp_path, local_cells="10,100,100", flops_per_cell=20, iterations=2, overlap="true").run()
    assert overlapped.metrics["makespan"] < plain.metrics["makespan"]


@pytest.mark.parametrize("params, message", [
    (dict(procs="2,2,1"), "the process grid 2,2,1 holds 4 ranks but 'ranks' = 2; expected px x py x pz = ranks"),
    (dict(procs="2,1"), "parameter 'procs' has 2 values; expected 3"),
    (dict(local_cells="0,10,10"), "is out of range"),
    (dict(cells="1,10,10"), "the process grid has 2 ranks along x but the grid only 1 cells"),
    (dict(halo_width=2), "fewer than the halo width 2"),
    (dict(ranks=3, procs="3,1,1"), "needs 3 nodes at 1 ranks per node, but only 2 hosts match"),
    (dict(element_size="0B"), "is out of range"),
])
def test_bad_input_names_the_parameter(tmp_path, params, message):
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, **params).run()
    assert message in str(e.value)
    assert str(e.value).startswith(str(tmp_path))
