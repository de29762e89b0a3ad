#include "calibration/profile_fitter.hpp"

#include <simcore/calibration_profile.hpp>
#include "calibration/stencil_fit.hpp"
#include "calibration/trace_file.hpp"
#include "calibration/trace_json.hpp"
#include "copy_samples.hpp"
#include "dgemm_samples.hpp"
#include "fit_support.hpp"
#include "gpu_samples.hpp"
#include "hash_samples.hpp"
#include "network_samples.hpp"
#include "profile_parts.hpp"
#include "stream_samples.hpp"

#include <simcore/error.hpp>
#include <simcore/sha256.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <utility>
#include <vector>

#include <sys/stat.h>

namespace calibration {

namespace {

/** The most segments a network fit may be asked for (FitOptions::max_segments). */
constexpr int kMostSegments = 64;

/** simcore::InputError for options no fit can run with. */
void check_options(const std::vector<std::string>& paths, const FitOptions& options)
{
  if (!(options.outlier_tolerance >= 0) || !std::isfinite(options.outlier_tolerance))
    throw simcore::InputError("outlier tolerance", profile_number(options.outlier_tolerance) +
                                                           "; expected a share >= 0 (0.25: 25 %; 0 keeps every size)");
  if (!options.host_match.empty() && options.host_match.size() != paths.size())
    throw simcore::InputError("command line", "host patterns for " + std::to_string(options.host_match.size()) +
                                                  " traces, but " + std::to_string(paths.size()) +
                                                  " traces; expected one (possibly empty) per trace");
  for (const auto& m : options.host_match) {
    try {
      if (!m.empty())
        std::regex re(m);
    } catch (const std::regex_error& e) {
      throw simcore::InputError("command line", "host pattern '" + m + "' is not a regular expression (" + e.what() +
                                                    "); expected one over host names");
    }
  }
  if (options.max_segments < 1 || options.max_segments > kMostSegments)
    throw simcore::InputError("max segments", std::to_string(options.max_segments) + "; expected a whole number from 1 "
                                                  "to " + std::to_string(kMostSegments));
  // One node's trace given twice would count as two nodes (and weigh twice in the medians):
  // by the same or another name, or as a copy (two runs never write the same bytes: each
  // trace records its date and host).
  // Each file is looked at once (a thousand nodes' traces): its device and inode, then, for a
  // regular file with something in it, its SHA-256. A folder, a device or an empty file is
  // left to the trace reader, which says what it is.
  std::map<std::string, std::size_t> by_name;
  std::map<std::pair<dev_t, ino_t>, std::size_t> by_inode;
  std::map<std::string, std::size_t> by_digest;
  const auto given_twice = [&paths](std::size_t i, std::size_t j) {
    return simcore::InputError(paths[i], "given twice (also as " + paths[j] + "); expected each trace once, "
                                                                              "one per node measured");
  };
  for (std::size_t i = 0; i < paths.size(); i++) {
    if (const auto [it, fresh] = by_name.emplace(paths[i], i); !fresh)
      throw given_twice(i, it->second);
    struct stat st {};
    if (::stat(paths[i].c_str(), &st) != 0)
      continue;
    if (const auto [it, fresh] = by_inode.emplace(std::make_pair(st.st_dev, st.st_ino), i); !fresh)
      throw given_twice(i, it->second);
    if (!S_ISREG(st.st_mode) || st.st_size == 0)
      continue;
    const std::string digest = simcore::sha256_file_hex(paths[i]);
    if (digest.empty())
      continue;
    if (const auto [it, fresh] = by_digest.emplace(digest, i); !fresh)
      throw simcore::InputError(paths[i], "a copy of " + paths[it->second] + " (the same bytes): the same run "
                                          "given twice; expected each trace once, one per node measured");
  }
  if (options.network_pattern != "auto" && options.network_pattern != "pingpong" &&
      options.network_pattern != "pingping")
    throw simcore::InputError("command line", "network pattern '" + options.network_pattern +
                                                  "'; expected auto, pingpong or pingping");
}

/** What the node benchmarks of one host type measured, one value per trace (per node): the
 *  rates are the medians of the nodes, written once every trace is read. DGEMM, which sets
 *  the host rules, is kept for every type at once (DgemmSamples). */
struct TypeSamples {
  StreamSamples stream;
  CachedCopySamples copy;
  HashSamples hash;
  GpuSamples gpu;
  std::vector<StencilFit> stencils;
};

/** The host types' rates and quality in the profile (`types` in order of appearance). One
 *  host type: its rates are the profile's. Several: each host rule carries its type's rates
 *  (a rule without a speed where the type had no DGEMM trace), and the profile-wide rates,
 *  for hosts no rule matches, are the catch-all type's, else the first type's. */
void merge_host_types(const std::vector<std::string>& types, std::map<std::string, nlohmann::ordered_json>& type_rates,
                      std::map<std::string, nlohmann::ordered_json>& type_quality, ProfileParts& out)
{
  nlohmann::ordered_json& rates = out.rates;
  nlohmann::ordered_json& quality = out.quality;
  nlohmann::ordered_json& hosts = out.hosts;
  if (types.size() == 1) {
    rates = type_rates[types.front()];
    for (auto& [k, v] : type_quality[types.front()].items())
      quality[k] = v;
  } else if (types.size() > 1) {
    std::vector<std::string> ordered = types;
    std::stable_partition(ordered.begin(), ordered.end(), [](const std::string& m) { return m != ".*"; });
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (const auto& m : ordered) {
      nlohmann::ordered_json rule{{"match", m}};
      for (const auto& h : hosts)
        if (h["match"] == m)
          rule["speed"] = h["speed"];
      if (!type_rates[m].empty())
        rule["rates"] = type_rates[m];
      rules.push_back(rule);
      for (auto& [k, v] : type_quality[m].items()) {
        v["match"] = m;
        quality[k].push_back(v);
      }
    }
    hosts = rules;
    const std::string wide = std::find(types.begin(), types.end(), ".*") != types.end() ? ".*" : types.front();
    for (auto& [k, v] : type_rates[wide].items()) {
      rates[k] = v;
      rates[k]["doc"] = v.value("doc", "") + " [hosts matching '" + wide + "', for hosts no rule matches]";
    }
  }
}

/** A CPU configuration that traces of one host type were measured on: the core (core_of the
 *  cpu_id, which traces before 2026-12-06 lack: "") and the ISA extensions they list. */
struct Configuration {
  std::string core, isa;
  std::vector<std::string> traces;
  std::string describe() const
  {
    return (core.empty() ? "core not recorded" : core) + "; isa: " + (isa.empty() ? "not recorded" : isa);
  }
};
using TypeConfigurations = std::vector<std::pair<std::string, std::vector<Configuration>>>; // by host type

/** Adds trace `path` to its host type's configurations: one whose ISA is the same and whose
 *  core is too, where both record it; else a new one. A trace that records neither is left out. */
void add_configuration(TypeConfigurations& configs, const std::string& match, const Trace& t, const std::string& path)
{
  const auto attr = [&t](const char* key) { return t.attributes.count(key) ? t.attributes.at(key) : std::string(); };
  const std::string core = core_of(attr("cpu_id")), isa = attr("isa");
  if (core.empty() && isa.empty())
    return;
  auto type = std::find_if(configs.begin(), configs.end(), [&](const auto& c) { return c.first == match; });
  if (type == configs.end())
    type = configs.insert(configs.end(), {match, {}});
  for (auto& c : type->second)
    if (c.isa == isa && (c.core == core || c.core.empty() || core.empty())) {
      if (c.core.empty())
        c.core = core;
      c.traces.push_back(path);
      return;
    }
  type->second.push_back({core, isa, {path}});
}

/** A note for each host type whose traces name more than one CPU configuration: a profile of
 *  two machines (a quiet host's DGEMM beside a busy host's ping-pong, a node of another type
 *  in a pool). */
void note_mixed_configurations(const TypeConfigurations& configs, ProfileParts& out)
{
  for (const auto& [match, list] : configs) {
    if (list.size() < 2)
      continue;
    nlohmann::ordered_json entry{{"match", match}, {"configurations", nlohmann::ordered_json::array()}};
    std::string described;
    for (const auto& c : list) {
      entry["configurations"].push_back({{"core", c.core}, {"isa", c.isa}, {"traces", c.traces}});
      std::string names;
      for (const auto& p : c.traces)
        names += (names.empty() ? "" : ", ") + p;
      described += (described.empty() ? "" : " | ") + c.describe() + " (" + names + ")";
    }
    entry["note"] = "the traces come from " + std::to_string(list.size()) + " CPU configurations: " + described +
                    "; the profile describes a machine none of them is. Expected the traces of one configuration "
                    "(measured in one sitting), or each its own --hosts REGEX";
    out.quality["configurations"].push_back(entry);
  }
}

} // namespace

nlohmann::ordered_json fit_profile(const std::vector<std::string>& paths, const FitOptions& options)
{
  check_options(paths, options);
  ProfileParts out;
  nlohmann::ordered_json meta{{"traces", paths}};
  bool fitted = false;
  std::string host;
  std::vector<std::string> ignored; // groups no part reads: "path (group)"
  NetworkSamples networks;
  DgemmSamples dgemm;
  std::map<std::string, TypeSamples> samples; // by host type (its rule's pattern)
  // Every host type's own rates and quality, in order of appearance.
  std::vector<std::string> types;
  std::map<std::string, nlohmann::ordered_json> type_rates, type_quality;
  TypeConfigurations configs; // the CPU configurations each host type's traces name
  // A run given twice in two forms (a trace and its conversion to JSON, or back) has other
  // bytes: its contents, in one form, tell.
  std::map<std::string, std::string> by_contents;
  for (std::size_t pi = 0; pi < paths.size(); pi++) {
    const std::string& path = paths[pi];
    const std::string match =
        pi < options.host_match.size() && !options.host_match[pi].empty() ? options.host_match[pi] : ".*";
    const Trace t = read_trace(path, options.fork_guard);
    if (const auto [it, fresh] = by_contents.emplace(simcore::sha256_hex(trace_to_json_text(t)), path); !fresh)
      throw simcore::InputError(path, "the same run as " + it->second + " (the same contents in another form, as "
                                      "calib_trace_convert writes it); expected each trace once, one per node measured");
    if (std::find(types.begin(), types.end(), match) == types.end() &&
        std::any_of(t.benchmarks.begin(), t.benchmarks.end(),
                    [](const auto& b) {
                      return b.first != "pingpong" && b.first != "pingping" && b.first != "one_way" &&
                             b.first != "exchange_window" && b.first != "self_window" &&
                             b.first != "exchange_window_long" && b.first != "exchange_window_lengths" &&
                             b.first != "matching_window";
                    })) {
      types.push_back(match);
      type_rates[match] = nlohmann::ordered_json::object();
      type_quality[match] = nlohmann::ordered_json::object();
    }
    TypeSamples& ts = samples[match]; // this trace's host type
    add_configuration(configs, match, t, path);
    if (host.empty() && t.attributes.count("host"))
      host = t.attributes.at("host");
    meta["machines"].push_back(t.attributes);
    for (const auto& [name, b] : t.benchmarks) {
      bool known = true;
      if (name == "pingpong") // pooled with the other traces of its placement, then fitted once
        networks.add(t, path, options);
      else if (name == "pingping" && !t.benchmarks.count("pingpong"))
        throw simcore::InputError(path + " (pingping)", "a 'pingping' group without 'pingpong' (its sizes and "
                                                        "placement); expected a trace of calib_pingpong, which "
                                                        "writes both");
      else if ((name == "pingping" || name == "one_way" || name == "exchange_window" || name == "self_window" ||
                name == "exchange_window_long" || name == "exchange_window_lengths" || name == "matching_window") &&
               t.benchmarks.count("pingpong")) {
        // read with the trace's pingpong group
      } else if (name == "dgemm")
        dgemm.add(b, t, path, match);
      else if (name == "stream")
        ts.stream.add(b, path);
      else if (name == "cached_copy")
        ts.copy.add(b, path);
      else if (name == "hash_table")
        ts.hash.add(b, path, match);
      else if (name == "cuda")
        ts.gpu.add(b, path);
      else if (name == "stencil") {
        StencilFit f = fit_stencil(b, path);
        f.match = match;
        ts.stencils.push_back(std::move(f));
      } else {
        known = false;
        ignored.push_back(path + " (" + name + ")");
      }
      fitted = fitted || known;
    }
  }
  // The node benchmarks of each host type: the median of its nodes (traces).
  for (const auto& match : types) {
    const TypeSamples& ts = samples[match];
    if (!ts.stream.empty())
      ts.stream.write(type_rates[match], type_quality[match]);
    if (!ts.copy.empty())
      ts.copy.write(type_rates[match], type_quality[match]);
    if (!ts.hash.empty())
      ts.hash.write(type_rates[match], type_quality[match]);
    ts.gpu.write(type_rates[match], type_quality[match]);
  }
  dgemm.write(out.hosts, type_rates, out.quality);
  for (const auto& match : types)
    if (!samples[match].stencils.empty())
      add_stencil_rates(pool_stencil_fits(samples[match].stencils), out.hosts, type_rates[match], type_quality[match]);
  merge_host_types(types, type_rates, type_quality, out);
  networks.write(options, out);
  note_mixed_configurations(configs, out);
  if (!ignored.empty()) { // a misspelt group would otherwise go unseen
    std::string list;
    for (const auto& g : ignored)
      list += (list.empty() ? "" : ", ") + g;
    out.quality["ignored_groups"] = {
        {"groups", ignored},
        {"note", "group(s) no part of the fit reads, left out: " + list +
                     "; expected pingpong (with pingping, one_way, exchange_window, exchange_window_long, exchange_window_lengths, matching_window, self_window), stream, cached_copy, dgemm, stencil, hash_table or cuda"}};
  }
  if (!fitted)
    throw simcore::InputError(paths.empty() ? "calibrate" : paths.front(),
                              "no benchmark this fitter knows (pingpong, stream, cached_copy, dgemm, stencil, hash_table, cuda); "
                              "expected calibration traces");
  nlohmann::ordered_json profile{{"schema", "simcore-profile/1"}};
  profile["name"] = "fitted from " + std::to_string(paths.size()) + " trace(s) of " + host;
  if (!out.hosts.empty())
    profile["hosts"] = out.hosts;
  if (!out.links.empty())
    profile["links"] = out.links;
  profile["simgrid_config"] = out.config;
  if (!out.network_factors.empty())
    profile["network_factors"] = out.network_factors;
  if (!out.message_gaps.empty())
    profile["message_gaps"] = out.message_gaps;
  profile["rates"] = out.rates;
  profile["meta"] = meta;
  profile["quality"] = out.quality;
  // Never a profile that simcore refuses to load (traces of rates past what a double holds
  // gave a host speed of "-nanf", exit 0): its loader's checks, here.
  try {
    simcore::CalibrationProfile::from_json(
        nlohmann::json::parse(profile.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
        "the fitted profile");
  } catch (const simcore::InputError& e) {
    throw simcore::InputError(paths.size() == 1 ? paths.front() : "calibrate",
                              std::string("the profile fitted from ") +
                                  (paths.size() == 1 ? "this trace" : "these traces") + " is one simcore refuses (" +
                                  e.what() + "); expected measurements of a machine");
  }
  return profile;
}

} // namespace calibration
