/* DGEMM throughput of the blocked kernel (AVX-512 where the CPU has it) over square sizes,
 * one core, every repetition kept after one untimed run, checked against the reference (every
 * entry at the smallest size, or one of its remainders modulo the blocking, before timing,
 * sampled entries of every product timed; a wrong
 * product writes no trace), with the core's peak measured in the same run (independent FMAs
 * on registers).
 *   calib_dgemm [--sizes 256,512,1024] [--repetitions R] [--peak-gflops P] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/dgemm.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

namespace {

/** The most relative error (against 1 + |expected|) a product may have. */
constexpr double kTolerance = 1e-10;
/** Entries of C checked at each size timed. */
constexpr int kSampledEntries = 256;

/** A square matrix of order n, entries uniform in [-1, 1). */
std::vector<double> random_matrix(std::size_t n, std::mt19937_64& rng)
{
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> m(n * n);
  for (auto& x : m)
    x = u(rng);
  return m;
}

/** The largest relative error of dgemm_fast against dgemm_reference over every entry of a
 *  product of order n (random A and B). */
double full_check(std::size_t n, std::mt19937_64& rng)
{
  const std::vector<double> a = random_matrix(n, rng), b = random_matrix(n, rng);
  std::vector<double> c(n * n, 0.0), r(n * n, 0.0);
  calibration::dgemm_reference(n, n, n, a.data(), b.data(), r.data());
  calibration::dgemm_fast(n, n, n, a.data(), b.data(), c.data());
  double worst = 0;
  for (std::size_t i = 0; i < n * n; i++)
    worst = std::max(worst, std::abs(c[i] - r[i]) / (1 + std::abs(r[i])));
  return worst;
}

/** The largest relative error of kSampledEntries entries of C = A B (order n), drawn at
 *  random, against their dot products. */
double sampled_error(std::size_t n, const std::vector<double>& a, const std::vector<double>& b,
                     const std::vector<double>& c, std::mt19937_64& rng)
{
  std::uniform_int_distribution<std::size_t> index(0, n - 1);
  double worst = 0;
  for (int s = 0; s < kSampledEntries; s++) {
    const std::size_t i = index(rng), j = index(rng);
    double expected = 0;
    for (std::size_t p = 0; p < n; p++)
      expected += a[i * n + p] * b[p * n + j];
    worst = std::max(worst, std::abs(c[i * n + j] - expected) / (1 + std::abs(expected)));
  }
  return worst;
}

int wrong_product(double n, double error)
{
  std::fprintf(stderr, "calib_dgemm: the %s kernel differs from the reference at n = %g by %.3g (relative); "
                       "expected under %g (no trace written)\n",
               calibration::dgemm_fast_path(), n, error, kTolerance);
  return 1;
}

} // namespace

namespace {

int run(int argc, char** argv)
{
  std::vector<double> sizes{256, 512, 1024, 2048};
  int reps = 3;
  double peak = 0;
  std::string out;
  const auto usage = [](const std::string& why) {
    return calibration::refuse_command_line("calib_dgemm", "[--sizes 256,512] [--repetitions R] [--peak-gflops P] "
                                                           "-o TRACE.h5", why);
  };
  const std::string problem = calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--sizes")
      return read_whole_list(a, v, 1, 16384, "matrix orders from 1 to 16384, separated by commas", sizes);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", reps);
    if (a == "--peak-gflops")
      return read_real(a, v, 1e-3, 1e9, "a positive number of Gflop/s", peak);
    return std::nullopt;
  });
  if (!problem.empty())
    return usage(problem);
  if (calibration::only_checking_options())
    return 0;
  // The full check's order: the smallest size, or beyond two periods of the kernel's blocking
  // one of the same remainders (every edge path of the smallest size, in seconds instead of
  // the reference's hours: 13 minutes at 8192, 2 hours at 16384).
  const std::size_t period = calibration::dgemm_fast_period();
  const auto smallest_size = static_cast<std::size_t>(*std::min_element(sizes.begin(), sizes.end()));
  const std::size_t check_order = smallest_size < 2 * period ? smallest_size : period + smallest_size % period;
  { // One size at a time: A, B and C of the largest, or A, B, C and the reference's of the check.
    const double smallest = static_cast<double>(check_order),
                 largest = *std::max_element(sizes.begin(), sizes.end());
    const bool checked = 4 * smallest * smallest > 3 * largest * largest;
    const double n = checked ? smallest : largest;
    if (const int rc = calibration::refuse_beyond_available_memory(
            "calib_dgemm", (checked ? 4 : 3) * n * n * sizeof(double),
            std::string(checked ? "four" : "three") + " matrices of order " + calibration::parameter_number(n)))
      return rc;
  }
  // The core's peak as measured here (FMAs on registers), before and after the DGEMM runs:
  // the best of the two, so that a clock that changed meanwhile shows as a gap between them.
  const double peak_before = calibration::fma_peak_flops() / 1e9;
  std::mt19937_64 rng(1);
  calibration::Dataset seconds{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"},
      gflops{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "Gflop/s"};
  // Correctness before any timing: every entry of the check's order against the reference;
  // a kernel that fails writes no trace (a profile must not be fitted from it).
  double max_error = full_check(check_order, rng);
  if (!(max_error < kTolerance))
    return wrong_product(static_cast<double>(check_order), max_error);
  for (std::size_t si = 0; si < sizes.size(); si++) {
    const auto n = static_cast<std::size_t>(sizes[si]);
    const std::vector<double> a = random_matrix(n, rng), b = random_matrix(n, rng);
    std::vector<double> c(n * n, 0.0);
    // One untimed run first: the first call at a size pays for its pages and cold caches
    // (once 10.8 Gflop/s at n = 256 where the repetitions after it gave 78 to 84).
    calibration::dgemm_fast(n, n, n, a.data(), b.data(), c.data());
    for (int rep = 0; rep < reps; rep++) {
      std::fill(c.begin(), c.end(), 0.0);
      const auto t0 = std::chrono::steady_clock::now();
      calibration::dgemm_fast(n, n, n, a.data(), b.data(), c.data());
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      seconds.values.push_back(t);
      gflops.values.push_back(2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / t / 1e9);
    }
    // The timed product itself, at every size: sampled entries against their dot products.
    const double error = sampled_error(n, a, b, c, rng);
    if (!(error < kTolerance))
      return wrong_product(sizes[si], error);
    max_error = std::max(max_error, error);
    std::vector<double> row(gflops.values.end() - reps, gflops.values.end());
    std::sort(row.begin(), row.end());
    std::printf("n %5zu: %.2f Gflop/s (median of %d, %s)\n", n, row[row.size() / 2], reps, calibration::dgemm_fast_path());
  }
  const double peak_after = calibration::fma_peak_flops() / 1e9;
  const double measured_peak = std::max(peak_before, peak_after);
  std::printf("measured peak (%s FMAs on registers, one core): %.2f Gflop/s (before %.2f, after %.2f)%s\n",
              calibration::fma_peak_path(), measured_peak, peak_before, peak_after,
              peak > 0 ? "" : "; no nominal peak given (--peak-gflops)");
  double best = 0;
  for (double g : gflops.values)
    best = std::max(best, g);
  std::printf("share of the measured peak, median per size:");
  for (std::size_t si = 0; si < sizes.size(); si++) {
    std::vector<double> row(gflops.values.begin() + static_cast<long>(si) * reps,
                            gflops.values.begin() + static_cast<long>(si + 1) * reps);
    std::sort(row.begin(), row.end());
    std::printf(" n %g: %.0f %%", sizes[si], 100 * row[row.size() / 2] / measured_peak);
  }
  std::printf("\nbest DGEMM rate: %.1f %% of the measured peak%s\n", 100 * best / measured_peak,
              peak > 0 ? (", " + std::to_string(100 * best / peak) + " % of the nominal one").c_str() : "");
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  calibration::Benchmark bm{"dgemm",
                            {{"path", calibration::dgemm_fast_path()},
                             {"threads", "1"},
                             {"repetitions", std::to_string(reps)},
                             {"max_rel_error_vs_reference", calibration::parameter_number(max_error)},
                             {"reference_check_order", std::to_string(check_order)},
                             {"peak_gflops", peak > 0 ? calibration::parameter_number(peak) : ""},
                             {"measured_peak_gflops", calibration::parameter_number(measured_peak)},
                             {"measured_peak_path", calibration::fma_peak_path()},
                             {"what", "C += A B, square, row-major doubles, blocked with packing"}},
                            {{"size", {sizes, {sizes.size()}, ""}}, {"seconds", seconds}, {"gflops", gflops}}};
  trace.benchmarks["dgemm"] = bm;
  return calibration::write_trace_or_report(out, trace);
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_dgemm", run, argc, argv); }
