#include "dgemm_samples.hpp"
#include "fit_support.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace calibration {

namespace {

/** The most relative error calib_dgemm lets its kernel have against the reference. */
constexpr double kDgemmTolerance = 1e-10;
} // namespace

void DgemmSamples::add(const Benchmark& b, const Trace& t, const std::string& path, const std::string& match)
{
  // A kernel that failed its check against the reference: its rates are no machine's (calib_dgemm
  // once wrote such a trace, marking it only in this parameter).
  if (b.parameters.count("max_rel_error_vs_reference")) {
    const std::string e = b.parameters.at("max_rel_error_vs_reference");
    char* end = nullptr;
    const double error = std::strtod(e.c_str(), &end);
    if (e.empty() || *end != '\0' || !(error < kDgemmTolerance))
      throw simcore::InputError(path + " (dgemm)", "max_rel_error_vs_reference '" + e + "'; expected a kernel " +
                                                       "that matched the reference, under " +
                                                       profile_number(kDgemmTolerance));
  }
  // Dense compute rate of one core: the median over repetitions at the largest size.
  const Dataset size = need_in_group(b, "size", Quantity::kCount, path);
  const Dataset gflops = need_in_group(b, "gflops", Quantity::kGflops, path);
  if (size.rows() == 0)
    throw simcore::InputError(path + " (dgemm)", "dataset 'size' is empty; expected the matrix orders measured, "
                                                 "one per row");
  if (gflops.rows() != size.rows() || gflops.values.size() != gflops.rows() * gflops.cols())
    throw simcore::InputError(path + " (dgemm)", "dataset 'gflops' has " + std::to_string(gflops.rows()) +
                                                     " rows for " + std::to_string(size.rows()) +
                                                     " sizes; expected one row of repetitions per size");
  // Matrix orders, one a row (the flops of a size, 2 n^3, weigh its repetitions in the
  // quality section), and at least one repetition of each.
  need_positive(size, size.rows(), path + " (dgemm)", "size", "matrix orders, one per row", 1e9);
  need_whole(size, path + " (dgemm)", "size", "matrix orders", 1e9);
  if (size.values.size() != size.rows()) // a (1, n) dataset read as one size of n repetitions
    throw simcore::InputError(path + " (dgemm)", "dataset 'size' holds " + std::to_string(size.values.size()) +
                                                     " values in " + std::to_string(size.rows()) +
                                                     " rows; expected one matrix order per row");
  need_positive(gflops, size.rows(), path + " (dgemm)", "gflops", "rates in Gflop/s", 1e9);
  // Every row of the largest order (calib_dgemm --sizes 512,1024,1024 measures it twice): the
  // median over all their repetitions, whatever the rows' order.
  std::size_t largest = 0;
  for (std::size_t r = 0; r < size.rows(); r++)
    if (size.at(r) > size.at(largest))
      largest = r;
  std::vector<double> at_largest;
  for (std::size_t r = 0; r < size.rows(); r++)
    if (size.at(r) == size.at(largest))
      for (std::size_t k = 0; k < gflops.cols(); k++)
        at_largest.push_back(gflops.at(r, k));
  const double rate = simcore::quantile(at_largest, 0.5) * 1e9; // the median in Gflop/s, as the trace gives it
  auto it = std::find_if(speeds_.begin(), speeds_.end(), [&](const auto& e) { return e.first == match; });
  if (it == speeds_.end())
    it = speeds_.insert(speeds_.end(), {match, {}});
  it->second.add(rate, path);
  std::vector<double> spread;
  for (double r : at_largest)
    spread.push_back(std::abs(r * 1e9 - rate) / rate);
  TraceSamples cs{match, {}, {}, {}};
  for (std::size_t r = 0; r < size.rows(); r++)
    for (std::size_t k = 0; k < gflops.cols(); k++) {
      cs.work.push_back(2 * size.at(r) * size.at(r) * size.at(r));
      cs.rates.push_back(gflops.at(r, k) * 1e9);
    }
  nlohmann::ordered_json c{{"match", match},
                           {"trace", path},
                           {"cpu_model", t.attributes.count("cpu_model") ? t.attributes.at("cpu_model") : ""},
                           {"flops", rate},
                           {"size", size.at(largest)},
                           {"path", parameter_or(b, "path", "?")},
                           {"median_rel_spread", simcore::quantile(spread, 0.5)}};
  for (const char* key : {"cpu_id", "caches"}) // traces before 2026-12-06 lack them
    if (t.attributes.count(key))
      c[key] = t.attributes.at(key);
  // atof took "1e-320" for a peak (a share of it infinite: null in the profile) and "abc" for none.
  if (const auto peak = number_parameter(b, "measured_peak_gflops", path + " (dgemm)",
                                         "the core's measured peak in Gflop/s, a number from 0.001 to 1e6", 1e-3, 1e6,
                                         false)) {
    c["measured_peak_flops"] = *peak * 1e9;
    c["share_of_measured_peak"] = rate / (*peak * 1e9);
  }
  cs.quality = std::move(c);
  traces_.push_back(std::move(cs));
}

void DgemmSamples::write(nlohmann::ordered_json& hosts, std::map<std::string, nlohmann::ordered_json>& type_rates,
                         nlohmann::ordered_json& quality) const
{
  // Specific patterns before the catch-all, since a profile's first matching rule wins.
  auto speeds = speeds_;
  std::stable_partition(speeds.begin(), speeds.end(), [](const auto& e) { return e.first != ".*"; });
  for (const auto& [match, nodes] : speeds) {
    const double rate = nodes.median();
    hosts.push_back({{"match", match}, {"speed", profile_number(rate) + "f"}});
    type_rates[match]["dgemm_flops"] = {{"value", rate}, {"unit", "flops"},
                                        {"doc", "DGEMM, one core, hosts matching '" + match + "'"}};
  }
  // Each DGEMM trace against its host type's speed, every size and repetition: a DGEMM of
  // n^3 timed as 2 n^3 / speed, as the simulation would.
  std::vector<std::string> described; // the types whose nodes' spread is given
  for (const auto& cs : traces_) {
    const auto it = std::find_if(speeds.begin(), speeds.end(), [&](const auto& e) { return e.first == cs.match; });
    const NodeSamples& nodes = it->second;
    nlohmann::ordered_json q = cs.quality;
    q.update(rate_fit_quality(cs.work, cs.rates, nodes.median()));
    if (nodes.values.size() > 1 && std::find(described.begin(), described.end(), cs.match) == described.end()) {
      nlohmann::ordered_json spread;
      nodes.describe(spread, "DGEMM rates");
      q["node_rel_spread"] = spread["node_rel_spread"];
      if (spread.contains("note"))
        q["note"] = spread["note"];
      // Nodes whose traces name different cores or caches: one speed stands for both, however
      // close their rates. A stepping (Arm, POWER: revision) apart is the same core, as are
      // big.LITTLE nodes with another count of cores online; caches are compared where both
      // traces give them; an emulated trace names no core of its own.
      std::vector<std::string> ids;
      std::vector<std::pair<std::string, std::string>> seen; // core, caches
      for (const auto& other : traces_) {
        if (other.match != cs.match || !other.quality.contains("cpu_id"))
          continue;
        const std::string id = other.quality["cpu_id"].get<std::string>();
        const std::string caches = other.quality.value("caches", std::string());
        if (id.empty() || id.rfind("emulated", 0) == 0)
          continue;
        const std::string core = core_of(id);
        const bool known = std::any_of(seen.begin(), seen.end(), [&](const auto& e) {
          return e.first == core && (e.second.empty() || caches.empty() || e.second == caches);
        });
        if (!known) {
          seen.emplace_back(core, caches);
          ids.push_back(caches.empty() ? id : id + ", " + caches);
        }
      }
      if (ids.size() > 1) {
        q["cpu_ids"] = ids;
        std::string list;
        for (const auto& id : ids)
          list += (list.empty() ? "" : " | ") + id;
        const std::string cores = "the nodes' traces name " + std::to_string(ids.size()) +
                                  " different cores or caches (" + list + "): one speed stands for them all";
        q["note"] = q.contains("note") ? q["note"].get<std::string>() + "; " + cores
                                       : cores + ". Give each type its own --hosts REGEX";
      }
      described.push_back(cs.match);
    }
    quality["compute"].push_back(std::move(q));
  }
}

} // namespace calibration
