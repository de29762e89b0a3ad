#include "calibration/network_fit.hpp"
#include "fit_support.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace calibration {

namespace {

/** One sample per repetition: the size of its row and `scale` x the dataset's value. */
void samples_by_size(const Benchmark& b, const std::string& name, double scale, const std::string& where,
                     std::vector<double>& sizes, std::vector<double>& times)
{
  const Dataset size = need_in_group(b, "size", Quantity::kBytes, where);
  const Dataset time = need_in_group(b, name, Quantity::kSeconds, where); // `where`: the trace's path
  if (size.rows() == 0)
    throw simcore::InputError(where + " (" + b.name + ")",
                              "dataset 'size' is empty; expected the message sizes measured, one per row");
  if (time.rows() == 0 || time.rows() != size.rows() || time.values.size() != time.rows() * time.cols())
    throw simcore::InputError(where + " (" + b.name + ")",
                              "dataset '" + name + "' has " + std::to_string(time.rows()) + " rows for " +
                                  std::to_string(size.rows()) + " sizes; expected one row of repetitions per size");
  if (time.cols() == 0)
    throw simcore::InputError(where + " (" + b.name + ")", "dataset '" + name + "' has " +
                                                               std::to_string(time.rows()) + " rows of no value; "
                                                               "expected at least one repetition per size");
  // From a picosecond to 11 days: the fit weighs each time by 1 / t^2, which a time near the
  // bottom of the double range (1e-160 s) took to infinity, and the profile to NaN.
  for (std::size_t i = 0; i < time.values.size(); i++)
    if (!(time.values[i] >= 1e-12 && time.values[i] <= 1e6))
      throw simcore::InputError(where + " (" + b.name + ")",
                                "dataset '" + name + "' holds " + profile_number(time.values[i]) + " at index " +
                                    std::to_string(i) + " (size " + profile_number(size.at(i / time.cols())) +
                                    ", repetition " + std::to_string(i % time.cols()) +
                                    "); expected times in seconds from 1e-12 to 1e6");
  if (size.values.size() != size.rows())
    throw simcore::InputError(where + " (" + b.name + ")", "dataset 'size' holds " +
                                                               std::to_string(size.values.size()) + " values in " +
                                                               std::to_string(size.rows()) +
                                                               " rows; expected one size per row");
  // Whole bytes an MPI count can hold: SMPI reads a factor's bound as an int.
  for (std::size_t i = 0; i < size.values.size(); i++) {
    const double v = size.values[i];
    if (!(v >= 0) || v > 2147483647.0 || v != std::floor(v))
      throw simcore::InputError(where + " (" + b.name + ")",
                                "dataset 'size' holds " + profile_number(v) + " at index " + std::to_string(i) +
                                    "; expected whole message sizes in bytes from 0 to 2147483647");
  }
  for (std::size_t r = 0; r < time.rows(); r++)
    for (std::size_t c = 0; c < time.cols(); c++) {
      sizes.push_back(size.at(r));
      times.push_back(time.at(r, c) * scale);
    }
}


/** A flat segment's bandwidth, relative to the reference (see bandwidth_factors). */
constexpr double kFlatSegmentBandwidthFactor = 1e6;

/** SMPI applies an entry "X:factor" to messages larger than X: a segment from size S (whole
 *  bytes) is written as S - 1, the first one as 0; as a whole number, since SMPI reads the
 *  bound as an integer (6 significant digits would turn 20971519 into "2.09715e+07", read 2). */
std::string bound_of(const Segment& s, bool first)
{
  return std::to_string(first ? 0LL : static_cast<long long>(std::max(std::llround(s.from) - 1, 0LL)));
}

} // namespace

void pingping_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path)
{
  samples_by_size(b, "time", 1.0, path, sizes, times);
}

void pingpong_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path)
{
  samples_by_size(b, "round_trip", 0.5, path, sizes, times); // one way: half the round trip
}

void one_way_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                     const std::string& path)
{
  samples_by_size(b, "time", 1.0, path, sizes, times);
}

void exchange_window_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                             std::vector<double>& messages, const std::string& path, double min_messages)
{
  std::vector<double> all_sizes, all_times;
  samples_by_size(b, "time", 1.0, path, all_sizes, all_times);
  const Dataset count = need_in_group(b, "messages", Quantity::kCount, path);
  const Dataset size = need_in_group(b, "size", Quantity::kBytes, path);
  if (count.values.size() != size.rows())
    throw simcore::InputError(path + " (" + b.name + ")", "dataset 'messages' holds " +
                                                              std::to_string(count.values.size()) + " values for " +
                                                              std::to_string(size.rows()) +
                                                              " sizes; expected the messages of each size's window");
  const std::size_t reps = all_times.size() / size.rows();
  for (std::size_t i = 0; i < all_times.size(); i++) {
    const double w = count.values[i / reps];
    if (!(w >= 1) || w != std::floor(w))
      throw simcore::InputError(path + " (" + b.name + ")", "dataset 'messages' holds " + profile_number(w) +
                                                                " at index " + std::to_string(i / reps) + " (size " +
                                                                profile_number(all_sizes[i]) +
                                                                "); expected whole counts of at least 1");
    if (w < min_messages)
      continue;
    sizes.push_back(all_sizes[i]);
    times.push_back(all_times[i]);
    messages.push_back(w);
  }
}

std::string gap_law(const PiecewiseFit& fit)
{
  std::string out;
  for (std::size_t i = 0; i < fit.segments.size(); i++) {
    const Segment& s = fit.segments[i];
    // A segment falling with size (noise) is written flat at its value where it starts.
    const double seconds = s.slope < 0 ? s.intercept + s.slope * s.from : s.intercept;
    out += (out.empty() ? "" : ";") + std::to_string(i == 0 ? 0LL : std::llround(s.from)) + ":" +
           profile_number(seconds) + ":" + profile_number(std::max(s.slope, 0.0));
  }
  return out;
}

std::string latency_factors(const PiecewiseFit& fit, double latency)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it)
    out += (out.empty() ? "" : ";") + bound_of(*it, it == std::prev(fit.segments.rend())) + ":" +
           profile_number(std::max(it->intercept, 1e-12) / latency);
  return out;
}

std::string bandwidth_factors(const PiecewiseFit& fit, double bandwidth)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it) {
    // A flat segment (no time per byte) gets a bandwidth a million times the reference: its
    // bytes then cost nothing next to its latency, as fitted (the reference itself would add
    // s / bandwidth to every message of the segment).
    const double bw = it->slope > 0 ? 1.0 / it->slope : bandwidth * kFlatSegmentBandwidthFactor;
    out += (out.empty() ? "" : ";") + bound_of(*it, it == std::prev(fit.segments.rend())) + ":" +
           profile_number(bw / bandwidth);
  }
  return out;
}

} // namespace calibration
