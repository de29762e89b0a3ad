"""The fast box's capacity: calib_pingpong's exchange windows of every length at small sizes
(exchange_window_lengths) step up where the window's messages no longer fit in the peer's
fast box; the fitter finds each size's knee and fits capacity, header and alignment to them
(rates fast_box_bytes, fast_box_header, fast_box_alignment)."""

import json
import shutil

import h5py
import numpy as np
import pytest

from calibration_test_support import calibrate, fitted, run_halo
from test_fit_message_gaps import add_long_windows, add_windows, network

SWEEP_SIZES = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256]
LARGE_SIZES = [320, 384, 448, 512, 640, 768, 1024, 1536, 2048, 3072, 4096]


def sweep_lengths(longest=512):
    lengths = [1]
    while lengths[-1] < longest:
        lengths.append(min(longest, max(lengths[-1] + 1, int(lengths[-1] * 1.1 + 0.5))))
    return lengths


def holds(size, capacity, header, alignment):
    return capacity / (alignment * np.ceil((size + header) / alignment))


def add_sweep(path, capacity=3968, header=21, alignment=32, gap=0.2e-6, queued=0.6e-6, noise=0.01, reps=5,
              sizes=SWEEP_SIZES, lengths=None, seed=11):
    """Windows of w messages: 1 us, then `gap` a message up to the knee (what the box holds at
    the size), `queued` a message past it (each a number, or a function of the size); the
    lengths `lengths`, else calib_pingpong's (up to 256 KiB a window, 16 messages or more)."""
    rng = np.random.default_rng(seed)
    rows_s, rows_w, rows_t = [], [], []
    for s in sizes:
        knee = holds(s, capacity, header, alignment)
        g = gap(s) if callable(gap) else gap
        q = queued(s) if callable(queued) else queued
        for w in (sweep_lengths(min(512, max(16, 262144 // s))) if lengths is None else lengths):
            rows_s.append(s)
            rows_w.append(w)
            rows_t.append(1e-6 + g * w + (q - g) * max(0.0, w - knee))
    t = np.repeat(np.asarray(rows_t)[:, None], reps, axis=1) * (1 + noise * rng.standard_normal((len(rows_t), reps)))
    with h5py.File(path, "a") as f:
        g = f.create_group("exchange_window_lengths")
        g.attrs["placement"] = "intra-node"
        g.create_dataset("size", data=np.asarray(rows_s, dtype=float)).attrs["unit"] = "B"
        g.create_dataset("messages", data=np.asarray(rows_w, dtype=float))
        g.create_dataset("time", data=t).attrs["unit"] = "s"


def rates(p):
    return {k: p["rates"][k]["value"] for k in ("fast_box_bytes", "fast_box_header", "fast_box_alignment")
            if k in p["rates"]}


@pytest.mark.parametrize("capacity, header, alignment", [(3968, 21, 32), (8192, 40, 1), (16384, 8, 64)])
def test_capacity_header_and_alignment_recovered_under_noise(tmp_path, capacity, header, alignment):
    """Open MPI's fast box as measured here (3968 B, 21 B of header, 32 B slots), one counting
    bytes as they are (8 KiB, 40 B) and one of large slots (16 KiB, 64 B): each size's knee
    found within a message or so under 1 % noise, and the three values back (the header the
    smallest of those that put every sweep size in the same slots: 1 B for the last)."""
    trace = network(tmp_path)
    add_sweep(trace, capacity, header, alignment)
    p = fitted(tmp_path, trace)
    r = rates(p)
    slots = lambda h: [np.ceil((s + h) / alignment) for s in SWEEP_SIZES]  # noqa: E731
    same = min(h for h in range(129) if slots(h) == slots(header))
    assert r["fast_box_alignment"] == alignment and r["fast_box_header"] == same
    assert r["fast_box_bytes"] == pytest.approx(capacity, rel=0.02)
    q = p["quality"]["network"]["fast_box"]
    assert q["capacity"] == r["fast_box_bytes"] and q["alignment"] == alignment
    assert q["mean_rel_error"] < 0.02 and q["sizes_without_knee"] == []
    for k in q["knees"]:
        assert k["messages"] == pytest.approx(holds(k["size"], capacity, header, alignment), abs=1.5), k
        assert k["gap"] == pytest.approx(0.2e-6, rel=0.05) and k["queued_gap"] == pytest.approx(0.6e-6, rel=0.05)
        assert k["fitted"] == (k["messages"] >= 20)
    assert q["samples"] == sum(k["fitted"] for k in q["knees"]) >= 4


def test_calibrate_prints_the_fast_box(tmp_path):
    trace = network(tmp_path)
    add_windows(trace)
    add_sweep(trace)
    res, _ = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    assert "fast box (intra-node): 3968 B, a message its bytes and 21 B rounded up to 32 B" in res.stdout
    assert "exchange_window_lengths" not in res.stderr  # read, not an ignored group


def test_no_capacity_without_a_step_or_from_too_few_knees(tmp_path):
    """Windows whose gap never steps up, knees at fewer than 20 messages (a box of 400 B:
    placed to a message, they would decide the fit) or three sizes only: no fast box, said."""
    flat = network(tmp_path, "flat.h5")
    add_sweep(flat, queued=0.2e-6)
    p = fitted(tmp_path, flat)
    assert rates(p) == {}
    q = p["quality"]["network"]["fast_box"]
    assert "no fast-box capacity" in q["note"] and q["sizes_without_knee"] == SWEEP_SIZES
    small = network(tmp_path, "small.h5")
    add_sweep(small, capacity=400, header=24, alignment=1)
    q = fitted(tmp_path, small)["quality"]["network"]["fast_box"]
    assert "no fast-box capacity" in q["note"] and not any(k["fitted"] for k in q["knees"])
    few = network(tmp_path, "few.h5")
    add_sweep(few, sizes=[1, 32, 128])
    assert rates(fitted(tmp_path, few)) == {}
    # Sizes up to 16 B only (calib_pingpong --max 16): six knees, but in two levels (1 to 8 B
    # in one slot, 12 and 16 B in two), which a box of 994 B, no header and 8 B slots fits as
    # well as the true one: none, said.
    small_sizes = network(tmp_path, "small_sizes.h5")
    add_sweep(small_sizes, sizes=[1, 2, 4, 8, 12, 16])
    p = fitted(tmp_path, small_sizes)
    assert rates(p) == {}
    note = p["quality"]["network"]["fast_box"]["note"]
    assert "of 6 size(s) step up past 20 messages or more, in 2 level(s); expected at least 4 sizes in 3 levels" in note


def test_a_knee_at_the_end_of_the_lengths_is_none(tmp_path):
    """A box of 12,000 B with 24 B a message: the knees of 1, 2 and 4 B (480, 462 and 429
    messages) lie past the fourth last length (409), where the search ends: none (with one
    length or two past it, the step may lie beyond); 8 B's (375) is found."""
    trace = network(tmp_path)
    add_sweep(trace, capacity=12000, header=24, alignment=1)
    q = fitted(tmp_path, trace)["quality"]["network"]["fast_box"]
    assert q["sizes_without_knee"] == [1, 2, 4]
    assert q["knees"][0]["size"] == 8 and q["knees"][0]["messages"] == pytest.approx(12000 / 32, abs=1.5)


def test_the_header_is_at_least_a_byte_and_the_halo_model_runs_on_the_fit(tmp_path):
    """A box whose messages carry no header (4,096 B, 1 B slots): the fitter gives the smallest
    header it allows, 1 B, and the profile runs the halo model's detailed mode."""
    trace = network(tmp_path)
    add_windows(trace)
    add_sweep(trace, capacity=4096, header=0, alignment=1)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    assert rates(p)["fast_box_header"] == 1 and rates(p)["fast_box_bytes"] == pytest.approx(4096, rel=0.03)
    assert run_halo(tmp_path, "h", {"bundled": "false", "mode": "detailed"}, profile=out) > 0


def test_sweeps_of_different_lengths_are_read_where_every_trace_has_them(tmp_path):
    """One trace swept to 128 messages, one to 512 with twice the gaps: pooled where both have a
    length, the curve keeps its true knees (pooled over every length, it stepped where the
    shorter sweep ended and gave a box of 6 KiB)."""
    short = network(tmp_path, "short.h5")
    add_sweep(short, lengths=sweep_lengths(128))
    long = network(tmp_path, "long.h5")
    add_sweep(long, gap=0.4e-6, queued=1.2e-6, seed=12)
    p = fitted(tmp_path, short, long)
    r = rates(p)
    assert r["fast_box_alignment"] == 32 and r["fast_box_header"] == 21
    assert r["fast_box_bytes"] == pytest.approx(3968, rel=0.03)


def test_every_intra_node_trace_needs_the_sweep_and_between_nodes_none_is_read(tmp_path):
    with_sweep = network(tmp_path, "a.h5")
    add_sweep(with_sweep)
    without = network(tmp_path, "b.h5")
    assert rates(fitted(tmp_path, with_sweep, without)) == {}
    between = network(tmp_path, "c.h5", placement="inter-node")
    add_sweep(between)
    p = fitted(tmp_path, between)
    assert rates(p) == {} and "fast_box" not in p["quality"]["network"]


def test_the_sweeps_of_two_traces_are_pooled(tmp_path):
    """Two traces, the second's gaps twice the first's (the machine's two states): the median
    window per length lies between them, and its knee where both have theirs."""
    a = network(tmp_path, "a.h5")
    add_sweep(a)
    b = network(tmp_path, "b.h5")
    add_sweep(b, gap=0.4e-6, queued=1.2e-6, seed=12)
    r = rates(fitted(tmp_path, a, b))
    assert r["fast_box_alignment"] == 32 and r["fast_box_bytes"] == pytest.approx(3968, rel=0.02)


def test_long_windows_read_only_past_the_fitted_fast_box(tmp_path):
    """Long windows of 64 and 128 messages: past a 4 KiB box of 24 B a message from 40 B on,
    past the fitted one (8 KiB, 40 B) only from 89 B on. Below that, a window's messages take
    the usual gap (their difference is no queued gap), and the fitter must not read them."""
    trace = network(tmp_path)
    add_windows(trace)
    add_sweep(trace, capacity=8192, header=40, alignment=1)
    sizes = np.array([8, 16, 32, 48, 64, 96, 128, 256, 512, 1024, 2048])
    add_long_windows(trace, lengths=(64, 128), sizes=sizes,
                     window=lambda s, w: 1e-6 + 0.2e-6 * w + 0.4e-6 * max(0.0, w - holds(s, 8192, 40, 1)))
    q = fitted(tmp_path, trace)["quality"]["network"]["message_gap_queued"]
    assert q["samples"] == int(np.sum(sizes > 8192 / 64 - 40))  # 96 B and up


def test_gaps_of_windows_past_the_box_come_from_the_sweep_within_it(tmp_path):
    """Exchange windows of 16 messages whose messages past the fast box (3,968 B, 21 B, 32 B
    slots: 13 of 256 B fit, 7 of 512 B, 3 of 1,024 B) take the queued gap after them: at the
    sizes where the box holds 3 to 14, those windows are left out and the sweep's windows
    within the box give the gap (their slope), which comes back as it was; without the sweep,
    the gap of 512 B reads 1.5 times too high."""
    from test_fit_message_gaps import SIZES, add_long_windows, gap_law, law, queued_law

    def window_gap(s):
        s = np.asarray(s, dtype=float)
        held = np.floor(holds(s, 3968, 21, 32) + 1e-9)
        queued = np.clip(15 - held, 0, 15)
        return ((15 - queued) * gap_law(s) + queued * queued_law(s)) / 15

    with_box = network(tmp_path, "box.h5")
    add_windows(with_box, gap=window_gap)
    add_long_windows(with_box)
    add_sweep(with_box, sizes=SWEEP_SIZES + LARGE_SIZES, gap=lambda s: float(gap_law(s)),
              queued=lambda s: float(queued_law(s)), noise=0.0)
    p = fitted(tmp_path, with_box)
    within = p["quality"]["network"]["message_gap"]["within_fast_box"]
    held = {s: np.floor(holds(s, 3968, 21, 32) + 1e-9) for s in list(SIZES) + SWEEP_SIZES + LARGE_SIZES}
    assert within["windows_left_out"] == [s for s in SIZES if s < 4096 and 3 <= held[s] < 15]
    assert within["sweep_sizes_read"] == [s for s in SWEEP_SIZES + LARGE_SIZES if s < 4096 and 3 <= held[s] < 15]
    at, _ = law(p["message_gaps"]["intra-node"])
    # (away from the law's step at 256 B, which the piecewise fit places among the sizes)
    for s in (64, 384, 512, 768, 1024):
        assert at(s) == pytest.approx(float(gap_law(s)), rel=0.02), s
    # Two traces alike: each size named once, the same law.
    shutil.copy(with_box, tmp_path / "box2.h5")
    with h5py.File(tmp_path / "box2.h5", "a") as f:
        f.attrs["date"] = "2026-12-07T10:00:00Z"  # another run: other bytes
    p2 = fitted(tmp_path, with_box, tmp_path / "box2.h5")
    assert p2["quality"]["network"]["message_gap"]["within_fast_box"] == within
    assert p2["message_gaps"]["intra-node"] == p["message_gaps"]["intra-node"]
    without = network(tmp_path, "nobox.h5")
    add_windows(without, gap=window_gap)
    add_long_windows(without)
    at2, _ = law(fitted(tmp_path, without)["message_gaps"]["intra-node"])
    assert at2(512) / float(gap_law(512)) > 1.3
