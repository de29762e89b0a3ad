/* STREAM-like memory bandwidth: copy (c = a) and triad (a = b + s c) over arrays far larger
 * than the caches, with 1 to N threads, every repetition kept. Writes a calibration trace.
 *   calib_stream [--bytes B] [--threads 1,2,...] [--repetitions R] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

double timed(const std::function<void(std::size_t, std::size_t)>& kernel, std::size_t n, int threads)
{
  std::vector<std::thread> pool;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (int t = 0; t < threads; t++) {
      const std::size_t lo = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
      const std::size_t hi = n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
      pool.emplace_back([&kernel, lo, hi] { kernel(lo, hi); });
    }
  } catch (const std::system_error&) { // the system starts no more threads: those started end first
    for (auto& th : pool)
      th.join();
    throw;
  }
  for (auto& th : pool)
    th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

namespace {

int run(int argc, char** argv)
{
  std::size_t bytes = std::size_t{256} << 20; // per array
  std::vector<int> threads;
  int reps = 5;
  std::string out;
  const auto usage = [](const std::string& why) {
    return calibration::refuse_command_line("calib_stream", "[--bytes B] [--threads 1,2] [--repetitions R] -o TRACE.h5",
                                            why);
  };
  const std::string problem = calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--bytes")
      return read_whole(a, v, 1024, 1LL << 40, "a whole number of bytes from 1024 to 2^40", bytes);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", reps);
    if (a == "--threads")
      return read_whole_list(a, v, 1, 65536, "thread counts from 1 to 65536, separated by commas", threads);
    return std::nullopt;
  });
  if (!problem.empty())
    return usage(problem);
  if (calibration::only_checking_options())
    return 0;
  if (threads.empty()) { // powers of two up to every thread the system offers, and that count itself
    const int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int t = 1; t <= all; t *= 2)
      threads.push_back(t);
    if (threads.back() != all)
      threads.push_back(all);
  }
  const std::size_t n = bytes / sizeof(double);
  if (const int rc = calibration::refuse_beyond_available_memory(
          "calib_stream", 3.0 * static_cast<double>(n * sizeof(double)), "three arrays of --bytes " + std::to_string(bytes)))
    return rc;
  // First touch by the threads that sweep each part, as STREAM initialises in parallel: on a
  // node of several memory domains a page lies in the domain of the thread that first writes
  // it, and arrays filled by the main thread alone would all sit in one domain (the largest
  // thread count's split; smaller counts read the rest from where it lies, as in STREAM).
  const int most = *std::max_element(threads.begin(), threads.end());
  const std::unique_ptr<double[]> a_(new double[n]), b_(new double[n]), c_(new double[n]);
  double *a = a_.get(), *b = b_.get(), *c = c_.get();
  timed(
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; i++)
          a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
      },
      n, most);
  const double s = 3.0;
  calibration::Dataset th{{}, {threads.size()}, ""}, copy{{}, {threads.size(), static_cast<std::size_t>(reps)}, "Bps"},
      triad{{}, {threads.size(), static_cast<std::size_t>(reps)}, "Bps"};
  for (int t : threads) {
    th.values.push_back(t);
    for (int r = 0; r < reps; r++) {
      const double tc = timed([&](std::size_t lo, std::size_t hi) { std::memcpy(&c[lo], &a[lo], (hi - lo) * sizeof(double)); }, n, t);
      const double tt = timed(
          [&](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; i++)
              a[i] = b[i] + s * c[i];
          },
          n, t);
      copy.values.push_back(2.0 * static_cast<double>(n * sizeof(double)) / tc);
      triad.values.push_back(3.0 * static_cast<double>(n * sizeof(double)) / tt);
    }
    std::printf("threads %2d: copy %.2f GB/s, triad %.2f GB/s (last repetition)\n", t, copy.values.back() / 1e9,
                triad.values.back() / 1e9);
  }
  if (a[n / 2] == 42.0) // keep the kernels
    std::printf(" ");
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  calibration::Benchmark bm;
  bm.name = "stream";
  bm.parameters = {{"array_bytes", std::to_string(n * sizeof(double))},
                   {"repetitions", std::to_string(reps)},
                   {"what", "copy: c = a (memcpy), 2 x array bytes moved; triad: a = b + s c, 3 x array bytes"}};
  bm.datasets = {{"threads", th}, {"copy_bandwidth", copy}, {"triad_bandwidth", triad}};
  trace.benchmarks["stream"] = bm;
  if (const int rc = calibration::write_trace_or_report(out, trace); rc != 0)
    return rc;
  return 0;
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_stream", run, argc, argv); }
