/* The 3D convolution of calib_cuda as an implicit GEMM: rows are output pixels, columns
 * filters, the reduction runs over c x t x r x s; tiles of the input are gathered on the fly
 * (im2col without the copy). The filter tensor is k x (c t r s) in either layout; the layout
 * moves the input and output. The index arithmetic is shared with the host
 * (include/calibration/conv3d_implicit_gemm.hpp), where the unit tests check it. */
#pragma once

#include "calibration/conv3d_implicit_gemm.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif // elsewhere the tests' CUDA-on-CPU emulation (calibration/tests/cuda_on_cpu.hpp) stands in

namespace calibration_cuda {

constexpr int kConvTile = 16;

__global__ void conv3d_implicit_gemm(calibration::ConvShape q, bool channels_last, const float* in, const float* wt,
                                     float* out)
{
  using namespace calibration;
  __shared__ float as[kConvTile][kConvTile], bs[kConvTile][kConvTile];
  const long row = static_cast<long>(blockIdx.y) * kConvTile + threadIdx.y; // output pixel
  const int col = blockIdx.x * kConvTile + threadIdx.x;                     // filter
  const int kk = q.gemm_k();
  const OutputPixel px = row < q.gemm_m() ? pixel_of_row(q, row) : OutputPixel{0, 0, 0, 0};
  float acc = 0;
  for (int p0 = 0; p0 < kk; p0 += kConvTile) {
    const int p = p0 + threadIdx.x;
    float v = 0;
    if (row < q.gemm_m() && p < kk)
      v = in[gathered_input_index(q, channels_last, px, tap_of_index(q, p))];
    as[threadIdx.y][threadIdx.x] = v;
    const int pb = p0 + threadIdx.y;
    bs[threadIdx.y][threadIdx.x] = col < q.k && pb < kk ? wt[filter_index(q, col, pb)] : 0.f;
    __syncthreads();
    for (int i = 0; i < kConvTile; i++)
      acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < q.gemm_m() && col < q.k)
    out[output_index(q, channels_last, px.n, col, px.d, px.h, px.w)] = acc;
}

} // namespace calibration_cuda
