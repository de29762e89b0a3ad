/* What calib_cuda's timed run holds at its peak, on the host and on the device, so that it can
 * refuse a --size this machine cannot hold before allocating anything (the CPU benchmarks do the
 * same through refuse_beyond_available_memory). Host code only: the tests compute it on a
 * machine without a GPU. */
#pragma once

#include "calibration/conv3d_implicit_gemm.hpp"

#include <algorithm>
#include <cstddef>

namespace calibration_cuda {

/** Host memory for the CUDA runtime and the libraries it loads (cuBLAS, cuDNN: their host
 *  heaps, not their mapped code), an allowance from above; the arrays come on top. */
constexpr double kRuntimeHostBytes = 512.0 * (1 << 20);
/** Device memory for the context, cuBLAS's and cuDNN's workspaces, the peak kernels' outputs:
 *  an allowance from above, beside the arrays. */
constexpr double kLibraryDeviceBytes = 512.0 * (1 << 20);

/** The convolution calib_cuda times: N 8, C 32, D 16, H 32, W 32, K 64, 3 x 3 x 3 filters. */
inline constexpr calibration::ConvShape kTimedConv{8, 32, 16, 32, 32, 64, 3, 3, 3};

/** The timed run's peaks in bytes. GEMMs of order n: A and B and the product on the device
 *  (12 n^2), on the host A and B and two products, the first kernel's kept to compare the
 *  others with (16 n^2). The convolution `q` (after the GEMMs, which are freed by then): its
 *  input, filters (twice: cuDNN's copy) and output on the device; on the host the filters twice
 *  and three outputs (ours in both layouts and the one being compared), or the input while it
 *  is being copied over. */
struct WorkingSet {
  double host_bytes, device_bytes;
};

inline WorkingSet timed_working_set(int n, const calibration::ConvShape& q)
{
  const double n2 = static_cast<double>(n) * n, f = sizeof(float);
  const double in = f * q.n * q.c * q.d * q.h * q.w, filters = f * q.k * q.gemm_k(),
               out = f * static_cast<double>(q.gemm_m()) * q.k;
  return {std::max(16 * n2, std::max(in, 3 * out) + 2 * filters) + kRuntimeHostBytes,
          std::max(12 * n2, in + 2 * filters + out) + kLibraryDeviceBytes};
}

} // namespace calibration_cuda
