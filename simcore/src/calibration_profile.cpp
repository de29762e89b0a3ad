#include "simcore/calibration_profile.hpp"
#include "simcore/error.hpp"
#include "simcore/units.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(simcore_calibration, simcore, "calibration profiles");

namespace simcore {

namespace {

void check_keys(const nlohmann::json& j, const std::set<std::string>& allowed, const std::string& where)
{
  if (!j.is_object())
    throw InputError(where, "expected a JSON object");
  for (const auto& [k, v] : j.items())
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& s : allowed)
        list += (list.empty() ? "" : ", ") + s;
      throw InputError(where, "unknown key '" + k + "'; expected one of: " + list);
    }
}

double quantity_field(const nlohmann::json& j, Quantity q, const std::string& where)
{
  if (j.is_number())
    return j.get<double>();
  if (j.is_string())
    return parse_quantity(q, j.get<std::string>(), where);
  throw InputError(where, std::string("expected a number or a string with a unit: ") + unit_examples(q));
}

/** "10GBps", "1.5Gf", "4MiB", "2us": the quantity is recognised by its unit and stored in
 *  base units (Bps, flop/s, B, s). */
NamedRate rate_from_text(const std::string& text, const std::string& where)
{
  for (Quantity q : {Quantity::Bandwidth, Quantity::Speed, Quantity::Size, Quantity::Time}) {
    try {
      NamedRate r;
      r.value = parse_quantity(q, text, where);
      r.unit = base_unit(q);
      return r;
    } catch (const InputError&) {
    }
  }
  throw InputError(where, "'" + text + "' has no known unit; expected a bandwidth (10GBps), speed (1Gf), size (4MiB) "
                          "or time (2us), or a plain number");
}

/** A "rates" object; `where` is "file (rates" or "file (hosts[0].rates", closed here. */
std::map<std::string, NamedRate> rates_from_json(const nlohmann::json& rates, const std::string& where)
{
  std::map<std::string, NamedRate> out;
  if (!rates.is_object())
    throw InputError(where + ")", "expected an object {\"name\": {\"value\": 1e10, \"unit\": \"Bps\"}}");
  for (const auto& [k, v] : rates.items()) {
    std::string w = where + "." + k + ")";
    NamedRate r;
    if (v.is_number()) {
      r.value = v.get<double>();
    } else if (v.is_string()) {
      r = rate_from_text(v.get<std::string>(), w);
    } else {
      check_keys(v, {"value", "unit", "doc"}, w);
      if (!v.contains("value") || !(v["value"].is_number() || v["value"].is_string()))
        throw InputError(w, "expected {\"value\": number or \"10GBps\", \"unit\": \"...\"}");
      if (v["value"].is_string())
        r = rate_from_text(v["value"].get<std::string>(), w);
      else
        r.value = v["value"].get<double>();
      for (const char* key : {"unit", "doc"})
        if (v.contains(key) && !v[key].is_string())
          throw InputError(w, std::string("expected a string for \"") + key + "\"");
      if (v.contains("unit") && !r.unit.empty() && v["unit"].get<std::string>() != r.unit)
        throw InputError(w, "\"unit\" says " + v["unit"].dump() + " but the value is in " + r.unit);
      if (v.contains("unit"))
        r.unit = v["unit"].get<std::string>();
      if (v.contains("doc"))
        r.doc = v["doc"].get<std::string>();
    }
    if (!(r.value >= 0) || !std::isfinite(r.value)) // a rate, a time or a size: never below zero
      throw InputError(w, "value " + nlohmann::json(r.value).dump() + "; expected a finite number >= 0");
    out[k] = r;
  }
  return out;
}

std::regex compile(const std::string& pattern, const std::string& where)
{
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(where, "'" + pattern + "' is not a valid regular expression (" + e.what() + ")");
  }
}

} // namespace

CalibrationProfile CalibrationProfile::load(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, "cannot read the calibration profile; expected an existing JSON file");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t line = 1 + std::count(text.begin(), text.begin() + std::min<std::size_t>(e.byte, text.size()), '\n');
    throw InputError(path + ":" + std::to_string(line), std::string("malformed JSON (") + e.what() +
                                                            "); expected a calibration profile object");
  }
  CalibrationProfile p = from_json(j, path);
  p.path_ = path;
  return p;
}

CalibrationProfile CalibrationProfile::from_json(const nlohmann::json& j, const std::string& where)
{
  CalibrationProfile p;
  check_keys(j, {"schema", "name", "hosts", "links", "simgrid_config", "network_factors", "rates", "meta", "quality"},
             where);
  if (j.contains("schema") && j["schema"] != "simcore-profile/1")
    throw InputError(where + " (schema)", "unsupported schema " + j["schema"].dump() + "; expected \"simcore-profile/1\"");
  if (j.contains("name"))
    p.name_ = j["name"].is_string() ? j["name"].get<std::string>() : j["name"].dump();
  if (j.contains("hosts")) {
    if (!j["hosts"].is_array())
      throw InputError(where + " (hosts)", "expected an array of {\"match\": regex, \"speed\": \"1Gf\", \"rates\": {...}}");
    for (std::size_t i = 0; i < j["hosts"].size(); i++) {
      const auto& r = j["hosts"][i];
      std::string w = where + " (hosts[" + std::to_string(i) + "])";
      check_keys(r, {"match", "speed", "rates"}, w);
      if (!r.contains("match") || !r["match"].is_string() || !(r.contains("speed") || r.contains("rates")))
        throw InputError(w, "expected {\"match\": regex, \"speed\": \"1Gf\"} and/or \"rates\": {...}");
      auto pat = r["match"].get<std::string>();
      HostRule rule{pat, compile(pat, w), std::nullopt, {}};
      if (r.contains("speed")) {
        rule.speed = quantity_field(r["speed"], Quantity::Speed, w);
        if (!(*rule.speed > 0))
          throw InputError(w, "speed must be positive");
      }
      if (r.contains("rates"))
        rule.rates = rates_from_json(r["rates"], where + " (hosts[" + std::to_string(i) + "].rates");
      p.hosts_.push_back(std::move(rule));
    }
  }
  if (j.contains("links")) {
    if (!j["links"].is_array())
      throw InputError(where + " (links)", "expected an array of {\"match\": regex, \"bandwidth\": ..., \"latency\": ...}");
    for (std::size_t i = 0; i < j["links"].size(); i++) {
      const auto& r = j["links"][i];
      std::string w = where + " (links[" + std::to_string(i) + "])";
      check_keys(r, {"match", "bandwidth", "latency"}, w);
      if (!r.contains("match") || !r["match"].is_string())
        throw InputError(w, "expected {\"match\": regex, \"bandwidth\": \"10GBps\", \"latency\": \"1us\"}");
      LinkRule rule{r["match"].get<std::string>(), compile(r["match"].get<std::string>(), w), {}, {}};
      if (r.contains("bandwidth")) {
        rule.bandwidth = quantity_field(r["bandwidth"], Quantity::Bandwidth, w);
        if (!(*rule.bandwidth > 0))
          throw InputError(w, "bandwidth must be positive");
      }
      if (r.contains("latency")) {
        rule.latency = quantity_field(r["latency"], Quantity::Time, w);
        if (*rule.latency < 0)
          throw InputError(w, "latency must not be negative");
      }
      p.links_.push_back(std::move(rule));
    }
  }
  if (j.contains("simgrid_config")) {
    const auto& c = j["simgrid_config"];
    if (!c.is_object())
      throw InputError(where + " (simgrid_config)", "expected an object {\"network/latency-factor\": \"1\"}");
    for (const auto& [k, v] : c.items())
      p.config_[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (j.contains("network_factors")) {
    p.network_factors_ = NetworkFactors::from_json(j["network_factors"], where);
    // SimGrid takes either its configured factors or the callbacks these become, not both.
    for (const char* name : {"network/latency-factor", "network/bandwidth-factor", "smpi/lat-factor", "smpi/bw-factor"})
      if (p.config_.count(name))
        throw InputError(where + " (simgrid_config." + name + ")",
                         "set beside network_factors, which give the factors by placement; expected one of them");
  }
  if (j.contains("rates"))
    p.rates_ = rates_from_json(j["rates"], where + " (rates");
  return p;
}

std::optional<double> CalibrationProfile::host_speed(const std::string& host) const
{
  for (const auto& r : hosts_)
    if (r.speed && std::regex_match(host, r.re))
      return r.speed;
  return std::nullopt;
}

const NamedRate* CalibrationProfile::find_rate(const std::string& name, const std::string& host) const
{
  for (const auto& r : hosts_) {
    auto it = r.rates.find(name);
    if (it != r.rates.end() && std::regex_match(host, r.re))
      return &it->second;
  }
  auto it = rates_.find(name);
  return it == rates_.end() ? nullptr : &it->second;
}

double CalibrationProfile::rate(const std::string& name, const std::string& host) const
{
  const NamedRate* r = find_rate(name, host);
  if (!r)
    throw InputError(path_.empty() ? "calibration profile" : path_,
                     "no rate named '" + name + "' for host '" + host +
                         "'; the model needs it in \"rates\" or in a host rule matching the host");
  return r->value;
}

double CalibrationProfile::rate_or(const std::string& name, const std::string& host, double fallback) const
{
  const NamedRate* r = find_rate(name, host);
  return r ? r->value : fallback;
}

double CalibrationProfile::rate(const std::string& name) const
{
  auto it = rates_.find(name);
  if (it == rates_.end())
    throw InputError(path_.empty() ? "calibration profile" : path_,
                     "no rate named '" + name + "'; the model needs it in \"rates\"");
  return it->second.value;
}

double CalibrationProfile::rate_or(const std::string& name, double fallback) const
{
  auto it = rates_.find(name);
  return it == rates_.end() ? fallback : it->second.value;
}

void CalibrationProfile::apply_to_platform() const
{
  auto* engine = simgrid::s4u::Engine::get_instance();
  // A rule that matches nothing is most likely a typo in a name pattern.
  for (const auto& r : hosts_) {
    auto hosts = engine->get_all_hosts();
    if (std::none_of(hosts.begin(), hosts.end(), [&r](auto* h) { return std::regex_match(h->get_name(), r.re); }))
      XBT_WARN("%s: host rule '%s' matches no host of the platform", path_.c_str(), r.pattern.c_str());
  }
  for (const auto& r : links_) {
    auto links = engine->get_all_links();
    if (std::none_of(links.begin(), links.end(), [&r](auto* l) {
          return !is_loopback_link(l->get_name()) && std::regex_match(l->get_name(), r.re);
        }))
      XBT_WARN("%s: link rule '%s' matches no link of the platform (a loopback is never one)", path_.c_str(),
               r.pattern.c_str());
  }
  if (!hosts_.empty()) {
    for (auto* h : engine->get_all_hosts()) {
      auto speed = host_speed(h->get_name());
      if (!speed)
        continue;
      // Sealed hosts cannot change their peak speed; a speed profile scaling the peak from
      // time 0 on has the same effect on every execution.
      double scale = *speed / h->get_speed();
      std::ostringstream events;
      events.precision(17);
      events << "0 " << scale << "\n";
      h->set_speed_profile(
          simgrid::kernel::profile::ProfileBuilder::from_string("simcore-calibration-" + h->get_name(), events.str(), -1));
    }
  }
  if (!network_factors_.empty())
    network_factors_.install(path_.empty() ? "calibration profile" : path_);
  // A node's loopback (SimGrid's __loopback__, or a <cluster>'s per-node *_loopback link) is
  // set by network/loopback-lat and network/loopback-bw, which an intra-node fit writes: SimGrid
  // applies them to its own, the kernel to the clusters' ones, and a link rule touches neither.
  const auto loopback_value = [this](const char* key) -> std::optional<double> {
    const auto it = config_.find(key);
    if (it == config_.end())
      return std::nullopt;
    try {
      std::size_t used = 0;
      const double v = std::stod(it->second, &used);
      if (used == it->second.size() && std::isfinite(v) && v >= 0)
        return v;
    } catch (const std::exception&) {
    }
    throw InputError(path_ + " (simgrid_config." + key + ")",
                     "'" + it->second + "'; expected a number >= 0 in base units (B/s, s)");
  };
  const auto loopback_bw = loopback_value("network/loopback-bw");
  const auto loopback_lat = loopback_value("network/loopback-lat");
  for (auto* l : engine->get_all_links()) {
    if (is_loopback_link(l->get_name())) {
      if (l->get_name() != "__loopback__") {
        if (loopback_bw && *loopback_bw > 0)
          l->set_bandwidth(*loopback_bw);
        if (loopback_lat)
          l->set_latency(*loopback_lat);
      }
      continue;
    }
    for (const auto& r : links_) {
      if (!std::regex_match(l->get_name(), r.re))
        continue;
      if (r.bandwidth)
        l->set_bandwidth(*r.bandwidth);
      if (r.latency)
        l->set_latency(*r.latency);
      break;
    }
  }
}

} // namespace simcore
