/* The STREAM traces of one host type: memory-copy and triad bandwidths, the median of the
 * nodes (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"
#include "node_samples.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace calibration {

class StreamSamples {
public:
  /** Adds the `stream` group `b` of the trace `path`: the best thread count's copy rate (and
   *  one thread's, where measured) and the best triad rate. simcore::InputError naming the
   *  trace when a dataset is missing or misshapen, or holds a count or rate out of range. */
  void add(const Benchmark& b, const std::string& path);

  bool empty() const { return memcpy_all_.empty(); }

  /** `memcpy_bandwidth` (STREAM copy / 2: bytes copied per second, all threads),
   *  `memcpy_bandwidth_one_core` where measured, `stream_triad_bandwidth`, and
   *  quality["memory"]. */
  void write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const;

private:
  NodeSamples memcpy_all_, memcpy_one_, triad_;
  std::vector<double> spread_; // of the repetitions, every trace
  nlohmann::ordered_json fastest_threads_ = nlohmann::ordered_json::array(); // each trace's fastest thread count
  std::vector<double> rates_;  // memcpy rate of every repetition at each trace's fitted thread count
};

} // namespace calibration
