#include "simcore/network_factors.hpp"
#include "simcore/error.hpp"
#include "size_law_items.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(simcore_network_factors, simcore, "network factors by placement");

namespace simcore {

SizeFactors SizeFactors::parse(const std::string& text, const std::string& where)
{
  SizeFactors out;
  out.text_ = text;
  const std::vector<std::string> entries = size_law_items(text);
  for (const std::string& item : entries) {
    const auto colon = item.find(':');
    const std::string bound = item.substr(0, colon), factor = colon == std::string::npos ? "" : item.substr(colon + 1);
    const bool whole = !bound.empty() && bound.size() <= 10 &&
                       std::all_of(bound.begin(), bound.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                       std::stoll(bound) <= 2147483647;
    char* end = nullptr;
    // Digits first (no blank, sign or hexadecimal, which strtod would take).
    const bool plain = !factor.empty() && (std::isdigit(static_cast<unsigned char>(factor.front())) ||
                                           factor.front() == '.') &&
                       factor.find_first_of("xX") == std::string::npos;
    const double f = !plain ? NAN : std::strtod(factor.c_str(), &end);
    // Within 1e-12 to 1e12: a latency or bandwidth these scale stays one SimGrid can time
    // (the profile's links and loopbacks are bounded too; fits here stayed within 1e-6 to 1e6).
    if (!whole || colon == std::string::npos || end == nullptr || *end != '\0' || !(f >= 1e-12 && f <= 1e12))
      throw InputError(where, "entry '" + item + "' of '" + text +
                                  "'; expected BYTES:FACTOR items separated by ';' (\"0:1.2;65536:0.9\"), bytes a whole "
                                  "number up to 2147483647, the factor from 1e-12 to 1e12");
    out.steps_.emplace_back(std::stod(bound), f);
  }
  if (out.steps_.empty())
    throw InputError(where, "'" + text + "' holds no entry; expected BYTES:FACTOR items (\"0:1.2;65536:0.9\")");
  std::sort(out.steps_.begin(), out.steps_.end());
  for (std::size_t i = 1; i < out.steps_.size(); i++)
    if (out.steps_[i].first == out.steps_[i - 1].first)
      throw InputError(where, "'" + text + "' gives the threshold " + std::to_string(std::llround(out.steps_[i].first)) +
                                  " twice; expected each once");
  return out;
}

double SizeFactors::at(double size) const
{
  double factor = 1;
  for (const auto& [bound, f] : steps_) {
    if (size <= bound)
      break;
    factor = f;
  }
  return factor;
}

NetworkFactors NetworkFactors::from_json(const nlohmann::json& j, const std::string& where)
{
  const std::string w = where + " (network_factors)";
  if (!j.is_object() || j.empty())
    throw InputError(w, "expected an object {\"intra-node\": {\"latency\": \"0:1\", \"bandwidth\": \"0:1\"}, "
                        "\"inter-node\": {...}}");
  NetworkFactors out;
  for (const auto& [placement, v] : j.items()) {
    const std::string wp = where + " (network_factors." + placement + ")";
    if (placement != "intra-node" && placement != "inter-node")
      throw InputError(wp, "unknown placement; expected intra-node (messages within a host) or inter-node");
    if (!v.is_object() || v.empty())
      throw InputError(wp, "expected {\"latency\": \"0:1\", \"bandwidth\": \"0:1\"} (either or both)");
    PlacementFactors p;
    for (const auto& [k, text] : v.items()) {
      const std::string wk = where + " (network_factors." + placement + "." + k + ")";
      if (k != "latency" && k != "bandwidth")
        throw InputError(wk, "unknown key; expected latency or bandwidth");
      if (!text.is_string())
        throw InputError(wk, "expected a string in SimGrid's factor syntax (\"0:1.2;65536:0.9\")");
      (k == "latency" ? p.latency : p.bandwidth) = SizeFactors::parse(text.get<std::string>(), wk);
    }
    (placement == "intra-node" ? out.intra_ : out.inter_) = std::move(p);
  }
  return out;
}

namespace {

/** The profile whose intra-node factors await the check of check_self_routes(). */
std::optional<std::string>& pending_self_route_check()
{
  static std::optional<std::string> where;
  return where;
}

} // namespace

namespace {

/** A host of a zone without routing (routing="None", for the constant network model): SimGrid
 *  aborts when asked for any route there, even a host's to itself. Its class is private to
 *  SimGrid, so it is known by its type's name. */
bool without_routing(const simgrid::s4u::Host* h)
{
  const auto* zone = h->get_englobing_zone()->get_impl();
  return zone != nullptr && std::string(typeid(*zone).name()).find("EmptyZone") != std::string::npos;
}

} // namespace

void NetworkFactors::check_self_routes()
{
  if (!pending_self_route_check())
    return;
  const std::string where = *pending_self_route_check();
  pending_self_route_check().reset();
  using simgrid::s4u::Link;
  // A zone of one host without routes (single_node.xml) has no route table before SimGrid
  // seals it, and asking it for a route then crashed. SimGrid seals once: the run's own
  // sealing afterwards does nothing.
  auto* engine = simgrid::s4u::Engine::get_instance();
  engine->seal_platform();
  std::vector<std::string> over_links;
  std::string example;
  for (auto* h : engine->get_all_hosts()) {
    if (without_routing(h))
      continue;
    std::vector<Link*> links;
    double latency = 0;
    h->route_to(h, links, &latency);
    if (!is_intra_node(h, h, links)) {
      if (example.empty()) {
        example = h->get_name() + ":";
        for (auto* l : links)
          example += " " + l->get_name();
      }
      over_links.push_back(h->get_name());
    }
  }
  if (!over_links.empty())
    XBT_WARN("%s: %zu host(s) reach themselves over links, not a loopback (%s): their messages to themselves take "
             "the inter-node factors; declare loopback_bw and loopback_lat on the <cluster> to give them the "
             "intra-node fit",
             where.c_str(), over_links.size(), example.c_str());
}

bool is_loopback_link(const std::string& name)
{
  // SimGrid's implicit loopback, or the one a <cluster> declares for each node
  // ("<cluster>_link_<i>_loopback"): both fat pipes. A shared link whose name ends so (an uplink
  // named "x_loopback") is no loopback.
  static const std::string suffix = "_loopback";
  if (name == "__loopback__")
    return true;
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const auto* link = simgrid::s4u::Link::by_name_or_null(name);
  return link != nullptr && link->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE;
}

bool NetworkFactors::is_intra_node(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                                   const std::vector<simgrid::s4u::Link*>& links)
{
  return src == dst &&
         std::all_of(links.begin(), links.end(), [](const simgrid::s4u::Link* l) { return is_loopback_link(l->get_name()); });
}

nlohmann::json NetworkFactors::to_json() const
{
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, p] : {std::pair{"intra-node", &intra_}, std::pair{"inter-node", &inter_}}) {
    if (!*p)
      continue;
    nlohmann::json& o = out[name] = nlohmann::json::object();
    if ((*p)->latency)
      o["latency"] = (*p)->latency->text();
    if ((*p)->bandwidth)
      o["bandwidth"] = (*p)->bandwidth->text();
  }
  return out;
}

double NetworkFactors::latency_factor(double size, bool intra_node) const
{
  const auto& p = intra_node ? intra_ : inter_;
  return p && p->latency ? p->latency->at(size) : 1.0;
}

double NetworkFactors::bandwidth_factor(double size, bool intra_node) const
{
  const auto& p = intra_node ? intra_ : inter_;
  return p && p->bandwidth ? p->bandwidth->at(size) : 1.0;
}

void NetworkFactors::install(const std::string& where, RouteObserver observer) const
{
  using simgrid::s4u::Host;
  using simgrid::s4u::Link;
  using simgrid::s4u::NetZone;
  // SimGrid takes its configured factors or callbacks; each model reads its own pair of keys,
  // but a value set for the other would still be recorded as if it applied: none may be set.
  for (const char* key : {"network/latency-factor", "network/bandwidth-factor", "smpi/lat-factor", "smpi/bw-factor"}) {
    bool set = false;
    try {
      set = !simgrid::config::is_default(key);
    } catch (const std::exception&) { // a key this SimGrid does not know
    }
    if (set)
      throw InputError(where,
                       std::string(key) + " is set too (by the profile, the scenario or --cfg); expected SimGrid's "
                                          "factors (network/latency-factor, network/bandwidth-factor, "
                                          "smpi/lat-factor, smpi/bw-factor) left unset when the profile has "
                                          "network_factors, which give them by placement");
  }
  auto* engine = simgrid::s4u::Engine::get_instance();
  if (intra_) {
    pending_self_route_check() = where;
    static bool registered = false; // one engine a process, one callback
    if (!registered)
      simgrid::s4u::Engine::on_simulation_start_cb([] { check_self_routes(); });
    registered = true;
  }
  const NetworkFactors self = *this; // the callbacks outlive the profile object
  auto* model = engine->get_netzone_root()->get_network_model();
  try {
    // A message of a placement the profile has no factors for takes factors of 1, not the
    // ones SimGrid would have used without the profile (13.01 and 0.97 under LV08): said once.
    auto unfitted_warned = std::make_shared<bool>(false);
    model->set_lat_factor_cb([self, observer, where, unfitted_warned](double size, const Host* src, const Host* dst,
                                                                      const std::vector<Link*>& links,
                                                                      const std::unordered_set<NetZone*>&) {
      if (observer)
        observer(src, dst, links);
      const bool intra = is_intra_node(src, dst, links);
      if (!*unfitted_warned && !(intra ? self.intra_ : self.inter_)) {
        *unfitted_warned = true;
        XBT_WARN("%s: network_factors has no %s factors, and a message from %s to %s is %s: it takes factors of 1 "
                 "(SimGrid's own, 13.01 and 0.97 under its default model, apply to no message while a profile gives "
                 "network_factors); fit that placement too, or give its factors",
                 where.c_str(), intra ? "intra-node" : "inter-node", src->get_cname(), dst->get_cname(),
                 intra ? "within a host" : "between hosts");
      }
      return self.latency_factor(size, intra);
    });
    model->set_bw_factor_cb([self](double size, const Host* src, const Host* dst, const std::vector<Link*>& links,
                                   const std::unordered_set<NetZone*>&) {
      return self.bandwidth_factor(size, is_intra_node(src, dst, links));
    });
  } catch (const std::invalid_argument& e) { // SimGrid's own check, should the one above miss a case
    throw InputError(where, std::string("SimGrid refused them (") + e.what() +
                                                       "); expected its configured factors left unset");
  } catch (const simgrid::xbt::UnimplementedError& e) { // a model without factor callbacks (Constant, ptask_L07)
    throw InputError(where,
                     std::string("the network model cannot take factors (") + e.what() +
                         "); expected a model that has them (the default LV08, CM02, SMPI, IB) or a profile "
                         "without network_factors");
  }
  XBT_DEBUG("%s: network factors by placement installed", where.c_str());
}

} // namespace simcore
