#include "calibration/profile_fitter.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cstdio>

namespace calibration {

namespace {

std::string number(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

nlohmann::ordered_json quality_json(const FitQuality& q)
{
  return {{"r2", q.r2}, {"max_rel_error", q.max_rel_error}, {"median_rel_error", q.median_rel_error}};
}

const Dataset& need(const Benchmark& b, const std::string& name, const std::string& path)
{
  const auto it = b.datasets.find(name);
  if (it == b.datasets.end())
    throw simcore::InputError(path + " (" + b.name + ")", "no dataset '" + name + "'");
  return it->second;
}

double median_row(const Dataset& d, std::size_t r)
{
  std::vector<double> v;
  for (std::size_t c = 0; c < d.cols(); c++)
    v.push_back(d.at(r, c));
  return simcore::quantile(v, 0.5);
}

} // namespace

void pingpong_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times)
{
  const Dataset& size = need(b, "size", b.name);
  const Dataset& rt = need(b, "round_trip", b.name);
  for (std::size_t r = 0; r < rt.rows(); r++)
    for (std::size_t c = 0; c < rt.cols(); c++) {
      sizes.push_back(size.at(r));
      times.push_back(rt.at(r, c) / 2);
    }
}

std::string latency_factors(const PiecewiseFit& fit, double latency)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it)
    out += (out.empty() ? "" : ";") + number(it == std::prev(fit.segments.rend()) ? 0 : it->from) + ":" +
           number(std::max(it->intercept, 1e-12) / latency);
  return out;
}

std::string bandwidth_factors(const PiecewiseFit& fit, double bandwidth)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it) {
    const double bw = it->slope > 0 ? 1.0 / it->slope : bandwidth;
    out += (out.empty() ? "" : ";") + number(it == std::prev(fit.segments.rend()) ? 0 : it->from) + ":" +
           number(bw / bandwidth);
  }
  return out;
}

nlohmann::ordered_json fit_profile(const std::vector<std::string>& paths)
{
  nlohmann::ordered_json profile{{"schema", "simcore-profile/1"}};
  nlohmann::ordered_json config = nlohmann::ordered_json::object(), rates = nlohmann::ordered_json::object(),
                         quality = nlohmann::ordered_json::object(), links = nlohmann::ordered_json::array(),
                         hosts = nlohmann::ordered_json::array();
  nlohmann::ordered_json meta{{"traces", paths}};
  bool fitted = false;
  std::string host;
  for (const auto& path : paths) {
    const Trace t = read_trace(path);
    if (host.empty() && t.attributes.count("host"))
      host = t.attributes.at("host");
    meta["machines"].push_back(t.attributes);
    for (const auto& [name, b] : t.benchmarks) {
      if (name == "pingpong") {
        std::vector<double> sizes, times;
        pingpong_samples(b, sizes, times);
        // Fit the median of each size's repetitions (a first round trip, a descheduled
        // process: outliers that a least-squares fit should not chase); report the spread.
        std::vector<double> msizes, mtimes, spread;
        for (std::size_t i = 0; i < sizes.size();) {
          std::size_t j = i;
          std::vector<double> v;
          while (j < sizes.size() && sizes[j] == sizes[i])
            v.push_back(times[j++]);
          const double med = simcore::quantile(v, 0.5);
          msizes.push_back(sizes[i]);
          mtimes.push_back(med);
          for (double x : v)
            spread.push_back(std::abs(x - med) / med);
          i = j;
        }
        const PiecewiseFit fit = fit_piecewise(msizes, mtimes);
        // The reference: the first segment's latency, the last segment's bandwidth.
        const double latency = std::max(fit.segments.front().intercept, 1e-9);
        const double bandwidth = fit.segments.back().slope > 0 ? 1.0 / fit.segments.back().slope : 1e12;
        const auto placement = b.parameters.count("placement") ? b.parameters.at("placement") : "inter-node";
        config["network/model"] = "SMPI";
        config["smpi/lat-factor"] = latency_factors(fit, latency);
        config["smpi/bw-factor"] = bandwidth_factors(fit, bandwidth);
        if (placement == "intra-node") { // the route of two ranks on one host: its loopback
          config["network/loopback-lat"] = number(latency);
          config["network/loopback-bw"] = number(bandwidth);
        } else {
          links.push_back({{"match", ".*"}, {"bandwidth", number(bandwidth) + "Bps"}, {"latency", number(latency) + "s"}});
        }
        rates["network_latency"] = {{"value", latency}, {"unit", "s"}, {"doc", "ping-pong, smallest messages"}};
        rates["network_bandwidth"] = {{"value", bandwidth}, {"unit", "Bps"}, {"doc", "ping-pong, largest messages"}};
        nlohmann::ordered_json segs = nlohmann::ordered_json::array();
        for (const auto& s : fit.segments)
          segs.push_back({{"from", s.from}, {"latency", s.intercept}, {"bandwidth", s.slope > 0 ? 1.0 / s.slope : 0.0}});
        quality["network"] = quality_json(fit.quality);
        quality["network"]["median_rel_spread_of_repetitions"] = simcore::quantile(spread, 0.5);
        quality["network"]["placement"] = placement;
        quality["network"]["segments"] = segs;
        quality["network"]["protocol_switch"] = fit.switch_point();
        fitted = true;
      } else if (name == "dgemm") {
        // Dense compute rate of one core: the median over repetitions at the largest size.
        const Dataset& size = need(b, "size", path);
        const Dataset& gflops = need(b, "gflops", path);
        std::size_t largest = 0;
        for (std::size_t r = 0; r < size.rows(); r++)
          if (size.at(r) > size.at(largest))
            largest = r;
        const double rate = median_row(gflops, largest) * 1e9;
        hosts.push_back({{"match", ".*"}, {"speed", number(rate) + "f"}});
        rates["dgemm_flops"] = {{"value", rate}, {"unit", "flops"},
                                {"doc", "DGEMM, one core, n = " + number(size.at(largest)) + " (" +
                                            (b.parameters.count("path") ? b.parameters.at("path") : "?") + ")"}};
        std::vector<double> spread;
        for (std::size_t k = 0; k < gflops.cols(); k++)
          spread.push_back(std::abs(gflops.at(largest, k) * 1e9 - rate) / rate);
        quality["compute"] = {{"median_rel_spread", simcore::quantile(spread, 0.5)}};
        fitted = true;
      } else if (name == "stream") {
        const Dataset& threads = need(b, "threads", path);
        const Dataset& copy = need(b, "copy_bandwidth", path);
        const Dataset& triad = need(b, "triad_bandwidth", path);
        // STREAM counts the bytes read and written: a memcpy of S bytes moves 2 S.
        double best_copy = 0, best_triad = 0, one_core = 0;
        std::vector<double> spread;
        for (std::size_t r = 0; r < threads.rows(); r++) {
          const double c = median_row(copy, r), tr = median_row(triad, r);
          best_copy = std::max(best_copy, c);
          best_triad = std::max(best_triad, tr);
          if (threads.at(r) == 1)
            one_core = c;
          for (std::size_t k = 0; k < copy.cols(); k++)
            spread.push_back(std::abs(copy.at(r, k) - c) / c);
        }
        rates["memcpy_bandwidth"] = {{"value", best_copy / 2}, {"unit", "Bps"},
                                     {"doc", "bytes copied per second, all threads (STREAM copy / 2)"}};
        rates["memcpy_bandwidth_one_core"] = {{"value", one_core / 2}, {"unit", "Bps"},
                                              {"doc", "bytes copied per second by one thread"}};
        rates["stream_triad_bandwidth"] = {{"value", best_triad}, {"unit", "Bps"}, {"doc", "STREAM triad"}};
        quality["memory"] = {{"max_rel_spread", spread.empty() ? 0.0 : *std::max_element(spread.begin(), spread.end())},
                             {"median_rel_spread", simcore::quantile(spread, 0.5)}};
        fitted = true;
      }
    }
  }
  if (!fitted)
    throw simcore::InputError(paths.empty() ? "calibrate" : paths.front(),
                              "no benchmark this fitter knows (pingpong, stream, dgemm); expected calibration traces");
  profile["name"] = "fitted from " + std::to_string(paths.size()) + " trace(s) of " + host;
  if (!hosts.empty())
    profile["hosts"] = hosts;
  if (!links.empty())
    profile["links"] = links;
  profile["simgrid_config"] = config;
  profile["rates"] = rates;
  profile["meta"] = meta;
  profile["quality"] = quality;
  return profile;
}

} // namespace calibration
