/* Loading SimGrid platform files and describing what they contain. */
#pragma once

#include <nlohmann/json.hpp>

#include <simgrid/s4u/Engine.hpp>

#include <map>
#include <string>

namespace simcore {

/** Loads a SimGrid XML platform into the engine. SimGrid's parse errors (file, line,
 *  what was wrong) and missing files become InputError. */
void load_platform(simgrid::s4u::Engine& engine, const std::string& path);

/** Hosts that a platform file gives a speed profile (`speed_file`, the older
 *  `availability_file`, or a `<trace_connect kind="SPEED">`), each with where: "FILE:LINE
 *  (speed_file)". SimGrid takes one speed profile a host. Empty when the file cannot be read. */
std::map<std::string, std::string> hosts_with_speed_profile(const std::string& path);

/** Hosts (name, speed, cores), links (name, bandwidth, latency, sharing), the zone tree
 *  and totals, all sorted by name so the description is stable. */
nlohmann::ordered_json describe_platform(const simgrid::s4u::Engine& engine);

} // namespace simcore
