"""The network fit: piecewise segments over message size, ping-ping or ping-pong, traces of one
placement pooled, stray sizes left out, SMPI factor bounds, bad network traces refused."""

import json
import subprocess

import h5py
import numpy as np
import pytest

from calibration_test_support import (
    POWERS, PP_BW, PP_LAT, SIMCORE, calibrate, fitted, link_of, parse_factors, pingpong_law, refused, synthetic_trace,
    write_synthetic_dgemm, write_synthetic_network, write_synthetic_pingpong, write_synthetic_stencil)


def test_fitter_recovers_a_synthetic_network(tmp_path):
    trace = tmp_path / "synthetic.h5"
    write_synthetic_pingpong(trace, 5e-6, 2e9, noise=0.01)
    p = fitted(tmp_path, trace)
    link = p["links"][0]
    assert link["match"] == ".*"
    assert float(link["latency"].rstrip("s")) == pytest.approx(5e-6, rel=0.05)
    assert float(link["bandwidth"].rstrip("Bps")) == pytest.approx(2e9, rel=0.02)
    assert p["quality"]["network"]["median_rel_error"] < 0.02
    assert p["quality"]["network"]["protocol_switch"] == 0


def test_one_way_streaming_is_fitted_for_comparison(tmp_path):
    """calib_pingpong's one_way group (a window of MPI_Isend): the time per message of a
    stream, fitted beside the applied fit and not applied."""
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        g = f.create_group("one_way")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        g.create_dataset("time", data=np.repeat((0.5e-6 + POWERS / 8e9)[:, None], 5, axis=1)).attrs["unit"] = "s"
    p = fitted(tmp_path, trace)
    o = p["quality"]["network"]["one_way_fit_not_applied"]
    assert len(o["segments"]) == 1
    assert o["segments"][0]["latency"] == pytest.approx(0.5e-6, rel=1e-6)
    assert o["segments"][0]["bandwidth"] == pytest.approx(8e9, rel=1e-6)
    assert o["r2"] == pytest.approx(1, abs=1e-12) and o["max_rel_error"] < 1e-6
    lat, bw = link_of(p)  # the applied fit is still the ping-pong's
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


def test_a_one_way_group_the_fitter_cannot_read_leaves_only_that_fit_out(tmp_path):
    """The one_way fit is only compared: a zero time there costs a note, not the profile."""
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        g = f.create_group("one_way")
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        times = np.repeat((0.5e-6 + POWERS / 8e9)[:, None], 5, axis=1)
        times[3, 2] = 0
        g.create_dataset("time", data=times).attrs["unit"] = "s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["network"]
    assert "one_way_fit_not_applied" not in q
    assert "one_way not fitted" in q["note"] and "expected times in seconds from 1e-12 to 1e6" in q["note"]
    assert "note (network): one_way not fitted" in res.stderr
    lat, bw = link_of(json.loads(out.read_text()))
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


# Ping-ping: the same link as PP_* with both directions busy (half the bandwidth).
PI_LAT, PI_BW = 3e-6, 2e9


def pingping_law(s):
    return PI_LAT + s / PI_BW


def test_default_pattern_applies_the_pingping_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    assert q["pattern"] == "pingping" and q["placement"] == "inter-node" and q["traces"] == 1
    assert len(q["segments"]) == 1
    assert q["segments"][0]["latency"] == pytest.approx(PI_LAT, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(PI_BW, rel=1e-6)
    # The links (written with 6 significant digits; these values need fewer).
    lat, bw = link_of(p)
    assert lat == pytest.approx(PI_LAT, rel=1e-6) and bw == pytest.approx(PI_BW, rel=1e-6)
    assert p["rates"]["network_latency"]["value"] == pytest.approx(PI_LAT, rel=1e-6)
    assert p["rates"]["network_bandwidth"]["value"] == pytest.approx(PI_BW, rel=1e-6)
    assert p["network_factors"] == {"inter-node": {"latency": "0:1", "bandwidth": "0:1"}}
    assert not {"smpi/lat-factor", "smpi/bw-factor"} & set(p["simgrid_config"])
    assert p["simgrid_config"]["network/crosstraffic"] == "0"  # ping-ping holds the reverse traffic
    # The ping-pong fit, not applied, kept for comparison.
    other = q["pingpong_fit_not_applied"]
    assert len(other["segments"]) == 1
    assert other["segments"][0]["bandwidth"] == pytest.approx(PP_BW, rel=1e-6)
    assert other["segments"][0]["latency"] == pytest.approx(PP_LAT, rel=1e-6)
    assert "pingping_fit_not_applied" not in q


def test_traces_of_one_placement_measured_with_different_buffers_are_not_pooled(tmp_path):
    """Where a message's memory lies changes its time (calib_pingpong --buffers): one fit of
    per-size and shared traces would be neither's, so it is refused, naming both traces; a trace
    without the attribute was measured with one shared buffer; the profile says which."""
    per_size, shared, old = tmp_path / "per_size.h5", tmp_path / "shared.h5", tmp_path / "old.h5"
    write_synthetic_network(per_size, POWERS, pingpong_law, pingping_law, buffers="per-size")
    write_synthetic_network(shared, POWERS, pingpong_law, pingping_law, buffers="shared")
    write_synthetic_network(old, POWERS, pingpong_law, pingping_law)
    res, out = calibrate(tmp_path, per_size, shared)
    assert res.returncode == 2 and not out.exists()
    assert (f"{shared} (pingpong): measured with shared buffers, but {per_size} (also inter-node) with per-size "
            "ones" in res.stderr)
    res, out = calibrate(tmp_path, old, per_size)
    assert res.returncode == 2 and "measured with per-size buffers" in res.stderr and not out.exists()
    # The same kind pools; a trace without the attribute is of the shared kind.
    per_size2 = tmp_path / "per_size2.h5"
    write_synthetic_network(per_size2, POWERS, pingpong_law, pingping_law, buffers="per-size")
    with h5py.File(per_size2, "a") as f:  # another node's (the same bytes would be one trace given twice)
        f.attrs["host"] = "synthetic-2"
    for traces, kind in (((per_size, per_size2), "per-size"), ((old, shared), "shared")):
        res, out = calibrate(tmp_path, *traces)
        assert res.returncode == 0, res.stderr
        q = json.loads(out.read_text())["quality"]["network"]
        assert q["buffers"] == kind and q["traces"] == 2
    # Different kinds in different placements are two fits, each of one kind.
    intra = tmp_path / "intra.h5"
    write_synthetic_network(intra, POWERS, pingpong_law, pingping_law, placement="intra-node", buffers="shared")
    res, out = calibrate(tmp_path, per_size, intra)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]
    assert q["network"]["buffers"] == "per-size" and q["network_intra_node"]["buffers"] == "shared"
    bad = tmp_path / "bad.h5"
    write_synthetic_network(bad, POWERS, pingpong_law, pingping_law, buffers="pinned")
    res, out = calibrate(tmp_path, bad)
    assert res.returncode == 2 and f"{bad} (pingpong): buffers 'pinned'; expected 'per-size' or 'shared'" in res.stderr


def test_network_pattern_pingpong_applies_the_pingpong_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    out = tmp_path / "pp.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), "--network-pattern", "pingpong"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    p = json.loads(out.read_text())
    q = p["quality"]["network"]
    assert q["pattern"] == "pingpong"
    lat, bw = link_of(p)
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(PP_BW, rel=1e-6)
    assert q["pingping_fit_not_applied"]["segments"][0]["bandwidth"] == pytest.approx(PI_BW, rel=1e-6)
    assert "pingpong_fit_not_applied" not in q


def test_auto_pattern_without_a_pingping_group_uses_the_pingpong_fit(tmp_path):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    assert q["pattern"] == "pingpong"
    assert "pingpong_fit_not_applied" not in q and "pingping_fit_not_applied" not in q
    lat, bw = link_of(p)
    assert lat == pytest.approx(PP_LAT, rel=1e-6) and bw == pytest.approx(PP_BW, rel=1e-6)


def test_network_pattern_pingping_needs_a_pingping_group(tmp_path):
    trace = tmp_path / "only_pingpong.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), "--network-pattern", "pingping"],
                         capture_output=True, text=True)
    assert res.returncode == 2
    assert str(trace) in res.stderr and "no 'pingping' group" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("args", [["--network-pattern", "bogus"], ["--network-pattern"]])
def test_bad_network_pattern_is_refused(tmp_path, args):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, pingping_law)
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out), *args], capture_output=True, text=True)
    assert res.returncode == 2
    assert "expected auto, pingp" in res.stderr
    if len(args) == 2:
        assert "'bogus'" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("even_first", [True, False])
def test_traces_of_one_placement_are_pooled_into_one_fit(tmp_path, even_first):
    lat, bw = 4e-6, 8e9
    even, odd = tmp_path / "even.h5", tmp_path / "odd.h5"
    write_synthetic_network(even, 2.0 ** np.arange(0, 25, 2), lambda s: lat + s / bw, reps=3)  # 1, 4, 16, ...
    write_synthetic_network(odd, 2.0 ** np.arange(1, 24, 2), lambda s: lat + s / bw, reps=4)  # 2, 8, 32, ...
    p = fitted(tmp_path, *((even, odd) if even_first else (odd, even)))
    q = p["quality"]["network"]
    assert q["traces"] == 2 and q["pattern"] == "pingpong"
    assert len(q["segments"]) == 1
    assert q["segments"][0]["from"] == 1.0  # the smallest size of both traces
    assert q["segments"][0]["latency"] == pytest.approx(lat, rel=1e-6)
    assert q["segments"][0]["bandwidth"] == pytest.approx(bw, rel=1e-6)
    assert q["median_rel_spread_of_repetitions"] == 0
    assert q["protocol_switch"] == 0
    l2, b2 = link_of(p)  # one link: one fit for the placement
    assert l2 == pytest.approx(lat, rel=1e-6) and b2 == pytest.approx(bw, rel=1e-6)
    assert p["meta"]["traces"] == [str(t) for t in ((even, odd) if even_first else (odd, even))]


def test_smpi_factor_bounds_of_a_two_segment_fit(tmp_path):
    # 1 us + s / 5 GB/s below 64 KiB, 10 us + s / 10 GB/s from 64 KiB up; four sizes per octave.
    sizes = np.unique(np.round(2.0 ** (np.arange(0, 97) / 4)))
    assert 65536.0 in sizes and (sizes < 65536).sum() >= 20 and (sizes >= 65536).sum() >= 20

    def law(s):
        return np.where(s < 65536, 1e-6 + s / 5e9, 1e-5 + s / 1e10)

    trace = tmp_path / "two.h5"
    write_synthetic_network(trace, sizes, law)
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    segs = q["segments"]
    assert len(segs) == 2
    assert segs[0]["from"] == 1.0 and segs[1]["from"] == 65536.0
    assert segs[0]["latency"] == pytest.approx(1e-6, rel=1e-6)
    assert segs[0]["bandwidth"] == pytest.approx(5e9, rel=1e-6)
    assert segs[1]["latency"] == pytest.approx(1e-5, rel=1e-6)
    assert segs[1]["bandwidth"] == pytest.approx(1e10, rel=1e-6)
    assert q["protocol_switch"] == 65536.0
    # The switch as a rate that models read (the halo model's eager limit in detailed mode),
    # and each placement's own latency and bandwidth.
    assert p["rates"]["network_protocol_switch_inter_node"]["value"] == 65536.0
    assert "network_protocol_switch_intra_node" not in p["rates"]
    assert p["rates"]["network_latency_inter_node"]["value"] == pytest.approx(1e-6, rel=1e-6)
    # The fixed cost past the switch (the halo model's single-copy start-up within a node).
    assert p["rates"]["network_latency_past_switch_inter_node"]["value"] == pytest.approx(1e-5, rel=1e-6)
    assert "network_latency_past_switch_intra_node" not in p["rates"]
    assert p["rates"]["network_bandwidth_inter_node"]["value"] == pytest.approx(1e10, rel=1e-6)
    cfg = p["simgrid_config"]
    assert cfg["network/model"] == "SMPI"
    nf = p["network_factors"]["inter-node"]
    lat_f, bw_f = parse_factors(nf["latency"]), parse_factors(nf["bandwidth"])
    # SMPI applies "X:f" to messages larger than X: the segment from 65536 B is written 65535.
    assert [s for s, _ in lat_f] == [65535.0, 0.0]
    assert [s for s, _ in bw_f] == [65535.0, 0.0]
    assert [s for s, _ in lat_f if s != 0] == [65535.0] and [s for s, _ in bw_f if s != 0] == [65535.0]
    # Factors against the first segment's latency (1 us) and the last segment's bandwidth (10 GB/s).
    assert lat_f[0][1] == pytest.approx(10.0, rel=1e-5) and lat_f[1][1] == pytest.approx(1.0, rel=1e-5)
    assert bw_f[0][1] == pytest.approx(1.0, rel=1e-5) and bw_f[1][1] == pytest.approx(0.5, rel=1e-5)
    lat, bw = link_of(p)
    assert lat == pytest.approx(1e-6, rel=1e-6) and bw == pytest.approx(1e10, rel=1e-6)
    # What SMPI would compute with these factors gives back the law on both sides of the switch.
    for s in (1000.0, 65535.0, 65536.0, 1e6):
        lf = next(f for bound, f in lat_f if s > bound or bound == 0)
        bf = next(f for bound, f in bw_f if s > bound or bound == 0)
        assert lat * lf + s / (bw * bf) == pytest.approx(float(law(np.array(s))), rel=1e-5)


def write_pingpong_with_strays(path, strays, factor):
    """A TCP-like ping-pong (20 us + s / 1 GB/s up to 64 KiB, 60 us + s / 1.2 GB/s above), four
    sizes per octave up to 4 MiB, 2 % noise, the sizes in `strays` taking `factor` x as long in
    every repetition (what a network that stalls at a few sizes gives)."""
    rng = np.random.default_rng(3)
    sizes = np.unique(np.round(2.0 ** (np.arange(0, 23 * 4) / 4)))
    one_way = np.where(sizes <= 65536, 20e-6 + sizes / 1e9, 60e-6 + sizes / 1.2e9)
    for s in strays:
        one_way[np.argmin(abs(sizes - s))] *= factor
    rt = 2 * one_way[:, None] * (1 + 0.02 * rng.standard_normal((len(sizes), 5)))
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"
    return sizes


@pytest.mark.parametrize("strays, factor", [([393216], 1.7), ([393216], 3.0), ([98304, 1572864], 2.0),
                                            ([393216, 466357], 2.0), ([393216], 0.5)])
def test_sizes_that_stray_alone_are_left_out_of_the_network_fit(tmp_path, strays, factor):
    trace = tmp_path / "t.h5"
    sizes = write_pingpong_with_strays(trace, strays, factor)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["network"]
    expected = sorted(float(sizes[np.argmin(abs(sizes - s))]) for s in strays)
    assert [e["size"] for e in q["excluded_sizes"]] == expected
    assert "left out of the inter-node fit" in res.stderr  # the note, on stderr too
    # The law comes back as if the strays had not been measured: two segments, the switch.
    segs = q["segments"]
    assert len(segs) == 2 and q["protocol_switch"] == pytest.approx(77936, rel=0.01)
    assert segs[0]["latency"] == pytest.approx(20e-6, rel=0.02) and segs[0]["bandwidth"] == pytest.approx(1e9, rel=0.02)
    assert segs[1]["latency"] == pytest.approx(60e-6, rel=0.1) and segs[1]["bandwidth"] == pytest.approx(1.2e9, rel=0.02)
    assert q["max_rel_error"] < 0.1


def test_outlier_tolerance_zero_keeps_every_size_and_bad_values_are_refused(tmp_path):
    trace = tmp_path / "t.h5"
    write_pingpong_with_strays(trace, [393216], 1.7)
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "p.json"), "--outlier-tolerance", "0"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    q = json.loads((tmp_path / "p.json").read_text())["quality"]["network"]
    assert q["excluded_sizes"] == [] and "note" not in q
    assert len(q["segments"]) > 2  # the stray size pulls segments of its own
    for bad in ("-1", "x", "nan", "", " 0.5", "0x1p-2"):
        res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "q.json"), "--outlier-tolerance", bad],
                             capture_output=True, text=True)
        assert res.returncode == 2 and "--outlier-tolerance" in res.stderr and "expected a share >= 0" in res.stderr
        assert not (tmp_path / "q.json").exists()


@pytest.mark.parametrize("flaw", ["rows", "negative", "nan"])
def test_a_malformed_pingpong_trace_is_refused(tmp_path, flaw):
    trace = tmp_path / "bad.h5"
    sizes = 2.0 ** np.arange(0, 10)
    rt = np.tile(2e-6 + sizes[:, None] / 1e9, (1, 3))
    if flaw == "rows":
        rt = rt[:-2]
    elif flaw == "negative":
        rt[3, 1] = -1e-6
    else:
        rt[5, 0] = np.nan
    with h5py.File(trace, "w") as f:
        f.attrs["schema"] = "simcore-calibration-trace/1"
        g = f.create_group("pingpong")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert "bad.h5 (pingpong)" in res.stderr and ("rows" in res.stderr or "expected times in seconds from 1e-12" in res.stderr)
    assert not out.exists()


@pytest.mark.parametrize("bad, message", [
    (float("nan"), "holds nan at index 3"),
    (float("inf"), "holds inf at index 3"),
    (-5.0, "holds -5 at index 3"),
    (2.5, "holds 2.5 at index 3"),
    (4294967296.0, "holds 4.29497e+09 at index 3"),
])
def test_message_sizes_must_be_whole_bytes_an_mpi_count_holds(tmp_path, bad, message):
    """A NaN size once made the fitter loop, allocating until the machine ran out of memory; an
    infinite or negative one gave a profile of nonsense, one beyond 2^31 - 1 a factor SMPI cannot
    read. Each is refused, naming the trace, the dataset and the index."""
    trace = tmp_path / "pp.h5"
    sizes = 2.0 ** np.arange(0, 12)
    sizes[3] = bad
    with synthetic_trace(trace) as f:
        g = f.create_group("pingpong")
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=np.full((len(sizes), 3), 1e-5)).attrs["unit"] = "s"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(tmp_path / "p.json")], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2, res.stderr
    assert f"{trace} (pingpong)" in res.stderr and "dataset 'size' " + message in res.stderr
    assert "expected whole message sizes in bytes from 0 to 2147483647" in res.stderr
    assert not (tmp_path / "p.json").exists()


def test_one_message_size_cannot_be_fitted(tmp_path):
    """The refusal named no file ("inter-node network traces: 1 message size(s)"); it names
    every trace pooled into the fit and the group fitted."""
    trace, other = tmp_path / "pp.h5", tmp_path / "pp2.h5"
    write_synthetic_network(trace, [1024.0], pingpong_law)
    write_synthetic_network(other, [1024.0], pingpong_law, pingping_law)
    assert (f"{trace} (pingpong): 1 distinct message size(s) in the inter-node trace(s); expected at least 2 "
            "to tell a latency from a bandwidth") in refused(tmp_path, trace)
    assert f"{trace}, {other} (pingpong): 1 distinct message size(s)" in refused(tmp_path, trace, other)


def test_a_bad_network_time_is_located(tmp_path):
    """A time that is not a positive number was refused without its place ("holds nan"); a
    dataset of no repetition at all named neither trace nor dataset."""
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, reps=3)
    with h5py.File(trace, "a") as f:
        times = f["pingpong"]["round_trip"][()]
        times[10, 2] = np.nan
        f["pingpong"]["round_trip"][...] = times
    assert (f"{trace} (pingpong): dataset 'round_trip' holds nan at index 32 (size 1024, repetition 2); "
            "expected times in seconds from 1e-12 to 1e6") in refused(tmp_path, trace)
    # A time near the bottom of the double range took the fit's weights to infinity: a profile
    # of latency 0, bandwidth 0 and R^2 -0.23, exit 0.
    with h5py.File(trace, "a") as f:
        times = f["pingpong"]["round_trip"][()]
        times[10, 2] = 2e-160
        f["pingpong"]["round_trip"][...] = times
    assert (f"{trace} (pingpong): dataset 'round_trip' holds 2e-160 at index 32 (size 1024, repetition 2); "
            "expected times in seconds from 1e-12 to 1e6") in refused(tmp_path, trace)
    with h5py.File(trace, "a") as f:
        del f["pingpong"]["round_trip"]
        f["pingpong"].create_dataset("round_trip", shape=(len(POWERS), 0)).attrs["unit"] = "s"
    assert (f"{trace} (pingpong): dataset 'round_trip' has {len(POWERS)} rows of no value; expected at least one "
            "repetition per size") in refused(tmp_path, trace)


def test_network_traces_the_fitter_cannot_place_are_refused(tmp_path):
    only_pingping = tmp_path / "pingping.h5"
    with synthetic_trace(only_pingping) as f:
        g = f.create_group("pingping")
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        g.create_dataset("time", data=np.repeat(pingping_law(POWERS)[:, None], 3, axis=1)).attrs["unit"] = "s"
    res, _ = calibrate(tmp_path, only_pingping)
    assert res.returncode == 2 and f"{only_pingping} (pingping): a 'pingping' group without 'pingpong'" in res.stderr
    odd = tmp_path / "odd.h5"
    write_synthetic_network(odd, POWERS, pingpong_law, placement="inter-rack")
    res, _ = calibrate(tmp_path, odd)
    assert res.returncode == 2
    assert "placement 'inter-rack'; expected 'intra-node' or 'inter-node'" in res.stderr


def replace_datasets(path, group, shapes):
    """Each dataset of `group` named in `shapes` replaced by an empty one of that shape, its unit kept."""
    with h5py.File(path, "a") as f:
        for name, shape in shapes.items():
            unit = f[group][name].attrs.get("unit")
            del f[group][name]
            d = f[group].create_dataset(name, shape=shape)
            if unit is not None:
                d.attrs["unit"] = unit


def test_empty_size_datasets_are_named(tmp_path):
    """An empty 'size' (or 'cells') dataset gave "has 0 rows for 0 sizes; expected one row of
    repetitions per size", which said the rows were wrong when there was nothing to fit."""
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, POWERS, pingpong_law, reps=3)
    replace_datasets(trace, "pingpong", {"size": (0,), "round_trip": (0, 3)})
    assert (f"{trace} (pingpong): dataset 'size' is empty; expected the message sizes measured, one per row"
            in refused(tmp_path, trace))
    dgemm = tmp_path / "dgemm.h5"
    write_synthetic_dgemm(dgemm, [256, 512], [100, 110])
    replace_datasets(dgemm, "dgemm", {"size": (0,), "gflops": (0, 3)})
    assert (f"{dgemm} (dgemm): dataset 'size' is empty; expected the matrix orders measured, one per row"
            in refused(tmp_path, dgemm))
    stencil = tmp_path / "stencil.h5"
    write_synthetic_stencil(stencil, [16, 32], [3e8, 2e8])
    replace_datasets(stencil, "stencil", {"cell_rate": (2, 0)})
    assert (f"{stencil} (stencil): dataset 'cell_rate' has 2 rows of no value; expected at least one repetition "
            "per size") in refused(tmp_path, stencil)
    replace_datasets(stencil, "stencil", {"cells": (0,), "cell_rate": (0, 3)})
    assert (f"{stencil} (stencil): dataset 'cells' is empty; expected the cube sizes measured, one per row"
            in refused(tmp_path, stencil))


QUARTERS = np.array(sorted({int(2 ** k * (1 + j / 4)) for k in range(25) for j in range(4)
                            if 2 ** k * (1 + j / 4) <= 2 ** 24}), dtype=float)


@pytest.mark.parametrize("bend, bandwidth", [(40000.0, 20e9), (57000.0, 20e9), (57000.0, 40e9)])
def test_a_bend_in_bandwidth_without_a_step_is_no_switch(tmp_path, bend, bandwidth):
    """1 us + s / 5 GB/s, then a faster bandwidth from `bend` on, continuous: the later law
    extended back lay more than 10 % above the earlier one at the last size before the bend, and
    a protocol switch (with its start-up past it) was reported where the time never steps."""
    trace = tmp_path / "bend.h5"
    write_synthetic_network(trace, QUARTERS, lambda s: np.where(s <= bend, 1e-6 + s / 5e9,
                                                                1e-6 + bend / 5e9 + (s - bend) / bandwidth))
    p = fitted(tmp_path, trace)
    assert p["quality"]["network"]["protocol_switch"] == 0
    assert not any("switch" in k for k in p["rates"])


def test_a_switch_to_a_faster_protocol_is_found(tmp_path):
    """An eager law of 1 us + s / 2 GB/s below 64 KiB, then 5 us + s / 10 GB/s: the time falls
    from 33.8 to 11.6 us at the switch, which was never reported (only steps up were)."""
    trace = tmp_path / "down.h5"
    write_synthetic_network(trace, QUARTERS, lambda s: np.where(s < 65536, 1e-6 + s / 2e9, 5e-6 + s / 10e9))
    p = fitted(tmp_path, trace)
    q = p["quality"]["network"]
    assert q["protocol_switch"] == 65536
    assert p["rates"]["network_protocol_switch_inter_node"]["value"] == 65536
    assert p["rates"]["network_latency_past_switch_inter_node"]["value"] == pytest.approx(5e-6, rel=1e-6)
