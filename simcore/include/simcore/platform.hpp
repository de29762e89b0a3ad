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

/** "FILE:LINE (<prop id="NAME">)" of the platform file's <config> item `name` (the first one,
 *  which SimGrid keeps, where it is given twice); empty where the file gives none. */
std::string platform_config_origin(const std::string& path, const std::string& name);

/** Hosts (name, speed, cores), links (name, bandwidth, latency, sharing), the zone tree
 *  and totals, all sorted by name so the description is stable. */
nlohmann::ordered_json describe_platform(const simgrid::s4u::Engine& engine);

/** InputError at `where` for a SimGrid configuration item that SimGrid 3.32 would take and
 *  then abort on, hang with, or silently misread: a model or optimization it does not have
 *  ("network/model" = "Foo", found only once it builds the platform; ns-3, which needs a
 *  platform of its own), a loopback bandwidth outside 1 B/s to 1e18 B/s (0 aborts), a
 *  loopback latency outside 0 to 1e6 s (a negative one it takes as 0), a network factor
 *  outside 1e-12 to 1e12, a precision of 0 or below (`surf/precision` 0 never ends), a stack
 *  below 16 KiB. Other items pass (SimGrid checks them when they are set). */
void check_simgrid_config_item(const std::string& name, const std::string& value, const std::string& where);

} // namespace simcore
