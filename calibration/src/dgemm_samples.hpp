/* The DGEMM traces of a fit: the dense flop rate of one core, per host type, and how well
 * it predicts every size measured (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"
#include "node_samples.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace calibration {

class DgemmSamples {
public:
  /** Adds the `dgemm` group `b` of trace `t` (read from `path`) to host type `match`.
   *  simcore::InputError naming the trace when a dataset is missing or misshapen, or holds a
   *  size or rate that is not positive. */
  void add(const Benchmark& b, const Trace& t, const std::string& path, const std::string& match);

  /** One host rule per host type (the median of its traces' rates; specific patterns before
   *  the catch-all, since a profile's first matching rule wins), `dgemm_flops` in each type's
   *  rates, and quality["compute"]: one entry per trace, in order (its rate at the largest
   *  size, the spread there, the measured peak and the share of it, and how well its type's
   *  speed predicts every size and repetition); the first entry of a type of several traces
   *  also gives how far its nodes stray from their median (`node_rel_spread`), with a note
   *  where it is more than 15 % (two host types given as one). */
  void write(nlohmann::ordered_json& hosts, std::map<std::string, nlohmann::ordered_json>& type_rates,
             nlohmann::ordered_json& quality) const;

private:
  /** The rate of every trace, by host type, in order of appearance. */
  std::vector<std::pair<std::string, NodeSamples>> speeds_;
  /** Every trace's quality entry, and its flops and rate of each size and repetition. */
  struct TraceSamples {
    std::string match;
    nlohmann::ordered_json quality;
    std::vector<double> work, rates;
  };
  std::vector<TraceSamples> traces_;
};

} // namespace calibration
