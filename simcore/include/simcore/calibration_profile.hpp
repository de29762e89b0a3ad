/* Calibration profile: measured host speeds, link characteristics, network factors and
 * named rates, applied to a scenario's platform and looked up by models. */
#pragma once

#include "simcore/message_gaps.hpp"
#include "simcore/network_factors.hpp"
#include "simcore/units.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace simcore {

/** One named rate measured on hardware (e.g. "memcpy_bandwidth" in Bps). A unit SimGrid
 *  knows is stored in its base unit ("10 GBps" as 1e10 "Bps", "flops" as "flop/s"); "flop"
 *  stays; other units ("1/s", "cells/s") are kept as written; a plain number has none. */
struct NamedRate {
  double value = 0;
  std::string unit;
  std::string doc;
  std::string where; ///< "profile.json (rates.name)", for errors
};

/** Loaded from JSON (schema documented in simcore/README.md). Host and link rules match names
 *  by full regular expression; each setting (a host's speed, each of its rates, a link's
 *  bandwidth, its latency) comes from the first matching rule that has it. A host rule may
 *  carry its own rates (one host type's measurements); a host's rate is the first matching
 *  rule's that defines it, else the profile-wide one. */
class CalibrationProfile {
public:
  struct HostRule {
    std::string pattern;
    std::string where; ///< "profile.json (hosts[0])"
    std::regex re;
    std::optional<double> speed;            // flop/s
    std::map<std::string, NamedRate> rates; // of this host type
  };
  struct LinkRule {
    std::string pattern;
    std::string where; ///< "profile.json (links[0])"
    std::regex re;
    std::optional<double> bandwidth; // B/s
    std::optional<double> latency;   // s
    bool route = false; ///< "scope": "route": measured end to end over a route, not over one link
  };

  CalibrationProfile() = default;
  /** Reads and checks a profile file. Throws InputError with the file and the JSON path. */
  static CalibrationProfile load(const std::string& path);
  static CalibrationProfile from_json(const nlohmann::json& j, const std::string& where);

  bool empty() const
  {
    return path_.empty() && hosts_.empty() && links_.empty() && rates_.empty() && config_.empty() &&
           network_factors_.empty() && message_gaps_.empty();
  }
  const std::string& path() const { return path_; }
  /** SHA-256 of the file's bytes, as load() read them (empty for a profile made from JSON). */
  const std::string& sha256() const { return sha256_; }
  const std::string& name() const { return name_; }
  const std::vector<HostRule>& host_rules() const { return hosts_; }
  const std::vector<LinkRule>& link_rules() const { return links_; }
  /** SimGrid configuration items ("network/latency-factor" -> "1.0"). */
  const std::map<std::string, std::string>& config() const { return config_; }
  const std::map<std::string, NamedRate>& rates() const { return rates_; }
  /** Latency and bandwidth factors by placement (within a host, between hosts). */
  const NetworkFactors& network_factors() const { return network_factors_; }
  /** Per-message gaps of messages exchanged back to back, by placement (what models that
   *  send many messages charge for each further one). */
  const MessageGaps& message_gaps() const { return message_gaps_; }

  /** Calibrated speed of a host: the first matching rule's that has one, if any. */
  std::optional<double> host_speed(const std::string& host) const;
  bool has_rate(const std::string& name) const { return rates_.count(name) != 0; }
  /** A named rate as a model reads it, a quantity `q` in its base unit (base_unit(q)). The
   *  rate must be in that unit (or a plain number) and positive: else InputError naming the
   *  profile and the rate. rate() also throws one when the profile does not define it;
   *  rate_or() gives `fallback` then. */
  double rate(const std::string& name, Quantity q) const;
  double rate_or(const std::string& name, Quantity q, double fallback) const;
  /** The rate of one host: the first host rule matching `host` that defines it, else the
   *  profile-wide rate; checked as above. */
  bool has_rate(const std::string& name, const std::string& host) const { return find_rate(name, host) != nullptr; }
  double rate(const std::string& name, const std::string& host, Quantity q) const;
  double rate_or(const std::string& name, const std::string& host, Quantity q, double fallback) const;

  /** Applies host and link rules and the network factors to the loaded platform (before the
   *  simulation starts). `platform_path`, the file it was loaded from, is searched for hosts
   *  that already have a speed profile (SimGrid takes one a host): a host rule's speed on one
   *  is refused. */
  void apply_to_platform(const std::string& platform_path = "") const;

private:
  const NamedRate* find_rate(const std::string& name, const std::string& host) const;
  const HostRule* speed_rule(const std::string& host) const;
  void warn_unused_rules() const;
  NetworkFactors::RouteObserver route_latency_check(const std::map<std::string, const LinkRule*>& latency_rule) const;

  std::string path_;
  std::string sha256_;
  std::string name_;
  std::vector<HostRule> hosts_;
  std::vector<LinkRule> links_;
  std::map<std::string, std::string> config_;
  std::map<std::string, NamedRate> rates_;
  NetworkFactors network_factors_;
  std::string network_factors_where_; ///< "profile.json:12 (network_factors)", for errors
  MessageGaps message_gaps_;
};

} // namespace simcore
