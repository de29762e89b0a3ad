/* Network factors by placement: latency and bandwidth factors over message size in the syntax
 * of SimGrid's smpi/lat-factor and smpi/bw-factor ("X:f;Y:g"), one set for the messages within
 * a node and one for those between nodes. SimGrid's configuration holds a single set for every
 * message; these are applied through the network model's factor callbacks instead, which see
 * both ends of each message and its route. */
#pragma once

#include <nlohmann/json.hpp>

#include <simgrid/forward.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace simcore {

/** Factors over message size, "X:f;Y:g" as SimGrid reads them: a message of s bytes takes the
 *  factor of the largest threshold X below s (s > X); at or below the smallest, 1. */
class SizeFactors {
public:
  /** Parses and checks `text`: thresholds whole bytes up to 2147483647 (SimGrid reads them as
   *  int), each once; factors finite and > 0. Throws InputError naming `where` and the entry. */
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

/** A node's loopback: SimGrid's own `__loopback__` (the route within a host of a zone that
 *  declares none) or the per-node `*_loopback` link of a <cluster> with loopback_bw, a fat pipe
 *  (a shared link whose name ends in `_loopback` is none). */
bool is_loopback_link(const std::string& name);

/** The profile's "network_factors": {"intra-node": {"latency": "...", "bandwidth": "..."},
 *  "inter-node": {...}}. A message from a host to itself over its loopback is intra-node, any
 *  other inter-node (on a <cluster> without loopback_bw, a host reaches itself over its links
 *  to the backbone: such a message takes the inter-node factors, as the links it crosses
 *  carry the inter-node fit). A placement or a factor left out is 1. */
class NetworkFactors {
public:
  /** Whether a message from `src` to `dst` over `links` (its route, as SimGrid gives it to the
   *  callbacks or Host::route_to, which leaves out `__loopback__`) is intra-node. */
  static bool is_intra_node(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                            const std::vector<simgrid::s4u::Link*>& links);
  /** Throws InputError naming `where` (the profile) for anything but the form above. */
  static NetworkFactors from_json(const nlohmann::json& j, const std::string& where);
  bool empty() const { return !intra_ && !inter_; }
  bool has_intra_node() const { return intra_.has_value(); } ///< a fit of messages within a node
  double latency_factor(double size, bool intra_node) const;
  double bandwidth_factor(double size, bool intra_node) const;
  /** As in the profile (the strings as given). */
  nlohmann::json to_json() const;
  /** Hands the factors to the loaded platform's network model (after the platform is loaded,
   *  before the simulation runs), both factors always (1 where not given). Throws InputError
   *  at `where` (the profile's "network_factors", e.g. "profile.json:12 (network_factors)") when network/latency-factor, network/bandwidth-factor, smpi/lat-factor or
   *  smpi/bw-factor is configured too (SimGrid takes its own factors or these, not both).
   *  With intra-node factors, the check of check_self_routes() runs when the simulation
   *  starts. `observer`, when given, sees the route of every message the factors are
   *  computed for (the links SimGrid found for it). */
  using RouteObserver = std::function<void(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                                           const std::vector<simgrid::s4u::Link*>& links)>;
  void install(const std::string& where, RouteObserver observer = {}) const;
  /** Warns when some host reaches itself over links that are not a loopback (its messages to
   *  itself then take the inter-node factors), for intra-node factors installed and not yet
   *  checked; seals the platform first (a zone's routes are complete only then). Runs when
   *  the simulation starts; `simcore validate`, which starts none, calls it. */
  static void check_self_routes();

private:
  std::optional<PlacementFactors> intra_, inter_;
};

} // namespace simcore
