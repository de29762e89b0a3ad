/* DGEMM throughput of the blocked kernel (AVX-512 where the CPU has it) over square sizes,
 * one core, every repetition kept after one untimed run, checked against the reference on the
 * smallest size, with the core's peak measured in the same run (independent FMAs on registers).
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

int main(int argc, char** argv)
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
  // The core's peak as measured here (FMAs on registers), before and after the DGEMM runs:
  // the best of the two, so that a clock that changed meanwhile shows as a gap between them.
  const double peak_before = calibration::fma_peak_flops() / 1e9;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  calibration::Dataset seconds{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"},
      gflops{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "Gflop/s"};
  double max_error = 0;
  const auto checked = static_cast<std::size_t>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
  for (std::size_t si = 0; si < sizes.size(); si++) {
    const auto n = static_cast<std::size_t>(sizes[si]);
    std::vector<double> a(n * n), b(n * n), c(n * n, 0.0);
    for (auto& x : a)
      x = u(rng);
    for (auto& x : b)
      x = u(rng);
    if (si == checked) { // correctness against the reference, on the smallest size
      std::vector<double> r(n * n, 0.0);
      calibration::dgemm_reference(n, n, n, a.data(), b.data(), r.data());
      calibration::dgemm_fast(n, n, n, a.data(), b.data(), c.data());
      for (std::size_t i = 0; i < n * n; i++)
        max_error = std::max(max_error, std::abs(c[i] - r[i]) / (1 + std::abs(r[i])));
    }
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
    std::vector<double> row(gflops.values.end() - reps, gflops.values.end());
    std::sort(row.begin(), row.end());
    std::printf("n %5zu: %.2f Gflop/s (median of %d, %s)\n", n, row[row.size() / 2], reps, calibration::dgemm_fast_path());
  }
  const double peak_after = calibration::fma_peak_flops() / 1e9;
  const double measured_peak = std::max(peak_before, peak_after);
  std::printf("measured peak (FMAs on registers, one core): %.2f Gflop/s (before %.2f, after %.2f)%s\n", measured_peak,
              peak_before, peak_after, peak > 0 ? "" : "; no nominal peak given (--peak-gflops)");
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
                             {"peak_gflops", peak > 0 ? calibration::parameter_number(peak) : ""},
                             {"measured_peak_gflops", calibration::parameter_number(measured_peak)},
                             {"what", "C += A B, square, row-major doubles, blocked with packing"}},
                            {{"size", {sizes, {sizes.size()}, ""}}, {"seconds", seconds}, {"gflops", gflops}}};
  trace.benchmarks["dgemm"] = bm;
  if (const int rc = calibration::write_trace_or_report(out, trace); rc != 0)
    return rc;
  if (!(max_error < 1e-10)) {
    std::fprintf(stderr, "calib_dgemm: the %s kernel differs from the reference at n = %g by %.3g (relative); "
                         "expected under 1e-10 (the trace is written, and marks it)\n",
                 calibration::dgemm_fast_path(), sizes[checked], max_error);
    return 1;
  }
  return 0;
}
