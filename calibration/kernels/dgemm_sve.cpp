/* DGEMM with Arm SVE intrinsics, vector-length agnostic: C += A B, row-major doubles. Built
 * with the aarch64 cross compiler (or natively on Arm); checks itself against a plain
 * reference on ragged sizes, then times the kernel, every repetition after one untimed run.
 *   calib_dgemm_sve [--check] [--sizes 64,128,256] [--repetitions R] [-o TRACE.json]
 * It prints JSON; with -o it also writes the JSON form of a trace (trace_json.hpp) with a
 * `dgemm` group as calib_dgemm writes it (path "sve"), which `simcore calibrate` reads as is
 * and calib_trace_convert turns into HDF5: the cross build has no HDF5, so an .h5 name is
 * refused. Under qemu-aarch64 only the check is meaningful: emulated timings say nothing about
 * Arm hardware, and the output says so. Option values are read by the native benchmarks'
 * strict reader (bench_options.hpp): a value is taken whole or refused before anything runs,
 * with exit 2, as is a trace that could not be written. A kernel that fails the check is not
 * timed and writes no trace (exit 1). */
#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"
#include "calibration/trace_json.hpp"

#include <simcore/error.hpp>

#include <arm_sve.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

/** The plain product, scalar and without fused multiply-adds: left to the compiler, this loop
 *  became the same emulated SVE multiply-adds as the kernel, a check that could not tell a
 *  wrong emulation (or a wrong use of it) from a right one. */
__attribute__((optimize("no-tree-vectorize", "fp-contract=off"))) void
dgemm_reference(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c)
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

/** `text` as a JSON string literal, for the path printed on standard output. */
std::string json_string(const std::string& text)
{
  std::string out = "\"";
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

/** The benchmark; main_of turns a failed allocation into exit 2. */
int run(int argc, char** argv)
{
  // "--check" stands alone; every other option is a pair ("-o PATH" among them), read whole or
  // refused by calibration::read_options, as calib_cuda reads its own.
  bool check_only = false;
  std::vector<char*> pairs{argv[0]};
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--check") == 0)
      check_only = true;
    else
      pairs.push_back(argv[i]);
  }
  std::vector<std::size_t> sizes{64, 128, 256};
  int reps = 3;
  std::string out;
  const auto usage = [](const std::string& why) {
    return calibration::refuse_command_line("calib_dgemm_sve", "[--check] [--sizes 64,128,256] [--repetitions R] "
                                                               "[-o TRACE.json]", why);
  };
  const std::string problem = calibration::read_options(
      static_cast<int>(pairs.size()), pairs.data(), out,
      [&](const std::string& option, const std::string& value) -> std::optional<std::string> {
        if (option == "--sizes")
          return calibration::read_whole_list(option, value, 1, 16384,
                                              "matrix orders from 1 to 16384, separated by commas", sizes);
        if (option == "--repetitions")
          return calibration::read_whole(option, value, 1, 1000000, "a whole number from 1 to 1000000", reps);
        return std::nullopt;
      },
      /*output_required=*/false);
  if (!problem.empty())
    return usage(problem);
  if (calibration::only_checking_options())
    return 0;
  if (!out.empty() && !calibration::is_json_trace_path(out))
    return usage("-o " + out + ": this build has no HDF5 (cross-compiled for aarch64); expected a JSON trace "
                 "(-o T.json), which calib_trace_convert turns into HDF5");
  if (!out.empty() && check_only)
    return usage("-o " + out + " with --check: the check times nothing, so there is no trace to write; "
                 "expected one or the other");
  if (!check_only) { // one size at a time: A, B and C of the largest
    const double n = static_cast<double>(*std::max_element(sizes.begin(), sizes.end()));
    if (const int rc = calibration::refuse_beyond_available_memory(
            "calib_dgemm_sve", 3 * n * n * sizeof(double),
            "three matrices of order " + std::to_string(static_cast<long long>(n))))
      return rc;
  }

  // The check: ragged shapes (every leftover of the 4-row blocks and of a vector's length, at
  // any vector length), random values, against the plain reference.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {9, 13, 6}, {37, 41, 29}, {64, 64, 64}};
  double worst = 0, worst_rel = 0;
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
    for (std::size_t i = 0; i < m * n; i++) {
      worst = std::max(worst, std::abs(c[i] - r[i]));
      worst_rel = std::max(worst_rel, std::abs(c[i] - r[i]) / (1 + std::abs(r[i])));
    }
  }
  const bool ok = worst < 1e-12;
  const std::size_t vector_bits = svcntd() * 64;
  std::printf("{\"vector_bits\": %zu, \"max_abs_error\": %.3g, \"correct\": %s", vector_bits, worst,
              ok ? "true" : "false");
  if (!ok) {
    std::printf("}\n");
    std::fprintf(stderr, "calib_dgemm_sve: the SVE kernel differs from the reference by %.3g; expected under 1e-12 "
                         "(not timed%s)\n", worst, out.empty() ? "" : ", no trace written");
    return 1;
  }
  if (check_only) {
    std::printf("}\n");
    return 0;
  }

  // The timings: constant inputs, so that every product is known exactly (each element of C is
  // n / 8) and every timed run is checked too.
  calibration::Dataset seconds{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"},
      gflops{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "Gflop/s"};
  std::vector<double> medians;
  for (const std::size_t n : sizes) {
    std::vector<double> a(n * n, 0.5), b(n * n, 0.25), c(n * n, 0.0);
    // One untimed run first, as calib_dgemm does: the first call at a size pays for its pages
    // and cold caches.
    dgemm_sve(n, n, n, a.data(), b.data(), c.data());
    for (int rep = 0; rep < reps; rep++) {
      std::fill(c.begin(), c.end(), 0.0);
      const auto t0 = std::chrono::steady_clock::now();
      dgemm_sve(n, n, n, a.data(), b.data(), c.data());
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double expected = 0.125 * static_cast<double>(n);
      for (const double x : c)
        if (x != expected) {
          std::printf("}\n");
          std::fprintf(stderr, "calib_dgemm_sve: a timed product at n = %zu holds %.17g where %.17g was expected "
                               "(no trace written)\n", n, x, expected);
          return 1;
        }
      seconds.values.push_back(t);
      gflops.values.push_back(2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / t / 1e9);
    }
    std::vector<double> row(gflops.values.end() - reps, gflops.values.end());
    std::sort(row.begin(), row.end());
    // The median as the fitter takes it (the mean of the two middle values of an even count).
    const std::size_t mid = row.size() / 2;
    medians.push_back(row.size() % 2 ? row[mid] : 0.5 * (row[mid - 1] + row[mid]));
  }
  std::string written;
  int rc = 0;
  if (!out.empty()) {
    calibration::Trace trace;
    trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
    std::vector<double> size_values(sizes.begin(), sizes.end());
    trace.benchmarks["dgemm"] = calibration::Benchmark{
        "dgemm",
        {{"path", "sve"},
         {"vector_bits", std::to_string(vector_bits)},
         {"threads", "1"},
         {"repetitions", std::to_string(reps)},
         {"max_rel_error_vs_reference", calibration::parameter_number(worst_rel)},
         {"what", "C += A B, square, row-major doubles, Arm SVE intrinsics (vector-length agnostic, 4 rows of C "
                  "at a time)"},
         {"note", "timings are meaningful on Arm hardware only, not under emulation (qemu)"}},
        {{"size", {size_values, {sizes.size()}, ""}}, {"seconds", seconds}, {"gflops", gflops}}};
    try {
      calibration::write_trace_json(out, trace);
      written = out;
    } catch (const simcore::Error& err) {
      std::fprintf(stderr, "calib_dgemm_sve: %s\n", err.what());
      rc = 2;
    }
  }
  std::printf(", \"note\": \"timings are meaningful on Arm hardware only, not under emulation (qemu)\", "
              "\"repetitions\": %d, \"gflops\": {", reps);
  for (std::size_t si = 0; si < sizes.size(); si++)
    std::printf("%s\"%zu\": %.3f", si ? ", " : "", sizes[si], medians[si]);
  std::printf("}");
  if (!written.empty())
    std::printf(", \"trace\": %s", json_string(written).c_str());
  std::printf("}\n");
  return rc;
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_dgemm_sve", run, argc, argv); }
