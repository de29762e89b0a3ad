"""The fit quality of every part of a profile: R^2, relative errors, samples."""

import numpy as np
import pytest

from calibration_test_support import (
    STENCIL_CELLS, STENCIL_RATES, fitted, refused, synthetic_trace, write_synthetic_dgemm, write_synthetic_stencil)


def rate_quality(work, rates, rate):
    """R^2 and relative errors of the times work / rate against the times work / rates, as
    the profile defines them (an independent reckoning of the same definition)."""
    work, rates = np.asarray(work, dtype=float), np.asarray(rates, dtype=float)
    t, pred = work / rates, work / rate
    err = np.abs(pred - t) / t
    return 1 - ((pred - t) ** 2).sum() / ((t - t.mean()) ** 2).sum(), err.max(), np.median(err)


def test_every_part_of_the_profile_has_its_fit_quality(tmp_path):
    """R^2, max and median relative error for compute, stencil, memory and hash lookups, as
    for the network: each rate applied to what was measured, as a simulation applies it."""
    stencil, dgemm, stream, hashes = (tmp_path / f"{n}.h5" for n in ("stencil", "dgemm", "stream", "hash"))
    write_synthetic_stencil(stencil, STENCIL_CELLS, STENCIL_RATES)
    gflops = [[30.0, 31.0, 29.0], [41.0, 40.0, 43.0]]
    write_synthetic_dgemm(dgemm, [256, 512], gflops)
    with synthetic_trace(stream) as f:  # two thread counts: the fitted rate is the faster one's
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([1.0, 2.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.array([[10e9, 11e9, 9e9], [20e9, 22e9, 18e9]])).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((2, 3), 30e9)).attrs["unit"] = "Bps"
    with synthetic_trace(hashes) as f:
        g = f.create_group("hash_table")
        g.attrs["structures"] = "simd_table,simd_table_batched"
        g.attrs["miss_rate"] = "0.9"
        g.create_dataset("lookup_rate", data=np.array([[1e7] * 3, [1.0e8, 1.2e8, 0.9e8]])).attrs["unit"] = "1/s"
    p = fitted(tmp_path, stencil, dgemm, stream, hashes)
    q = p["quality"]

    # DGEMM: the speed (41 Gflop/s, the median at n = 512) times every size's every repetition.
    work = [2 * n ** 3 for n in (256, 512) for _ in range(3)]
    r2, mx, med = rate_quality(work, np.ravel(gflops) * 1e9, 41e9)
    c = q["compute"][0]
    assert c["r2"] == pytest.approx(r2, rel=1e-9) and 0.9 < r2 < 1
    assert c["max_rel_error"] == pytest.approx(12 / 41, rel=1e-12) == pytest.approx(mx, rel=1e-12)
    assert c["median_rel_error"] == pytest.approx(6 / 41, rel=1e-12) == pytest.approx(med, rel=1e-12)
    assert c["samples"] == 6

    # Stencil: the cell rate (2e8, at 64^3) applied to every size, and at 64^3 alone.
    cubes = [n ** 3 for n, row in zip(STENCIL_CELLS, STENCIL_RATES) for _ in row]
    r2, mx, med = rate_quality(cubes, np.ravel(STENCIL_RATES), 2e8)
    st = q["stencil"]
    assert st["r2"] == pytest.approx(r2, rel=1e-9)
    assert st["max_rel_error"] == pytest.approx(1.1, rel=1e-12)  # 4.2e8 cells/s at 16^3: 2.1 x the rate
    assert st["median_rel_error"] == pytest.approx(med, rel=1e-12)
    assert st["at_largest_size"]["max_rel_error"] == pytest.approx(0.25, rel=1e-12)
    assert st["at_largest_size"]["median_rel_error"] == pytest.approx(0.05, rel=1e-12)
    assert "r2" not in st["at_largest_size"]

    # Memory: memcpy_bandwidth (22 GB/s / 2... the median of the 2-thread row, 20e9 / 2)
    # against that row's repetitions; one array size, so no R^2.
    assert p["rates"]["memcpy_bandwidth"]["value"] == 10e9
    m = q["memory"]
    assert m["max_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert m["median_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert m["r2"] is None and "undefined" in m["r2_note"]

    # Hash lookups: the pipelined table's median (1e8/s) against its repetitions.
    h = q["hash"]
    assert p["rates"]["hash_lookup_rate"]["value"] == 1e8
    assert h["max_rel_error"] == pytest.approx(0.2, rel=1e-12)
    assert h["median_rel_error"] == pytest.approx(0.1, rel=1e-12)
    assert h["r2"] is None


@pytest.mark.parametrize("error", ["0.37", "nan", "", "1e-10"])
def test_a_dgemm_trace_of_a_kernel_that_failed_its_check_is_refused(tmp_path, error):
    """calib_dgemm once wrote its trace when the kernel differed from the reference, marking it
    only in max_rel_error_vs_reference, and the fitter took its rates as the host's speed."""
    import h5py

    trace = tmp_path / "d.h5"
    write_synthetic_dgemm(trace, [256], [[40.0] * 3])
    with h5py.File(trace, "a") as f:
        f["dgemm"].attrs["max_rel_error_vs_reference"] = error
    assert (f"{trace} (dgemm): max_rel_error_vs_reference '{error}'; expected a kernel that matched the "
            "reference, under 1e-10") in refused(tmp_path, trace)
    with h5py.File(trace, "a") as f:
        f["dgemm"].attrs["max_rel_error_vs_reference"] = "2.02528893e-15"
    assert fitted(tmp_path, trace)["rates"]["dgemm_flops"]["value"] == 40e9
