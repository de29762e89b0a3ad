"""halo model: closed forms for each protocol, memory-bus contention, bad input."""

import json
import pathlib

import pytest

import simcore

HERE = pathlib.Path(__file__).resolve().parent
TWO_NODES = HERE / "data" / "two_nodes.xml"
ONE_SLOW_DIRECTION = HERE / "data" / "one_slow_direction.xml"
L, B, M = 20e-6, 1e9, 10e9  # route latency and bandwidth; memory bus
CTRL = 64


def scenario(tmp_path, latency_factor=1, platform=TWO_NODES, **params):
    p = dict(ranks=2, procs="2,1,1", local_cells="1,10,10", periodic="false", variables=1, iterations=1,
             flops_per_cell=0, ranks_per_node=1, memory_bandwidth="10GBps")
    p.update(params)
    lines = ['<?xml version="1.0"?>', '<scenario model="halo" seed="1">', '  <platform file="%s"/>' % platform]
    lines += ['  <param name="%s" value="%s"/>' % (k, v) for k, v in p.items()]
    lines += ['  <config name="network/latency-factor" value="%s"/>' % latency_factor,
              '  <config name="network/bandwidth-factor" value="1"/>',
              '  <config name="network/crosstraffic" value="0"/>', "</scenario>"]
    path = tmp_path / ("s%d.xml" % len(list(tmp_path.glob("s*.xml"))))
    path.write_text("\n".join(lines) + "\n")
    return simcore.load(path)


def test_two_nodes_one_face_eager(tmp_path):
    res = scenario(tmp_path, nic_dma="false").run()  # a 1 x 10 x 10 face of doubles: 800 B
    assert res.metrics["inter_eager_messages"] == 2
    # The data crosses the network, then the receiver copies it out of the receive buffer.
    assert res.metrics["makespan"] == pytest.approx(L + 800 / B + 800 / M, rel=1e-12)


def test_two_nodes_one_face_rendezvous(tmp_path):
    res = scenario(tmp_path, local_cells="1,100,100", nic_dma="false").run()  # 80,000 B > 64 KiB
    assert res.metrics["inter_rendezvous_messages"] == 2
    # Request, answer, then the data straight into the user buffer: three latencies, no copy.
    assert res.metrics["makespan"] == pytest.approx(3 * L + (2 * CTRL + 80000) / B, rel=1e-12)


def test_two_nodes_one_face_pipelined(tmp_path):
    res = scenario(tmp_path, local_cells="1,100,100", nic_dma="false", inter_large_protocol="pipelined",
                   pipeline_chunk="16000B").run()
    assert res.metrics["inter_pipelined_messages"] == 2
    # Handshake, the first chunk, then the rest while the first 64,000 B are copied out (the
    # network is slower than the bus), then the last chunk's copy.
    c, S = 16000, 80000
    expected = 2 * (L + CTRL / B) + (L + c / B) + max(L + (S - c) / B, (S - c) / M) + c / M
    assert res.metrics["makespan"] == pytest.approx(expected, rel=1e-12)
    # Only the last chunk's copy is left on the path, not the whole message's.
    assert expected == pytest.approx(4 * L + (2 * CTRL + S) / B + c / M, rel=1e-12)


def test_nic_transfers_load_the_memory_bus(tmp_path):
    eager = scenario(tmp_path).run()
    # The receiving NIC's write into memory and the copy-out share the bus.
    assert eager.metrics["makespan"] == pytest.approx(L + 800 / B + 2 * 800 / M, rel=1e-12)
    rendezvous = scenario(tmp_path, local_cells="1,100,100").run()
    assert rendezvous.metrics["makespan"] == pytest.approx(3 * L + (2 * CTRL + 80000) / B + 80000 / M, rel=1e-12)


def test_eager_limit_is_a_parameter(tmp_path):
    res = scenario(tmp_path, local_cells="1,100,100", inter_eager_limit="100kB", nic_dma="false").run()
    assert res.metrics["makespan"] == pytest.approx(L + 80000 / B + 80000 / M, rel=1e-12)


def test_one_node_single_copy_shares_the_memory_bus(tmp_path):
    two = scenario(tmp_path, local_cells="1,100,100", ranks_per_node=2).run()
    assert two.metrics["intra_single-copy_messages"] == 2
    # Both copies at once on one bus: start-up + 2 S / M.
    assert two.metrics["makespan"] == pytest.approx(2e-6 + 2 * 80000 / M, rel=1e-12)
    four = scenario(tmp_path, ranks=4, procs="4,1,1", local_cells="1,100,100", ranks_per_node=4).run()
    # A rank copies its receives one after another, each after its start-up: four copies at
    # once, then ranks 1 and 2 (which receive two each) their second after a second start-up.
    assert four.metrics["makespan"] == pytest.approx(2e-6 + 4 * 80000 / M + 2e-6 + 2 * 80000 / M, rel=1e-12)


def test_single_copies_start_one_after_another_and_a_rank_copies_to_itself_at_once(tmp_path):
    """Two ranks of one node, periodic: each single-copies both x faces from the other rank
    (two start-ups, one after the other) and its four y and z faces from itself (none: MPI's
    self transport). At rank granularity each rank takes them one at a time in the order they
    were posted, a face from the other rank after its start-up; the two ranks, alike, pause
    for their start-ups at the same times, so the bus idles through two of them. At node
    granularity the start-ups come first, then the twelve copies of 32,768 B share the bus."""
    for granularity in ("rank", "node"):
        res = scenario(tmp_path, local_cells="64,64,64", periodic="true", ranks_per_node=2,
                       granularity=granularity).run()
        assert res.metrics["intra_single-copy_messages"] == 12
        assert res.metrics["makespan"] == pytest.approx(2 * 2e-6 + 12 * 32768 / M, rel=1e-12)


def test_memory_bus_of_a_profile_host_type(tmp_path):
    """memory_bandwidth 0: each node's bus runs at its host type's calibrated copy rate (n-1 has
    its own), else at the profile-wide one."""
    profile = tmp_path / "p.json"
    profile.write_text('{"hosts": [{"match": "n-1", "rates": {"memcpy_bandwidth": "5GBps"}}], '
                       '"rates": {"memcpy_bandwidth": "10GBps"}}')
    times = []
    for host in ("n-0", "n-1"):
        sc = scenario(tmp_path, local_cells="1,100,100", ranks_per_node=2, memory_bandwidth=0, hosts=host)
        sc.calibration = profile
        times.append(sc.run().metrics["makespan"])
    assert times == pytest.approx([2e-6 + 2 * 80000 / 10e9, 2e-6 + 2 * 80000 / 5e9], rel=1e-12)


def test_one_node_eager_copies_in_and_out(tmp_path):
    res = scenario(tmp_path, ranks_per_node=2).run()  # 800 B <= 4 KiB
    assert res.metrics["intra_eager_messages"] == 2
    assert res.metrics["makespan"] == pytest.approx(2 * 800 / M + 2 * 800 / M, rel=1e-12)


def test_iterations_add_compute_and_exchange(tmp_path):
    res = scenario(tmp_path, iterations=3, flops_per_cell=1000).run()
    per_iteration = 100 * 1000 / 1e9 + L + 800 / B + 2 * 800 / M
    assert res.metrics["makespan"] == pytest.approx(3 * per_iteration, rel=1e-12)
    assert list(res.series["iterations"]["end"]) == pytest.approx([per_iteration * k for k in (1, 2, 3)], rel=1e-12)


def test_many_iterations_follow_the_closed_form_across_actor_handovers(tmp_path):
    """An agent's actor hands its iterations to a successor every 32 in detailed mode (SimGrid
    3.32 keeps each copy's I/O in the actor that started it, which made long runs quadratic):
    100 iterations, crossing three handovers, still end at k x the closed form."""
    res = scenario(tmp_path, iterations=100, flops_per_cell=1000, nic_dma="false").run()
    per_iteration = 100 * 1000 / 1e9 + L + 800 / B + 800 / M
    ends = list(res.series["iterations"]["end"])
    assert ends == pytest.approx([per_iteration * k for k in range(1, 101)], rel=1e-11)


def test_unbundled_messages_carry_one_variable_each(tmp_path):
    bundled = scenario(tmp_path, variables=4).run()
    split = scenario(tmp_path, variables=4, bundled="false").run()
    assert split.metrics["messages_per_iteration"] == 4 * bundled.metrics["messages_per_iteration"]
    assert split.metrics["inter_bytes_per_iteration"] == bundled.metrics["inter_bytes_per_iteration"] == 2 * 3200


def test_overlap_is_never_slower(tmp_path):
    plain = scenario(tmp_path, local_cells="10,100,100", flops_per_cell=20, iterations=2).run()
    overlapped = scenario(tmp_path, local_cells="10,100,100", flops_per_cell=20, iterations=2, overlap="true").run()
    assert overlapped.metrics["makespan"] < plain.metrics["makespan"]


def test_dynamic_takes_eager_where_latency_dominates(tmp_path):
    # Ten times the latency: a rendezvous costs two more (400 us), an eager copy-out 8 us.
    slow = dict(local_cells="1,100,100", nic_dma="false")
    static = scenario(tmp_path, **slow, latency_factor=10).run()
    dynamic = scenario(tmp_path, **slow, latency_factor=10, policy="dynamic").run()
    assert static.metrics["inter_rendezvous_messages"] == 2
    assert dynamic.metrics["inter_eager_messages"] == 2
    assert static.metrics["makespan"] == pytest.approx(30 * L + (2 * CTRL + 80000) / B, rel=1e-12)
    assert dynamic.metrics["makespan"] == pytest.approx(10 * L + 80000 / B + 80000 / M, rel=1e-12)


def test_dynamic_keeps_static_choices_without_a_clear_gain(tmp_path):
    static = scenario(tmp_path, local_cells="1,100,100").run()
    dynamic = scenario(tmp_path, local_cells="1,100,100", policy="dynamic").run()
    assert dynamic.metrics["inter_rendezvous_messages"] == 2
    assert dynamic.metrics["makespan"] == static.metrics["makespan"]


def test_node_granularity_matches_rank_granularity_on_a_symmetric_case(tmp_path):
    common = dict(ranks=8, procs="2,2,2", local_cells="20,20,20", ranks_per_node=4, iterations=2)
    rank = scenario(tmp_path, **common).run()
    node = scenario(tmp_path, **common, granularity="node").run()
    for key in ("messages_per_iteration", "intra_bytes_per_iteration", "inter_bytes_per_iteration"):
        assert node.metrics[key] == rank.metrics[key]
    # Aggregated traffic is not exact: ranks of a node no longer drift apart (here 5 %).
    assert node.metrics["makespan"] == pytest.approx(rank.metrics["makespan"], rel=0.1)


SMPI_ENVELOPE = 16  # B: SMPI sends every message with its tag, source and communicator


def test_smpi_mode_is_one_transfer_per_message(tmp_path):
    # SMPI's view: the 800 B face is one transfer of the face and SMPI's envelope, no protocol
    # steps and no memory bus.
    res = scenario(tmp_path, mode="smpi").run()
    assert res.metrics["makespan"] == pytest.approx(L + (800 + SMPI_ENVELOPE) / B, rel=1e-12)
    big = scenario(tmp_path, mode="smpi", local_cells="1,100,100").run()
    assert big.metrics["makespan"] == pytest.approx(L + (80000 + SMPI_ENVELOPE) / B, rel=1e-12)
    # One envelope a message: five variables unbundled are five transfers sharing the link.
    many = scenario(tmp_path, mode="smpi", variables=5, bundled="false").run()
    assert many.metrics["makespan"] == pytest.approx(L + 5 * (800 + SMPI_ENVELOPE) / B, rel=1e-12)


@pytest.mark.parametrize("face, detached", [(65535, True), (65536, False)])
def test_smpi_mode_detaches_sends_below_the_threshold(tmp_path, face, detached):
    """SMPI detaches a send strictly below `smpi/send-is-detached-thresh` (64 KiB): rank 0, whose
    own message crosses a 1 MBps link and whose neighbour's comes over a 1 GBps one, is done once
    its receive is in where its send is detached, and waits for its send where it is not. One
    cell a face, of one element of `face` bytes."""
    lat = 10e-6
    slow, fast = lat + (face + SMPI_ENVELOPE) / 1e6, lat + (face + SMPI_ENVELOPE) / 1e9
    res = scenario(tmp_path, platform=ONE_SLOW_DIRECTION, mode="smpi", local_cells="1,1,1",
                   element_size=f"{face}B").run()
    assert res.metrics["makespan"] == pytest.approx(slow, rel=1e-12)
    rank0 = fast if detached else slow
    assert res.metrics["communication_time_mean"] == pytest.approx((rank0 + slow) / 2, rel=1e-12)
    # Counted as SMPI sent them: detached (eager) or waited for (rendezvous), not by the
    # detailed mode's thresholds (there both are eager: the inter-node limit itself is eager).
    counts = {k: v for k, v in res.metrics.items() if k.endswith("_messages")}
    assert counts == {"inter_eager_messages" if detached else "inter_rendezvous_messages": 2}
    detailed = scenario(tmp_path, platform=ONE_SLOW_DIRECTION, local_cells="1,1,1", element_size=f"{face}B").run()
    assert {k: v for k, v in detailed.metrics.items() if k.endswith("_messages")} == {"inter_eager_messages": 2}


def test_smpi_mode_counts_messages_within_a_node_by_its_threshold(tmp_path):
    """Within a node SMPI has no single copy: a 12.8 kB face is a detached send (eager), which
    the detailed mode single-copies above its 4 KiB limit; an 80 kB face is waited for
    (rendezvous). The classes table says the same."""
    for cells, smpi_protocol in (("1,40,40", "eager"), ("1,100,100", "rendezvous")):
        smpi = scenario(tmp_path, mode="smpi", local_cells=cells, ranks_per_node=2).run()
        assert {k: v for k, v in smpi.metrics.items() if k.endswith("_messages")} == \
            {f"intra_{smpi_protocol}_messages": 2}
        assert {int(r["protocol"]) for r in smpi.table("classes")} == {0 if smpi_protocol == "eager" else 1}
        detailed = scenario(tmp_path, local_cells=cells, ranks_per_node=2).run()
        assert {k: v for k, v in detailed.metrics.items() if k.endswith("_messages")} == \
            {"intra_single-copy_messages": 2}
    # The threshold itself is waited for, within a node as between nodes.
    for face, smpi_protocol in ((65535, "eager"), (65536, "rendezvous")):
        smpi = scenario(tmp_path, mode="smpi", local_cells="1,1,1", element_size=f"{face}B", ranks_per_node=2).run()
        assert {k: v for k, v in smpi.metrics.items() if k.endswith("_messages")} == \
            {f"intra_{smpi_protocol}_messages": 2}


def test_the_dynamic_policy_predicts_messages_to_itself_without_a_start_up(tmp_path):
    """One rank, periodic: six 80 kB faces to itself, single copies without a start-up (MPI's
    self transport copies at once), one copy each where eager makes two. The dynamic policy
    predicts them so and keeps them: the same time as the static choice."""
    common = dict(ranks=1, procs="1,1,1", local_cells="100,100,100", periodic="true", memory_bandwidth="1000GBps")
    static = scenario(tmp_path, **common).run()
    dynamic = scenario(tmp_path, **common, policy="dynamic").run()
    assert static.metrics["intra_single-copy_messages"] == dynamic.metrics["intra_single-copy_messages"] == 6
    assert dynamic.metrics["makespan"] == static.metrics["makespan"]


def test_classes_table_names_the_protocol_per_class(tmp_path):
    res = scenario(tmp_path, ranks=4, procs="4,1,1", local_cells="1,100,100", ranks_per_node=2).run()
    rows = res.table("classes")
    got = {(int(r["intra"]), int(r["kind"]), float(r["bytes"]), int(r["protocol"])): int(r["messages"]) for r in rows}
    # Ranks 0-1 on one node, 2-3 on the other: faces 0-1 and 2-3 intra (single copy), 1-2 inter (rendezvous).
    assert got == {(1, 1, 80000.0, 2): 4, (0, 1, 80000.0, 1): 2}


@pytest.mark.parametrize("params, message", [
    (dict(procs="2,2,1"), "the process grid 2,2,1 holds 4 ranks but 'ranks' = 2; expected px x py x pz = ranks"),
    (dict(procs="2,1"), "parameter 'procs' has 2 values; expected 3"),
    (dict(local_cells="0,10,10"), "is out of range"),
    (dict(cells="1,10,10"), "the process grid has 2 ranks along x but the grid only 1 cells"),
    (dict(halo_width=2), "fewer than the halo width 2"),
    (dict(ranks=3, procs="3,1,1"), "needs 3 nodes at 1 ranks per node, but only 2 hosts match"),
    (dict(element_size="0B"), "is out of range"),
    (dict(mode="smpi", granularity="node"), "parameter 'granularity' = 'node' cannot be used with mode 'smpi'"),
    (dict(smpi_ois="0:1e-6:0"), "parameter 'smpi_ois' is SMPI's overhead of MPI_Isend and applies to mode 'smpi' only"),
    (dict(mode="smpi", smpi_ois="0:1e-6"), "parameter 'smpi_ois' = '0:1e-6': entry '0:1e-6' of '0:1e-6'; expected "
                                           "BYTES:SECONDS:SECONDS_PER_BYTE"),
    (dict(mode="smpi", smpi_ois="0:1e-6:0;0:2e-6:0"), "gives the threshold 0 twice"),
    (dict(mode="smpi", smpi_ois="intra-node"), "parameter 'smpi_ois' = 'intra-node': the calibration profile has no "
                                               "message_gaps.intra-node"),
])
def test_bad_input_names_the_parameter(tmp_path, params, message):
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, **params).run()
    assert message in str(e.value)
    assert str(e.value).startswith(str(tmp_path))


@pytest.mark.parametrize("params", [dict(), dict(policy="dynamic", granularity="node"), dict(mode="smpi")])
def test_reruns_are_bit_identical(tmp_path, params):
    common = dict(ranks=8, procs="2,2,2", local_cells="20,20,20", ranks_per_node=4, iterations=3, **params)
    first = scenario(tmp_path, **common).run(out=tmp_path / "a")
    second = scenario(tmp_path, **common).run(out=tmp_path / "b")
    assert (tmp_path / "a" / "trace.h5").read_bytes() == (tmp_path / "b" / "trace.h5").read_bytes()
    assert first.metrics == second.metrics


# Message gaps (detailed mode): a rank posts its eager messages to other ranks one gap apart.
GAP = 1e-6


@pytest.mark.parametrize("granularity", ["rank", "node"])
def test_message_gaps_delay_each_further_eager_message(tmp_path, granularity):
    """Two ranks of one node, one face of 5 variables each way, one message a variable (800 B,
    eager): each rank posts its fifth message 4 gaps after its first. The receive side of the
    messages that came in while the rank was posting is inside the gaps (measured with it),
    so only the last message's copies follow the last post, both ranks' on the shared bus:
    the window's time, 4 gaps past one message each way. A node (node granularity) gives the
    same: it posts its messages once its ranks' last gaps are over, with the copies in that
    were not done within the gaps (the last message's, both ranks'), then copies out the
    receives that were not in before its ranks were done posting (the last, both ranks').
    Until 2026-12-06 it copied all ten in and out after the last gap (5.6 us)."""
    base = dict(ranks_per_node=2, variables=5, bundled="false", granularity=granularity)
    res = scenario(tmp_path, message_gap="1us", **base).run()
    assert res.metrics["intra_eager_messages"] == 10
    last = 2 * 800 / M
    assert res.metrics["makespan"] == pytest.approx(4 * GAP + last + last, rel=1e-12)
    # No gap given and none in a profile: as before.
    assert scenario(tmp_path, **base).run().metrics["makespan"] == pytest.approx(4 * 4000 / M, rel=1e-12)
    # One message a neighbour: nothing before it to wait for.
    bundled = scenario(tmp_path, message_gap="1us", ranks_per_node=2, variables=5, granularity=granularity).run()
    assert bundled.metrics["makespan"] == pytest.approx(4 * 4000 / M, rel=1e-12)


def test_node_granularity_moves_gapped_inter_node_bytes_while_they_are_posted(tmp_path):
    """Five variables each way between two nodes, posted 3 us apart: at rank granularity each
    is a flow from its own post, and the last arrives L + 800 / B after the fourth gap. A node
    moves the bytes of the four posted before its last post as one flow from its first post
    (L + 3,200 / B, done at 23.5 us), and the last one's from its post: the same end. Until
    2026-12-06 it moved all 4,000 B after the last gap (36.4 us)."""
    common = dict(variables=5, bundled="false", nic_dma="false", message_gap="3us")
    expected = 4 * 3e-6 + L + 800 / B + 800 / M
    for granularity in ("rank", "node"):
        res = scenario(tmp_path, **common, granularity=granularity).run()
        assert res.metrics["makespan"] == pytest.approx(expected, rel=1e-12), granularity


GAPPED_CASES = [dict(), dict(bundled="false"), dict(local_cells="32,32,32"),
                dict(stencil="7-point", local_cells="16,16,16", variables=40, bundled="false")]


@pytest.mark.parametrize("case", GAPPED_CASES, ids=["27pt-8", "27pt-8-unbundled", "27pt-32", "7pt-16-40vars"])
def test_node_granularity_follows_rank_granularity_with_message_gaps(tmp_path, case):
    """32 ranks, 16 a node, periodic, 1 us gaps (0.1 us to itself). Without gaps node
    granularity gives 1.00 to 1.09 x the rank result on these cases (its ranks do not drift
    apart); with gaps it gave 1.04 to 1.49 x until 2026-12-06, when a node posted each
    transfer after its last message's gap, then moved and copied all of it. Now 1.00 to
    1.08 x."""
    common = dict(ranks=32, procs="4,4,2", local_cells="8,8,8", ranks_per_node=16, periodic="true",
                  stencil="27-point", variables=5, message_gap="1us", self_message_gap="0.1us", iterations=2)
    common.update(case)
    rank = scenario(tmp_path, **common).run().metrics["makespan"]
    node = scenario(tmp_path, **common, granularity="node").run().metrics["makespan"]
    assert node / rank == pytest.approx(1, abs=0.09)


LANE_CASES = {
    "eager": dict(),
    "rendezvous": dict(local_cells="96,96,96", variables=2, stencil="7-point"),
    "pipelined": dict(local_cells="96,96,96", variables=2, stencil="7-point", inter_large_protocol="pipelined",
                      pipeline_chunk="16KiB"),
    "node": dict(granularity="node"),
    "network-first-overlap": dict(send_order="network_first", overlap="true", flops_per_cell=100),
    "no-dma-open-ends": dict(nic_dma="false", periodic="false"),
}


@pytest.mark.parametrize("case", LANE_CASES.values(), ids=LANE_CASES.keys())
def test_lanes_change_no_result(tmp_path, case):
    """An agent with more network transfers than `transfers_per_actor` hands them to actors of
    its own (lanes), for simulation speed only: with two transfers a lane (every agent here has
    lanes: up to 9 neighbours on the other node, 5 variables each) and with none, every metric
    is the same up to rounding."""
    common = dict(ranks=32, procs="4,4,2", local_cells="8,8,8", ranks_per_node=16, periodic="true",
                  stencil="27-point", variables=5, bundled="false", message_gap="1us", self_message_gap="0.1us",
                  iterations=3)
    common.update(case)
    one = scenario(tmp_path, **common, transfers_per_actor=1000000).run().metrics
    lanes = scenario(tmp_path, **common, transfers_per_actor=2).run().metrics
    assert one["inter_bytes_per_iteration"] > 0
    large = case.get("inter_large_protocol", "rendezvous") if "96" in case.get("local_cells", "") else "eager"
    assert one["inter_%s_messages" % large] > 0
    assert lanes.keys() == one.keys()
    for k, v in one.items():
        assert lanes[k] == pytest.approx(v, rel=1e-9, abs=1e-18), k


SMPI_LANE_CASES = {
    "eager": dict(),
    "rendezvous": dict(local_cells="96,96,96", variables=2, stencil="7-point"),
    "eager-and-rendezvous": dict(local_cells="16,96,96", variables=2),
    "open-ends": dict(periodic="false"),
}


@pytest.mark.parametrize("case", SMPI_LANE_CASES.values(), ids=SMPI_LANE_CASES.keys())
def test_smpi_lanes_change_no_result(tmp_path, case):
    """In SMPI mode an agent with more receives or sends than `transfers_per_actor` messages
    hands them to lanes too: two messages a lane (every agent has lanes: 26 neighbours, 5
    variables each, or 2 past the eager limit) against none, every metric the same up to
    rounding."""
    common = dict(ranks=32, procs="4,4,2", local_cells="8,8,8", ranks_per_node=16, periodic="true",
                  stencil="27-point", variables=5, bundled="false", iterations=3, mode="smpi")
    common.update(case)
    one = scenario(tmp_path, **common, transfers_per_actor=1000000).run().metrics
    lanes = scenario(tmp_path, **common, transfers_per_actor=2).run().metrics
    assert one["inter_bytes_per_iteration"] > 0
    assert ("inter_rendezvous_messages" in one) == ("96" in common["local_cells"])
    assert lanes.keys() == one.keys()
    for k, v in one.items():
        assert lanes[k] == pytest.approx(v, rel=1e-9, abs=1e-18), k


@pytest.mark.parametrize("transfers_per_actor", [32, 1])
def test_smpi_eager_sends_outlive_a_sender_that_is_done(tmp_path, transfers_per_actor):
    """SMPI detaches eager sends: a rank is done with an iteration once its receives are in,
    its own messages may still be on their way. Rank 0 sends over a 1 MBps link and receives
    over a 1 GBps one: it ends its last iteration while its three messages are still in
    flight, and they still arrive (n x (L + 3 S / 1 MBps), S with SMPI's envelope); with its
    agent or its lanes (one message a lane) holding them."""
    n, lat, size = 4, 10e-6, 800 + SMPI_ENVELOPE
    slow, fast = lat + 3 * size / 1e6, lat + 3 * size / 1e9
    res = scenario(tmp_path, platform=ONE_SLOW_DIRECTION, mode="smpi", variables=3, bundled="false",
                   iterations=n, transfers_per_actor=transfers_per_actor).run()
    assert res.metrics["makespan"] == pytest.approx(n * slow, rel=1e-12)
    # Rank 1 waits for rank 0's messages every iteration; rank 0 for rank 1's, sent once rank
    # 1 is done with the previous one, and the first at once.
    rank0, rank1 = (n - 1) * slow + fast, n * slow
    assert res.metrics["communication_time_mean"] == pytest.approx((rank0 + rank1) / (2 * n), rel=1e-12)


@pytest.mark.parametrize("bus", ["5GBps", "2GBps"])
@pytest.mark.parametrize("granularity", ["rank", "node"])
def test_gaps_do_not_hide_copies_longer_than_themselves(tmp_path, bus, granularity):
    """16 ranks a node on a slow bus, 27-point, 4,000 B faces: with every rank copying, a face's
    copy takes 12.8 us at 5 GBps (32 at 2 GBps), far more than a 1 us gap, so the gaps hide
    no copy out and their waits are lost in the copies in. With gaps the exchange is then no
    faster than without them. Until 2026-12-06 every receive that came in while its rank was
    posting cost nothing more, however long its copy: rank granularity gave 0.77 and 0.64 x
    the time without gaps."""
    common = dict(ranks=32, procs="4,4,2", local_cells="10,10,10", periodic="true", stencil="27-point",
                  variables=5, iterations=2, ranks_per_node=16, memory_bandwidth=bus, granularity=granularity)
    plain = scenario(tmp_path, **common).run().metrics["makespan"]
    gapped = scenario(tmp_path, **common, message_gap="1us", self_message_gap="0.1us").run().metrics["makespan"]
    assert gapped >= 0.99 * plain


def test_message_gaps_from_a_profile_by_size_and_placement(tmp_path):
    """The profile's law at the message's size: intra-node for two ranks of one node, the
    inter-node law for ranks on two nodes (800 B messages, eager both ways)."""
    profile = tmp_path / "gaps.json"
    profile.write_text('{"message_gaps": {"intra-node": "0:1e-06:1e-10", "inter-node": "0:3e-06:0", '
                       '"self": "0:2e-07:0"}}')
    intra = scenario(tmp_path, ranks_per_node=2, variables=5, bundled="false")
    intra.calibration = profile
    g = 1e-6 + 800 * 1e-10
    assert intra.run().metrics["makespan"] == pytest.approx(4 * g + 4 * 800 / M, rel=1e-12)
    inter = scenario(tmp_path, variables=5, bundled="false", nic_dma="false")
    inter.calibration = profile
    plain = scenario(tmp_path, variables=5, bundled="false", nic_dma="false").run().metrics["makespan"]
    assert plain == pytest.approx(L + 4000 / B + 4000 / M, rel=1e-12)  # no gap: one flow of the five
    # Each variable leaves one gap after the one before; the last, 4 gaps after the first.
    assert inter.run().metrics["makespan"] == pytest.approx(4 * 3e-6 + L + 800 / B + 800 / M, rel=1e-12)
    # The scenario's value wins over the profile's.
    fixed = scenario(tmp_path, ranks_per_node=2, variables=5, bundled="false", message_gap="2us")
    fixed.calibration = profile
    assert fixed.run().metrics["makespan"] == pytest.approx(4 * 2e-6 + 4 * 800 / M, rel=1e-12)
    # A rank alone, periodic: six faces to itself, the self law's gap each (a self window's
    # time is all gaps: the copies are inside them).
    alone = scenario(tmp_path, ranks=1, procs="1,1,1", periodic="true", local_cells="10,10,10")
    alone.calibration = profile
    assert alone.run().metrics["makespan"] == pytest.approx(6 * 2e-7, rel=1e-12)


def test_messages_to_itself_take_the_self_gap_and_single_copies_none(tmp_path):
    """A rank alone, periodic: its six eager faces (800 B) go to itself, one self_message_gap
    apart, not message_gap (the other ranks'): six self gaps, the time the fitter gives a self
    window of six (its copies are inside the gaps). Without gaps each costs one copy: Open MPI's
    self transport copies an eager message to itself straight into the posted receive, inside
    MPI_Isend (no copy into a shared buffer and out of it), at both granularities. Faces past
    the eager limit (single copies) add no gap."""
    one = dict(ranks=1, procs="1,1,1", periodic="true", local_cells="10,10,10")
    plain = scenario(tmp_path, **one).run().metrics["makespan"]
    assert plain == pytest.approx(6 * 800 / M, rel=1e-12)
    assert scenario(tmp_path, granularity="node", **one).run().metrics["makespan"] == pytest.approx(plain, rel=1e-12)
    assert scenario(tmp_path, message_gap="1ms", **one).run().metrics["makespan"] == plain
    res = scenario(tmp_path, self_message_gap="1us", **one).run()
    assert res.metrics["makespan"] == pytest.approx(6 * GAP, rel=1e-12)
    two = dict(ranks_per_node=2, local_cells="1,100,100", variables=5, bundled="false")  # 80 kB messages
    assert (scenario(tmp_path, message_gap="1ms", self_message_gap="1ms", **two).run().metrics["makespan"] ==
            scenario(tmp_path, **two).run().metrics["makespan"])


def test_smpi_mode_charges_no_message_gap(tmp_path):
    base = dict(ranks_per_node=2, variables=5, bundled="false", mode="smpi")
    assert (scenario(tmp_path, message_gap="1ms", **base).run().metrics["makespan"] ==
            scenario(tmp_path, **base).run().metrics["makespan"])


OIS = 30e-6  # s: more than a message takes (L + 816 / B), so that one rank's messages never overlap


@pytest.mark.parametrize("law, each", [
    ("0:30e-6:0", OIS),
    ("0:30e-6:0;799:40e-6:0", 40e-6),     # SMPI takes an entry for the sizes above its X: 800 B > 799
    ("0:30e-6:0;800:40e-6:0", OIS),       # ... and 800 B is not above 800
    ("0:1e-6:3.5e-8", 1e-6 + 800 * 3.5e-8),  # per byte of the message, without SMPI's envelope
    ("100:30e-6:0;5000:0:0", OIS),        # the first entry holds below its X too
])
@pytest.mark.parametrize("lanes", [32, 2])
def test_smpi_mode_sleeps_smpi_ois_before_each_send(tmp_path, law, each, lanes):
    """As SMPI's MPI_Isend with smpi/ois: a rank sleeps the law at the message's size before
    each send, one send after another, so its fifth 800 B message leaves after five sleeps,
    whether the rank posts its sends itself or hands them to lanes of two."""
    res = scenario(tmp_path, mode="smpi", variables=5, bundled="false", smpi_ois=law, transfers_per_actor=lanes).run()
    assert res.metrics["makespan"] == pytest.approx(5 * each + L + (800 + SMPI_ENVELOPE) / B, rel=1e-12)
    assert res.metrics["communication_time_mean"] == pytest.approx(res.metrics["makespan"], rel=1e-12)


def test_smpi_mode_sleeps_smpi_ois_before_a_rendezvous_send_too(tmp_path):
    # SMPI sleeps before every MPI_Isend, detached or not: an 80 kB face is sent after it.
    res = scenario(tmp_path, mode="smpi", local_cells="1,100,100", smpi_ois="0:5e-6:0").run()
    assert res.metrics["inter_rendezvous_messages"] == 2
    assert res.metrics["makespan"] == pytest.approx(5e-6 + L + (80000 + SMPI_ENVELOPE) / B, rel=1e-12)
    # Five of them a rank, handed to lanes of two or not: the same times.
    five = dict(mode="smpi", local_cells="1,100,100", variables=5, bundled="false", smpi_ois="0:5e-6:0")
    lanes = scenario(tmp_path, transfers_per_actor=2, **five).run().metrics
    alone = scenario(tmp_path, **five).run().metrics
    assert lanes["inter_rendezvous_messages"] == 10
    assert lanes["makespan"] == pytest.approx(alone["makespan"], rel=1e-12)
    assert lanes["makespan"] > 5 * 5e-6 + L + (80000 + SMPI_ENVELOPE) / B


@pytest.mark.parametrize("lanes", [32, 2])
def test_smpi_mode_with_smpi_ois_is_not_done_before_its_last_send(tmp_path, lanes):
    """Three ranks in a row, 5 variables of 800 B: the middle one posts 10 eager sends 30 us
    apart, its receives are in by 155 us, and it is done at its last post (300 us), whether it
    posts its sends itself or hands them to lanes; rank 2, whose messages it sends last,
    receives the last one 5 us and 816 B later."""
    res = single_node_scenario(tmp_path, ranks=3, procs="3,1,1", ranks_per_node=3, mode="smpi", variables=5,
                               bundled="false", smpi_ois="0:30e-6:0", transfers_per_actor=lanes).run()
    comm = [r["communication_time"] for r in res.table("ranks")]
    assert comm[1] == pytest.approx(10 * OIS, rel=1e-12)
    assert comm[2] == pytest.approx(10 * OIS + 5e-6 + (800 + SMPI_ENVELOPE) / 10e9, rel=1e-12)


def test_smpi_ois_from_a_profile_is_its_gap_law_as_smpi_reads_it(tmp_path):
    """smpi_ois = intra-node takes the profile's intra-node message gaps (this project's reading:
    an entry from its X on, none below the first) as SMPI would with the string logged for
    smpirun, and none from the fitted protocol switch on: a 100 B face (below the first entry)
    sleeps nothing, 800 B the entry from 800, 4,000 B the one from 1,000 and 8,000 B (past
    the switch) nothing."""
    profile = tmp_path / "p.json"
    profile.write_text('{"message_gaps": {"intra-node": "200:1e-5:0;800:3e-5:0;1000:3e-5:1e-9"},'
                       ' "rates": {"network_protocol_switch_intra_node": {"value": 4096, "unit": "B"}}}')
    for element, each in (("1B", 0), ("8B", 3e-5), ("40B", 3e-5 + 4000e-9), ("80B", 0)):
        face = int(element[:-1]) * 100
        common = dict(mode="smpi", variables=5, bundled="false", element_size=element)
        given = scenario(tmp_path, smpi_ois="intra-node", **common)
        given.calibration = profile
        res = given.run()
        # Without sleeps the five messages share the route; with them each goes alone.
        alone = 5 * each + L + (face + SMPI_ENVELOPE) / B
        assert res.metrics["makespan"] == pytest.approx(alone if each else L + 5 * (face + SMPI_ENVELOPE) / B, rel=1e-12)
        # The same law written out as SMPI reads it.
        smpi = scenario(tmp_path, smpi_ois="0:0:0;199:1e-05:0;799:3e-05:0;999:3e-05:1e-09;4095:0:0", **common)
        assert smpi.run().metrics["makespan"] == res.metrics["makespan"]


def single_node_scenario(tmp_path, loopback_bw="10e9", **params):
    """Ranks of one node that talk through SimGrid's loopback (single_node.xml), 5 us of latency."""
    single = HERE.parents[2] / "platforms" / "single_node.xml"
    p = dict(ranks=2, procs="2,1,1", local_cells="1,10,10", periodic="false", variables=1, iterations=1,
             flops_per_cell=0, ranks_per_node=2, memory_bandwidth="10GBps")
    p.update(params)
    path = tmp_path / ("loop%d.xml" % len(list(tmp_path.glob("loop*.xml"))))
    path.write_text("\n".join([
        '<?xml version="1.0"?>', '<scenario model="halo" seed="1">', '  <platform file="%s"/>' % single,
        *['  <param name="%s" value="%s"/>' % kv for kv in p.items()],
        '  <config name="network/latency-factor" value="1"/>', '  <config name="network/bandwidth-factor" value="1"/>',
        '  <config name="network/loopback-bw" value="%s"/>' % loopback_bw,
        '  <config name="network/loopback-lat" value="5e-6"/>', "</scenario>"]) + "\n")
    return simcore.load(path)


@pytest.mark.parametrize("fast_box, header, alignment, queued", [
    ("4KiB", "24B", "1B", 1), ("8KiB", "24B", "1B", 0), ("4KiB", "500B", "1B", 2), ("4KiB", "24B", "1400B", 3),
    ("4KiB", "24B", "1024B", 1), ("0B", "24B", "1B", 5)])
def test_messages_past_the_fast_box_take_the_queued_gap(tmp_path, fast_box, header, alignment, queued):
    """Two ranks of one node, six variables of 800 B each way, 1 us apart: a message that no
    longer fits in the peer's fast box (each 800 B and its header) has the queued gap (3 us)
    after it instead. With 824 B a message, four fit in 4 KiB and the fifth does not: the
    sixth leaves 2 us later (its own gap is after the last post); in 8 KiB all fit; with
    1,300 B a message the fourth to the sixth overflow it, the fifth and sixth leave 2 and 4
    us later; in slots of 1,400 B the third overflows it (three later), in slots of 1,024 B
    four fill it exactly (the fifth overflows); with no fast box every message after the first
    waits 3 us."""
    common = dict(variables=6, bundled="false", message_gap="1us")
    plain = single_node_scenario(tmp_path, **common).run().metrics["makespan"]
    res = single_node_scenario(tmp_path, queued_message_gap="3us", fast_box_bytes=fast_box, fast_box_header=header,
                               fast_box_alignment=alignment, **common).run().metrics["makespan"]
    assert res - plain == pytest.approx(queued * 2e-6, rel=1e-9, abs=1e-15)
    # Without a gap of its own, a message that the fast box holds is not made a transfer of
    # its own: a fast box that holds them all changes nothing.
    bare = dict(variables=6, bundled="false")
    assert (single_node_scenario(tmp_path, queued_message_gap="3us", fast_box_bytes="1MiB", **bare).run()
            .metrics["makespan"] == single_node_scenario(tmp_path, **bare).run().metrics["makespan"])
    # Between nodes there is no fast box.
    between = dict(variables=6, bundled="false", message_gap="1us")
    assert (scenario(tmp_path, queued_message_gap="3us", fast_box_bytes=fast_box, **between).run().metrics["makespan"]
            == scenario(tmp_path, **between).run().metrics["makespan"])


def six_variables(tmp_path, profile=None, **params):
    """The makespan of two ranks of one node exchanging six variables of 800 B unbundled, with
    `profile` where given."""
    sc = single_node_scenario(tmp_path, variables=6, bundled="false", **params)
    if profile is not None:
        sc.calibration = profile
    return sc.run().metrics["makespan"]


def test_the_queued_gap_comes_from_the_profile_with_the_other_gaps(tmp_path):
    """The profile's intra-node-queued law holds where the other gaps come from the profile
    too (a scenario's message_gap without a queued gap leaves every message its gap); the
    scenario's queued_message_gap holds over it."""
    profile = tmp_path / "p.json"
    profile.write_text('{"message_gaps": {"intra-node": "0:1e-6:0", "intra-node-queued": "0:3e-6:0"}}')
    run = lambda **params: six_variables(tmp_path, profile, **params)  # noqa: E731
    fixed = six_variables(tmp_path, message_gap="1us")
    assert run() == pytest.approx(fixed + 2e-6, rel=1e-12)  # the sixth message, as above
    assert run(message_gap="1us") == pytest.approx(fixed, rel=1e-12)
    assert run(queued_message_gap="5us") == pytest.approx(fixed + 4e-6, rel=1e-12)
    # A rank's messages to itself have no fast box (MPI's self transport).
    alone = dict(ranks=1, procs="1,1,1", ranks_per_node=1, periodic="true", self_message_gap="1us")
    assert run(fast_box_bytes="0B", **alone) == run(fast_box_bytes="1MiB", **alone)
    assert run(fast_box_bytes="0B") > run()


def test_the_fast_box_comes_from_the_profile_unless_given(tmp_path):
    """The profile's rates fast_box_bytes, fast_box_header and fast_box_alignment (fitted
    together from calib_pingpong's fast-box sweep) hold where the scenario gives none of the
    three; where it gives any, the three are the scenario's (at their defaults where not
    given: 4 KiB, 24 B, 1 B). As above: six messages of 800 B, 1 us apart, 3 us past the box.
    SMPI mode reads none of them (a hand-written header of 0, which the fitter never writes
    and the detailed mode refuses, does not stop it)."""
    profile = tmp_path / "p.json"

    def rates(header):
        profile.write_text(json.dumps({
            "message_gaps": {"intra-node": "0:1e-6:0", "intra-node-queued": "0:3e-6:0"},
            "rates": {"fast_box_bytes": {"value": 4096, "unit": "B"}, "fast_box_header": {"value": header, "unit": "B"},
                      "fast_box_alignment": {"value": 1400, "unit": "B"}}}))
    rates(24)
    run = lambda **params: six_variables(tmp_path, profile, **params)  # noqa: E731
    fixed = six_variables(tmp_path, message_gap="1us")
    assert run() == pytest.approx(fixed + 3 * 2e-6, rel=1e-12)  # slots of 1,400 B: the third overflows
    assert run(fast_box_alignment="1400B") == run()  # the same three, given
    assert run(fast_box_alignment="1B") == pytest.approx(fixed + 2e-6, rel=1e-12)  # 824 B: the fifth
    assert run(fast_box_bytes="8400B") == pytest.approx(fixed, rel=1e-12)  # 824 B, 1 B slots: all fit
    assert run(fast_box_header="700B") == pytest.approx(fixed + 3 * 2e-6, rel=1e-12)  # 1,500 B: the third
    rates(0)
    with pytest.raises(simcore.InputError, match="fast_box_header"):
        run()
    assert run(mode="smpi") == six_variables(tmp_path, mode="smpi")


def self_exchange(tmp_path, profile=None, **params):
    """The makespan of one rank, periodic in every dimension, 27-point: its 26 neighbours are
    itself, each sent 5 variables, 1 us apart (message_gap to itself)."""
    p = dict(ranks=1, procs="1,1,1", ranks_per_node=1, periodic="true", stencil="27-point", variables=5,
             self_message_gap="1us")
    p.update(params)
    sc = single_node_scenario(tmp_path, **{k: v for k, v in p.items() if v is not None})
    if profile is not None:
        sc.calibration = profile
    return sc.run().metrics["makespan"]


@pytest.mark.parametrize("bundled, inversions", [("false", 325 * 25), ("true", 325)])
def test_matching_passes_over_the_receives_posted_before(tmp_path, bundled, inversions):
    """A rank posts its receives in its neighbour order (offsets lexicographic) and sends in the
    same order; the receive for the neighbour at offset o expects the message sent towards -o,
    so the 26 neighbours match in reverse: each pair of neighbours is an inversion, for every
    pair of their variables when unbundled (C(26, 2) x 5 x 5 = 8,125), once when bundled (325).
    Each receive passed over costs self_match_scan_cost (1 ns), all on the one rank's time."""
    base = self_exchange(tmp_path, bundled=bundled)
    assert self_exchange(tmp_path, bundled=bundled, self_match_scan_cost="1ns") == pytest.approx(
        base + inversions * 1e-9, rel=1e-9)
    # The cost of other ranks' messages does not apply to its own; SMPI mode charges none.
    assert self_exchange(tmp_path, bundled=bundled, match_scan_cost="1ns") == base
    assert (self_exchange(tmp_path, bundled=bundled, mode="smpi", self_message_gap=None, self_match_scan_cost="1ns")
            == self_exchange(tmp_path, bundled=bundled, mode="smpi", self_message_gap=None))


def test_matching_between_two_ranks_and_from_the_profile(tmp_path):
    """Two ranks, periodic in x only: 18 of each rank's 26 neighbours are the other rank (its
    receives from it match in reverse: C(18, 2) = 153 inversions a variable pair), 8 itself (28);
    bundled, each rank pays 153 x match_scan_cost + 28 x self_match_scan_cost, spread over its
    26 posts: its last message leaves 25/26 of it later (the rest comes after its last post).
    The profile's rates hold where the scenario gives none; a single neighbour's messages (open
    boundaries, one face) match in order and pass over nothing."""
    common = dict(periodic="true", stencil="27-point", message_gap="1us", self_message_gap="1us",
                  local_cells="4,4,4")
    run = lambda **kw: single_node_scenario(tmp_path, **common, **kw).run().metrics["makespan"]  # noqa: E731
    base = run()
    assert run(match_scan_cost="2ns") == pytest.approx(base + 25 / 26 * 153 * 2e-9, rel=1e-9)
    both = base + 25 / 26 * (153 * 2e-9 + 28e-9)
    assert run(match_scan_cost="2ns", self_match_scan_cost="1ns") == pytest.approx(both, rel=1e-9)
    profile = tmp_path / "m.json"
    profile.write_text(json.dumps({"rates": {"match_scan_seconds_intra_node": {"value": 2e-9, "unit": "s"},
                                             "match_scan_seconds_self": {"value": 1e-9, "unit": "s"}}}))
    sc = single_node_scenario(tmp_path, **common)
    sc.calibration = profile
    assert sc.run().metrics["makespan"] == pytest.approx(both, rel=1e-9)
    one_face = dict(variables=6, bundled="false", message_gap="1us")
    assert (single_node_scenario(tmp_path, match_scan_cost="1us", **one_face).run().metrics["makespan"]
            == single_node_scenario(tmp_path, **one_face).run().metrics["makespan"])
    # Between hosts the intra-node rate holds where the profile has no inter-node one.
    between = dict(periodic="true", stencil="27-point", message_gap="1us", local_cells="4,4,4")
    base2 = scenario(tmp_path, **between).run().metrics["makespan"]
    sc = scenario(tmp_path, **between)
    sc.calibration = profile
    assert sc.run().metrics["makespan"] > base2


@pytest.mark.parametrize("order, inversions", [("neighbour", 153), ("network_first", 137)])
def test_matching_follows_the_order_the_sends_are_posted_in(tmp_path, order, inversions):
    """With faces past the eager limit (64 B: single copies), a rank that sends over the network
    first posts its eager edges and corners after its faces: the other rank's receives, posted
    in neighbour order, are then passed over 137 times instead of 153 (a bundled variable, 18
    neighbours), each rank's 25/26 of it before its last post."""
    common = dict(periodic="true", stencil="27-point", message_gap="1us", self_message_gap="1us",
                  local_cells="4,4,4", intra_eager_limit="64B", send_order=order)
    run = lambda **kw: single_node_scenario(tmp_path, **common, **kw).run().metrics["makespan"]  # noqa: E731
    assert run(match_scan_cost="1us") - run() == pytest.approx(25 / 26 * inversions * 1e-6, rel=1e-9)


def test_an_eager_message_within_a_node_takes_the_loopback_latency(tmp_path):
    """On a node whose ranks talk through SimGrid's loopback (single_node.xml), an eager message
    arrives the loopback's latency after it is posted: copy in, latency, copy out. A cluster
    without a loopback (two_nodes.xml) describes no path within the node: no latency there
    (its 20 us links to the backbone would otherwise be charged)."""
    res = single_node_scenario(tmp_path).run()
    assert res.metrics["makespan"] == pytest.approx(2 * 800 / M + 5e-6 + 2 * 800 / M, rel=1e-12)
    cluster = scenario(tmp_path, ranks_per_node=2).run()
    assert cluster.metrics["makespan"] == pytest.approx(4 * 800 / M, rel=1e-12)


def test_each_eager_message_arrives_the_latency_after_its_own_post(tmp_path):
    """Two ranks of one node, periodic, split along y (10 x 1 x 10 cells): each rank sends, in
    neighbour order, x- (to itself, 80 B), y- (to the other rank, 800 B), z-, z+ (itself), y+
    (the other), x+ (itself), one gap (1 us) apart: done posting after 6 gaps (a self gap
    after x+). A message from the other rank comes in once it has crossed the loopback, 5 us
    after its own post: y- (posted after 1 gap) after that, then y+ (after 4 gaps). So the
    exchange ends when y+ has crossed and been copied out, not 5 us after the last post (x+,
    to itself): copy in, latency, copy out, both ranks' on the shared bus."""
    gaps = dict(procs="1,2,1", local_cells="10,1,10", periodic="true", message_gap="1us", self_message_gap="1us")
    res = single_node_scenario(tmp_path, **gaps).run()
    assert res.metrics["intra_eager_messages"] == 12
    assert res.metrics["makespan"] == pytest.approx(4 * GAP + 2 * 800 / M + 5e-6 + 2 * 800 / M, rel=1e-12)


def test_an_eager_message_alone_takes_at_least_what_the_route_says(tmp_path):
    """An eager message within a node takes, alone, what its route takes (with a profile, the
    ping-ping time fitted at its size): where latency + S / bandwidth (100 MBps here: 8 us for
    800 B) exceeds the route's latency and the model's two copies, the rest is in flight
    between the copies. With a fast loopback, the latency alone."""
    slow = single_node_scenario(tmp_path, loopback_bw="1e8").run()
    assert slow.metrics["makespan"] == pytest.approx(5e-6 + 800 / 1e8 + 2 * 800 / M, rel=1e-12)
    fast = single_node_scenario(tmp_path).run()
    assert fast.metrics["makespan"] == pytest.approx(2 * 800 / M + 5e-6 + 2 * 800 / M, rel=1e-12)


def test_unbundled_variables_without_gaps_take_their_route_as_one_flow(tmp_path):
    """Five variables of 800 B without gaps travel as one flow of 4,000 B: no faster over a
    100 MBps loopback than one bundled message of the same bytes, at both granularities."""
    for granularity in ("rank", "node"):
        bundled = single_node_scenario(tmp_path, loopback_bw="1e8", variables=5, granularity=granularity).run()
        unbundled = single_node_scenario(tmp_path, loopback_bw="1e8", variables=5, bundled="false",
                                         granularity=granularity).run()
        expected = 5e-6 + 4000 / 1e8 + 2 * 4000 / M
        assert bundled.metrics["makespan"] == pytest.approx(expected, rel=1e-12)
        assert unbundled.metrics["makespan"] == pytest.approx(expected, rel=1e-12)
    node = single_node_scenario(tmp_path, loopback_bw="1e8", granularity="node").run()
    assert node.metrics["makespan"] == pytest.approx(5e-6 + 800 / 1e8 + 2 * 800 / M, rel=1e-12)


def test_a_receiver_takes_each_iteration_s_posts_in_its_own_iteration(tmp_path):
    """Four ranks in a row, ranks 0-2 on one node, rank 3 on the other behind a 20 us link:
    rank 0 cannot finish iteration k + 2 before rank 2 finishes iteration k (rank 0 needs rank
    1's post of k + 2, which comes after rank 1 has rank 2's post of k + 1, which comes after
    rank 2's iteration k). A rank that posts its next iteration early must not stand in for a
    post of the current one."""
    row = dict(ranks=4, procs="4,1,1", ranks_per_node=3, flops_per_cell=10)
    rank2 = [list(scenario(tmp_path, iterations=k, **row).run().series["ranks"]["end"])[2] for k in (1, 2)]
    for k in (1, 2):
        ends = list(scenario(tmp_path, iterations=k + 2, **row).run().series["ranks"]["end"])
        assert ends[0] >= rank2[k - 1] > L


def test_receives_in_flight_while_later_ones_are_posted(tmp_path):
    """Four ranks of one node (2 x 2, 1 x 10 x 20 cells: x faces 1,600 B, y faces 160 B),
    1 us gaps, a 100 MBps loopback. Ranks 0 and 1 post their y face, then their x face; ranks 2
    and 3 their x face, then their y face. Each x face from ranks 2 and 3 is posted once the
    four first copies are done (3,520 B on the bus), and is in flight 5 us + 1,600 B / 100 MBps
    less its two copies: ranks 0 and 1 end then, with its copy out. Ranks 2 and 3 start
    receiving before their x face is posted (they wait for their y face, in at 7.6 us, and
    take the x face's post meanwhile): they end one gap later than ranks 0 and 1."""
    res = single_node_scenario(tmp_path, loopback_bw="1e8", ranks=4, procs="2,2,1", local_cells="1,10,20",
                               ranks_per_node=4, message_gap="1us").run()
    first = 3520 / M + 5e-6 + 1600 / 1e8
    assert list(res.series["ranks"]["end"]) == pytest.approx([first, first, first + GAP, first + GAP], rel=1e-12)


def test_a_node_receives_once_its_latest_rank_is_done_posting(tmp_path):
    """128 ranks, 16 a node, 27-point, 8 unbundled variables of 32^3 cells: faces of 8 kB go
    to other nodes eagerly, 3 us apart, and to ranks of the node as single copies. A rank
    takes its single copies once it is done posting (MPI_Waitall), long after the last of
    them was posted. A node started them once they were all posted, before its ranks were
    done: 0.871 x the rank result until 2026-12-06; now once its latest rank is done, 0.955 x."""
    import json
    import os
    import subprocess
    scenario_file = HERE.parents[2] / "scenarios" / "halo" / "minighost_weak.xml"
    sets = ["ranks=128", "ranks_per_node=16", "stencil=27-point", "iterations=1", "local_cells=32,32,32",
            "bundled=false", "variables=8", "message_gap=3us", "self_message_gap=0.3us"]
    makespan = {}
    for granularity in ("rank", "node"):
        out = tmp_path / granularity
        args = [os.environ["SIMCORE_BIN"], "run", str(scenario_file), "--quiet", "--out", str(out)]
        for s in sets + ["granularity=" + granularity]:
            args += ["--set", s]
        res = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        makespan[granularity] = json.loads((out / "summary.json").read_text())["metrics"]["makespan"]
    assert makespan["node"] / makespan["rank"] == pytest.approx(1, abs=0.06)


def test_no_wait_shorter_than_simgrid_s_precision(tmp_path):
    """Rounding leaves waits of 1e-22 s (a copier due at a time a copy reached a hair early);
    SimGrid skips sleeps below its precision but says so once per actor, which flooded the
    output of 32 ranks a node. The model skips them itself: nothing on stderr."""
    import os
    import subprocess
    scenario_file = HERE.parents[2] / "scenarios" / "halo" / "minighost_weak.xml"
    res = subprocess.run([os.environ["SIMCORE_BIN"], "run", str(scenario_file), "--set", "ranks=32", "--set",
                          "ranks_per_node=4", "--set", "local_cells=8,8,8", "--set", "iterations=2", "--quiet",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "numerical accuracy" not in res.stderr
