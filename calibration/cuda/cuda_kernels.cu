/* CUDA calibration kernels: GEMM in FP32 (shared-memory tiles) and TF32 (tensor cores through
 * WMMA, sm_80 and later), and a 3D convolution as an implicit GEMM in channels-first (NCDHW)
 * and channels-last (NDHWC) layouts. Each is checked against a CPU reference, then timed.
 * Without a CUDA device it says so and exits 77 (a skip for the tests), never pretending.
 *   calib_cuda [--check] [--size N] -o TRACE.h5
 * Built with -DSIMCORE_CUDA_NO_TRACE (cuda/build_for_device.sh) it needs no HDF5 library and
 * prints its checks and rates only: a binary to carry to a bare GPU machine. */
#include "calibration/conv3d_implicit_gemm.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using calibration::ConvShape;
using calibration::filter_index;
using calibration::gathered_input_index;
using calibration::input_index;
using calibration::output_index;
using calibration::OutputPixel;
using calibration::pixel_of_row;
using calibration::tap_of_index;

constexpr int kTile = 16;

__global__ void sgemm_tiled(int m, int n, int k, const float* a, const float* b, float* c)
{
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0;
  for (int p0 = 0; p0 < k; p0 += kTile) {
    as[threadIdx.y][threadIdx.x] = row < m && p0 + threadIdx.x < k ? a[row * k + p0 + threadIdx.x] : 0.f;
    bs[threadIdx.y][threadIdx.x] = col < n && p0 + threadIdx.y < k ? b[(p0 + threadIdx.y) * n + col] : 0.f;
    __syncthreads();
    for (int p = 0; p < kTile; p++)
      acc += as[threadIdx.y][p] * bs[p][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = acc;
}

/** One warp per 16 x 16 tile of C; m, n multiples of 16 and k of 8 (the caller pads). */
__global__ void gemm_tf32_wmma(int m, int n, int k, const float* a, const float* b, float* c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  const int tile_row = blockIdx.y * 16, tile_col = blockIdx.x * 16;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  for (int p = 0; p < k; p += 8) {
    wmma::load_matrix_sync(fa, a + tile_row * k + p, k);
    wmma::load_matrix_sync(fb, b + p * n + tile_col, n);
    for (int i = 0; i < fa.num_elements; i++)
      fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++)
      fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
#endif
}

/** The convolution as a GEMM: rows are output pixels, columns filters, the reduction runs over
 *  c x t x r x s; tiles of the input are gathered on the fly (im2col without the copy). The
 *  filter tensor is k x (c t r s) in either layout; the layout moves the input and output. */
__global__ void conv3d_implicit_gemm(ConvShape q, bool channels_last, const float* in, const float* wt, float* out)
{
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const long row = static_cast<long>(blockIdx.y) * kTile + threadIdx.y; // output pixel
  const int col = blockIdx.x * kTile + threadIdx.x;                     // filter
  const int kk = q.gemm_k();
  const OutputPixel px = row < q.gemm_m() ? pixel_of_row(q, row) : OutputPixel{0, 0, 0, 0};
  float acc = 0;
  for (int p0 = 0; p0 < kk; p0 += kTile) {
    const int p = p0 + threadIdx.x;
    float v = 0;
    if (row < q.gemm_m() && p < kk)
      v = in[gathered_input_index(q, channels_last, px, tap_of_index(q, p))];
    as[threadIdx.y][threadIdx.x] = v;
    const int pb = p0 + threadIdx.y;
    bs[threadIdx.y][threadIdx.x] = col < q.k && pb < kk ? wt[filter_index(q, col, pb)] : 0.f;
    __syncthreads();
    for (int i = 0; i < kTile; i++)
      acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < q.gemm_m() && col < q.k)
    out[output_index(q, channels_last, px.n, col, px.d, px.h, px.w)] = acc;
}

void gemm_cpu(int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c)
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0;
      for (int p = 0; p < k; p++)
        acc += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
}

void conv_cpu(const ConvShape& q, bool last, const std::vector<float>& in, const std::vector<float>& wt,
              std::vector<float>& out)
{
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
                    acc += static_cast<double>(in[input_index(q, last, n, c, d + t, h + r, w + s)]) *
                           wt[static_cast<long>(k) * q.gemm_k() + ((c * q.t + t) * q.r + r) * q.s + s];
            out[output_index(q, last, n, k, d, h, w)] = static_cast<float>(acc);
          }
}

void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) {
    std::fprintf(stderr, "calib_cuda: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

float* device_copy(const std::vector<float>& v)
{
  float* d = nullptr;
  check(cudaMalloc(&d, v.size() * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice), "copy to device");
  return d;
}

double max_rel_error(const std::vector<float>& got, const std::vector<float>& ref)
{
  double worst = 0, scale = 0;
  for (float r : ref)
    scale = std::max(scale, static_cast<double>(std::abs(r)));
  for (std::size_t i = 0; i < ref.size(); i++)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - ref[i]) / (scale > 0 ? scale : 1));
  return worst;
}

} // namespace

int main(int argc, char** argv)
{
  bool check_only = false;
  int size = 1024;
  std::string out;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--check") == 0)
      check_only = true;
    else if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      size = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("calib_cuda: no CUDA device (%s): skipped; the kernels were built, not run\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device properties");
  const bool tensor_tf32 = prop.major >= 8;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v)
      x = u(rng);
    return v;
  };
  bool ok = true;
  std::map<std::string, calibration::Dataset> datasets;
  auto time_kernel = [&](const char* name, double flops, auto&& launch) {
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    launch(); // warm-up
    std::vector<double> rates;
    for (int rep = 0; rep < 5; rep++) {
      cudaEventRecord(t0);
      launch();
      cudaEventRecord(t1);
      check(cudaEventSynchronize(t1), name);
      float ms = 0;
      cudaEventElapsedTime(&ms, t0, t1);
      rates.push_back(flops / (ms / 1e3) / 1e9);
    }
    std::printf("%-28s %8.1f Gflop/s\n", name, rates.back());
    datasets[name] = {rates, {rates.size()}, "Gflop/s"};
  };

  // Correctness on small, ragged problems (TF32: multiples of the tile, looser tolerance).
  {
    const int m = 67, n = 45, k = 70;
    auto a = random(m * k), b = random(k * n);
    std::vector<float> ref(m * n), got(m * n);
    gemm_cpu(m, n, k, a, b, ref);
    float *da = device_copy(a), *db = device_copy(b), *dc = nullptr;
    check(cudaMalloc(&dc, got.size() * sizeof(float)), "cudaMalloc");
    sgemm_tiled<<<dim3((n + kTile - 1) / kTile, (m + kTile - 1) / kTile), dim3(kTile, kTile)>>>(m, n, k, da, db, dc);
    check(cudaMemcpy(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "sgemm");
    const double err = max_rel_error(got, ref);
    std::printf("FP32 GEMM check: max relative error %.2e\n", err);
    ok = ok && err < 1e-5;
    cudaFree(da), cudaFree(db), cudaFree(dc);
  }
  if (tensor_tf32) {
    const int m = 64, n = 48, k = 40;
    auto a = random(m * k), b = random(k * n);
    std::vector<float> ref(m * n), got(m * n);
    gemm_cpu(m, n, k, a, b, ref);
    float *da = device_copy(a), *db = device_copy(b), *dc = nullptr;
    check(cudaMalloc(&dc, got.size() * sizeof(float)), "cudaMalloc");
    gemm_tf32_wmma<<<dim3(n / 16, m / 16), 32>>>(m, n, k, da, db, dc);
    check(cudaMemcpy(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "tf32 gemm");
    const double err = max_rel_error(got, ref);
    std::printf("TF32 GEMM check: max relative error %.2e (10-bit mantissa inputs)\n", err);
    ok = ok && err < 1e-2;
    cudaFree(da), cudaFree(db), cudaFree(dc);
  }
  for (bool last : {false, true}) {
    const ConvShape q{2, 3, 6, 7, 5, 4, 3, 2, 3};
    auto in = random(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w);
    auto wt = random(static_cast<std::size_t>(q.k) * q.gemm_k());
    std::vector<float> ref(static_cast<std::size_t>(q.gemm_m()) * q.k), got(ref.size());
    conv_cpu(q, last, in, wt, ref);
    float *din = device_copy(in), *dw = device_copy(wt), *dout = nullptr;
    check(cudaMalloc(&dout, got.size() * sizeof(float)), "cudaMalloc");
    conv3d_implicit_gemm<<<dim3((q.k + kTile - 1) / kTile, static_cast<unsigned>((q.gemm_m() + kTile - 1) / kTile)),
                           dim3(kTile, kTile)>>>(q, last, din, dw, dout);
    check(cudaMemcpy(got.data(), dout, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "conv3d");
    const double err = max_rel_error(got, ref);
    std::printf("conv3d %s check: max relative error %.2e\n", last ? "NDHWC" : "NCDHW", err);
    ok = ok && err < 1e-5;
    cudaFree(din), cudaFree(dw), cudaFree(dout);
  }
  if (!ok) {
    std::printf("calib_cuda: a kernel disagrees with the CPU reference\n");
    return 1;
  }
  if (check_only)
    return 0;

  // Timings.
  const int n = size / 16 * 16;
  auto a = random(static_cast<std::size_t>(n) * n), b = random(static_cast<std::size_t>(n) * n);
  float *da = device_copy(a), *db = device_copy(b), *dc = nullptr;
  check(cudaMalloc(&dc, a.size() * sizeof(float)), "cudaMalloc");
  const double gemm_flops = 2.0 * n * static_cast<double>(n) * n;
  time_kernel("gemm_fp32", gemm_flops, [&] {
    sgemm_tiled<<<dim3(n / kTile, n / kTile), dim3(kTile, kTile)>>>(n, n, n, da, db, dc);
  });
  if (tensor_tf32)
    time_kernel("gemm_tf32_wmma", gemm_flops, [&] { gemm_tf32_wmma<<<dim3(n / 16, n / 16), 32>>>(n, n, n, da, db, dc); });
  cudaFree(da), cudaFree(db), cudaFree(dc);
  const ConvShape q{8, 32, 16, 32, 32, 64, 3, 3, 3};
  auto in = random(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w);
  auto wt = random(static_cast<std::size_t>(q.k) * q.gemm_k());
  float *din = device_copy(in), *dw = device_copy(wt), *dout = nullptr;
  check(cudaMalloc(&dout, static_cast<std::size_t>(q.gemm_m()) * q.k * sizeof(float)), "cudaMalloc");
  const double conv_flops = 2.0 * static_cast<double>(q.gemm_m()) * q.k * q.gemm_k();
  for (bool last : {false, true})
    time_kernel(last ? "conv3d_ndhwc" : "conv3d_ncdhw", conv_flops, [&] {
      conv3d_implicit_gemm<<<dim3((q.k + kTile - 1) / kTile, static_cast<unsigned>((q.gemm_m() + kTile - 1) / kTile)),
                             dim3(kTile, kTile)>>>(q, last, din, dw, dout);
    });
  cudaFree(din), cudaFree(dw), cudaFree(dout);
  if (!out.empty()) {
#ifdef SIMCORE_CUDA_NO_TRACE
    std::fprintf(stderr, "calib_cuda: built without HDF5 traces (for a bare GPU machine); run it without -o\n");
    return 2;
#else
    calibration::Trace trace;
    trace.attributes = calibration::machine_attributes();
    trace.attributes["gpu"] = prop.name;
    calibration::Benchmark bm{"cuda",
                              {{"device", prop.name},
                               {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
                               {"gemm_size", std::to_string(n)},
                               {"conv", "N 8, C 32, D 16, H 32, W 32, K 64, 3x3x3 filters"}},
                              datasets};
    trace.benchmarks["cuda"] = bm;
    return calibration::write_trace_or_report(out, trace);
#endif
  }
  return 0;
}
