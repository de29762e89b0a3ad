/* calib_cuda's kernels run on the CPU (cuda_on_cpu.hpp): each GEMM, the convolution in both
 * layouts and the peak kernels against references, with the launch shapes calib_cuda uses, and
 * no WMMA rule broken. What the GPU adds (speed, the hardware's own rounding order) is checked
 * where one is: `calib_cuda --check`. */
#include "cuda_on_cpu.hpp"

#include "../cuda/conv3d_kernel.cuh"
#include "../cuda/cpu_references.hpp"
#include "../cuda/gemm_kernels.cuh"
#include "../cuda/peak_kernels.cuh"
#include "../cuda/working_set.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

namespace {

using namespace calibration_cuda;

std::vector<float> random_values(std::size_t n, unsigned seed)
{
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v)
    x = u(rng);
  return v;
}

/** Row-major C = A B, from inputs optionally rounded to TF32 first. */
std::vector<float> gemm_reference(int m, int n, int k, std::vector<float> a, std::vector<float> b, bool tf32)
{
  if (tf32) {
    for (auto& x : a)
      x = nvcuda::wmma::__float_to_tf32(x);
    for (auto& x : b)
      x = nvcuda::wmma::__float_to_tf32(x);
  }
  return calibration_cuda::gemm_reference(m, n, k, a, b);
}

double max_abs_diff(const std::vector<float>& x, const std::vector<float>& y)
{
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); i++)
    worst = std::max(worst, std::isfinite(x[i]) ? std::abs(static_cast<double>(x[i]) - y[i]) : INFINITY);
  return worst;
}

/** Allocations aligned as cudaMalloc's (256 bytes), so that alignment rules are checked. */
struct Buffer {
  std::vector<float> storage;
  float* p;
  explicit Buffer(const std::vector<float>& v) : storage(v.size() + 64, NAN)
  {
    auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
    p = storage.data() + ((256 - addr % 256) % 256) / sizeof(float);
    std::copy(v.begin(), v.end(), p);
  }
  std::vector<float> values(std::size_t n) const { return std::vector<float>(p, p + n); }
};

void require_no_violation()
{
  auto& v = cuda_on_cpu::violations();
  INFO((v.empty() ? std::string() : v.front()));
  REQUIRE(v.empty());
}

/** Runs one GEMM kernel with calib_cuda's launch shape; the product, NaN where unwritten. */
template <class Launch>
std::vector<float> run_gemm(int m, int n, const std::vector<float>& a, const std::vector<float>& b, Launch launch)
{
  cuda_on_cpu::violations().clear();
  Buffer da(a), db(b), dc(std::vector<float>(static_cast<std::size_t>(m) * n, NAN));
  launch(da.p, db.p, dc.p);
  require_no_violation();
  return dc.values(static_cast<std::size_t>(m) * n);
}

dim3 tiles(long rows, long cols, int tr, int tc)
{
  return dim3(static_cast<unsigned>((cols + tc - 1) / tc), static_cast<unsigned>((rows + tr - 1) / tr));
}

} // namespace

TEST_CASE("CUDA FP32 GEMMs on the CPU: plain on ragged sizes, blocked on its multiples", "[calibration][cuda]")
{
  {
    const int m = 67, n = 45, k = 70;
    const auto a = random_values(m * k, 1), b = random_values(k * n, 2);
    const auto c = run_gemm(m, n, a, b, [&](const float* da, const float* db, float* dc) {
      cuda_on_cpu::launch(tiles(m, n, kTile, kTile), dim3(kTile, kTile), sgemm_tiled, m, n, k, da, db, dc);
    });
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, false)) < 1e-5);
  }
  {
    const int m = 256, n = 256, k = 80; // 2 x 2 blocks, 10 slices of the reduction
    const auto a = random_values(m * k, 3), b = random_values(k * n, 4);
    const auto c = run_gemm(m, n, a, b, [&](const float* da, const float* db, float* dc) {
      cuda_on_cpu::launch(tiles(m, n, kBlockedM, kBlockedN), dim3(kBlockedThreads), sgemm_blocked, m, n, k, da, db, dc);
    });
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, false)) < 1e-5); // NaN where a value was not written
  }
}

TEST_CASE("CUDA TF32 WMMA GEMMs on the CPU give the product of the rounded inputs", "[calibration][cuda]")
{
  {
    const int m = 96, n = 48, k = 80;
    const auto a = random_values(m * k, 5), b = random_values(k * n, 6);
    const auto c = run_gemm(m, n, a, b, [&](const float* da, const float* db, float* dc) {
      cuda_on_cpu::launch(tiles(m, n, 16, 16), dim3(32), gemm_tf32_wmma, m, n, k, da, db, dc);
    });
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, true)) < 1e-5);
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, false)) > 1e-5); // TF32 did round
  }
  {
    const int m = 256, n = 256, k = 96; // 2 x 2 blocks of 8 warps, 3 slices of the reduction
    const auto a = random_values(m * k, 7), b = random_values(k * n, 8);
    const auto c = run_gemm(m, n, a, b, [&](const float* da, const float* db, float* dc) {
      cuda_on_cpu::launch(tiles(m, n, kWmmaM, kWmmaN), dim3(kWmmaThreads), gemm_tf32_wmma_blocked, m, n, k, da, db, dc);
    });
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, true)) < 1e-5);
    CHECK(max_abs_diff(c, gemm_reference(m, n, k, a, b, false)) < 1e-2);
  }
}

TEST_CASE("CUDA implicit-GEMM convolution on the CPU in both layouts", "[calibration][cuda]")
{
  const calibration::ConvShape q{2, 3, 6, 7, 5, 20, 3, 2, 3}; // 20 filters: two column blocks
  const auto in = random_values(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w, 9);
  const auto wt = random_values(static_cast<std::size_t>(q.k) * q.gemm_k(), 10);
  for (bool last : {false, true}) {
    cuda_on_cpu::violations().clear();
    Buffer din(in), dw(wt), dout(std::vector<float>(static_cast<std::size_t>(q.gemm_m()) * q.k, NAN));
    cuda_on_cpu::launch(tiles(q.gemm_m(), q.k, kConvTile, kConvTile), dim3(kConvTile, kConvTile), conv3d_implicit_gemm,
                        q, last, static_cast<const float*>(din.p), static_cast<const float*>(dw.p), dout.p);
    require_no_violation();
    INFO((last ? "NDHWC" : "NCDHW"));
    CHECK(max_abs_diff(dout.values(static_cast<std::size_t>(q.gemm_m()) * q.k), conv3d_reference(q, last, in, wt)) < 1e-5);
  }
}

TEST_CASE("CUDA peak kernels on the CPU compute what calib_cuda checks them against", "[calibration][cuda]")
{
  cuda_on_cpu::violations().clear();
  const float x = 0.999999f, y = 1e-6f;
  Buffer out(std::vector<float>(kPeakThreads, NAN));
  cuda_on_cpu::launch(dim3(1), dim3(kPeakThreads), fp32_fma_peak, x, y, out.p);
  for (int t : {0, 1, 77, kPeakThreads - 1})
    CHECK(out.p[t] == fma_peak_reference(t, x, y, kPeakChains, kPeakFmaIterations, fma_start));
  // TF32 fragments of -1, 0, 1: the sums stay exact, so every warp's tile is the product times
  // the products it summed, plus the accumulators' starts.
  std::vector<float> src(256);
  std::mt19937 rng(11);
  for (auto& v : src)
    v = static_cast<float>(static_cast<int>(rng() % 3) - 1);
  Buffer dsrc(src), dout(std::vector<float>(2 * 256, NAN));
  cuda_on_cpu::launch(dim3(1), dim3(64), tf32_mma_peak, static_cast<const float*>(dsrc.p), dout.p); // two warps
  require_no_violation();
  const auto ref = mma_peak_reference(src, kPeakMmaChains, kPeakMmaIterations);
  CHECK(max_abs_diff(dout.values(256), ref) == 0);
  CHECK(max_abs_diff(std::vector<float>(dout.p + 256, dout.p + 512), ref) == 0);
}

TEST_CASE("the CUDA-on-CPU emulation reports misaligned float4 accesses and WMMA tiles", "[calibration][cuda]")
{
  cuda_on_cpu::violations().clear();
  std::vector<float> storage(512, 1.0f);
  auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
  const float* aligned = storage.data() + ((32 - addr % 32) % 32) / sizeof(float);
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 8, nvcuda::wmma::precision::tf32, nvcuda::wmma::row_major> f;
  nvcuda::wmma::load_matrix_sync(f, aligned, 8);
  CHECK(cuda_on_cpu::violations().empty());
  nvcuda::wmma::load_matrix_sync(f, aligned + 4, 8);
  nvcuda::wmma::load_matrix_sync(f, aligned, 6);
  CHECK(cuda_on_cpu::violations().size() == 2);
  cuda_on_cpu::violations().clear();
  float4 v = load_float4(aligned + 4);
  store_float4(const_cast<float*>(aligned) + 8, v);
  CHECK(cuda_on_cpu::violations().empty());
  v = load_float4(aligned + 2);
  store_float4(const_cast<float*>(aligned) + 1, v);
  REQUIRE(cuda_on_cpu::violations().size() == 2);
  CHECK(cuda_on_cpu::violations().front() == "a 16-byte access to p is not aligned");
  cuda_on_cpu::violations().clear();
}

TEST_CASE("calib_cuda's working set: GEMMs at large sizes, the convolution at small ones", "[calibration][cuda]")
{
  const double mib = 1 << 20;
  // The largest --size: 16 n^2 bytes on the host (A, B, two products), 12 n^2 on the device.
  const WorkingSet big = timed_working_set(16384, kTimedConv);
  CHECK(big.host_bytes == 4096 * mib + kRuntimeHostBytes);
  CHECK(big.device_bytes == 3072 * mib + kLibraryDeviceBytes);
  // At 128 the convolution dominates: 8 x 14 x 30 x 30 outputs of 64 filters (25.8 MB each
  // copy), a 16 MiB input, filters of 32 x 27 taps.
  const double out = 4.0 * 8 * 14 * 30 * 30 * 64, in = 4.0 * 8 * 32 * 16 * 32 * 32, filters = 4.0 * 64 * 32 * 27;
  const WorkingSet small = timed_working_set(128, kTimedConv);
  CHECK(small.host_bytes == 3 * out + 2 * filters + kRuntimeHostBytes);
  CHECK(small.device_bytes == in + out + 2 * filters + kLibraryDeviceBytes);
  CHECK(16.0 * 128 * 128 < 3 * out);
}
