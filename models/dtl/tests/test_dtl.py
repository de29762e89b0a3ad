"""dtl model: closed forms on one link, conservation, orderings and bad input."""

import pathlib

import numpy as np
import pytest

import simcore

HERE = pathlib.Path(__file__).resolve().parent
TWO_HOSTS = HERE / "data" / "two_hosts.xml"
SOURCE = HERE.parents[2]


def scenario(tmp_path, platform=TWO_HOSTS, factors_one=True, **params):
    """A dtl scenario file on `platform`; params override the defaults below."""
    p = dict(shape="1000,250", element_size="8B", steps=1, sim_ranks=1, ana_ranks=1, sim_hosts="a", ana_hosts="b",
             sim_ranks_per_host=64, ana_ranks_per_host=64, sim_flops_per_element=0, ana_flops_per_element=0)
    p.update(params)
    lines = ['<?xml version="1.0"?>', '<scenario model="dtl" seed="1">', '  <platform file="%s"/>' % platform]
    lines += ['  <param name="%s" value="%s"/>' % (k, v) for k, v in p.items()]
    if factors_one:
        lines += ['  <config name="network/latency-factor" value="1"/>',
                  '  <config name="network/bandwidth-factor" value="1"/>']
    lines.append("</scenario>")
    path = tmp_path / ("s%d.xml" % len(list(tmp_path.glob("s*.xml"))))
    path.write_text("\n".join(lines) + "\n")
    return simcore.load(path)


def test_one_publisher_one_subscriber_one_link(tmp_path):
    # 1000 x 250 doubles = 2 MB over 1 GBps / 10 us.
    res = scenario(tmp_path).run()
    assert res.metrics["makespan"] == pytest.approx(10e-6 + 2e6 / 1e9, rel=1e-12)
    assert res.metrics["bytes_network"] == 2e6
    ops = res.series["operations"]
    assert list(ops["side"]) == [0, 1]
    assert ops["end"][0] == pytest.approx(10e-6 + 2e6 / 1e9, rel=1e-12)


def test_one_link_with_simgrid_default_factors(tmp_path):
    res = scenario(tmp_path, factors_one=False).run()
    assert res.metrics["makespan"] == pytest.approx(10e-6 * 13.01 + 2e6 / (1e9 * 0.97), rel=1e-12)


def test_steps_serialise_on_the_link(tmp_path):
    # No computation: each transaction waits for the previous one: T x (L + S / B).
    res = scenario(tmp_path, steps=5).run()
    assert res.metrics["makespan"] == pytest.approx(5 * (10e-6 + 2e6 / 1e9), rel=1e-12)
    assert res.metrics["transactions"] == 5


def test_co_located_pair_pays_a_memory_copy(tmp_path):
    res = scenario(tmp_path, ana_hosts="a", memcpy_bandwidth="4GBps").run()
    assert res.metrics["makespan"] == pytest.approx(2e6 / 4e9, rel=1e-12)
    assert res.metrics["bytes_memcpy"] == 2e6 and res.metrics["bytes_network"] == 0


def test_memcpy_rate_from_the_calibration_profile(tmp_path):
    profile = tmp_path / "p.json"
    profile.write_text('{"rates": {"memcpy_bandwidth": "5GBps"}}')
    sc = scenario(tmp_path, ana_hosts="a")
    sc.calibration = profile
    assert sc.run().metrics["makespan"] == pytest.approx(2e6 / 5e9, rel=1e-12)


def test_memcpy_rate_of_the_publishers_host_type(tmp_path):
    """A profile with host types: the copy on host a runs at a's own rate, on b at the
    profile-wide one (no rule of b defines it)."""
    profile = tmp_path / "p.json"
    profile.write_text('{"hosts": [{"match": "a", "rates": {"memcpy_bandwidth": "8GBps"}}], '
                       '"rates": {"memcpy_bandwidth": "5GBps"}}')
    on_a = scenario(tmp_path, ana_hosts="a")
    on_a.calibration = profile
    on_b = scenario(tmp_path, sim_hosts="b", ana_hosts="b")
    on_b.calibration = profile
    assert on_a.run().metrics["makespan"] == pytest.approx(2e6 / 8e9, rel=1e-12)
    assert on_b.run().metrics["makespan"] == pytest.approx(2e6 / 5e9, rel=1e-12)


def test_ideal_transport_costs_nothing_and_is_never_slower(tmp_path):
    shared = dict(platform=SOURCE / "platforms" / "two_clusters.xml", shape="256,256,64", steps=4, sim_ranks=64,
                  sim_hosts="sim-.*", ana_ranks=16, ana_hosts="ana-.*", sim_flops_per_element=200,
                  ana_flops_per_element=100, sim_ranks_per_host=0, ana_ranks_per_host=0)
    mailbox, ideal = simcore.run_many([scenario(tmp_path, transport="mailbox", **shared),
                                       scenario(tmp_path, transport="ideal", **shared)], jobs=2)
    assert ideal.metrics["makespan"] <= mailbox.metrics["makespan"]
    assert ideal.metrics["bytes_network"] == 0
    assert ideal.metrics["bytes_received"] == mailbox.metrics["bytes_received"] == 4 * 256 * 256 * 64 * 8
    # Ideal: nothing but computing. 64 equal blocks, one rank per core (16 cores of 40 Gflop/s
    # per host): the simulation ends after 4 steps of its block's work.
    per_rank = 256 * 256 * 64 / 64
    assert ideal.metrics["simulation_end"] == pytest.approx(4 * per_rank * 200 / 40e9, rel=1e-12)


def test_bytes_are_conserved_for_a_selection_and_every_kth_transaction(tmp_path):
    res = scenario(tmp_path, shape="100,80,60", sim_ranks=12, ana_ranks=5, ana_hosts="b", steps=7,
                   subscribe_every=3, selection_start="10,0,5", selection_count="50,80,20").run()
    read = [0, 3, 6]
    assert res.metrics["bytes_received"] == len(read) * 50 * 80 * 20 * 8
    ops = res.series["operations"]
    sub = ops["side"] == 1
    assert sorted(set(ops["transaction"][sub])) == read
    for k in read:
        assert ops["bytes"][sub & (ops["transaction"] == k)].sum() == 50 * 80 * 20 * 8
    tx = res.series["transactions"]
    assert list(tx["transaction"]) == [0, 0, 1, 2, 3, 3, 4, 5, 6, 6]


def test_same_seed_same_trace(tmp_path):
    sc = scenario(tmp_path, shape="64,64,64", sim_ranks=8, ana_ranks=3, steps=3, sim_flops_per_element=10)
    a, b = simcore.run_many([sc, sc], jobs=2, out=tmp_path / "runs")
    assert a.metrics == b.metrics
    assert (tmp_path / "runs" / "run-000" / "trace.h5").read_bytes() == \
        (tmp_path / "runs" / "run-001" / "trace.h5").read_bytes()


@pytest.mark.parametrize("params, where, message", [
    (dict(selection_start="0,0", selection_count="2000,1"), "set(selection_count='2000,1')",
     "the selection [0:2000, 0:1) lies outside the array [0:1000, 0:250); expected start + count <= shape"),
    (dict(selection_start="0", selection_count="1"), "set(selection_start='0')",
     "parameter 'selection_start' has 1 values; expected one per dimension of 'shape' (2)"),
    # Found by the scenario fuzzer: located at the other list's default, which has no line.
    (dict(selection_start="1,1"), "set(selection_start='1,1')",
     "parameter 'selection_start' is given without parameter 'selection_count'; expected both"),
    (dict(selection_count="1,1"), "set(selection_count='1,1')",
     "parameter 'selection_count' is given without parameter 'selection_start'; expected both"),
    (dict(shape="2,2,2,2"), "set(shape='2,2,2,2')",
     "parameter 'shape' has 4 dimensions; expected 1 to 3, e.g. 512,512,256"),
    (dict(sim_hosts="nohost.*"), "set(sim_hosts='nohost.*')",
     "parameter 'sim_hosts' = 'nohost.*' matches no host of the platform"),
    (dict(sim_ranks=9, sim_ranks_per_host=0), "set(sim_ranks=9)",
     "parameter 'sim_ranks' = 9 needs 3 hosts at 4 ranks per host, but only 1 hosts match 'a'"),
    (dict(element_size="0B"), "set(element_size='0B')", "is out of range; expected a value between 1 B and"),
    (dict(transport="carrier-pigeon"), "set(transport='carrier-pigeon')", "expected one of: mailbox, ideal"),
    (dict(shape="100,-3"), "set(shape='100,-3')", "is out of range"),
    # Each dimension in range, the product not: its bytes wrapped to negative, exit 0.
    (dict(shape="1000000000000,1000000000000,100000000000"), "set(shape='1000000000000,1000000000000,100000000000')",
     "parameter 'shape' of 8-byte elements holds 8e+17 EB; expected an array of at most 2^53 bytes (9 PB)"),
    (dict(shape="1048576,1048576,8192"), "set(shape='1048576,1048576,8192')",
     "holds 72.06 PB; expected an array of at most 2^53 bytes (9 PB)"),
])
def test_bad_input_names_the_parameter(tmp_path, params, where, message):
    sc = scenario(tmp_path)
    with pytest.raises(simcore.InputError) as e:
        sc.set(**params)
        sc.run()
    assert str(e.value).startswith(where + ": ")
    assert message in str(e.value)


# --- file engine ------------------------------------------------------------------------------

M, L, B, W, R = 1e-3, 10e-6, 1e9, 1e9, 2e9  # metadata, link latency/bandwidth, disk write/read
S = 2e6                                    # 1000 x 250 doubles


def test_file_engine_local_disk_write_then_read(tmp_path):
    # Publisher on a: open, write S at W, close. Subscriber on b, once the file is closed:
    # open, read S at R from a's disk, receive it over the link, close.
    res = scenario(tmp_path, engine="file", storage="local").run()
    write = 2 * M + S / W
    assert res.metrics["simulation_end"] == pytest.approx(write, rel=1e-12)
    assert res.metrics["makespan"] == pytest.approx(write + 2 * M + S / R + L + S / B, rel=1e-12)
    assert res.metrics["bytes_storage_written"] == S and res.metrics["bytes_storage_read"] == S
    assert res.metrics["bytes_network"] == S


def test_file_engine_parallel_file_system_behind_the_network(tmp_path):
    # Storage host b; publisher and subscriber both on a: the data crosses the link twice.
    res = scenario(tmp_path, engine="file", storage="pfs", pfs_hosts="b", ana_hosts="a").run()
    write = M + (L + S / B) + S / W + M
    assert res.metrics["makespan"] == pytest.approx(write + M + S / R + (L + S / B) + M, rel=1e-12)
    assert res.metrics["bytes_network"] == 2 * S


def test_a_parallel_file_system_without_storage_hosts_is_refused(tmp_path):
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, engine="file", storage="pfs", pfs_hosts="").run()
    assert ("parameter 'pfs_hosts' is empty; expected a regular expression matching the storage hosts, "
            "which storage 'pfs' needs") in str(e.value), str(e.value)


def test_post_hoc_analysis_reads_after_the_simulation_ended(tmp_path):
    res = scenario(tmp_path, engine="file", steps=3, sim_flops_per_element=4, analysis_start="after_simulation").run()
    ops = res.series["operations"]
    sub = ops["side"] == 1
    # Every transaction was written before the first read started, and all of it arrived.
    assert ops["begin"][sub].min() == pytest.approx(res.metrics["simulation_end"], rel=1e-12)
    assert res.metrics["bytes_received"] == 3 * S
    compute = 1000 * 250 * 4 / 1e9
    assert res.metrics["simulation_end"] == pytest.approx(3 * (compute + 2 * M + S / W), rel=1e-12)


def test_many_steps_follow_the_closed_form_across_actor_handovers(tmp_path):
    """A rank's actor hands its steps (or transactions) to a successor every 32 (SimGrid 3.32
    keeps each file's I/O in the actor that made it, which made long runs quadratic): 70 steps,
    post hoc, cross two handovers on each side; every write and every read is there, and the
    simulation still ends at 70 x (compute + write)."""
    res = scenario(tmp_path, engine="file", steps=70, sim_flops_per_element=4, analysis_start="after_simulation").run()
    ops = res.series["operations"]
    for side in (0, 1):
        assert sorted(ops["transaction"][ops["side"] == side]) == list(range(70))
    assert res.metrics["bytes_received"] == 70 * S
    compute = 1000 * 250 * 4 / 1e9
    assert res.metrics["simulation_end"] == pytest.approx(70 * (compute + 2 * M + S / W), rel=1e-11)
    # The reads, one after the other once the simulation ended, each open, read, receive, close.
    assert res.metrics["makespan"] == pytest.approx(res.metrics["simulation_end"] + 70 * (2 * M + S / R + L + S / B),
                                                    rel=1e-11)


def test_post_hoc_needs_the_file_engine(tmp_path):
    with pytest.raises(simcore.InputError, match="needs engine 'file'"):
        scenario(tmp_path, analysis_start="after_simulation").run()


# --- reduction --------------------------------------------------------------------------------

def test_decimation_and_compression_sizes_and_costs(tmp_path):
    # Keep every 2nd x 5th element: 500 x 50 = 25,000 doubles = 200 kB; compressed 4x: 50 kB.
    res = scenario(tmp_path, decimation="2,5", compression_ratio=4, compress_flops_per_byte=10,
                   decompress_flops_per_byte=5).run()
    assert res.metrics["bytes_network"] == 50000
    compress = 10 * 200000 / 1e9
    decompress = 5 * 200000 / 1e9
    assert res.metrics["makespan"] == pytest.approx(compress + L + 50000 / B + decompress, rel=1e-12)


def test_reduction_trades_compute_for_bytes(tmp_path):
    plain = scenario(tmp_path).run()
    cheap = scenario(tmp_path, compression_ratio=10, compress_flops_per_byte=0.1).run()
    costly = scenario(tmp_path, compression_ratio=10, compress_flops_per_byte=100).run()
    assert cheap.metrics["makespan"] < plain.metrics["makespan"] < costly.metrics["makespan"]


def test_a_range_of_transactions(tmp_path):
    res = scenario(tmp_path, steps=10, subscribe_first=2, subscribe_last=7, subscribe_every=2).run()
    ops = res.series["operations"]
    assert sorted(set(ops["transaction"][ops["side"] == 1])) == [2, 4, 6]
    assert res.metrics["bytes_received"] == 3 * S
    with pytest.raises(simcore.InputError, match="subscribe_first' = 10 but the simulation publishes only 10"):
        scenario(tmp_path, steps=10, subscribe_first=10).run()


# --- compression profile ----------------------------------------------------------------------

PROFILE = SOURCE / "scenarios" / "dtl" / "data" / "sz_like_profile.json"


def test_compression_profile_is_interpolated_in_log_error_bound(tmp_path):
    # 1e-5 lies halfway (in log10) between the points 1e-6 (3x, 60 / 25 flop/B) and 1e-4 (8x, 45 / 18).
    res = scenario(tmp_path, compression_profile=PROFILE, error_bound=1e-5).run()
    ratio, comp, decomp = 5.5, 52.5, 21.5
    wire = -(-2e6 // ratio)  # rounded up
    assert res.metrics["bytes_network"] == wire
    assert res.metrics["makespan"] == pytest.approx(comp * S / 1e9 + L + wire / B + decomp * S / 1e9, rel=1e-9)
    exact = scenario(tmp_path, compression_profile=PROFILE, error_bound=1e-2).run()
    assert exact.metrics["bytes_network"] == -(-2e6 // 30)


def test_a_malformed_compression_profile_is_refused_at_its_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"points": [\n  {"error_bound": 1e-4,\n   oops}\n]}\n')
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, compression_profile=bad, error_bound=1e-4).run()
    assert str(e.value).startswith(f"{bad}:3: malformed JSON ("), str(e.value)
    assert str(e.value).endswith('; expected {"points": [...]}')


POINT = '{"error_bound": %s, "ratio": %s, "compress_flops_per_byte": 40, "decompress_flops_per_byte": 15}'


@pytest.mark.parametrize("points, message", [
    # A point that is not one: at its line.
    ([POINT % ("1e-4", "8"), POINT % ("1e-3", "0.5")],
     ":3 (points[1]): expected error_bound > 0, ratio >= 1 and costs >= 0"),
    # Two points of one bound: at the line of the later one, naming the other.
    ([POINT % ("1e-3", "12"), POINT % ("1e-4", "8"), POINT % ("1e-3", "9")],
     ":4 (points[2]): a second point with error_bound 0.001 (the other is points[0]); expected distinct "
     "error bounds"),
])
def test_a_wrong_compression_point_is_refused_at_its_line(tmp_path, points, message):
    bad = tmp_path / "points.json"
    bad.write_text('{"points": [\n' + ",\n".join(points) + "\n]}\n")
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, compression_profile=bad, error_bound=1e-4).run()
    assert str(e.value) == f"{bad}{message}"


@pytest.mark.parametrize("params, message", [
    (dict(compression_profile=PROFILE, error_bound=1e-1), "error bound 0.100000 lies outside the profile"),
    (dict(compression_profile=PROFILE), "needs error_bound"),
    (dict(compression_profile=PROFILE, error_bound=1e-4, compression_ratio=2), "is given together with a "
                                                                                "compression_profile"),
    (dict(error_bound=1e-4), "needs a compression_profile"),
    (dict(engine="file", transport="ideal"), "'ideal' belongs to the staging engine"),
])
def test_reduction_and_engine_mismatches_are_refused(tmp_path, params, message):
    with pytest.raises(simcore.InputError) as e:
        scenario(tmp_path, **params).run()
    assert message in str(e.value)
    assert str(e.value).startswith(str(tmp_path))  # located in the scenario file
