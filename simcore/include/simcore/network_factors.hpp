/* Network factors by placement: SimGrid's latency and bandwidth factors over message size, in
 * its own syntax ("X:f;Y:g", that of network/latency-factor), one set for the messages within
 * a host and one for those between hosts. SimGrid's configuration holds a single set for every
 * message; these are applied through the network model's factor callbacks instead, which see
 * both ends of each message. */
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace simcore {

/** Factors over message size, "X:f;Y:g" as SimGrid reads them: a message of s bytes takes the
 *  factor of the largest threshold X below s (s > X); at or below the smallest, 1. */
class SizeFactors {
public:
  /** Parses and checks `text`: thresholds whole bytes, each once; factors finite and > 0.
   *  Throws InputError naming `where` and the entry. */
  static SizeFactors parse(const std::string& text, const std::string& where);
  double at(double size) const;
  const std::string& text() const { return text_; }

private:
  std::vector<std::pair<double, double>> steps_; // (threshold, factor), thresholds ascending
  std::string text_;
};

/** The factors of one placement; a missing one leaves that factor at 1. */
struct PlacementFactors {
  std::optional<SizeFactors> latency;
  std::optional<SizeFactors> bandwidth;
};

/** The profile's "network_factors": {"intra-node": {"latency": "...", "bandwidth": "..."},
 *  "inter-node": {...}}. A message from a host to itself is intra-node, any other inter-node. */
class NetworkFactors {
public:
  /** Throws InputError naming `where` (the profile) for anything but the form above. */
  static NetworkFactors from_json(const nlohmann::json& j, const std::string& where);
  bool empty() const { return !intra_ && !inter_; }
  bool has_latency() const;
  bool has_bandwidth() const;
  double latency_factor(double size, bool same_host) const;
  double bandwidth_factor(double size, bool same_host) const;
  /** Hands the factors to the loaded platform's network model (after the platform is loaded,
   *  before the simulation runs). SimGrid refuses them when network/latency-factor or
   *  network/bandwidth-factor (under network/model SMPI: smpi/lat-factor, smpi/bw-factor) is
   *  configured too: an InputError naming `where` says so. */
  void install(const std::string& where) const;

private:
  std::optional<PlacementFactors> intra_, inter_;
};

} // namespace simcore
