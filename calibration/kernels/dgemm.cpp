#include "calibration/dgemm.hpp"

#include <algorithm>
#include <numeric>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace calibration {

void dgemm_reference(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
{
  for (std::size_t i = 0; i < m; i++)
    for (std::size_t p = 0; p < k; p++) {
      const double aip = a[i * k + p];
      for (std::size_t j = 0; j < n; j++)
        c[i * n + j] += aip * b[p * n + j];
    }
}

namespace {

constexpr std::size_t kMr = 6;   // rows of C per micro-kernel
constexpr std::size_t kNr = 16;  // columns of C per micro-kernel (two 8-double vectors)
constexpr std::size_t kKc = 256; // k block: a packed B panel of kKc x kNr stays in L1
constexpr std::size_t kMc = 96;  // m block: a packed A block of kMc x kKc stays in L2

/** Packs rows [i0, i0+mc) x columns [p0, p0+kc) of A into kMr-row slivers, column by column. */
void pack_a(const double* a, std::size_t k, std::size_t i0, std::size_t mc, std::size_t p0, std::size_t kc, double* out)
{
  for (std::size_t ir = 0; ir < mc; ir += kMr)
    for (std::size_t p = 0; p < kc; p++)
      for (std::size_t r = 0; r < kMr; r++)
        *out++ = ir + r < mc ? a[(i0 + ir + r) * k + p0 + p] : 0.0;
}

/** Packs rows [p0, p0+kc) x columns [j0, j0+nc) of B into kNr-column slivers, row by row. */
void pack_b(const double* b, std::size_t n, std::size_t p0, std::size_t kc, std::size_t j0, std::size_t nc, double* out)
{
  for (std::size_t jr = 0; jr < nc; jr += kNr)
    for (std::size_t p = 0; p < kc; p++)
      for (std::size_t c = 0; c < kNr; c++)
        *out++ = jr + c < nc ? b[(p0 + p) * n + j0 + jr + c] : 0.0;
}

/** A kMr x kNr block of C += packed A sliver x packed B sliver, portable. */
void micro_portable(std::size_t kc, const double* a, const double* b, double* c, std::size_t ldc, std::size_t rows,
                    std::size_t cols)
{
  double acc[kMr][kNr] = {};
  for (std::size_t p = 0; p < kc; p++)
    for (std::size_t r = 0; r < kMr; r++)
      for (std::size_t j = 0; j < kNr; j++)
        acc[r][j] += a[p * kMr + r] * b[p * kNr + j];
  for (std::size_t r = 0; r < rows; r++)
    for (std::size_t j = 0; j < cols; j++)
      c[r * ldc + j] += acc[r][j];
}

#if defined(__x86_64__)
/** The same with AVX-512: 12 accumulators, B in two vectors, A broadcast. */
__attribute__((target("avx512f"))) void micro_avx512(std::size_t kc, const double* a, const double* b, double* c,
                                                      std::size_t ldc, std::size_t rows, std::size_t cols)
{
  __m512d c00 = _mm512_setzero_pd(), c01 = _mm512_setzero_pd(), c10 = _mm512_setzero_pd(),
          c11 = _mm512_setzero_pd(), c20 = _mm512_setzero_pd(), c21 = _mm512_setzero_pd(),
          c30 = _mm512_setzero_pd(), c31 = _mm512_setzero_pd(), c40 = _mm512_setzero_pd(),
          c41 = _mm512_setzero_pd(), c50 = _mm512_setzero_pd(), c51 = _mm512_setzero_pd();
  for (std::size_t p = 0; p < kc; p++) {
    const __m512d b0 = _mm512_loadu_pd(b + p * kNr), b1 = _mm512_loadu_pd(b + p * kNr + 8);
    const double* ap = a + p * kMr;
    __m512d x = _mm512_set1_pd(ap[0]);
    c00 = _mm512_fmadd_pd(x, b0, c00);
    c01 = _mm512_fmadd_pd(x, b1, c01);
    x = _mm512_set1_pd(ap[1]);
    c10 = _mm512_fmadd_pd(x, b0, c10);
    c11 = _mm512_fmadd_pd(x, b1, c11);
    x = _mm512_set1_pd(ap[2]);
    c20 = _mm512_fmadd_pd(x, b0, c20);
    c21 = _mm512_fmadd_pd(x, b1, c21);
    x = _mm512_set1_pd(ap[3]);
    c30 = _mm512_fmadd_pd(x, b0, c30);
    c31 = _mm512_fmadd_pd(x, b1, c31);
    x = _mm512_set1_pd(ap[4]);
    c40 = _mm512_fmadd_pd(x, b0, c40);
    c41 = _mm512_fmadd_pd(x, b1, c41);
    x = _mm512_set1_pd(ap[5]);
    c50 = _mm512_fmadd_pd(x, b0, c50);
    c51 = _mm512_fmadd_pd(x, b1, c51);
  }
  if (rows == kMr && cols == kNr) { // a whole tile: C updated with vectors
    const __m512d acc_rows[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (std::size_t r = 0; r < kMr; r++) {
      double* cr = c + r * ldc;
      _mm512_storeu_pd(cr, _mm512_add_pd(_mm512_loadu_pd(cr), acc_rows[r][0]));
      _mm512_storeu_pd(cr + 8, _mm512_add_pd(_mm512_loadu_pd(cr + 8), acc_rows[r][1]));
    }
    return;
  }
  alignas(64) double acc[kMr][kNr];
  _mm512_store_pd(acc[0], c00), _mm512_store_pd(acc[0] + 8, c01);
  _mm512_store_pd(acc[1], c10), _mm512_store_pd(acc[1] + 8, c11);
  _mm512_store_pd(acc[2], c20), _mm512_store_pd(acc[2] + 8, c21);
  _mm512_store_pd(acc[3], c30), _mm512_store_pd(acc[3] + 8, c31);
  _mm512_store_pd(acc[4], c40), _mm512_store_pd(acc[4] + 8, c41);
  _mm512_store_pd(acc[5], c50), _mm512_store_pd(acc[5] + 8, c51);
  for (std::size_t r = 0; r < rows; r++)
    for (std::size_t j = 0; j < cols; j++)
      c[r * ldc + j] += acc[r][j];
}

bool has_avx512()
{
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

/** `rounds` x 16 independent 8-wide FMAs (16 chains: more than latency x units on current
 *  cores); returns a value that depends on every result. */
// noipa: a call the compiler knows to be pure could leave the timed region.
__attribute__((target("avx512f"), noipa)) double fma_chains_avx512(std::size_t rounds)
{
  __m512d acc[16];
  for (int i = 0; i < 16; i++)
    acc[i] = _mm512_set1_pd(1.0 + 1e-3 * i);
  const __m512d x = _mm512_set1_pd(0.999999), y = _mm512_set1_pd(1e-7);
  for (std::size_t r = 0; r < rounds; r++)
    for (int i = 0; i < 16; i++) // unrolled by the compiler: 16 FMAs on registers
      acc[i] = _mm512_fmadd_pd(acc[i], x, y);
  __m512d sum = acc[0];
  for (int i = 1; i < 16; i++)
    sum = _mm512_add_pd(sum, acc[i]);
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

/** The same with 16 chains of 4-wide FMAs (AVX2 and FMA: the widest a core without AVX-512
 *  but with FMA has; the portable chains below, built for baseline x86-64, multiply and add
 *  apart on 2-wide vectors, 2 to 4 times below such a core's peak). Written out a second time
 *  on purpose: one template over the two instruction sets would need its intrinsics inlined
 *  into a function built for neither, which GCC refuses (target specific option mismatch). */
__attribute__((target("avx2,fma"), noipa)) double fma_chains_avx2(std::size_t rounds)
{
  __m256d acc[16];
  for (int i = 0; i < 16; i++)
    acc[i] = _mm256_set1_pd(1.0 + 1e-3 * i);
  const __m256d x = _mm256_set1_pd(0.999999), y = _mm256_set1_pd(1e-7);
  for (std::size_t r = 0; r < rounds; r++)
    for (int i = 0; i < 16; i++)
      acc[i] = _mm256_fmadd_pd(acc[i], x, y);
  __m256d sum = acc[0];
  for (int i = 1; i < 16; i++)
    sum = _mm256_add_pd(sum, acc[i]);
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

bool has_avx2_fma()
{
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#else
bool has_avx512() { return false; }
#endif

// What dgemm_set_simd asked for; the CPU's support is checked at each use, so that asking for
// AVX-512 on a CPU without it falls back to the portable kernel. Atomic: a benchmark thread
// may read it while a test sets it; constant-initialised, so set before any static
// initialiser could call dgemm_fast.
std::atomic<bool> simd_wanted{true};

bool use_avx512() { return simd_wanted.load(std::memory_order_relaxed) && has_avx512(); }

} // namespace

const char* dgemm_fast_path() { return use_avx512() ? "avx512" : "portable"; }

std::size_t dgemm_fast_period()
{
  return std::lcm(std::lcm(kMr, kNr), std::lcm(kKc, kMc));
}

bool dgemm_avx512_available() { return has_avx512(); }

void dgemm_set_simd(bool on) { simd_wanted.store(on, std::memory_order_relaxed); }

namespace {

/** The portable counterpart: 16 chains of 4 doubles (what the compiler vectorises). */
__attribute__((noipa)) double fma_chains_portable(std::size_t rounds)
{
  double acc[16][4];
  for (int i = 0; i < 16; i++)
    for (int l = 0; l < 4; l++)
      acc[i][l] = 1.0 + 1e-3 * i + 1e-4 * l;
  for (std::size_t r = 0; r < rounds; r++)
    for (int i = 0; i < 16; i++)
      for (int l = 0; l < 4; l++)
        acc[i][l] = acc[i][l] * 0.999999 + 1e-7;
  double sum = 0;
  for (int i = 0; i < 16; i++)
    for (int l = 0; l < 4; l++)
      sum += acc[i][l];
  return sum;
}

} // namespace

const char* fma_peak_path()
{
#if defined(__x86_64__)
  if (has_avx512())
    return "avx512";
  if (has_avx2_fma())
    return "avx2-fma";
#endif
  return "portable";
}

double fma_peak_flops(double seconds)
{
  // The core's peak, whichever path dgemm_set_simd chose: its widest FMAs.
  const std::string path = fma_peak_path();
  const double flops_per_round = path == "avx512" ? 16 * 8 * 2 : 16 * 4 * 2;
  auto run = [&](std::size_t rounds) {
#if defined(__x86_64__)
    if (path == "avx512")
      return fma_chains_avx512(rounds);
    if (path == "avx2-fma")
      return fma_chains_avx2(rounds);
#endif
    return fma_chains_portable(rounds);
  };
  // Grow the count until one run lasts a fifth of the time, then keep the best of five runs.
  using Clock = std::chrono::steady_clock;
  std::size_t rounds = 1 << 14;
  double sink = 0, t = 0;
  do {
    rounds *= 2;
    const auto t0 = Clock::now();
    sink += run(rounds);
    t = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (t < seconds / 5 && rounds < (std::size_t{1} << 40));
  double best = 0;
  for (int k = 0; k < 5; k++) {
    const auto t0 = Clock::now();
    sink += run(rounds);
    t = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, static_cast<double>(rounds) * flops_per_round / t);
  }
  return sink == 0 ? best * 1.0000001 : best; // keeps the chains alive
}

void dgemm_fast(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
{
  using Micro = void (*)(std::size_t, const double*, const double*, double*, std::size_t, std::size_t, std::size_t);
#if defined(__x86_64__)
  const Micro micro = use_avx512() ? micro_avx512 : micro_portable;
#else
  const Micro micro = micro_portable;
#endif
  // The packing buffers are the calling thread's, kept from one call to the next as BLAS
  // libraries keep theirs: allocated (and their pages touched) in every call, they cost a
  // timed product its heap growth and page faults, 0.7 Gflop/s at n = 65 against 41.5.
  const std::size_t nc_max = (n + kNr - 1) / kNr * kNr;
  thread_local std::vector<double> pa, pb;
  if (pa.size() < kMc * kKc)
    pa.resize(kMc * kKc);
  if (pb.size() < kKc * nc_max)
    pb.resize(kKc * nc_max);
  for (std::size_t p0 = 0; p0 < k; p0 += kKc) {
    const std::size_t kc = std::min(kKc, k - p0);
    pack_b(b, n, p0, kc, 0, n, pb.data());
    for (std::size_t i0 = 0; i0 < m; i0 += kMc) {
      const std::size_t mc = std::min(kMc, m - i0);
      pack_a(a, k, i0, mc, p0, kc, pa.data());
      for (std::size_t jr = 0; jr < n; jr += kNr)
        for (std::size_t ir = 0; ir < mc; ir += kMr)
          micro(kc, pa.data() + ir * kc, pb.data() + jr * kc, c + (i0 + ir) * n + jr, n, std::min(kMr, mc - ir),
                std::min(kNr, n - jr));
    }
  }
}

} // namespace calibration
