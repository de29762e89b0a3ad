"""Message gaps: calib_pingpong's exchange windows (w messages each way at once) less one
ping-ping message, over w - 1, fitted piecewise below the protocol switch into the profile's
message_gaps (SimGrid's smpi/os syntax); bad windows refused."""

import json

import h5py
import numpy as np
import pytest

from calibration_test_support import POWERS, calibrate, fitted, pingpong_law, refused, write_synthetic_network

SWITCH = 4096.0
SIZES = np.unique(np.concatenate([POWERS[POWERS <= 2 ** 20], 3 * POWERS[POWERS <= 2 ** 10]]))


def pingping_law(s):
    """Eager up to 4 KiB, then a dearer single copy: a protocol switch at 4096 B."""
    s = np.asarray(s, dtype=float)
    return np.where(s < SWITCH, 0.5e-6 + s / 5e9, 3e-6 + s / 20e9)


def gap_law(s):
    """Two eager segments; past the switch a gap the fit must not read."""
    s = np.asarray(s, dtype=float)
    return np.where(s < 256, 0.2e-6, np.where(s < SWITCH, 0.4e-6 + s * 1e-10, 50e-6))


def window_of(s):
    return np.minimum(16, np.maximum(1, 2 ** 20 // np.maximum(s, 1)))  # large sizes: windows of one


def add_windows(path, gap=gap_law, noise=0.0, messages=None, placement="intra-node", reps=5):
    sizes = SIZES
    w = window_of(sizes) if messages is None else messages
    rng = np.random.default_rng(7)
    with h5py.File(path, "a") as f:
        g = f.create_group("exchange_window")
        g.attrs["placement"] = placement
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        t = pingping_law(sizes) + (w - 1) * gap(sizes)
        times = np.repeat(t[:, None], reps, axis=1) * (1 + noise * rng.standard_normal((len(sizes), reps)))
        g.create_dataset("time", data=times).attrs["unit"] = "s"
        g.create_dataset("messages", data=np.asarray(w, dtype=float))


def network(tmp_path, name="net.h5", placement="intra-node"):
    trace = tmp_path / name
    write_synthetic_network(trace, SIZES, pingpong_law, pingping_law, placement=placement)
    return trace


def law(text):
    """Evaluates a gap law as the kernel does: the entry of the largest threshold <= size."""
    steps = sorted(tuple(float(x) for x in e.split(":")) for e in text.split(";"))

    def at(s):
        out = 0.0
        for bound, base, per_byte in steps:
            if s < bound:
                break
            out = base + per_byte * s
        return out
    return at, steps


def test_gaps_recovered_below_the_protocol_switch(tmp_path):
    trace = network(tmp_path)
    add_windows(trace)
    p = fitted(tmp_path, trace)
    assert set(p["message_gaps"]) == {"intra-node"}
    at, steps = law(p["message_gaps"]["intra-node"])
    assert steps[0][0] == 0 and len(steps) == 2 and steps[1][0] == 256
    for s in SIZES[SIZES < SWITCH]:
        assert at(s) == pytest.approx(float(gap_law(s)), rel=1e-4), s
    # Past the switch the fit read nothing: its last eager segment goes on.
    assert at(65536) == pytest.approx(0.4e-6 + 65536 * 1e-10, rel=1e-4)
    q = p["quality"]["network"]["message_gap"]
    assert q["below"] == SWITCH and q["samples"] == int(np.sum(SIZES < SWITCH))
    assert q["r2"] == pytest.approx(1, abs=1e-9)
    assert q["segments"][1]["seconds"] == pytest.approx(0.4e-6, rel=1e-4)
    assert q["segments"][1]["seconds_per_byte"] == pytest.approx(1e-10, rel=1e-3)


def smpi_law(text):
    """Evaluates a law as SimGrid reads smpi/ois (smpi_host.cpp): an entry for the sizes above
    its X, the first one also below."""
    steps = sorted(tuple(float(x) for x in e.split(":")) for e in text.split(";"))

    def at(s):
        out = steps[0][1] + steps[0][2] * s
        for bound, base, per_byte in steps:
            if s <= bound:
                break
            out = base + per_byte * s
        return max(out, 0.0)
    return at


def test_calibrate_prints_the_gaps_as_smpi_reads_smpi_ois(tmp_path):
    """For smpirun: each placement's gaps in SMPI's reading (an entry above its X), the fitted
    gap at every size below the protocol switch (the sizes of the law's breakpoints too) and
    none from it on, where the fitted law would go on."""
    trace = network(tmp_path)
    add_windows(trace)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if "message gaps (intra-node)" in x)
    text = line.split("--cfg=smpi/ois:")[1].strip("'")
    at_smpi = smpi_law(text)
    at, _ = law(json.loads(out.read_text())["message_gaps"]["intra-node"])
    for s in [1, 2, 255, 256, 257, 1000, 4095]:
        assert at_smpi(s) == at(s), s
    assert at(4096) > 0 and at_smpi(4096) == 0 and at_smpi(65536) == 0


def queued_law(s):
    """Past the fast box: dearer than the window's gaps, flat then growing."""
    s = np.asarray(s, dtype=float)
    return np.where(s < 128, 0.6e-6, 0.5e-6 + s * 8e-10)


def add_long_windows(path, placement="intra-node", lengths=(256, 512), reps=5, sizes=None, queued=None, window=None):
    """`window(s, w)`: a window's time (by default its first 16 messages at the window's gap,
    the rest at `queued`)."""
    sizes = SIZES[SIZES <= 4096] if sizes is None else sizes
    queued = queued_law if queued is None else queued
    window = window or (lambda s, w: float(pingping_law(s) + 15 * gap_law(s) + (w - 16) * queued(s)))
    with h5py.File(path, "a") as f:
        g = f.create_group("exchange_window_long")
        g.attrs["placement"] = placement
        rows_s, rows_w, rows_t = [], [], []
        for s in sizes:
            for w in lengths:
                # The first 16 messages at the window's gap, the rest queued.
                rows_s.append(s)
                rows_w.append(w)
                rows_t.append(window(s, w))
        g.create_dataset("size", data=np.asarray(rows_s, dtype=float)).attrs["unit"] = "B"
        g.create_dataset("messages", data=np.asarray(rows_w, dtype=float))
        g.create_dataset("time", data=np.repeat(np.asarray(rows_t)[:, None], reps, axis=1)).attrs["unit"] = "s"


def test_queued_gaps_from_long_windows_of_two_lengths(tmp_path):
    """calib_pingpong's long windows (256 and 512 messages a size): their difference over the
    256 messages between them is the gap of a message past the peer's fast box, fitted below
    the protocol switch into message_gaps' intra-node-queued law."""
    trace = network(tmp_path)
    add_windows(trace)
    add_long_windows(trace)
    p = fitted(tmp_path, trace)
    at, _ = law(p["message_gaps"]["intra-node-queued"])
    for s in SIZES[SIZES < SWITCH]:
        assert at(s) == pytest.approx(float(queued_law(s)), rel=1e-4), s
    q = p["quality"]["network"]["message_gap_queued"]
    assert q["below"] == SWITCH and q["r2"] == pytest.approx(1, abs=1e-9)
    # The window's own gaps are unchanged.
    at_gap, _ = law(p["message_gaps"]["intra-node"])
    assert at_gap(1000) == pytest.approx(float(gap_law(1000)), rel=1e-4)


def test_no_queued_gaps_without_long_windows_of_two_lengths_or_between_nodes(tmp_path):
    one_length = network(tmp_path, "a.h5")
    add_windows(one_length)
    add_long_windows(one_length, lengths=(256,))
    p = fitted(tmp_path, one_length)
    assert "intra-node-queued" not in p["message_gaps"]
    assert "no queued gaps" in p["quality"]["network"]["message_gap_queued"]["note"]
    between = network(tmp_path, "b.h5", placement="inter-node")
    add_windows(between, placement="inter-node")
    add_long_windows(between, placement="inter-node")
    p = fitted(tmp_path, between)
    assert set(p["message_gaps"]) == {"inter-node"}
    # A trace of the placement without them: none either.
    with_long = network(tmp_path, "c.h5")
    add_windows(with_long)
    add_long_windows(with_long)
    without = network(tmp_path, "d.h5")
    add_windows(without)
    assert "intra-node-queued" not in fitted(tmp_path, with_long, without)["message_gaps"]


def test_queued_gaps_pair_the_lengths_within_each_trace(tmp_path):
    """Two traces, each twice as slow as the other in every window (the machine's two states):
    each trace's difference is its own, the law the median of the two; windows too short to
    pass the fast box (2 and 4 messages) are left out rather than read as queued."""
    fast = network(tmp_path, "fast.h5")
    add_windows(fast)
    add_long_windows(fast)
    slow = network(tmp_path, "slow.h5")
    add_windows(slow)
    add_long_windows(slow, queued=lambda s: 3 * queued_law(s))
    short = network(tmp_path, "short.h5")
    add_windows(short)
    add_long_windows(short, lengths=(2, 4), sizes=SIZES[SIZES <= 1024],
                     window=lambda s, w: float(pingping_law(s) + (w - 1) * 100 * queued_law(s)))
    at, _ = law(fitted(tmp_path, fast, slow, short)["message_gaps"]["intra-node-queued"])
    for s in (8, 100, 1000):
        # the median of 1 x and 3 x (the short windows left out), and no pairing across traces
        assert at(s) == pytest.approx(2 * float(queued_law(s)), rel=1e-3), s


def test_sizes_whose_longer_window_is_not_slower_are_left_out(tmp_path):
    trace = network(tmp_path)
    add_windows(trace)
    usual = lambda s, w: float(pingping_law(s) + 15 * gap_law(s) + (w - 16) * queued_law(s))  # noqa: E731
    add_long_windows(trace, window=lambda s, w: usual(s, 768 - w) if s == 64 else usual(s, w))
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]["message_gap_queued"]
    assert q["sizes_left_out"] == [64] and "the longer window was not the slower" in q["note"]
    at, _ = law(p["message_gaps"]["intra-node-queued"])
    assert at(64) > 0


def test_gaps_under_noise(tmp_path):
    trace = network(tmp_path)
    add_windows(trace, noise=0.02, reps=9)
    at, _ = law(fitted(tmp_path, trace)["message_gaps"]["intra-node"])
    for s in (1, 64, 512, 2048):
        assert at(s) == pytest.approx(float(gap_law(s)), rel=0.1), s


def test_windows_of_one_message_hold_no_gap(tmp_path):
    trace = network(tmp_path)
    add_windows(trace, messages=np.ones(len(SIZES)))
    p = fitted(tmp_path, trace)
    assert "message_gaps" not in p
    assert "no message gaps" in p["quality"]["network"]["message_gap"]["note"]


def test_without_windows_no_gaps(tmp_path):
    p = fitted(tmp_path, network(tmp_path))
    assert "message_gaps" not in p and "message_gap" not in p["quality"]["network"]


def test_gaps_only_where_every_trace_of_the_placement_has_windows(tmp_path):
    a, b = network(tmp_path, "a.h5"), network(tmp_path, "b.h5")
    with h5py.File(b, "a") as f:
        f.attrs["host"] = "another node"  # not a copy of a
    add_windows(a)
    assert "message_gaps" not in fitted(tmp_path, a, b)
    add_windows(b)
    assert "intra-node" in fitted(tmp_path, a, b)["message_gaps"]


def test_each_placement_its_own_gaps(tmp_path):
    intra, inter = network(tmp_path, "intra.h5"), network(tmp_path, "inter.h5", placement="inter-node")
    add_windows(intra)
    add_windows(inter, gap=lambda s: np.full_like(np.asarray(s, dtype=float), 1e-6), placement="inter-node")
    gaps = fitted(tmp_path, intra, inter)["message_gaps"]
    assert law(gaps["inter-node"])[0](100) == pytest.approx(1e-6, rel=1e-4)
    assert law(gaps["intra-node"])[0](100) == pytest.approx(0.2e-6, rel=1e-4)


@pytest.mark.parametrize("messages, expected", [(0.5, "expected whole counts of at least 1"),
                                                 (0, "expected whole counts of at least 1")])
def test_bad_window_counts_are_refused(tmp_path, messages, expected):
    trace = network(tmp_path)
    counts = window_of(SIZES).astype(float)
    counts[2] = messages
    add_windows(trace, messages=counts)
    err = refused(tmp_path, trace)
    assert str(trace) in err and "exchange_window" in err and expected in err
    assert f"at index 2 (size {SIZES[2]:g})" in err


def test_a_window_count_per_size_is_needed(tmp_path):
    trace = network(tmp_path)
    add_windows(trace)
    with h5py.File(trace, "a") as f:
        del f["exchange_window/messages"]
        f["exchange_window"].create_dataset("messages", data=np.ones(3) * 16)
    err = refused(tmp_path, trace)
    assert "dataset 'messages' holds 3 values for" in err and "exchange_window" in err


def self_law(s):
    s = np.asarray(s, dtype=float)
    return np.where(s < 1024, 0.1e-6, 0.05e-6 + s * 5e-11)


def add_self_windows(path, reps=5, sizes=SIZES, messages=None):
    with h5py.File(path, "a") as f:
        g = f.create_group("self_window")
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        w = window_of(sizes) if messages is None else messages
        g.create_dataset("time", data=np.repeat((w * self_law(sizes))[:, None], reps, axis=1)).attrs["unit"] = "s"
        g.create_dataset("messages", data=np.asarray(w, dtype=float))


def test_self_gaps_recovered_below_the_intra_node_switch(tmp_path):
    """A rank's messages to itself: each costs the self window's time over its messages."""
    trace = network(tmp_path)
    add_windows(trace)
    add_self_windows(trace)
    p = fitted(tmp_path, trace)
    at, steps = law(p["message_gaps"]["self"])
    assert len(steps) == 2 and steps[1][0] == 1024
    for s in SIZES[SIZES < SWITCH]:
        assert at(s) == pytest.approx(float(self_law(s)), rel=1e-4), s
    q = p["quality"]["message_gap_self"]
    assert q["below"] == SWITCH and q["samples"] == int(np.sum(SIZES < SWITCH))
    # Every trace must have them: one without, no self gaps.
    other = network(tmp_path, "other.h5", placement="inter-node")
    assert "self" not in fitted(tmp_path, trace, other)["message_gaps"]


def test_self_windows_of_one_message_hold_its_gap(tmp_path):
    """To itself there is no latency to leave out: a window of one message is its gap."""
    trace = network(tmp_path)
    add_self_windows(trace, messages=np.ones(len(SIZES)))
    at, _ = law(fitted(tmp_path, trace)["message_gaps"]["self"])
    for s in (1, 512, 2048):
        assert at(s) == pytest.approx(float(self_law(s)), rel=1e-4), s
