/* One rate measured on several nodes of one host type (one trace per node): the fitter takes
 * the median of the nodes and records how far they stray from it (private to calibration/src). */
#pragma once

#include <nlohmann/json.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace calibration {

struct NodeSamples {
  std::vector<double> values;      ///< one per trace
  std::vector<std::string> traces; ///< the trace of each value

  void add(double v, const std::string& trace)
  {
    values.push_back(v);
    traces.push_back(trace);
  }
  bool empty() const { return values.empty(); }
  double median() const { return simcore::quantile(values, 0.5); }
  /** The largest relative distance of one node's value from the median of the nodes. */
  double node_rel_spread() const
  {
    const double m = median();
    double worst = 0;
    for (double v : values)
      worst = std::max(worst, m > 0 ? std::abs(v - m) / m : 0.0);
    return worst;
  }
  /** traces, node_rel_spread and, with several traces, each trace's value under `name`. */
  void describe(nlohmann::ordered_json& q, const std::string& name) const
  {
    q["traces"] = values.size();
    q["node_rel_spread"] = node_rel_spread();
    if (values.size() > 1) {
      nlohmann::ordered_json by = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < values.size(); i++)
        by.push_back({{"trace", traces[i]}, {name, values[i]}});
      q["by_trace"] = by;
    }
    if (node_rel_spread() > kNodeSpreadNote)
    {
      char spread[32];
      std::snprintf(spread, sizeof spread, "%.1f", 100 * node_rel_spread());
      q["note"] = "the nodes' " + name + " differ by up to " + spread +
                  " % from their median: traces of different host types? Give each type its own --hosts REGEX";
    }
  }
  /** Beyond this relative spread between nodes of one type, the quality section says so. */
  static constexpr double kNodeSpreadNote = 0.15;
};

} // namespace calibration
