/* GEMM kernels of calib_cuda (row-major, C = A B, A m x k, B k x n): FP32 on the CUDA cores and
 * TF32 on the tensor cores through WMMA, each in two forms: a plain one (what a first port
 * looks like) and a blocked one (tiles staged in shared memory, register blocking; what a
 * tuned library does, without its last tricks). The plain kernels take any size; the blocked
 * ones need the multiples that their launchers check. */
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <mma.h>
#endif // elsewhere the tests' CUDA-on-CPU emulation (calibration/tests/cuda_on_cpu.hpp) stands in

namespace calibration_cuda {

constexpr int kTile = 16; // plain kernels: 16 x 16 threads, one element of C each

#ifndef SIMCORE_CUDA_CHECK_ALIGNED // the CPU emulation of the tests checks; the GPU faults
#define SIMCORE_CUDA_CHECK_ALIGNED(pointer, bytes)
#endif

/** Four floats at once (one 16-byte access): `p` must be 16-byte aligned. */
__device__ inline float4 load_float4(const float* p)
{
  SIMCORE_CUDA_CHECK_ALIGNED(p, 16);
  return *reinterpret_cast<const float4*>(p);
}
__device__ inline void store_float4(float* p, float4 v)
{
  SIMCORE_CUDA_CHECK_ALIGNED(p, 16);
  *reinterpret_cast<float4*>(p) = v;
}

__global__ void sgemm_tiled(int m, int n, int k, const float* a, const float* b, float* c)
{
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  float acc = 0;
  for (int p0 = 0; p0 < k; p0 += kTile) {
    as[ty][tx] = row < m && p0 + tx < k ? a[static_cast<long>(row) * k + p0 + tx] : 0.f;
    bs[ty][tx] = col < n && p0 + ty < k ? b[static_cast<long>(p0 + ty) * n + col] : 0.f;
    __syncthreads();
    for (int p = 0; p < kTile; p++)
      acc += as[ty][p] * bs[p][tx];
    __syncthreads();
  }
  if (row < m && col < n)
    c[static_cast<long>(row) * n + col] = acc;
}

/* Register-blocked FP32: a block of 256 threads computes 128 x 128 of C over slices of 8 of
 * the reduction; each thread 8 x 8 values, as four 4 x 4 quadrants 64 rows and 64 columns
 * apart, so that a warp's shared-memory reads are consecutive float4s (no bank conflicts). A
 * is stored transposed in shared memory, so that a thread's four rows are one float4. */
constexpr int kBlockedM = 128, kBlockedN = 128, kBlockedK = 8, kBlockedThreads = 256;

__global__ void __launch_bounds__(kBlockedThreads) sgemm_blocked(int /*m: the grid*/, int n, int k, const float* a, const float* b, float* c)
{
  __shared__ __align__(16) float as[kBlockedK][kBlockedM]; // as[p][row]
  __shared__ __align__(16) float bs[kBlockedK][kBlockedN]; // bs[p][col]
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int row0 = blockIdx.y * kBlockedM, col0 = blockIdx.x * kBlockedN;
  // Loads: A tile 128 x 8 and B tile 8 x 128, one float4 of each per thread.
  const int a_row = t / 2, a_col = (t % 2) * 4, b_row = t / 32, b_col = (t % 32) * 4;
  float acc[8][8] = {};
  for (int p0 = 0; p0 < k; p0 += kBlockedK) {
    const float4 av = load_float4(a + static_cast<long>(row0 + a_row) * k + p0 + a_col);
    as[a_col + 0][a_row] = av.x;
    as[a_col + 1][a_row] = av.y;
    as[a_col + 2][a_row] = av.z;
    as[a_col + 3][a_row] = av.w;
    store_float4(&bs[b_row][b_col], load_float4(b + static_cast<long>(p0 + b_row) * n + col0 + b_col));
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kBlockedK; p++) {
      __align__(16) float ar[8], br[8];
      store_float4(&ar[0], load_float4(&as[p][ty * 4]));
      store_float4(&ar[4], load_float4(&as[p][ty * 4 + 64]));
      store_float4(&br[0], load_float4(&bs[p][tx * 4]));
      store_float4(&br[4], load_float4(&bs[p][tx * 4 + 64]));
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
          acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int row = row0 + ty * 4 + (i % 4) + (i / 4) * 64;
#pragma unroll
    for (int half = 0; half < 2; half++) {
      const int col = col0 + tx * 4 + half * 64;
      store_float4(c + static_cast<long>(row) * n + col,
                   make_float4(acc[i][half * 4 + 0], acc[i][half * 4 + 1], acc[i][half * 4 + 2], acc[i][half * 4 + 3]));
    }
  }
}

/** One warp per 16 x 16 tile of C, fragments loaded from global memory; m, n multiples of 16
 *  and k of 8. */
__global__ void gemm_tf32_wmma(int /*m: the grid*/, int n, int k, const float* a, const float* b, float* c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  const int tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  for (int p = 0; p < k; p += 8) {
    wmma::load_matrix_sync(fa, a + static_cast<long>(tile_row) * k + p, k);
    wmma::load_matrix_sync(fb, b + static_cast<long>(p) * n + tile_col, n);
    for (int i = 0; i < fa.num_elements; i++)
      fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++)
      fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + static_cast<long>(tile_row) * n + tile_col, acc, n, wmma::mem_row_major);
#endif
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800 // where WMMA has TF32
/** Four floats rounded to TF32 (to nearest), as the tensor cores should read them. */
__device__ inline float4 to_tf32(float4 v)
{
  using nvcuda::wmma::__float_to_tf32;
  return make_float4(__float_to_tf32(v.x), __float_to_tf32(v.y), __float_to_tf32(v.z), __float_to_tf32(v.w));
}
#endif

/* Blocked TF32: a block of 4 warps computes 128 x 128 of C over slices of 32 of the
 * reduction, staged in shared memory (rounded to TF32 on the way in); the warps form a 2 x 2
 * grid, each computing 64 x 64 as 4 x 4 fragments of 16 x 16 (16 products for every 8 fragment
 * loads from shared memory, which WMMA's TF32 fragments read one float a lane at a time). Two
 * blocks fit on a multiprocessor (the register cap of __launch_bounds__), so that one computes
 * while the other waits for its slice. Rows of the staged A are padded by 4 floats and those of
 * B by 8: every fragment's start stays 32-byte aligned (WMMA's rule), and A's rows, 36 floats
 * apart, spread a fragment load's 8 rows over all banks.
 * Measured on an H200 against the 8-warp, 64 x 32-a-warp form it replaces (53 Tflop/s at 4096
 * and 8192): 88 Tflop/s; 16-deep slices 84, 8-warp forms 62-78, prefetching the next slice into
 * registers no gain (calibration/README.md). */
constexpr int kWmmaM = 128, kWmmaN = 128, kWmmaK = 32, kWmmaThreads = 128, kWmmaPadA = 4, kWmmaPadB = 8;
constexpr int kWmmaWarpM = 64, kWmmaWarpN = 64; // a warp's share of the block's tile

__global__ void __launch_bounds__(kWmmaThreads, 2) gemm_tf32_wmma_blocked(int /*m: the grid*/, int n, int k, const float* a, const float* b, float* c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  constexpr int kFragM = kWmmaWarpM / 16, kFragN = kWmmaWarpN / 16;
  constexpr int kWarpsN = kWmmaN / kWmmaWarpN;
  __shared__ __align__(32) float as[kWmmaM][kWmmaK + kWmmaPadA];
  __shared__ __align__(32) float bs[kWmmaK][kWmmaN + kWmmaPadB];
  const int t = threadIdx.x, warp = t / 32;
  const int warp_row = (warp / kWarpsN) * kWmmaWarpM, warp_col = (warp % kWarpsN) * kWmmaWarpN;
  const int row0 = blockIdx.y * kWmmaM, col0 = blockIdx.x * kWmmaN;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kFragM][kFragN];
#pragma unroll
  for (int i = 0; i < kFragM; i++)
#pragma unroll
    for (int j = 0; j < kFragN; j++)
      wmma::fill_fragment(acc[i][j], 0.0f);
  for (int p0 = 0; p0 < k; p0 += kWmmaK) {
    // 128 x 32 of A and 32 x 128 of B: 1024 float4s each, eight of each per thread.
#pragma unroll
    for (int it = 0; it < kWmmaM * kWmmaK / 4 / kWmmaThreads; it++) {
      const int idx = t + it * kWmmaThreads;
      const int ar = idx / (kWmmaK / 4), ac = (idx % (kWmmaK / 4)) * 4;
      store_float4(&as[ar][ac], to_tf32(load_float4(a + static_cast<long>(row0 + ar) * k + p0 + ac)));
      const int br = idx / (kWmmaN / 4), bc = (idx % (kWmmaN / 4)) * 4;
      store_float4(&bs[br][bc], to_tf32(load_float4(b + static_cast<long>(p0 + br) * n + col0 + bc)));
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kWmmaK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[kFragM];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[kFragN];
#pragma unroll
      for (int i = 0; i < kFragM; i++)
        wmma::load_matrix_sync(fa[i], &as[warp_row + i * 16][kk], kWmmaK + kWmmaPadA);
#pragma unroll
      for (int j = 0; j < kFragN; j++)
        wmma::load_matrix_sync(fb[j], &bs[kk][warp_col + j * 16], kWmmaN + kWmmaPadB);
#pragma unroll
      for (int i = 0; i < kFragM; i++)
#pragma unroll
        for (int j = 0; j < kFragN; j++)
          wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kFragM; i++)
#pragma unroll
    for (int j = 0; j < kFragN; j++)
      wmma::store_matrix_sync(c + static_cast<long>(row0 + warp_row + i * 16) * n + col0 + warp_col + j * 16, acc[i][j],
                              n, wmma::mem_row_major);
#endif
}

} // namespace calibration_cuda
