"""The fitter's cached-copy part (calib_copy traces): the rate of intra-node copies of data in
another core's cache, the size where the copies leave the caches, and refusals."""

import numpy as np
import pytest

from calibration_test_support import fitted, refused, synthetic_trace

SIZES = 2.0 ** np.arange(12, 27)  # 4 KiB to 64 MiB


def write_copy_trace(path, node_rate, one_rate, limit, dram_rate, copiers=2, noise=0.0, sizes=SIZES, reps=5,
                     parameters=None, start=0.0):
    """A calib_copy trace: with all `copiers` at once each copy of s bytes takes s / (rate / copiers),
    at `node_rate` up to `limit` and `dram_rate` beyond; one alone, s / one_rate up to the limit;
    every copy `start` seconds more."""
    rng = np.random.default_rng(7)
    per = np.where(sizes <= limit, node_rate, dram_rate) / copiers
    alone = np.where(sizes <= limit, one_rate, dram_rate)
    jitter = 1 + noise * rng.standard_normal((len(sizes), reps))
    with synthetic_trace(path) as f:
        g = f.create_group("cached_copy")
        for k, v in (parameters if parameters is not None else {"copiers": str(copiers)}).items():
            g.attrs[k] = v
        g.create_dataset("bytes", data=sizes).attrs["unit"] = "B"
        g.create_dataset("all_seconds", data=(start + sizes / per)[:, None] * jitter).attrs["unit"] = "s"
        g.create_dataset("alone_seconds", data=(start + sizes / alone)[:, None] * jitter).attrs["unit"] = "s"


def test_the_fit_recovers_the_cached_rates_and_where_the_copies_leave_the_caches(tmp_path):
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=50e9, one_rate=30e9, limit=2**23, dram_rate=25e9)
    p = fitted(tmp_path, trace)
    r = p["rates"]
    assert r["cached_copy_bandwidth"]["value"] == pytest.approx(50e9, rel=1e-6)
    assert r["cached_copy_bandwidth"]["unit"] == "Bps"
    assert r["cached_copy_bandwidth_one_core"]["value"] == pytest.approx(30e9, rel=1e-6)
    assert r["cached_copy_limit"]["value"] == 2**23 and r["cached_copy_limit"]["unit"] == "B"
    q = p["quality"]["cached_copy"]
    assert q["copiers"] == 2 and "note" not in q
    assert [s["from"] for s in q["segments"]] == [4096.0, 2.0 ** 24]
    assert q["segments"][1]["bandwidth"] == pytest.approx(25e9, rel=1e-6)
    assert q["as_charged"]["max_rel_error"] == pytest.approx(0, abs=1e-9)


def test_a_start_up_per_copy_leaves_the_rates_alone(tmp_path):
    """Copies of 0.2 us plus their bytes: the rates are the slopes, the lone copy's too (bytes
    over time, which the start-up lowers at small sizes, would not give 30 GB/s)."""
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=50e9, one_rate=30e9, limit=2**23, dram_rate=25e9, start=2e-7)
    r = fitted(tmp_path, trace)["rates"]
    assert r["cached_copy_bandwidth"]["value"] == pytest.approx(50e9, rel=1e-3)
    assert r["cached_copy_bandwidth_one_core"]["value"] == pytest.approx(30e9, rel=1e-3)
    assert r["cached_copy_limit"]["value"] == 2**23


def test_the_fit_holds_under_noise(tmp_path):
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=40e9, one_rate=24e9, limit=2**20, dram_rate=12e9, copiers=4, noise=0.03)
    r = fitted(tmp_path, trace)["rates"]
    assert r["cached_copy_bandwidth"]["value"] == pytest.approx(40e9, rel=0.05)
    assert r["cached_copy_bandwidth_one_core"]["value"] == pytest.approx(24e9, rel=0.05)
    assert r["cached_copy_limit"]["value"] == 2**20


def test_copies_that_never_leave_the_caches_say_so(tmp_path):
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=50e9, one_rate=30e9, limit=2**40, dram_rate=25e9)
    p = fitted(tmp_path, trace)
    assert p["rates"]["cached_copy_limit"]["value"] == SIZES[-1]
    assert "found no slower segment after the fastest one" in p["quality"]["cached_copy"]["note"]


def test_a_one_copy_rate_below_its_share_of_all_copies_is_raised_to_the_share(tmp_path):
    """One copy alone cannot be slower than when it shares the node with the others."""
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=50e9, one_rate=10e9, limit=2**23, dram_rate=25e9)
    assert fitted(tmp_path, trace)["rates"]["cached_copy_bandwidth_one_core"]["value"] == pytest.approx(25e9, rel=1e-6)


def test_two_nodes_give_the_median_and_their_spread(tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_copy_trace(a, node_rate=50e9, one_rate=30e9, limit=2**23, dram_rate=25e9)
    write_copy_trace(b, node_rate=40e9, one_rate=30e9, limit=2**23, dram_rate=25e9)
    p = fitted(tmp_path, a, b)
    assert p["rates"]["cached_copy_bandwidth"]["value"] == pytest.approx(45e9, rel=1e-6)
    assert p["quality"]["cached_copy"]["node_rel_spread"] == pytest.approx(5 / 45, rel=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    (dict(parameters={}), "(cached_copy): parameter 'copiers' is ''; expected the number of cores"),
    (dict(parameters={"copiers": "1"}), "parameter 'copiers' is '1'"),
    (dict(sizes=SIZES[:5]), "(cached_copy): 5 sizes; expected at least 6"),
    (dict(sizes=SIZES[::-1]), "dataset 'bytes' holds 3.35544e+07 at row 1; expected sizes of at least 1 B, increasing"),
])
def test_bad_copy_traces_are_refused(tmp_path, kwargs, message):
    trace = tmp_path / "copy.h5"
    write_copy_trace(trace, node_rate=50e9, one_rate=30e9, limit=2**23, dram_rate=25e9, **kwargs)
    err = refused(tmp_path, trace)
    assert str(trace) in err and message in err, err
