/* simcore platform: a SimGrid platform file's hosts, links and zones, with totals. */
#include "commands.hpp"

#include "simcore/error.hpp"
#include "simcore/platform.hpp"
#include "simcore/units.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <cstdio>
#include <iostream>

namespace simcore::cli {
namespace {

const char* kPlatformHelp = R"(simcore platform FILE.xml [--json]

Loads a SimGrid platform and lists its hosts, links and zones with totals.
)";

/** Hosts and links listed before "... and N more". */
constexpr std::size_t kListed = 20;

void print_zone(const nlohmann::ordered_json& z, int depth)
{
  std::printf("  %*s%s (%d hosts)\n", 2 * depth, "", z["name"].get<std::string>().c_str(), z["hosts"].get<int>());
  for (const auto& c : z["zones"])
    print_zone(c, depth + 1);
}

void print_platform(const std::string& file, const nlohmann::ordered_json& d)
{
  const auto& t = d["totals"];
  std::printf("%s: %d hosts, %d cores, %s total, %d links, %d zones\n", file.c_str(), t["hosts"].get<int>(),
              t["cores"].get<int>(), format_quantity(Quantity::Speed, t["speed"].get<double>()).c_str(),
              t["links"].get<int>(), t["zones"].get<int>());
  std::printf("zones:\n");
  print_zone(d["zones"], 0);
  std::printf("hosts:\n");
  for (std::size_t i = 0; i < d["hosts"].size() && i < kListed; i++) {
    const auto& h = d["hosts"][i];
    std::printf("  %-24s %-14s %3d cores  zone %s\n", h["name"].get<std::string>().c_str(),
                format_quantity(Quantity::Speed, h["speed"].get<double>()).c_str(), h["cores"].get<int>(),
                h["zone"].get<std::string>().c_str());
  }
  if (d["hosts"].size() > kListed)
    std::printf("  ... and %zu more\n", d["hosts"].size() - kListed);
  std::printf("links:\n");
  for (std::size_t i = 0; i < d["links"].size() && i < kListed; i++) {
    const auto& l = d["links"][i];
    std::printf("  %-24s %-14s %-12s %s\n", l["name"].get<std::string>().c_str(),
                format_quantity(Quantity::Bandwidth, l["bandwidth"].get<double>()).c_str(),
                format_quantity(Quantity::Time, l["latency"].get<double>()).c_str(),
                l["sharing"].get<std::string>().c_str());
  }
  if (d["links"].size() > kListed)
    std::printf("  ... and %zu more\n", d["links"].size() - kListed);
}

int platform(const Args& args)
{
  bool json = false;
  std::string file;
  for (const auto& a : args) {
    if (a == "--json")
      json = true;
    else if (!a.empty() && a[0] == '-')
      throw InputError("command line", "unknown option '" + a + "'; see simcore platform --help");
    else if (file.empty())
      file = a;
    else
      throw InputError("command line", "unexpected argument '" + a + "'; expected one platform file");
  }
  if (file.empty())
    throw InputError("command line", "no platform file given; expected simcore platform FILE.xml");
  std::vector<std::string> sargs{"simcore", "--log=xbt_cfg.thres:warning"};
  std::vector<char*> argv;
  for (auto& a : sargs)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(sargs.size());
  simgrid::s4u::Engine engine(&argc, argv.data());
  load_platform(engine, file);
  const auto d = describe_platform(engine);
  if (json)
    std::cout << d.dump(2) << "\n";
  else
    print_platform(file, d);
  return 0;
}

} // namespace

Command platform_command() { return {"platform", kPlatformHelp, &platform}; }

} // namespace simcore::cli
