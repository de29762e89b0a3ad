/* DGEMM with Arm SVE intrinsics, vector-length agnostic: C += A B, row-major doubles. Built
 * with the aarch64 cross compiler (or natively on Arm); checks itself against a plain
 * reference on ragged sizes, then times the kernel.
 *   calib_dgemm_sve [--check] [--sizes 64,128,256]
 * Under qemu-aarch64 only the check is meaningful: emulated timings say nothing about Arm
 * hardware, and the output says so. Option values are read by the native benchmarks' strict
 * reader (bench_options.hpp: header-only, standard and POSIX headers only, so the cross build
 * needs nothing else): a value is taken whole or refused before anything runs, with exit 2. */
#include "calibration/bench_options.hpp"

#include <arm_sve.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

void dgemm_reference(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
{
  for (std::size_t i = 0; i < m; i++)
    for (std::size_t p = 0; p < k; p++)
      for (std::size_t j = 0; j < n; j++)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
}

/** Four rows of C at a time: for each k, one vector of B's row feeds four multiply-adds;
 *  the predicate covers the ragged end of a row, whatever the vector length. */
void dgemm_sve(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
{
  const std::size_t vl = svcntd();
  std::size_t i = 0;
  for (; i + 4 <= m; i += 4)
    for (std::size_t j = 0; j < n; j += vl) {
      const svbool_t pg = svwhilelt_b64(static_cast<std::uint64_t>(j), static_cast<std::uint64_t>(n));
      svfloat64_t c0 = svld1(pg, c + (i + 0) * n + j), c1 = svld1(pg, c + (i + 1) * n + j),
                  c2 = svld1(pg, c + (i + 2) * n + j), c3 = svld1(pg, c + (i + 3) * n + j);
      for (std::size_t p = 0; p < k; p++) {
        const svfloat64_t bv = svld1(pg, b + p * n + j);
        c0 = svmla_x(pg, c0, bv, svdup_f64(a[(i + 0) * k + p]));
        c1 = svmla_x(pg, c1, bv, svdup_f64(a[(i + 1) * k + p]));
        c2 = svmla_x(pg, c2, bv, svdup_f64(a[(i + 2) * k + p]));
        c3 = svmla_x(pg, c3, bv, svdup_f64(a[(i + 3) * k + p]));
      }
      svst1(pg, c + (i + 0) * n + j, c0);
      svst1(pg, c + (i + 1) * n + j, c1);
      svst1(pg, c + (i + 2) * n + j, c2);
      svst1(pg, c + (i + 3) * n + j, c3);
    }
  for (; i < m; i++)
    for (std::size_t j = 0; j < n; j += vl) {
      const svbool_t pg = svwhilelt_b64(static_cast<std::uint64_t>(j), static_cast<std::uint64_t>(n));
      svfloat64_t cv = svld1(pg, c + i * n + j);
      for (std::size_t p = 0; p < k; p++)
        cv = svmla_x(pg, cv, svld1(pg, b + p * n + j), svdup_f64(a[i * k + p]));
      svst1(pg, c + i * n + j, cv);
    }
}

} // namespace

int main(int argc, char** argv)
{
  bool check_only = false;
  std::vector<std::size_t> sizes{64, 128, 256};
  const auto usage = [](const std::string& why) {
    std::fprintf(stderr, "calib_dgemm_sve: %s\nusage: calib_dgemm_sve [--check] [--sizes 64,128,256]\n", why.c_str());
    return 2;
  };
  // Not calibration::read_options: --check takes no value, and there is no trace (-o) to check,
  // the results going to standard output. Its value readers and messages all the same, so that
  // "--sizes 64.9" is refused here as by calib_dgemm rather than run at 64.
  for (int i = 1; i < argc; i++) {
    const std::string option = argv[i];
    if (option == "--check") {
      check_only = true;
    } else if (option == "--sizes") {
      if (i + 1 >= argc)
        return usage("missing value after " + option);
      const std::string problem = calibration::read_whole_list(
          option, argv[++i], 1, 16384, "matrix orders from 1 to 16384, separated by commas", sizes);
      if (!problem.empty())
        return usage(problem);
    } else {
      return usage("unknown option " + option);
    }
  }
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {9, 13, 6}, {37, 41, 29}, {64, 64, 64}};
  double worst = 0;
  for (const auto& s : shapes) {
    const std::size_t m = s[0], n = s[1], k = s[2];
    std::vector<double> a(m * k), b(k * n), c(m * n), r(m * n);
    for (auto& x : a)
      x = u(rng);
    for (auto& x : b)
      x = u(rng);
    for (std::size_t i = 0; i < m * n; i++)
      c[i] = r[i] = u(rng);
    dgemm_reference(m, n, k, a.data(), b.data(), r.data());
    dgemm_sve(m, n, k, a.data(), b.data(), c.data());
    for (std::size_t i = 0; i < m * n; i++)
      worst = std::max(worst, std::abs(c[i] - r[i]));
  }
  const bool ok = worst < 1e-12;
  std::printf("{\"vector_bits\": %zu, \"max_abs_error\": %.3g, \"correct\": %s", svcntd() * 64, worst,
              ok ? "true" : "false");
  if (!check_only) {
    std::printf(", \"note\": \"timings are meaningful on Arm hardware only, not under emulation (qemu)\", "
                "\"gflops\": {");
    for (std::size_t si = 0; si < sizes.size(); si++) {
      const std::size_t n = sizes[si];
      std::vector<double> a(n * n, 0.5), b(n * n, 0.25), c(n * n, 0.0);
      // One untimed run first, as calib_dgemm does: the first call at a size pays for its pages
      // and cold caches.
      dgemm_sve(n, n, n, a.data(), b.data(), c.data());
      std::fill(c.begin(), c.end(), 0.0);
      const auto t0 = std::chrono::steady_clock::now();
      dgemm_sve(n, n, n, a.data(), b.data(), c.data());
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%s\"%zu\": %.3f", si ? ", " : "", n, 2.0 * n * n * n / t / 1e9);
    }
    std::printf("}");
  }
  std::printf("}\n");
  return ok ? 0 : 1;
}
