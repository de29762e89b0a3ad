/* The most a GPU's cores give, measured in the same run as the GEMMs (as calib_dgemm measures
 * a CPU core's peak): independent chains of fused multiply-adds on registers (FP32, CUDA
 * cores), and WMMA products of TF32 fragments held in registers (tensor cores as WMMA reaches
 * them: mma.sync, not Hopper's warp-group instructions, which only a library or hand-written
 * assembly uses). Neither touches memory in its loop. */
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <mma.h>
#endif // elsewhere the tests' CUDA-on-CPU emulation (calibration/tests/cuda_on_cpu.hpp) stands in

namespace calibration_cuda {

constexpr int kPeakChains = 8;          // independent FMA chains per thread
constexpr int kPeakFmaIterations = 4096; // of all chains
constexpr int kPeakThreads = 256;

/** Where chain `chain` of thread `thread` starts (exact, so that the CPU check repeats it). */
__host__ __device__ inline float fma_start(int thread, int chain)
{
  return static_cast<float>(thread % 7) + 0.5f * static_cast<float>(chain); // exact: no rounding to differ
}

/** 2 x kPeakChains x kPeakFmaIterations flops per thread; `x` near 1 and `y` small keep the
 *  values finite; the sums are written so that nothing is optimised away. The chains start at
 *  fma_start(thread, chain). */
__global__ void __launch_bounds__(kPeakThreads) fp32_fma_peak(float x, float y, float* out)
{
  float v[kPeakChains];
#pragma unroll
  for (int i = 0; i < kPeakChains; i++)
    v[i] = fma_start(threadIdx.x, i);
  for (int it = 0; it < kPeakFmaIterations; it++)
#pragma unroll
    for (int i = 0; i < kPeakChains; i++)
      v[i] = fmaf(v[i], x, y);
  float s = 0;
#pragma unroll
  for (int i = 0; i < kPeakChains; i++)
    s += v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

constexpr int kPeakMmaChains = 4;         // independent accumulators per warp
constexpr int kPeakMmaIterations = 2048; // of all accumulators

/** 2 x 16 x 16 x 8 x kPeakMmaChains x kPeakMmaIterations flops per warp; the fragments come
 *  from `src` (256 floats) once, accumulator i starts at i, their sum goes to `out` (256
 *  floats per warp). */
__global__ void __launch_bounds__(kPeakThreads) tf32_mma_peak(const float* src, float* out)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::load_matrix_sync(fa, src, 8);
  wmma::load_matrix_sync(fb, src + 128, 16);
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kPeakMmaChains];
#pragma unroll
  for (int i = 0; i < kPeakMmaChains; i++)
    wmma::fill_fragment(acc[i], static_cast<float>(i)); // different, so that no compiler merges them
  for (int it = 0; it < kPeakMmaIterations; it++)
#pragma unroll
    for (int i = 0; i < kPeakMmaChains; i++)
      wmma::mma_sync(acc[i], fa, fb, acc[i]);
  for (int i = 1; i < kPeakMmaChains; i++)
    for (int e = 0; e < acc[0].num_elements; e++)
      acc[0].x[e] += acc[i].x[e];
  const long warp = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  wmma::store_matrix_sync(out + warp * 256, acc[0], 16, wmma::mem_row_major);
#endif
}

} // namespace calibration_cuda
