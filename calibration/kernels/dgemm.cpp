#include "calibration/dgemm.hpp"

#include <algorithm>
#include <cstring>
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
#else
bool has_avx512() { return false; }
#endif

} // namespace

const char* dgemm_fast_path() { return has_avx512() ? "avx512" : "portable"; }

void dgemm_fast(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
{
  using Micro = void (*)(std::size_t, const double*, const double*, double*, std::size_t, std::size_t, std::size_t);
#if defined(__x86_64__)
  const Micro micro = has_avx512() ? micro_avx512 : micro_portable;
#else
  const Micro micro = micro_portable;
#endif
  const std::size_t nc_max = (n + kNr - 1) / kNr * kNr;
  std::vector<double> pa(kMc * kKc), pb(kKc * nc_max);
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
