/* The hash_table traces of one host type (calib_hash): the pipelined table's lookups per
 * second, random cache lines per second and memory latency, the median of the nodes
 * (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"
#include "node_samples.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace calibration {

class HashSamples {
public:
  /** Adds the `hash_table` group `b` of the trace `path` (host type `match`, for messages).
   *  simcore::InputError naming the trace when it has no row of the pipelined table, a rate
   *  is not positive, or it measured another key type or miss rate than the type's first. */
  void add(const Benchmark& b, const std::string& path, const std::string& match);

  bool empty() const { return lookups_.empty(); }

  /** `hash_lookup_rate`, `random_line_rate` and `memory_latency` (where measured), and
   *  quality["hash"] with the insertion failures per memory layout of the first trace. */
  void write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const;

private:
  NodeSamples lookups_, lines_, latency_;
  std::vector<double> lookup_rates_;          // the pipelined table's every repetition, every trace
  nlohmann::ordered_json failures_by_layout_; // insertion failures per secondary share, the first trace's
  std::string miss_rate_, key_, first_trace_; // of the first trace: the others must match
};

} // namespace calibration
