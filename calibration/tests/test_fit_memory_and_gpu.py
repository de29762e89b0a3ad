"""Memory and GPU rates: STREAM, hash lookups and CUDA kernels with their shares; bad traces
refused."""

import json

import h5py
import numpy as np
import pytest

from calibration_test_support import (
    calibrate, cuda_trace_as_the_device_writes_it, fitted, refused, synthetic_trace, write_synthetic_hash)


CUDA_GFLOPS = {
    "gemm_fp32": [19.5, 18.0, 21.25, 20.0, 17.0],  # median 19.5, not the first
    "gemm_tf32_wmma": [150.0, 149.0, 160.0, 151.5, 100.0],  # median 150
    "conv3d_ncdhw": [9.75, 10.5, 11.0, 9.0, 10.25],  # median 10.25
    "conv3d_ndhwc": [12.0, 12.0, 13.5, 11.0, 12.125],  # median 12.0
}


def test_cuda_trace_gives_one_rate_per_kernel(tmp_path):
    trace = tmp_path / "cuda.h5"
    with synthetic_trace(trace) as f:
        f.attrs["gpu"] = "Test GPU"
        g = f.create_group("cuda")
        g.attrs["device"] = "Test GPU"
        g.attrs["compute_capability"] = "9.0"
        for kernel, values in CUDA_GFLOPS.items():
            g.create_dataset(kernel, data=np.asarray(values)).attrs["unit"] = "Gflop/s"
    p = fitted(tmp_path, trace)
    rates = p["rates"]
    assert set(rates) == {"gpu_%s_flops" % k for k in CUDA_GFLOPS}
    for kernel, values in CUDA_GFLOPS.items():
        r = rates["gpu_%s_flops" % kernel]
        assert r["value"] == pytest.approx(np.median(values) * 1e9, rel=1e-12)
        assert r["unit"] == "flops"
        assert kernel in r["doc"] and "Test GPU" in r["doc"]
    assert "links" not in p and "hosts" not in p
    assert "network" not in p["quality"]
    gpu = p["quality"]["gpu"]
    assert set(gpu) == set(CUDA_GFLOPS)
    assert all(set(q) & SHARES == {"flops"} for q in gpu.values())  # no peak, no cuBLAS measured
    # Each kernel's median rate against its repetitions (one work size: no R^2).
    for kernel, values in CUDA_GFLOPS.items():
        med = np.median(values)
        errors = [abs(v / med - 1) for v in values]
        assert gpu[kernel]["max_rel_error"] == pytest.approx(max(errors), rel=1e-12, abs=1e-15)
        assert gpu[kernel]["median_rel_error"] == pytest.approx(np.median(errors), rel=1e-12, abs=1e-15)
        assert gpu[kernel]["r2"] is None and "r2_note" in gpu[kernel]


SHARES = {"flops", "share_of_peak", "share_of_cublas", "share_of_cudnn"}


def shares(q):
    """A GPU kernel's rate and shares, without its fit quality."""
    return {k: v for k, v in q.items() if k in SHARES}


def test_gpu_rates_in_another_unit_of_flops_are_converted(tmp_path):
    """A kernel's rate in Tflop/s was left out of the profile without a word (only Gflop/s
    counted); it now converts, and a dataset of another kind (seconds) is still no rate."""
    gflops, tflops = tmp_path / "g.json", tmp_path / "t.json"
    cuda_trace_as_the_device_writes_it(gflops, {"cublas_sgemm": [48000.0] * 3, "gemm_fp32": [8000.0] * 3})
    cuda_trace_as_the_device_writes_it(tflops, {"cublas_sgemm": [48.0] * 3, "gemm_fp32": [8000.0] * 3})
    data = json.loads(tflops.read_text())
    data["benchmarks"]["cuda"]["datasets"]["cublas_sgemm"]["unit"] = "Tflop/s"
    data["benchmarks"]["cuda"]["datasets"]["launch_time"] = {"unit": "s", "shape": [3], "values": [1e-6] * 3}
    tflops.write_text(json.dumps(data))
    a = fitted(tmp_path, gflops)["rates"]
    (tmp_path / "t").mkdir()
    b = fitted(tmp_path / "t", tflops)["rates"]
    assert b["gpu_cublas_sgemm_flops"]["value"] == pytest.approx(a["gpu_cublas_sgemm_flops"]["value"], rel=1e-12)
    assert b["gpu_cublas_sgemm_flops"]["value"] == pytest.approx(48e12, rel=1e-12)
    assert not any("launch_time" in k for k in b)


@pytest.mark.parametrize("unit", ["GFLOPS", "GFLOP/s", ""])
def test_gpu_rates_in_a_unit_the_fitter_does_not_know_are_refused(tmp_path, unit):
    """A kernel whose rate was written in a misspelt unit (or none) was passed over in silence:
    exit 0 and the kernel missing from the profile (every kernel, where all were misspelt)."""
    trace = tmp_path / "c.json"
    cuda_trace_as_the_device_writes_it(trace, {"gemm_fp32": [8000.0] * 3, "gemm_tf32_wmma": [40000.0] * 3})
    data = json.loads(trace.read_text())
    data["benchmarks"]["cuda"]["datasets"]["gemm_tf32_wmma"]["unit"] = unit
    trace.write_text(json.dumps(data))
    assert (f"{trace} (cuda): dataset 'gemm_tf32_wmma' has unit '{unit}'; expected 'Gflop/s', 'flop/s', "
            "'Mflop/s', 'Tflop/s'") in refused(tmp_path, trace)


def test_a_cuda_group_without_rates_is_refused(tmp_path):
    """A cuda group of times only gave a profile with no rate and no word."""
    trace = tmp_path / "c.json"
    cuda_trace_as_the_device_writes_it(trace, {})
    data = json.loads(trace.read_text())
    data["benchmarks"]["cuda"]["datasets"]["launch_time"] = {"unit": "s", "shape": [3], "values": [1e-6] * 3}
    trace.write_text(json.dumps(data))
    assert f"{trace} (cuda): no dataset of rates; expected one per kernel timed, in Gflop/s" in refused(tmp_path, trace)


def test_gpu_kernels_are_rated_against_the_peak_and_cublas_of_the_same_run(tmp_path):
    rates = {"gemm_fp32_blocked": [12000.0, 11000.0, 13000.0], "peak_fp32_fma": [60000.0] * 3,
             "cublas_sgemm": [48000.0] * 3, "gemm_tf32_wmma_blocked": [150000.0] * 3,
             "peak_tf32_mma_sync": [300000.0] * 3, "cublas_gemm_tf32": [400000.0] * 3,
             "conv3d_ndhwc": [5000.0] * 3, "cudnn_conv3d_ndhwc": [20000.0] * 3,
             "cudnn_conv3d_ndhwc_tf32": [90000.0] * 3, "conv3d_ncdhw": [4000.0] * 3}
    trace = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(trace, rates)
    data = json.loads(trace.read_text())
    data["benchmarks"]["cuda"]["datasets"]["check_seconds"] = {"unit": "s", "shape": [1], "values": [0.5]}
    trace.write_text(json.dumps(data))
    p = fitted(tmp_path, trace)  # the fitter reads the JSON form as it is
    assert set(p["rates"]) == {"gpu_%s_flops" % k for k in rates}  # a dataset in seconds is no rate
    gpu = p["quality"]["gpu"]
    assert shares(gpu["gemm_fp32_blocked"]) == pytest.approx({"flops": 12e12, "share_of_peak": 0.2, "share_of_cublas": 0.25})
    assert shares(gpu["gemm_tf32_wmma_blocked"]) == pytest.approx(
        {"flops": 150e12, "share_of_peak": 0.5, "share_of_cublas": 0.375})
    assert shares(gpu["cublas_gemm_tf32"]) == pytest.approx({"flops": 400e12, "share_of_peak": 4 / 3})
    assert shares(gpu["conv3d_ndhwc"]) == pytest.approx({"flops": 5e12, "share_of_peak": 5 / 60, "share_of_cudnn": 0.25})
    assert shares(gpu["conv3d_ncdhw"]) == pytest.approx({"flops": 4e12, "share_of_peak": 4 / 60})  # no cuDNN in its layout
    assert shares(gpu["cudnn_conv3d_ndhwc_tf32"]) == pytest.approx({"flops": 90e12, "share_of_peak": 0.3})
    assert shares(gpu["peak_fp32_fma"]) == {"flops": 60e12}


@pytest.mark.parametrize("structures, rows", [
    ("simd_table,std_unordered_map", 2),  # the batched table is not there
    ("simd_table_batched_scalar,absl_flat_hash_map", 2),  # a longer name is not the one
    (None, 2),  # no list of structures
    ("simd_table,simd_table_batched", 1),  # named, but no row of rates for it
])
def test_hash_trace_without_the_batched_table_is_refused(tmp_path, structures, rows):
    trace = tmp_path / "hash.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("hash_table")
        if structures is not None:
            g.attrs["structures"] = structures
        g.create_dataset("lookup_rate", data=np.full((rows, 3), 1e7)).attrs["unit"] = "1/s"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) + " (hash_table)" in res.stderr
    assert "no 'simd_table_batched' row among the structures" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("threads, copy, message", [
    ([1.0, 2.0, 4.0, 8.0], np.full((2, 5), 1e10), "dataset 'copy_bandwidth' has 2 rows of 5 values; expected 4 rows"),
    ([1.0], np.zeros((1, 3)), "dataset 'copy_bandwidth' holds 0 at index 0; expected positive bandwidths"),
    ([0.0], np.full((1, 3), 1e10), "dataset 'threads' holds 0 at index 0; expected thread counts, whole numbers "
                                   "from 1 to 1e+06"),
    ([1.5], np.full((1, 3), 1e10), "dataset 'threads' holds 1.5 at index 0; expected thread counts"),
    # Written into the profile as it was: a memory bandwidth of 5e299 GB/s.
    ([1.0], np.full((1, 3), 1e300), "dataset 'copy_bandwidth' holds 1e+300 at index 0; expected positive bandwidths "
                                    "in bytes per second, up to 1e+18"),
])
def test_bad_stream_traces_are_refused(tmp_path, threads, copy, message):
    """Rows the thread counts lack were once read past the end of the data, and zero
    bandwidths written into a profile that simcore run then refused."""
    trace = tmp_path / "stream.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array(threads)).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=copy).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((len(threads), 3), 1e10)).attrs["unit"] = "Bps"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2 and f"{trace} (stream): " + message in res.stderr
    assert not out.exists()


def test_stream_without_a_one_thread_run_gives_no_one_core_rate(tmp_path):
    trace = tmp_path / "stream.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([2.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.full((1, 3), 2e10)).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((1, 3), 3e10)).attrs["unit"] = "Bps"
    rates = fitted(tmp_path, trace)["rates"]
    assert rates["memcpy_bandwidth"]["value"] == 1e10 and "memcpy_bandwidth_one_core" not in rates


def test_memcpy_bandwidth_is_the_fastest_thread_counts_and_says_which(tmp_path):
    """One thread copying faster than four (a memory bus the threads fight over): the rate is
    the one thread's, and the profile says so (its doc once said "all threads")."""
    traces = []
    for name, copies in (("a", [3e10, 2e10, 1.6e10]), ("b", [2e10, 2.4e10, 2.2e10])):
        traces.append(tmp_path / f"{name}.h5")
        with synthetic_trace(traces[-1]) as f:
            g = f.create_group("stream")
            g.create_dataset("threads", data=np.array([1.0, 2.0, 4.0])).attrs["unit"] = ""
            g.create_dataset("copy_bandwidth", data=np.repeat(np.array(copies)[:, None], 3, axis=1)).attrs["unit"] = "Bps"
            g.create_dataset("triad_bandwidth", data=np.full((3, 3), 3e10)).attrs["unit"] = "Bps"
    profile = fitted(tmp_path, *traces)
    assert profile["quality"]["memory"]["memcpy_threads"] == [1, 2]
    assert profile["rates"]["memcpy_bandwidth"]["value"] == pytest.approx((1.5e10 + 1.2e10) / 2)
    assert "the thread count that copied fastest" in profile["rates"]["memcpy_bandwidth"]["doc"]


def test_a_hash_trace_with_a_zero_line_rate_is_refused(tmp_path):
    """It once gave "memory_latency": null, a profile simcore run refused."""
    trace = tmp_path / "hash.h5"
    write_synthetic_hash(trace, 5e7, 2e8, 1e-7)
    with h5py.File(trace, "a") as f:
        f["hash_table/random_line_rate"][0] = 0.0
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert f"{trace} (hash_table): dataset 'random_line_rate' holds 0 at index 0" in res.stderr
    assert not out.exists()
