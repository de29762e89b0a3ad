#include "simcore/calibration_profile.hpp"
#include "simcore/name_pattern.hpp"
#include "simcore/error.hpp"
#include "simcore/json_locations.hpp"
#include "simcore/platform.hpp"
#include "simcore/sha256.hpp"
#include "simcore/units.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <xbt/config.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

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
 *  base units (Bps, flop/s, B, s); a bare number ("30") keeps no unit. */
NamedRate rate_from_text(const std::string& text, const std::string& where)
{
  NamedRate r;
  char* end = nullptr;
  const double plain = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && text.find_first_of("xX") == std::string::npos &&
      !std::isspace(static_cast<unsigned char>(text.front()))) {
    r.value = plain;
    return r;
  }
  for (Quantity q : {Quantity::Bandwidth, Quantity::Speed, Quantity::Size, Quantity::Time}) {
    try {
      r.value = parse_quantity(q, text, where);
      r.unit = base_unit(q);
      return r;
    } catch (const InputError&) {
    }
  }
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front())) && std::isinf(plain))
    throw InputError(where, "'" + text + "': its number is beyond a double; expected a finite quantity");
  throw InputError(where, "'" + text + "' has no known unit; expected a bandwidth (10GBps), speed (1Gf), size (4MiB) "
                          "or time (2us), or a plain number");
}

/** A rate's "unit" as stored: one SimGrid knows becomes its quantity's base unit, with the
 *  factor to it ("GBps": Bps, 1e9; "flops": flop/s, 1); "flop" stays; others are kept. */
std::pair<std::string, double> stored_unit(const std::string& unit)
{
  if (unit == "flop" || unit == "flop/s")
    return {unit, 1.0};
  if (!unit.empty() && std::isalpha(static_cast<unsigned char>(unit.front())))
    for (Quantity q : {Quantity::Bandwidth, Quantity::Speed, Quantity::Size, Quantity::Time}) {
      try {
        return {base_unit(q), parse_quantity(q, "1" + unit, unit)};
      } catch (const InputError&) {
      }
    }
  return {unit, 1.0};
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
      if (v.contains("unit")) {
        const auto [unit, factor] = stored_unit(v["unit"].get<std::string>());
        if (r.unit == "flop/s" && unit == "flop") // SimGrid spells work as it spells speed ("600f")
          r.unit = unit;
        if (!r.unit.empty() && unit != r.unit) // the value's own unit, and another
          throw InputError(w, "\"unit\" says " + v["unit"].dump() + " but the value is in " + r.unit +
                                "; expected the value's own unit, or no \"unit\"");
        if (r.unit.empty()) { // a number in that unit
          r.value *= factor;
          r.unit = unit;
        }
      }
      if (v.contains("doc"))
        r.doc = v["doc"].get<std::string>();
    }
    if (!(r.value >= 0) || !std::isfinite(r.value)) { // a rate, a time or a size: never below zero
      const auto& given = v.is_object() ? v["value"] : v;
      throw InputError(w, "value " + (given.is_string() ? given.get<std::string>() : given.dump()) +
                              (std::isfinite(r.value) || std::isnan(r.value) ? "" : " (beyond a double in base units)") +
                              "; expected a finite number >= 0");
    }
    r.where = w;
    out[k] = r;
  }
  return out;
}

/** Where `number` stands in JSON `text` as a value, not inside a string; npos if nowhere. */
std::size_t number_outside_strings(const std::string& text, const std::string& number)
{
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); i++) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        i++; // the escaped character
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (text.compare(i, number.size(), number) == 0 &&
               (i == 0 || std::string(":[, \t\r\n").find(text[i - 1]) != std::string::npos)) {
      return i;
    }
  }
  return std::string::npos;
}

/** What SimGrid can simulate with: a link's bandwidth (B/s) and latency (s). Beyond these a
 *  transfer's time overflows or its rate falls below SimGrid's precision (which aborts). */
constexpr double kLeastBandwidth = 1, kMostBandwidth = 1e18, kMostLatency = 1e6;

std::string bandwidth_range()
{
  return "a bandwidth from 1 B/s to 1e18 B/s";
}

std::regex compile(const std::string& pattern, const std::string& where)
{
  return compile_name_pattern(pattern, where, "match");
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
  // A key given twice in one object: nlohmann keeps the last silently; refused here, naming it.
  std::vector<std::set<std::string>> keys_seen;
  std::string duplicate;
  const nlohmann::json::parser_callback_t no_duplicates = [&](int, nlohmann::json::parse_event_t event,
                                                              nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::object_start)
      keys_seen.emplace_back();
    else if (event == nlohmann::json::parse_event_t::object_end && !keys_seen.empty())
      keys_seen.pop_back();
    else if (event == nlohmann::json::parse_event_t::key && !keys_seen.empty() &&
             !keys_seen.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    j = nlohmann::json::parse(text, no_duplicates);
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t line = 1 + std::count(text.begin(), text.begin() + std::min<std::size_t>(e.byte, text.size()), '\n');
    throw InputError(path + ":" + std::to_string(line), std::string("malformed JSON (") + e.what() +
                                                            "); expected a calibration profile object");
  } catch (const nlohmann::json::exception& e) { // a number beyond a double: "number overflow parsing '1e400'"
    std::string where = path;
    const std::string what = e.what();
    const auto open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open) {
      const auto at = number_outside_strings(text, what.substr(open + 1, close - open - 1));
      if (at != std::string::npos)
        where += ":" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    }
    throw InputError(where, std::string("unreadable JSON (") + what + "); expected numbers a double holds");
  }
  if (!duplicate.empty()) {
    const JsonLocations locations(text);
    const auto& twice = locations.first_duplicate();
    throw InputError(twice ? path + ":" + std::to_string(twice->second) + " (" + twice->first + ")" : path,
                     "the key '" + duplicate + "' twice in one object; expected each key once");
  }
  CalibrationProfile p;
  try {
    p = from_json(j, path);
  } catch (const InputError& e) { // located by its JSON path: give it the line as well
    throw JsonLocations(text).locate(e, path);
  }
  // The rules and rates are checked against the platform and the models later: their errors
  // name the line too.
  const JsonLocations locations(text);
  for (auto& rule : p.hosts_) {
    rule.where = locations.located(rule.where, path);
    for (auto& [name, rate] : rule.rates)
      rate.where = locations.located(rate.where, path);
  }
  for (auto& rule : p.links_)
    rule.where = locations.located(rule.where, path);
  for (auto& [name, rate] : p.rates_)
    rate.where = locations.located(rate.where, path);
  p.network_factors_where_ = locations.located(path + " (network_factors)", path);
  p.path_ = path;
  p.sha256_ = sha256_hex(text);
  return p;
}

CalibrationProfile CalibrationProfile::from_json(const nlohmann::json& j, const std::string& where)
{
  CalibrationProfile p;
  check_keys(j, {"schema", "name", "hosts", "links", "simgrid_config", "network_factors", "message_gaps", "rates", "meta",
                 "quality"},
             where);
  if (j.contains("schema") && j["schema"] != "simcore-profile/1")
    throw InputError(where + " (schema)", "unsupported schema " +
                                              (j["schema"].is_string() ? j["schema"].dump() : "of type " + std::string(j["schema"].type_name())) +
                                              "; expected \"simcore-profile/1\"");
  if (j.contains("name")) {
    if (!j["name"].is_string())
      throw InputError(where + " (name)", std::string("a ") + j["name"].type_name() + "; expected a string");
    p.name_ = j["name"].get<std::string>();
  }
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
      HostRule rule{pat, w, compile(pat, w), std::nullopt, {}};
      if (r.contains("speed")) {
        rule.speed = quantity_field(r["speed"], Quantity::Speed, w);
        if (!(*rule.speed > 0))
          throw InputError(w, "speed " + nlohmann::json(*rule.speed).dump() + " flop/s; expected a positive speed");
        if (!std::isnormal(*rule.speed))
          throw InputError(w, "speed " + nlohmann::json(*rule.speed).dump() +
                                  " flop/s; expected a finite positive number that is not denormal");
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
      check_keys(r, {"match", "bandwidth", "latency", "scope"}, w);
      if (!r.contains("match") || !r["match"].is_string() || !(r.contains("bandwidth") || r.contains("latency")))
        throw InputError(w, "expected {\"match\": regex, \"bandwidth\": \"10GBps\"} and/or \"latency\": \"1us\"");
      LinkRule rule{r["match"].get<std::string>(), w, compile(r["match"].get<std::string>(), w), {}, {}, false};
      if (r.contains("scope")) {
        if (r["scope"] != "link" && r["scope"] != "route")
          throw InputError(w, "scope " + (r["scope"].is_string() ? r["scope"].dump() : "of type " + std::string(r["scope"].type_name())) +
                                  "; expected \"link\" (the values of each link, the default) or \"route\" "
                                  "(measured end to end)");
        rule.route = r["scope"] == "route";
      }
      if (r.contains("bandwidth")) {
        rule.bandwidth = quantity_field(r["bandwidth"], Quantity::Bandwidth, w);
        if (!(*rule.bandwidth >= kLeastBandwidth && *rule.bandwidth <= kMostBandwidth))
          throw InputError(w, "bandwidth " + nlohmann::json(*rule.bandwidth).dump() + " B/s; expected " + bandwidth_range());
      }
      if (r.contains("latency")) {
        rule.latency = quantity_field(r["latency"], Quantity::Time, w);
        if (!(*rule.latency >= 0 && *rule.latency <= kMostLatency))
          throw InputError(w, "latency " + nlohmann::json(*rule.latency).dump() + " s; expected a latency from 0 to 1e6 s");
      }
      p.links_.push_back(std::move(rule));
    }
  }
  if (j.contains("simgrid_config")) {
    const auto& c = j["simgrid_config"];
    if (!c.is_object())
      throw InputError(where + " (simgrid_config)", "expected an object {\"network/latency-factor\": \"1\"}");
    for (const auto& [k, v] : c.items()) {
      if (!(v.is_string() || v.is_number() || v.is_boolean()))
        throw InputError(where + " (simgrid_config." + k + ")",
                         std::string("a ") + v.type_name() + "; expected a string, a number or true/false");
      p.config_[k] = v.is_string() ? v.get<std::string>() : v.dump();
      // Also what the kernel sets the clusters' loopbacks from (SimGrid aborts on a bandwidth of 0).
      check_simgrid_config_item(k, p.config_[k], where + " (simgrid_config." + k + ")");
    }
  }
  if (j.contains("network_factors")) {
    p.network_factors_ = NetworkFactors::from_json(j["network_factors"], where);
    // SimGrid takes either its configured factors or the callbacks these become, not both.
    for (const char* name : {"network/latency-factor", "network/bandwidth-factor", "smpi/lat-factor", "smpi/bw-factor"})
      if (p.config_.count(name))
        throw InputError(where + " (simgrid_config." + name + ")",
                         "set beside network_factors, which give the factors by placement; expected one of them");
  }
  if (j.contains("message_gaps"))
    p.message_gaps_ = MessageGaps::from_json(j["message_gaps"], where);
  if (j.contains("rates"))
    p.rates_ = rates_from_json(j["rates"], where + " (rates");
  return p;
}

const CalibrationProfile::HostRule* CalibrationProfile::speed_rule(const std::string& host) const
{
  for (const auto& r : hosts_)
    if (r.speed && std::regex_match(host, r.re))
      return &r;
  return nullptr;
}

std::optional<double> CalibrationProfile::host_speed(const std::string& host) const
{
  const HostRule* r = speed_rule(host);
  return r ? r->speed : std::nullopt;
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

namespace {

/** A rate as a model reads it: a `q` in its base unit, positive. */
double checked(const NamedRate& r, Quantity q)
{
  // SimGrid spells an amount of work as it spells a speed ("1Gf"): read as flop, both are.
  const bool same = r.unit == base_unit(q) || (q == Quantity::Flops && r.unit == base_unit(Quantity::Speed));
  if (!r.unit.empty() && !same)
    throw InputError(r.where, "a rate in " + r.unit + "; the model reads it as " + unit_examples(q) + ", in " +
                                  base_unit(q));
  if (!(r.value > 0))
    throw InputError(r.where, "value " + nlohmann::json(r.value).dump() + "; the model reads it as " +
                                  unit_examples(q) + ", which must be positive");
  return r.value;
}

} // namespace

double CalibrationProfile::rate(const std::string& name, const std::string& host, Quantity q) const
{
  const NamedRate* r = find_rate(name, host);
  if (!r)
    throw InputError(path_.empty() ? "calibration profile" : path_,
                     "no rate named '" + name + "' for host '" + host +
                         "'; the model needs it in \"rates\" or in a host rule matching the host");
  return checked(*r, q);
}

double CalibrationProfile::rate_or(const std::string& name, const std::string& host, Quantity q,
                                   double fallback) const
{
  const NamedRate* r = find_rate(name, host);
  return r ? checked(*r, q) : fallback;
}

double CalibrationProfile::rate(const std::string& name, Quantity q) const
{
  auto it = rates_.find(name);
  if (it == rates_.end())
    throw InputError(path_.empty() ? "calibration profile" : path_,
                     "no rate named '" + name + "'; the model needs it in \"rates\"");
  return checked(it->second, q);
}

double CalibrationProfile::rate_or(const std::string& name, Quantity q, double fallback) const
{
  auto it = rates_.find(name);
  return it == rates_.end() ? fallback : checked(it->second, q);
}

void CalibrationProfile::warn_unused_rules() const
{
  auto* engine = simgrid::s4u::Engine::get_instance();
  const auto hosts = engine->get_all_hosts();
  // A rule that matches nothing is most likely a typo in a name pattern; one whose every
  // setting every host it matches takes from earlier rules (a broad pattern first) is dead.
  for (std::size_t i = 0; i < hosts_.size(); i++) {
    const HostRule& r = hosts_[i];
    bool matches = false, used = false;
    for (const auto* h : hosts) {
      const std::string& name = h->get_name();
      if (!std::regex_match(name, r.re))
        continue;
      matches = true;
      used = used || (r.speed && speed_rule(name) == &r);
      for (const auto& [rate, value] : r.rates)
        used = used || find_rate(rate, name) == &value;
    }
    if (!matches)
      XBT_WARN("%s: host rule '%s' matches no host of the platform", path_.c_str(), r.pattern.c_str());
    else if (!used)
      XBT_WARN("%s: host rule '%s' (%s) is never used: every host it matches takes its speed and rates from earlier "
               "rules (the first matching rule that has a setting wins: put specific patterns first)",
               path_.c_str(), r.pattern.c_str(), r.where.c_str());
  }
  for (const auto& r : links_) {
    auto links = engine->get_all_links();
    if (std::none_of(links.begin(), links.end(), [&r](auto* l) {
          return !is_loopback_link(l->get_name()) && std::regex_match(l->get_name(), r.re);
        }))
      XBT_WARN("%s: link rule '%s' matches no link of the platform (a loopback is never one)", path_.c_str(),
               r.pattern.c_str());
  }
}

void CalibrationProfile::apply_to_platform(const std::string& platform_path) const
{
  auto* engine = simgrid::s4u::Engine::get_instance();
  warn_unused_rules();
  if (!hosts_.empty()) {
    const auto profiled = platform_path.empty() ? std::map<std::string, std::string>{}
                                                : hosts_with_speed_profile(platform_path);
    for (auto* h : engine->get_all_hosts()) {
      const HostRule* rule = speed_rule(h->get_name());
      if (!rule)
        continue;
      if (auto it = profiled.find(h->get_name()); it != profiled.end())
        throw InputError(rule->where, "a speed for host '" + h->get_name() + "', which the platform gives a speed profile (" +
                                          it->second + "); SimGrid takes one speed profile a host, and the kernel "
                                          "applies a calibrated speed as one: expected a rule matching no such host, "
                                          "or the host's speed calibrated in the platform file");
      // Sealed hosts cannot change their peak speed; a speed profile scaling the peak from
      // time 0 on has the same effect on every execution.
      const double scale = *rule->speed / h->get_speed();
      if (!std::isnormal(scale))
        throw InputError(rule->where, "speed " + nlohmann::json(*rule->speed).dump() + " flop/s against host '" +
                                          h->get_name() + "''s " + nlohmann::json(h->get_speed()).dump() +
                                          " flop/s in the platform: a ratio SimGrid cannot run; expected a speed "
                                          "within a few hundred orders of magnitude of the platform's");
      std::ostringstream events;
      events.precision(17);
      events << "0 " << scale << "\n";
      h->set_speed_profile(
          simgrid::kernel::profile::ProfileBuilder::from_string("simcore-calibration-" + h->get_name(), events.str(), -1));
    }
  }
  // A node's loopback (SimGrid's __loopback__, or a <cluster>'s per-node *_loopback link) is
  // set by network/loopback-lat and network/loopback-bw, which an intra-node fit writes: SimGrid
  // applies them to its own, the kernel to the clusters' ones, and a link rule touches neither.
  // The value in effect: the profile's, unless the scenario or --cfg set the item after it
  // (they win, as on SimGrid's own loopback).
  const auto loopback_value = [this](const char* key) -> std::optional<double> {
    if (!config_.count(key))
      return std::nullopt;
    return simgrid::config::get_value<double>(key);
  };
  std::map<std::string, const LinkRule*> latency_rule; // by link: the rule its latency came from
  const auto loopback_bw = loopback_value("network/loopback-bw");
  const auto loopback_lat = loopback_value("network/loopback-lat");
  for (auto* l : engine->get_all_links()) {
    if (is_loopback_link(l->get_name())) {
      if (l->get_name() != "__loopback__") {
        if (loopback_bw)
          l->set_bandwidth(*loopback_bw);
        if (loopback_lat)
          l->set_latency(*loopback_lat);
      }
      continue;
    }
    bool bandwidth = false, latency = false; // each from the first matching rule that has it
    for (const auto& r : links_) {
      if (!std::regex_match(l->get_name(), r.re))
        continue;
      if (r.bandwidth && !bandwidth)
        l->set_bandwidth(*r.bandwidth);
      if (r.latency && !latency) {
        l->set_latency(*r.latency);
        latency_rule[l->get_name()] = &r;
      }
      bandwidth = bandwidth || r.bandwidth;
      latency = latency || r.latency;
    }
  }
  if (!network_factors_.empty())
    network_factors_.install(network_factors_where_.empty() ? "calibration profile (network_factors)" : network_factors_where_,
                             route_latency_check(latency_rule));
}

NetworkFactors::RouteObserver
CalibrationProfile::route_latency_check(const std::map<std::string, const LinkRule*>& latency_rule) const
{
  // Latencies add up along a route: one measured end to end, set on every link, counts once a
  // link. The routes messages take show it (SimGrid hands each one to the factor callbacks;
  // routing other pairs of hosts could abort where the platform has no route between them).
  struct Check {
    std::unordered_map<const simgrid::s4u::Link*, const LinkRule*> route_links; // latency from a "route" rule
    std::string path;
    bool warned = false;
  };
  auto check = std::make_shared<Check>();
  for (auto* l : simgrid::s4u::Engine::get_instance()->get_all_links())
    if (auto it = latency_rule.find(l->get_name()); it != latency_rule.end() && it->second->route)
      check->route_links[l] = it->second;
  if (check->route_links.empty())
    return {};
  check->path = path_;
  // The rules are copied: the callbacks outlive the profile object.
  auto rules = std::make_shared<std::vector<LinkRule>>(links_);
  for (auto& [link, rule] : check->route_links)
    rule = &(*rules)[static_cast<std::size_t>(rule - links_.data())];
  return [check, rules](const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst,
                        const std::vector<simgrid::s4u::Link*>& links) {
    if (check->warned || src == dst)
      return;
    // Called for every message: no allocation (a route has a few links).
    const auto rule_of = [&check](const simgrid::s4u::Link* l) -> const LinkRule* {
      const auto it = check->route_links.find(l);
      return it == check->route_links.end() ? nullptr : it->second;
    };
    for (const auto* first : links) {
      const LinkRule* rule = rule_of(first);
      if (rule == nullptr)
        continue;
      int n = 0; // the route's links whose latency this rule set
      for (const auto* l : links)
        n += rule_of(l) == rule;
      if (n > 1) {
        XBT_WARN("%s: link rule '%s' (%s) holds a latency measured end to end (scope \"route\"), but messages from "
                 "%s to %s cross %d of its links: their latencies add up to %d x %g s. Give the links a share of "
                 "it in a rule of your own, or use a platform whose routes cross one link (platforms/two_nodes.xml)",
                 check->path.c_str(), rule->pattern.c_str(), rule->where.c_str(), src->get_cname(), dst->get_cname(),
                 n, n, *rule->latency);
        check->warned = true;
        return;
      }
    }
  };
}

} // namespace simcore
