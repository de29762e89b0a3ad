"""Matching: calib_pingpong's matching windows (each message its own tag, the sends in the
order of the receives or in the reverse order, where MPI passes over w (w - 1) / 2 posted
receives in all) give the time of one receive passed over, by placement and to itself
(rates match_scan_seconds_intra_node, _inter_node, _self)."""

import h5py
import numpy as np
import pytest

from calibration_test_support import fitted, refused
from test_fit_message_gaps import add_windows, network


def add_matching(path, scan=2e-9, self_scan=1.5e-9, gap=0.2e-6, self_gap=0.07e-6, lengths=(64, 128, 256), reps=5,
                 noise=0.0, seed=5, placement="intra-node", at_length=None):
    """`at_length`: {w: seconds a receive} in place of `scan` at those lengths (both patterns)."""
    rng = np.random.default_rng(seed)
    at_length = at_length or {}
    rows = []
    for self, g, c in ((0, gap, scan), (1, self_gap, self_scan)):
        for w in lengths:
            for rev in (0, 1):
                rows.append((self, w, rev, 1e-6 + g * w + rev * at_length.get(w, c) * w * (w - 1) / 2))
    rows = np.asarray(rows, dtype=float)
    t = np.repeat(rows[:, 3:4], reps, axis=1) * (1 + noise * rng.standard_normal((len(rows), reps)))
    with h5py.File(path, "a") as f:
        g = f.create_group("matching_window")
        g.attrs["placement"] = placement
        g.create_dataset("size", data=np.full(len(rows), 8.0)).attrs["unit"] = "B"
        g.create_dataset("messages", data=rows[:, 1])
        g.create_dataset("self", data=rows[:, 0])
        g.create_dataset("reversed", data=rows[:, 2])
        g.create_dataset("time", data=t).attrs["unit"] = "s"


def scans(p):
    return {k: v["value"] for k, v in p["rates"].items() if k.startswith("match_scan_seconds")}


def test_the_time_of_a_receive_passed_over_is_recovered(tmp_path):
    trace = network(tmp_path)
    add_windows(trace)
    add_matching(trace, noise=0.01)
    p = fitted(tmp_path, trace)
    assert scans(p) == pytest.approx({"match_scan_seconds_intra_node": 2e-9, "match_scan_seconds_self": 1.5e-9},
                                     rel=0.03)
    q = p["quality"]["network"]["matching"]
    assert q["lengths"] == [64, 128, 256] and len(q["seconds_per_receive"]) == 3
    assert p["quality"]["matching_self"]["median"] == pytest.approx(1.5e-9, rel=0.03)


def test_between_nodes_the_rate_is_the_inter_node_one_and_traces_pool(tmp_path):
    """An inter-node trace gives match_scan_seconds_inter_node (its self windows the self rate);
    two intra-node traces pool: the median of their per-length values."""
    between = network(tmp_path, "b.h5", placement="inter-node")
    add_matching(between, scan=3e-9, placement="inter-node")
    assert scans(fitted(tmp_path, between)) == pytest.approx(
        {"match_scan_seconds_inter_node": 3e-9, "match_scan_seconds_self": 1.5e-9}, rel=1e-9)
    a = network(tmp_path, "a.h5")
    add_matching(a, scan=1e-9)
    c = network(tmp_path, "c.h5")
    add_matching(c, scan=2e-9, lengths=(64, 128))
    e = network(tmp_path, "e.h5")
    add_matching(e, scan=1.2e-9)
    # each trace's fit 1, 2 and 1.2 ns: the median
    assert scans(fitted(tmp_path, a, c, e))["match_scan_seconds_intra_node"] == pytest.approx(1.2e-9, rel=1e-9)


def test_short_windows_weigh_little(tmp_path):
    """Windows of 2 and 3 messages pass over 1 and 3 receives: their differences are mostly noise
    (here 30 ns a receive); the least-squares line through 0 over the receives passed over is
    the 256-message window's 2 ns within 0.1 % (the median of the three lengths would say 30)."""
    trace = network(tmp_path)
    add_matching(trace, lengths=(2, 3, 256), at_length={2: 30e-9, 3: 30e-9})
    q = fitted(tmp_path, trace)
    assert scans(q)["match_scan_seconds_intra_node"] == pytest.approx(2e-9, rel=1e-3)
    assert q["quality"]["network"]["matching"]["seconds_per_receive"] == pytest.approx([30e-9, 30e-9, 2e-9])


def test_no_rate_where_reversed_windows_are_no_slower_or_a_trace_lacks_them(tmp_path):
    """An MPI that matches by hash passes over nothing: no rate, said (the halo model then
    charges none). A trace of the placement without matching windows: none either."""
    hashed = network(tmp_path, "h.h5")
    add_matching(hashed, scan=-1e-10, self_scan=0.0)
    p = fitted(tmp_path, hashed)
    assert scans(p) == {}
    assert "no matching cost" in p["quality"]["network"]["matching"]["note"]
    assert "no matching cost" in p["quality"]["matching_self"]["note"]
    with_it = network(tmp_path, "w.h5")
    add_matching(with_it)
    without = network(tmp_path, "wo.h5")
    assert scans(fitted(tmp_path, with_it, without)) == {}


def test_malformed_matching_windows_are_refused(tmp_path):
    trace = network(tmp_path)
    add_matching(trace)
    with h5py.File(trace, "a") as f:
        f["matching_window/reversed"][0] = 2
    assert "datasets 'self' and 'reversed' hold 2; expected 0 or 1" in refused(tmp_path, trace)
