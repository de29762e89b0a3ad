"""The compute fit: DGEMM speed, stencil cell rate and flops per cell; bad traces refused."""

import h5py
import numpy as np
import pytest

from calibration_test_support import (
    STENCIL_CELLS, STENCIL_RATES, calibrate, fitted, write_synthetic_dgemm, write_synthetic_stencil)


@pytest.mark.parametrize("dgemm_first", [False, True])
def test_fitter_turns_stencil_and_dgemm_traces_into_flops_per_cell(tmp_path, dgemm_first):
    stencil, dgemm = tmp_path / "stencil.h5", tmp_path / "dgemm.h5"
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    write_synthetic_dgemm(dgemm, [256, 512], [[30.0, 31.0, 29.0], [41.0, 40.0, 43.0]])
    p = fitted(tmp_path, *((dgemm, stencil) if dgemm_first else (stencil, dgemm)))
    speed = float(p["hosts"][0]["speed"].rstrip("f"))  # the speed the simulation applies
    assert speed == pytest.approx(41e9, rel=1e-5)
    rate = p["rates"]["stencil_cell_rate"]["value"]
    assert rate == 2.0e8  # the median at the largest size, 64
    assert p["rates"]["flops_per_cell"]["value"] == speed / rate
    assert p["rates"]["flops_per_cell"]["value"] == pytest.approx(205.0, rel=1e-5)
    # The halo model's cells x flops_per_cell / speed gives back the measured time per cell.
    assert 64 ** 3 * p["rates"]["flops_per_cell"]["value"] / speed == pytest.approx(64 ** 3 / 2.0e8, rel=1e-14)
    q = p["quality"]["stencil"]
    assert q["cells_used"] == 64
    assert [r["cells"] for r in q["cell_rate_by_size"]] == STENCIL_CELLS
    assert [r["cell_rate"] for r in q["cell_rate_by_size"]] == [4.0e8, 2.0e8, 3.0e8]
    spreads = [abs(x - m) / m for row, m in zip(STENCIL_RATES, (4.0e8, 2.0e8, 3.0e8)) for x in row]
    assert q["median_rel_spread"] == pytest.approx(np.median(spreads), rel=1e-12)
    assert q["max_rel_spread"] == pytest.approx(0.25, rel=1e-12)
    assert "note" not in q


def test_dgemm_rows_of_the_largest_order_are_pooled_whatever_their_order(tmp_path):
    """calib_dgemm --sizes 512,1024,1024 writes the largest order twice: only its first row
    counted, so the rows' order set the speed (50 or 90 Gflop/s for the same trace)."""
    speeds = []
    for rows in ([[60.0] * 3, [50.0] * 3, [90.0] * 3], [[60.0] * 3, [90.0] * 3, [50.0] * 3]):
        trace = tmp_path / "d.h5"
        write_synthetic_dgemm(trace, [512.0, 1024.0, 1024.0], rows)
        p = fitted(tmp_path, trace)
        speeds.append(p["hosts"][0]["speed"])
        q = p["quality"]["compute"][0]
        assert q["size"] == 1024 and q["flops"] == 7e10
        assert q["median_rel_spread"] == pytest.approx(20 / 70)  # over all six repetitions at 1024
    assert speeds[0] == speeds[1] == "7e+10f"


@pytest.mark.parametrize("sizes, gflops, message", [
    # A (1, n) dataset was read as one size (the first) of n repetitions.
    ([[256.0, 512.0, 1024.0]], [[70.0, 80.0, 90.0]], "dataset 'size' holds 3 values in 1 rows; expected one matrix "
                                                      "order per row"),
    ([0.0, 256.0], [[10.0] * 3, [20.0] * 3], "dataset 'size' holds 0 at index 0; expected positive matrix orders"),
    ([-64.0], [[10.0] * 3], "dataset 'size' holds -64 at index 0"),
    ([256.0], np.zeros((1, 0)), "dataset 'gflops' has 1 rows of 0 values; expected 1 rows of repetitions"),
    # 1e308 Gflop/s became an infinite speed: a profile of "-nanf", exit 0, that simcore refused.
    ([256.0], [[1e308] * 3], "dataset 'gflops' holds 1e+308 at index 0; expected positive rates in Gflop/s, up to "
                              "1e+09"),
    ([256.0], [[5e-324] * 3], "dataset 'gflops' holds 4.94066e-324 at index 0; expected positive rates"),
])
def test_dgemm_traces_with_bad_sizes_or_no_repetition_are_refused(tmp_path, sizes, gflops, message):
    trace = tmp_path / "d.h5"
    write_synthetic_dgemm(trace, sizes, gflops)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2 and "d.h5 (dgemm)" in res.stderr and message in res.stderr, res.stderr
    assert not out.exists()


def test_fitter_without_a_dgemm_trace_gives_only_the_cell_rate(tmp_path):
    stencil = tmp_path / "stencil.h5"
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    p = fitted(tmp_path, stencil)
    assert p["rates"]["stencil_cell_rate"]["value"] == 2.0e8
    assert "flops_per_cell" not in p["rates"] and "hosts" not in p
    assert "no dgemm trace" in p["quality"]["stencil"]["note"]


@pytest.mark.parametrize("rates, message", [
    ([[1e8, 0.0], [1e8, 1e8]], "cell_rate[0][1] = 0; expected cells per second, a positive number"),
    ([[1e8, 1e8]], "expected one row of repetitions per size"),
])
def test_bad_stencil_traces_are_refused(tmp_path, rates, message):
    trace = tmp_path / "stencil.h5"
    with h5py.File(trace, "w") as f:
        f.attrs["schema"] = "simcore-calibration-trace/1"
        g = f.create_group("stencil")
        g.create_dataset("cells", data=[8.0, 16.0])
        g.create_dataset("cell_rate", data=np.asarray(rates)).attrs["unit"] = "1/s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) + " (stencil)" in res.stderr and message in res.stderr
    assert not out.exists()
