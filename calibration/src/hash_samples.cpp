#include "fit_support.hpp"
#include "hash_samples.hpp"

#include <simcore/error.hpp>

#include <algorithm>

namespace calibration {

void HashSamples::add(const Benchmark& b, const std::string& path, const std::string& match)
{
  // Memory-bound lookups: the pipelined SIMD table's rate (the row named so), and the
  // random cache lines one core reads per second with misses overlapped.
  const Dataset rate = need_in_group(b, "lookup_rate", Quantity::kPerSecond, path);
  const std::string structures = parameter_or(b, "structures", "");
  std::size_t row = 0, k = 0;
  bool named = false;
  for (std::size_t from = 0; from <= structures.size(); k++) {
    const std::size_t to = std::min(structures.find(',', from), structures.size());
    if (structures.substr(from, to - from) == "simd_table_batched") {
      row = k, named = true;
      break;
    }
    from = to + 1;
  }
  if (!named || row >= rate.rows())
    throw simcore::InputError(path + " (hash_table)", "no 'simd_table_batched' row among the structures; "
                                                      "expected a trace written by calib_hash");
  need_positive(rate, rate.rows(), path + " (hash_table)", "lookup_rate", "lookups per second", 1e18);
  const std::string miss_rate = parameter_or(b, "miss_rate", "?");
  const std::string key = parameter_or(b, "key", "?");
  if (first_trace_.empty()) {
    miss_rate_ = miss_rate, key_ = key, first_trace_ = path;
  } else if (miss_rate != miss_rate_ || key != key_) {
    throw simcore::InputError(path + " (hash_table)",
                              key + " keys at miss rate " + miss_rate + ", but " + first_trace_ +
                                  " (also for hosts matching '" + match + "') measured " + key_ +
                                  " keys at " + miss_rate_ + "; expected the same workload on every node "
                                  "of a host type (--hosts REGEX before each type's traces)");
  }
  lookups_.add(median_row(rate, row), path);
  // What the table could not store, per memory layout: for the quality section (the
  // first trace's, as with the stencil's sizes).
  if (failures_by_layout_.is_null() && b.datasets.count("secondary_share") &&
      b.datasets.count("insert_failure_rate")) {
    const Dataset& shares = b.datasets.at("secondary_share");
    const Dataset& failures = b.datasets.at("insert_failure_rate");
    const std::string where = path + " (hash_table)";
    if (shares.values.size() != failures.values.size())
      throw simcore::InputError(where, "dataset 'insert_failure_rate' holds " + std::to_string(failures.values.size()) +
                                           " values for " + std::to_string(shares.values.size()) +
                                           " in 'secondary_share'; expected one per memory layout");
    for (const auto* d : {&shares, &failures})
      for (std::size_t i = 0; i < d->values.size(); i++)
        if (!(d->values[i] >= 0 && d->values[i] <= 1))
          throw simcore::InputError(where, std::string("dataset '") + (d == &shares ? "secondary_share" : "insert_failure_rate") +
                                               "' holds " + profile_number(d->values[i]) + " at index " +
                                               std::to_string(i) + "; expected shares from 0 to 1");
    {
      failures_by_layout_ = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < shares.values.size(); i++)
        failures_by_layout_.push_back(
            {{"secondary_share", shares.values[i]}, {"insert_failure_rate", failures.values[i]}});
    }
  }
  for (std::size_t k = 0; k < rate.cols(); k++)
    lookup_rates_.push_back(rate.at(row, k));
  if (b.datasets.count("random_line_rate") && !b.datasets.at("random_line_rate").values.empty()) {
    const Dataset lines = need_in_group(b, "random_line_rate", Quantity::kPerSecond, path);
    need_positive(lines, lines.rows(), path + " (hash_table)", "random_line_rate", "cache lines per second", 1e18);
    lines_.add(*std::max_element(lines.values.begin(), lines.values.end()), path);
    latency_.add(1.0 / lines.values.front(), path);
  }
}

void HashSamples::write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const
{
  rates["hash_lookup_rate"] = {{"value", lookups_.median()}, {"unit", "1/s"},
                               {"doc", "SIMD hash table lookups per second, one core, " + miss_rate_ +
                                           " misses, pipelined"}};
  if (!lines_.empty()) {
    rates["random_line_rate"] = {{"value", lines_.median()}, {"unit", "1/s"},
                                 {"doc", "random cache lines read per second, one core, misses overlapped"}};
    rates["memory_latency"] = {{"value", latency_.median()}, {"unit", "s"},
                               {"doc", "one dependent random access over the table's size"}};
  }
  nlohmann::ordered_json q = rate_fit_quality(std::vector<double>(lookup_rates_.size(), 1.0), lookup_rates_,
                                              lookups_.median());
  lookups_.describe(q, "hash_lookup_rate");
  if (!failures_by_layout_.is_null())
    q["insert_failure_rate_by_layout"] = failures_by_layout_;
  quality["hash"] = q;
}

} // namespace calibration
