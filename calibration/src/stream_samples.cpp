#include "fit_support.hpp"
#include "stream_samples.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cmath>

namespace calibration {

void StreamSamples::add(const Benchmark& b, const std::string& path)
{
  const Dataset threads = need_in_group(b, "threads", Quantity::kCount, path);
  const Dataset copy = need_in_group(b, "copy_bandwidth", Quantity::kBytesPerSecond, path);
  const Dataset triad = need_in_group(b, "triad_bandwidth", Quantity::kBytesPerSecond, path);
  const std::string where = path + " (stream)";
  if (threads.rows() == 0 || threads.values.size() != threads.rows())
    throw simcore::InputError(where, "dataset 'threads' has " + std::to_string(threads.values.size()) +
                                         " values in " + std::to_string(threads.rows()) +
                                         " rows; expected one thread count per row");
  need_whole(threads, where, "threads", "thread counts", 1e6);
  need_positive(copy, threads.rows(), where, "copy_bandwidth", "bandwidths in bytes per second", 1e18);
  need_positive(triad, threads.rows(), where, "triad_bandwidth", "bandwidths in bytes per second", 1e18);
  // STREAM counts the bytes read and written: a memcpy of S bytes moves 2 S.
  double best_copy = 0, best_triad = 0, one_core = 0;
  std::size_t best_row = 0;
  for (std::size_t r = 0; r < threads.rows(); r++) {
    const double c = median_row(copy, r), tr = median_row(triad, r);
    if (c > best_copy)
      best_row = r;
    best_copy = std::max(best_copy, c);
    best_triad = std::max(best_triad, tr);
    if (threads.at(r) == 1)
      one_core = c;
    for (std::size_t k = 0; k < copy.cols(); k++)
      spread_.push_back(std::abs(copy.at(r, k) - c) / c);
  }
  for (std::size_t k = 0; k < copy.cols(); k++)
    rates_.push_back(copy.at(best_row, k) / 2);
  memcpy_all_.add(best_copy / 2, path);
  fastest_threads_.push_back(std::lround(threads.at(best_row)));
  if (one_core > 0) // a run on more threads only tells nothing of one core
    memcpy_one_.add(one_core / 2, path);
  triad_.add(best_triad, path);
}

void StreamSamples::write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const
{
  rates["memcpy_bandwidth"] = {{"value", memcpy_all_.median()}, {"unit", "Bps"},
                               {"doc", "bytes copied per second at the thread count that copied fastest (STREAM copy / 2; "
                                       "quality.memory.memcpy_threads)"}};
  if (!memcpy_one_.empty())
    rates["memcpy_bandwidth_one_core"] = {{"value", memcpy_one_.median()}, {"unit", "Bps"},
                                          {"doc", "bytes copied per second by one thread"}};
  rates["stream_triad_bandwidth"] = {{"value", triad_.median()}, {"unit", "Bps"}, {"doc", "STREAM triad"}};
  const auto& sp = spread_;
  nlohmann::ordered_json q{{"max_rel_spread", sp.empty() ? 0.0 : *std::max_element(sp.begin(), sp.end())},
                           {"median_rel_spread", sp.empty() ? 0.0 : simcore::quantile(sp, 0.5)}};
  q["memcpy_threads"] = fastest_threads_; // of each trace, in the order given
  memcpy_all_.describe(q, "memcpy_bandwidth");
  q.update(rate_fit_quality(std::vector<double>(rates_.size(), 1.0), rates_, memcpy_all_.median()));
  quality["memory"] = q;
}

} // namespace calibration
