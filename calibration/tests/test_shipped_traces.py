"""The traces shipped under calibration/traces, this machine's and an H200's: fitted, and the
profiles shipped beside them are what the current fitter makes of them."""

import json
import os
import pathlib
import subprocess

import h5py
import numpy as np
import pytest

from calibration_test_support import SIMCORE, fitted


def test_the_shipped_traces_of_this_machine_fit_into_a_whole_profile(tmp_path):
    """calibration/traces/vm: every benchmark measured here, fitted together."""
    vm = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces" / "vm"
    traces = sorted(vm.glob("*.h5"))
    assert {t.stem for t in traces} >= {"stream", "dgemm", "stencil", "pingpong-intra", "hash", "copy"}
    p = fitted(tmp_path, *traces)
    q, rates = p["quality"], p["rates"]
    assert q["network"]["placement"] == "intra-node" and q["network"]["pattern"] == "pingping"
    assert "network/loopback-bw" in p["simgrid_config"] and "links" not in p
    speed = float(p["hosts"][0]["speed"].rstrip("f"))
    assert rates["dgemm_flops"]["value"] == pytest.approx(speed, rel=1e-5)
    assert rates["flops_per_cell"]["value"] == pytest.approx(speed / rates["stencil_cell_rate"]["value"], rel=1e-5)
    assert 0 < q["compute"][0]["share_of_measured_peak"] <= 1.05
    assert rates["random_line_rate"]["value"] >= rates["hash_lookup_rate"]["value"] > 0
    assert rates["memcpy_bandwidth"]["value"] > 1e9
    # Copies of cached data go faster than STREAM's over memory, up to a limit within the sizes.
    assert rates["cached_copy_bandwidth"]["value"] > rates["memcpy_bandwidth"]["value"]
    assert 4096 < rates["cached_copy_limit"]["value"] < 2**26
    assert rates["network_latency_past_switch_intra_node"]["value"] > 0
    # The ping-pong trace has its exchange and self windows, long windows, the fast box's sweep
    # and matching windows (since 2026-12-07): the profile has message gaps, queued ones too, a
    # fast box and the time of a posted receive passed over.
    assert set(p["message_gaps"]) == {"intra-node", "self", "intra-node-queued"}
    assert {"fast_box_bytes", "fast_box_header", "fast_box_alignment", "match_scan_seconds_intra_node",
            "match_scan_seconds_self"} <= set(rates)


def test_the_shipped_traces_of_this_machine_come_from_one_configuration_and_sitting():
    """calibration/traces/vm: one profile stands for one machine, so its traces name one core
    (cpu_id), one ISA (the quiet host's CPU had `sse4a`, the machine's since 2026-12-05 has
    not: until 2026-12-06 the set mixed both) and one clean revision, within one hour. The
    quiet host's traces, kept in traces/vm-quiet, name the other ISA."""
    root = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces"

    def attrs(trace):
        with h5py.File(trace) as f:
            return {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}

    vm = [attrs(t) for t in sorted((root / "vm").glob("*.h5"))]
    assert len(vm) == 6
    for key in ("cpu_id", "isa", "git_revision", "host", "compiler"):
        assert len({a[key] for a in vm}) == 1, key
    assert vm[0]["cpu_id"].startswith("AuthenticAMD") and not vm[0]["git_revision"].endswith("-dirty")
    dates = sorted(np.datetime64(a["date"].rstrip("Z")) for a in vm)
    assert dates[-1] - dates[0] < np.timedelta64(1, "h")
    quiet = [attrs(t) for t in sorted((root / "vm-quiet").glob("*.h5"))]
    assert len(quiet) == 4 and all("sse4a" in a["isa"].split() for a in quiet)
    assert "sse4a" not in vm[0]["isa"].split()


def test_the_quiet_host_traces_still_fit(tmp_path):
    """traces/vm-quiet (2026-12-03 and 04): the figures the README quotes for that host."""
    root = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces" / "vm-quiet"
    p = fitted(tmp_path, *sorted(root.glob("*.h5")))
    rates = p["rates"]
    assert rates["flops_per_cell"]["value"] == pytest.approx(627, abs=0.5)
    assert p["quality"]["compute"][0]["measured_peak_flops"] / 1e9 == pytest.approx(136.2, abs=0.05)
    assert rates["hash_lookup_rate"]["value"] / 1e6 == pytest.approx(136.7, abs=0.05)


def test_the_shipped_h200_trace_fits_into_gpu_rates_with_their_shares(tmp_path):
    """calibration/traces/h200/cuda.h5, measured on an H200 by cuda/run_on_device.sh: every
    kernel's rate is the median of its repetitions as h5py reads them, and the shares are the
    ratios of those medians. What the run showed is pinned too: the blocked kernels beat the
    plain ones, no kernel of ours passes the peak of its units, cuBLAS's TF32 passes the
    mma.sync peak (Hopper's warp-group instructions, which WMMA does not reach), and cuDNN's
    tensor-core convolution is faster channels-last while ours is faster channels-first."""
    trace = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"]) / "calibration" / "traces" / "h200" / "cuda.h5"
    with h5py.File(trace) as f:
        assert f.attrs["gpu"] == "NVIDIA H200" and f["cuda"].attrs["compute_capability"] == "9.0"
        assert f["cuda"].attrs["cudnn"].startswith("libcudnn.so.9")
        medians = {k: float(np.median(f["cuda"][k][()])) * 1e9 for k in f["cuda"]}
        assert all(f["cuda"][k].attrs["unit"] == "Gflop/s" for k in f["cuda"])
    assert set(medians) == {"gemm_fp32", "gemm_fp32_blocked", "gemm_tf32_wmma", "gemm_tf32_wmma_blocked",
                            "cublas_sgemm", "cublas_gemm_tf32", "conv3d_ncdhw", "conv3d_ndhwc", "cudnn_conv3d_ncdhw",
                            "cudnn_conv3d_ndhwc", "cudnn_conv3d_ncdhw_tf32", "cudnn_conv3d_ndhwc_tf32",
                            "peak_fp32_fma", "peak_tf32_mma_sync"}
    p = fitted(tmp_path, trace)
    assert {k: r["value"] for k, r in p["rates"].items()} == pytest.approx(
        {"gpu_%s_flops" % k: v for k, v in medians.items()}, rel=1e-12)
    gpu = p["quality"]["gpu"]
    for kernel, q in gpu.items():
        units = "peak_tf32_mma_sync" if "tf32" in kernel else "peak_fp32_fma"
        if kernel != units:
            assert q["share_of_peak"] == pytest.approx(medians[kernel] / medians[units], rel=1e-12)
        if kernel.startswith("gemm"):
            lib = "cublas_gemm_tf32" if "tf32" in kernel else "cublas_sgemm"
            assert q["share_of_cublas"] == pytest.approx(medians[kernel] / medians[lib], rel=1e-12)
            assert q["share_of_peak"] < 1
        if kernel.startswith("conv3d"):
            assert q["share_of_cudnn"] == pytest.approx(medians[kernel] / medians["cudnn_" + kernel], rel=1e-12)
    assert medians["gemm_fp32_blocked"] > 3 * medians["gemm_fp32"]
    assert medians["gemm_tf32_wmma_blocked"] > 3 * medians["gemm_tf32_wmma"]
    assert gpu["cublas_gemm_tf32"]["share_of_peak"] > 1 > gpu["cublas_sgemm"]["share_of_peak"]
    assert medians["cudnn_conv3d_ndhwc_tf32"] > medians["cudnn_conv3d_ncdhw_tf32"]
    assert medians["conv3d_ncdhw"] > medians["conv3d_ndhwc"]
    # Golden: the medians of that run (Gflop/s), as the README quotes them.
    assert medians["peak_fp32_fma"] / 1e9 == pytest.approx(61046.8, rel=1e-5)
    assert medians["gemm_tf32_wmma_blocked"] / 1e9 == pytest.approx(83325.9, rel=1e-5)
    assert medians["cublas_gemm_tf32"] / 1e9 == pytest.approx(343218.9, rel=1e-5)
    assert medians["cudnn_conv3d_ndhwc_tf32"] / 1e9 == pytest.approx(124348.4, rel=1e-5)


@pytest.mark.parametrize("profile", ["vm/profile-intra.json", "h200/profile.json"])
def test_the_shipped_profiles_are_what_the_fitter_makes_of_the_shipped_traces(tmp_path, profile):
    """A shipped profile is refitted whenever the fitter changes: fitting the traces it names
    (from the source tree, in its order) gives it back byte for byte, every rate and quality
    figure in the same order."""
    root = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
    shipped = json.loads((root / "calibration" / "traces" / profile).read_text())
    out = tmp_path / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", *shipped["meta"]["traces"], "-o", str(out)], cwd=root,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert out.read_text() == (root / "calibration" / "traces" / profile).read_text()
