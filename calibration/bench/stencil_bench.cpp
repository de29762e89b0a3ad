/* The compute part of a stencil code, natively: Jacobi sweeps (7- or 27-point) over
 * `variables` fields of doubles on a local cube of n^3 cells with a halo of width 1
 * ((n+2)^3 doubles per field, the halo held fixed), out of place then swapped, one core, every
 * repetition kept. The fitter divides calib_dgemm's core speed by the cell rate measured
 * here to get the halo model's flops_per_cell: what one cell update costs in DGEMM-equivalent
 * flops, so that cells x flops_per_cell / host speed gives back the measured sweep time.
 *   calib_stencil [--stencil 7|27] [--variables V] [--sizes 16,32,64,128] [--repetitions R] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr const char* kUsage =
    "[--stencil 7|27] [--variables V] [--sizes 16,32,64,128] [--repetitions R] -o TRACE.h5";

// Each repetition runs enough sweeps to last this long: a sweep of 16^3 cells takes
// microseconds, below what one clock reading resolves well.
constexpr double kMinRepetitionSeconds = 0.02;

// Weights by distance class (centre, faces, edges, corners); each stencil's weights sum to 1,
// so values stay between the initial minimum and maximum: no overflow and no denormals,
// whose slow paths would distort the timing, however many sweeps run.
constexpr double kW7[2] = {0.4, 0.1};
constexpr double kW27[4] = {0.3, 0.05, 0.025, 0.0125};

// Arithmetic per cell and variable as the kernels below are written (no FMA: the build
// targets the baseline ISA): 7-point: 5 + 1 additions, 2 multiplications; 27-point:
// 5 + 11 + 7 additions inside the face, edge and corner sums, 4 multiplications, 3 additions.
constexpr int kFlops7 = 8;
constexpr int kFlops27 = 30;

/** One 7-point sweep of the interior of an (n+2)^3 field. */
void sweep7(const double* __restrict in, double* __restrict out, std::size_t n)
{
  const std::size_t sj = n + 2, sk = sj * sj;
  for (std::size_t k = 1; k <= n; k++)
    for (std::size_t j = 1; j <= n; j++) {
      const std::size_t row = k * sk + j * sj;
      for (std::size_t i = row + 1; i <= row + n; i++)
        out[i] = kW7[0] * in[i] +
                 kW7[1] * (((in[i - 1] + in[i + 1]) + (in[i - sj] + in[i + sj])) + (in[i - sk] + in[i + sk]));
    }
}

/** One 27-point sweep: faces, edges and corners summed apart, each with its weight. */
void sweep27(const double* __restrict in, double* __restrict out, std::size_t n)
{
  const std::size_t sj = n + 2, sk = sj * sj;
  for (std::size_t k = 1; k <= n; k++)
    for (std::size_t j = 1; j <= n; j++) {
      const std::size_t row = k * sk + j * sj;
      for (std::size_t i = row + 1; i <= row + n; i++) {
        const double faces = in[i - 1] + in[i + 1] + in[i - sj] + in[i + sj] + in[i - sk] + in[i + sk];
        const double edges = in[i - sj - 1] + in[i - sj + 1] + in[i + sj - 1] + in[i + sj + 1] + in[i - sk - 1] +
                             in[i - sk + 1] + in[i + sk - 1] + in[i + sk + 1] + in[i - sk - sj] + in[i - sk + sj] +
                             in[i + sk - sj] + in[i + sk + sj];
        const double corners = in[i - sk - sj - 1] + in[i - sk - sj + 1] + in[i - sk + sj - 1] + in[i - sk + sj + 1] +
                               in[i + sk - sj - 1] + in[i + sk - sj + 1] + in[i + sk + sj - 1] + in[i + sk + sj + 1];
        out[i] = kW27[0] * in[i] + kW27[1] * faces + kW27[2] * edges + kW27[3] * corners;
      }
    }
}

/** The fields of one cube: `in` and `out` per variable, halos equal in both so that the swap
 *  keeps them fixed. */
class Cube {
public:
  Cube(std::size_t n, int variables, int points, std::uint64_t seed) : n_(n), points_(points)
  {
    const std::size_t total = (n + 2) * (n + 2) * (n + 2);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(1, 2);
    for (int v = 0; v < variables; v++) {
      in_.emplace_back(total);
      for (auto& x : in_.back())
        x = u(rng);
      out_.push_back(in_.back());
    }
  }

  /** Every variable once, then the swap: one time step of the stencil code. */
  void sweep()
  {
    for (std::size_t v = 0; v < in_.size(); v++) {
      if (points_ == 7)
        sweep7(in_[v].data(), out_[v].data(), n_);
      else
        sweep27(in_[v].data(), out_[v].data(), n_);
    }
    std::swap(in_, out_);
  }

  /** The plain reference: the same update from index arithmetic and a loop over the 27
   *  offsets (another summation order, hence a tolerance). */
  void sweep_reference()
  {
    const auto idx = [this](std::size_t i, std::size_t j, std::size_t k) { return (k * (n_ + 2) + j) * (n_ + 2) + i; };
    for (std::size_t v = 0; v < in_.size(); v++)
      for (std::size_t k = 1; k <= n_; k++)
        for (std::size_t j = 1; j <= n_; j++)
          for (std::size_t i = 1; i <= n_; i++) {
            double sum[4] = {0, 0, 0, 0};
            for (int dk = -1; dk <= 1; dk++)
              for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                  const int d = std::abs(di) + std::abs(dj) + std::abs(dk);
                  if (points_ == 7 && d > 1)
                    continue;
                  sum[d] += in_[v][idx(i + di, j + dj, k + dk)];
                }
            out_[v][idx(i, j, k)] = points_ == 7 ? kW7[0] * sum[0] + kW7[1] * sum[1]
                                                 : kW27[0] * sum[0] + kW27[1] * sum[1] + kW27[2] * sum[2] +
                                                       kW27[3] * sum[3];
          }
    std::swap(in_, out_);
  }

  const std::vector<std::vector<double>>& fields() const { return in_; }

private:
  std::size_t n_;
  int points_;
  std::vector<std::vector<double>> in_, out_;
};

/** Largest relative difference of the fast sweeps from the reference on a small odd cube
 *  (odd: the vectorised loops' remainders are exercised). */
double check_against_reference(int variables, int points)
{
  const std::size_t n = 9;
  Cube fast(n, variables, points, 7), ref(n, variables, points, 7);
  for (int s = 0; s < 3; s++) {
    fast.sweep();
    ref.sweep_reference();
  }
  double err = 0;
  for (std::size_t v = 0; v < fast.fields().size(); v++)
    for (std::size_t i = 0; i < fast.fields()[v].size(); i++) {
      const double a = fast.fields()[v][i], b = ref.fields()[v][i];
      err = std::max(err, std::isfinite(a) ? std::abs(a - b) / std::abs(b) : INFINITY);
    }
  return err;
}

double seconds_of(Cube& cube, long sweeps)
{
  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < sweeps; s++)
    cube.sweep();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int usage(const std::string& why) { return calibration::refuse_command_line("calib_stencil", kUsage, why); }

} // namespace

namespace {

int run(int argc, char** argv)
{
  int points = 7;
  long variables = 5, reps = 5;
  std::vector<long> sizes{16, 32, 64, 128};
  std::string out;
  const std::string problem = calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--stencil")
      return v == "7" || v == "27" ? (points = std::stoi(v), std::string()) : "--stencil " + v + ": expected 7 or 27";
    if (a == "--variables")
      return read_whole(a, v, 1, 1000, "a whole number from 1 to 1000", variables);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", reps);
    if (a == "--sizes")
      return read_whole_list(a, v, 1, 1024, "cells per side from 1 to 1024, separated by commas", sizes);
    return std::nullopt;
  });
  if (!problem.empty())
    return usage(problem);
  if (calibration::only_checking_options())
    return 0;
  // The largest cube's two copies of every field are the working set (one cube at a time).
  const long largest = *std::max_element(sizes.begin(), sizes.end());
  const double side = static_cast<double>(largest + 2);
  if (const int rc = calibration::refuse_beyond_available_memory(
          "calib_stencil", 2.0 * static_cast<double>(variables) * side * side * side * sizeof(double),
          "two copies of " + std::to_string(variables) + " fields of " + std::to_string(largest + 2) + "^3 doubles (--sizes " +
              std::to_string(largest) + ")"))
    return rc;

  const double max_error = check_against_reference(static_cast<int>(variables), points);
  if (!(max_error < 1e-12)) {
    std::fprintf(stderr, "calib_stencil: the %d-point sweep differs from the reference by %.3g (relative); "
                         "expected under 1e-12\n", points, max_error);
    return 1;
  }

  const int flops_per_variable = points == 7 ? kFlops7 : kFlops27;
  const std::size_t rows = sizes.size(), cols = static_cast<std::size_t>(reps);
  calibration::Dataset cells{{}, {rows}, ""}, seconds{{}, {rows, cols}, "s"}, rate{{}, {rows, cols}, "1/s"};
  std::string sweeps_text;
  double sink = 0; // read after the timings, so that no sweep is optimised away
  for (std::size_t si = 0; si < rows; si++) {
    const auto n = static_cast<std::size_t>(sizes[si]);
    const double count = static_cast<double>(n * n * n);
    Cube cube(n, static_cast<int>(variables), points, 1 + si);
    // Warm the caches and find how many sweeps fill a repetition.
    long sweeps = 1;
    double t = seconds_of(cube, sweeps);
    while (t < kMinRepetitionSeconds / 4) {
      sweeps *= 2;
      t = seconds_of(cube, sweeps);
    }
    sweeps = std::max(1L, static_cast<long>(std::ceil(static_cast<double>(sweeps) * kMinRepetitionSeconds / t)));
    sweeps_text += (sweeps_text.empty() ? "" : ",") + std::to_string(sweeps);
    for (long r = 0; r < reps; r++) {
      const double per_sweep = seconds_of(cube, sweeps) / static_cast<double>(sweeps);
      seconds.values.push_back(per_sweep);
      rate.values.push_back(count / per_sweep);
    }
    cells.values.push_back(static_cast<double>(n));
    sink += cube.fields()[0][(n + 2) * (n + 2) + (n + 2) + 1];
    std::vector<double> row(rate.values.end() - reps, rate.values.end());
    std::nth_element(row.begin(), row.begin() + reps / 2, row.end());
    const double median = row[static_cast<std::size_t>(reps / 2)];
    std::printf("n %4zu: %8.2f M cells/s, %.3g s per sweep, %6.2f Gflop/s as coded (median of %ld, %ld sweeps each)\n",
                n, median / 1e6, count / median, median * variables * flops_per_variable / 1e9, reps, sweeps);
  }
  if (sink == 42.0) // never: values stay between 1 and 2
    std::printf(" ");

  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  calibration::Benchmark bm;
  bm.name = "stencil";
  bm.parameters = {
      {"stencil", std::to_string(points) + "-point"},
      {"variables", std::to_string(variables)},
      {"flops_per_cell_nominal", std::to_string(flops_per_variable * variables)},
      {"threads", "1"},
      {"repetitions", std::to_string(reps)},
      {"sweeps_per_repetition", sweeps_text},
      {"max_rel_error_vs_reference", calibration::parameter_number(max_error)},
      {"what", "Jacobi sweep, " + std::to_string(points) + "-point, of " + std::to_string(variables) +
                   " fields of doubles on n^3 cells with a fixed halo of width 1 ((n+2)^3 per field), out of place "
                   "then swapped, one core; seconds: per sweep (all fields), cell_rate: n^3 cells per second; "
                   "flops_per_cell_nominal: additions and multiplications of one cell update, all fields, as coded"}};
  bm.datasets = {{"cells", cells}, {"seconds", seconds}, {"cell_rate", rate}};
  trace.benchmarks["stencil"] = bm;
  if (const int rc = calibration::write_trace_or_report(out, trace); rc != 0)
    return rc;
  return 0;
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_stencil", run, argc, argv); }
