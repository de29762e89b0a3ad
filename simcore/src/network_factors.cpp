#include "simcore/network_factors.hpp"
#include "simcore/error.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(simcore_network_factors, simcore, "network factors by placement");

namespace simcore {

SizeFactors SizeFactors::parse(const std::string& text, const std::string& where)
{
  SizeFactors out;
  out.text_ = text;
  std::vector<std::string> entries;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ';');)
    entries.push_back(item);
  if (!text.empty() && text.back() == ';')
    entries.emplace_back(); // an empty last entry, refused below
  for (const std::string& item : entries) {
    const auto colon = item.find(':');
    const std::string bound = item.substr(0, colon), factor = colon == std::string::npos ? "" : item.substr(colon + 1);
    const bool whole = !bound.empty() && bound.size() <= 12 &&
                       std::all_of(bound.begin(), bound.end(), [](char c) { return c >= '0' && c <= '9'; });
    char* end = nullptr;
    const double f = factor.empty() ? NAN : std::strtod(factor.c_str(), &end);
    if (!whole || colon == std::string::npos || end == nullptr || *end != '\0' || !std::isfinite(f) || !(f > 0))
      throw InputError(where, "entry '" + item + "' of '" + text +
                                  "'; expected BYTES:FACTOR items separated by ';' (\"0:1.2;65536:0.9\"), bytes a whole "
                                  "number, the factor finite and > 0");
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

bool NetworkFactors::has_latency() const
{
  return (intra_ && intra_->latency) || (inter_ && inter_->latency);
}

bool NetworkFactors::has_bandwidth() const
{
  return (intra_ && intra_->bandwidth) || (inter_ && inter_->bandwidth);
}

double NetworkFactors::latency_factor(double size, bool same_host) const
{
  const auto& p = same_host ? intra_ : inter_;
  return p && p->latency ? p->latency->at(size) : 1.0;
}

double NetworkFactors::bandwidth_factor(double size, bool same_host) const
{
  const auto& p = same_host ? intra_ : inter_;
  return p && p->bandwidth ? p->bandwidth->at(size) : 1.0;
}

void NetworkFactors::install(const std::string& where) const
{
  using simgrid::s4u::Host;
  using simgrid::s4u::Link;
  using simgrid::s4u::NetZone;
  auto* model = simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model();
  const NetworkFactors self = *this; // the callbacks outlive the profile object
  try {
    if (has_latency())
      model->set_lat_factor_cb([self](double size, const Host* src, const Host* dst, const std::vector<Link*>&,
                                      const std::unordered_set<NetZone*>&) {
        return self.latency_factor(size, src == dst);
      });
    if (has_bandwidth())
      model->set_bw_factor_cb([self](double size, const Host* src, const Host* dst, const std::vector<Link*>&,
                                     const std::unordered_set<NetZone*>&) {
        return self.bandwidth_factor(size, src == dst);
      });
  } catch (const std::invalid_argument& e) {
    throw InputError(where + " (network_factors)",
                     std::string("SimGrid refused them (") + e.what() +
                         "); expected network/latency-factor and network/bandwidth-factor (under network/model "
                         "SMPI: smpi/lat-factor, smpi/bw-factor) left unset by the profile, the scenario and --cfg "
                         "when the profile has network_factors");
  }
  XBT_DEBUG("%s: network factors by placement installed", where.c_str());
}

} // namespace simcore
