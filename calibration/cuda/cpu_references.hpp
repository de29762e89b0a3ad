/* What calib_cuda's kernels must compute, computed plainly on the CPU (sums in double): the
 * references of its checks, and of the tests that run the kernels on the CPU. */
#pragma once

#include "calibration/conv3d_implicit_gemm.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace calibration_cuda {

/** Row-major C = A B (m x k times k x n). */
inline std::vector<float> gemm_reference(int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b)
{
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0;
      for (int p = 0; p < k; p++)
        acc += static_cast<double>(a[static_cast<std::size_t>(i) * k + p]) * b[static_cast<std::size_t>(p) * n + j];
      c[static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
    }
  return c;
}

/** The direct convolution (stride 1, no padding), filters k x (c t r s), in the layout's order. */
inline std::vector<float> conv3d_reference(const calibration::ConvShape& q, bool channels_last,
                                           const std::vector<float>& in, const std::vector<float>& wt)
{
  std::vector<float> out(static_cast<std::size_t>(q.gemm_m()) * q.k);
  for (int n = 0; n < q.n; n++)
    for (int k = 0; k < q.k; k++)
      for (int d = 0; d < q.od(); d++)
        for (int h = 0; h < q.oh(); h++)
          for (int w = 0; w < q.ow(); w++) {
            double acc = 0;
            for (int c = 0; c < q.c; c++)
              for (int t = 0; t < q.t; t++)
                for (int r = 0; r < q.r; r++)
                  for (int s = 0; s < q.s; s++)
                    acc += static_cast<double>(in[calibration::input_index(q, channels_last, n, c, d + t, h + r, w + s)]) *
                           wt[static_cast<std::size_t>(k) * q.gemm_k() + ((c * q.t + t) * q.r + r) * q.s + s];
            out[calibration::output_index(q, channels_last, n, k, d, h, w)] = static_cast<float>(acc);
          }
  return out;
}

/** What fp32_fma_peak writes for `thread`: `chains` chains from `start(thread, chain)`, each
 *  `iterations` times v = fma(v, x, y) (rounded once, as the GPU's FMA), then summed in order. */
template <class Start>
float fma_peak_reference(int thread, float x, float y, int chains, int iterations, Start start)
{
  std::vector<float> v(static_cast<std::size_t>(chains));
  for (int i = 0; i < chains; i++)
    v[static_cast<std::size_t>(i)] = start(thread, i);
  for (int it = 0; it < iterations; it++)
    for (auto& e : v)
      e = std::fmaf(e, x, y);
  float s = 0;
  for (float e : v)
    s += e;
  return s;
}

/** What tf32_mma_peak writes for every warp: A (16 x 8, src[0, 128)) times B (8 x 16,
 *  src[128, 256)), accumulated `iterations` times into `chains` accumulators that start at 0,
 *  1, ..., then summed. Exact where the values are small integers. */
inline std::vector<float> mma_peak_reference(const std::vector<float>& src, int chains, int iterations)
{
  std::vector<float> ref = gemm_reference(16, 16, 8, std::vector<float>(src.begin(), src.begin() + 128),
                                          std::vector<float>(src.begin() + 128, src.begin() + 256));
  for (auto& r : ref)
    r = r * static_cast<float>(chains) * static_cast<float>(iterations) + static_cast<float>(chains * (chains - 1) / 2);
  return ref;
}

} // namespace calibration_cuda
