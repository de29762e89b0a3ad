/* simcore: the command line tool. */
#include "simcore/error.hpp"
#include "simcore/model_registry.hpp"
#include "simcore/platform.hpp"
#include "simcore/runner.hpp"
#include "simcore/scenario.hpp"
#include "simcore/units.hpp"
#include "simcore/version.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <calibration/profile_fitter.hpp>
#include <simcore/result_writer.hpp>

namespace {

using simcore::InputError;

const char* kMainHelp = R"(simcore: discrete-event simulation of HPC, AI-training and edge-cloud systems

Usage:
  simcore run SCENARIO.xml [--set NAME=VALUE]... [--seed N] [--out DIR] [options]
  simcore validate SCENARIO.xml [--set NAME=VALUE]... [--seed N]
  simcore models [--json]
  simcore platform FILE.xml [--json]
  simcore calibrate TRACE.h5... -o PROFILE.json
  simcore COMMAND --help
  simcore --version

Exit codes: 0 success, 2 bad input (file:line and what was expected on stderr),
1 internal failure.
)";

const char* kRunHelp = R"(simcore run SCENARIO.xml [options]

Runs the scenario, writes OUT/summary.json (and OUT/trace.h5), prints a summary.

Options:
  --set NAME=VALUE   override a model parameter (same checks as the scenario file)
  --seed N           override the scenario's seed
  --out DIR          output folder (default: the scenario's <output dir>, else
                     results/<scenario file name without .xml>)
  --calibration FILE use this calibration profile instead of the scenario's
                     ("" for none)
  --progress         always print a progress line on stderr
  --no-progress      never print it (default: only when stderr is a terminal
                     and the run takes more than about 2 s)
  --json             print summary.json on stdout instead of the human summary
  --quiet            print nothing on success
  --log=... --cfg=...  passed to SimGrid (e.g. --cfg=network/latency-factor:1)
)";

const char* kCalibrateHelp = R"(simcore calibrate [--hosts REGEX] TRACE.h5... -o PROFILE.json [--network-pattern auto|pingping|pingpong]
                  [--outlier-tolerance X]

Fits a calibration profile from calibration traces (calibration/README.md): network latency
and bandwidth as piecewise segments over message size (SimGrid's SMPI factor syntax; the
loopback for ranks within one node), host speed from DGEMM, memory rates from STREAM and
hash lookups, flops per stencil cell, GPU kernel rates, and the quality of each fit. Prints
a summary; writes PROFILE.json atomically.

  --hosts REGEX      the host type of the traces that follow: their DGEMM speed (and, with
                     several types, their other rates) go to a host rule for the platform's
                     hosts matching REGEX (default: every host), e.g.
                     --hosts 'cpu-.*' cpu/*.h5 --hosts 'gpu-.*' gpu/*.h5
  --network-pattern  the network times the factors come from: pingping (a message while the
                     other direction is busy too, as in exchanges and halos), pingpong (a
                     message alone), auto (default: pingping where the trace has it)
  --outlier-tolerance X
                     network sizes whose median time strays alone (one or two sizes) from
                     both neighbours by more than X (default 0.25: 25 %) are left out of the
                     fit and listed in the quality section; 0 keeps every size
)";

const char* kValidateHelp = R"(simcore validate SCENARIO.xml [--set NAME=VALUE]... [--seed N] [--calibration FILE]

Checks the scenario, its parameters, its calibration profile, its platform and the
model's set-up on that platform, without running. Exit 0 when valid, 2 otherwise.
)";

const char* kModelsHelp = R"(simcore models [--json]

Lists every registered model with its parameters: type, unit, default, range, doc.
)";

const char* kPlatformHelp = R"(simcore platform FILE.xml [--json]

Loads a SimGrid platform and lists its hosts, links and zones with totals.
)";

bool is_help(const std::string& a) { return a == "--help" || a == "-h"; }

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string seed;
  std::string out;
  std::optional<std::string> calibration;
  simcore::RunOptions options;
  bool json = false;
  bool quiet = false;
};

RunArgs parse_run_args(const std::vector<std::string>& args, bool allow_run_options)
{
  RunArgs r;
  for (std::size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= args.size())
        throw InputError("command line", std::string(opt) + " needs a value");
      return args[++i];
    };
    if (a == "--set")
      r.sets.push_back(value("--set"));
    else if (a.rfind("--set=", 0) == 0)
      r.sets.push_back(a.substr(6));
    else if (a == "--seed")
      r.seed = value("--seed");
    else if (a.rfind("--seed=", 0) == 0)
      r.seed = a.substr(7);
    else if (allow_run_options && a == "--out")
      r.out = value("--out");
    else if (allow_run_options && a.rfind("--out=", 0) == 0)
      r.out = a.substr(6);
    else if (a == "--calibration")
      r.calibration = value("--calibration");
    else if (a.rfind("--calibration=", 0) == 0)
      r.calibration = a.substr(14);
    else if (allow_run_options && a == "--progress")
      r.options.progress = simcore::Progress::Always;
    else if (allow_run_options && a == "--no-progress")
      r.options.progress = simcore::Progress::Never;
    else if (allow_run_options && a == "--json")
      r.json = true;
    else if (allow_run_options && a == "--quiet")
      r.quiet = true;
    else if (a.rfind("--cfg=", 0) == 0) {
      auto colon = a.find(':');
      if (colon == std::string::npos || colon == 6)
        throw InputError(a, "expected --cfg=NAME:VALUE, e.g. --cfg=network/latency-factor:1");
      r.options.simgrid_config.emplace_back(a.substr(6, colon - 6), a.substr(colon + 1));
    } else if (a.rfind("--log=", 0) == 0)
      r.options.simgrid_args.push_back(a);
    else if (!a.empty() && a[0] == '-')
      throw InputError("command line", "unknown option '" + a + "'; see --help");
    else if (r.scenario.empty())
      r.scenario = a;
    else
      throw InputError("command line", "unexpected argument '" + a + "'; expected one scenario file");
  }
  for (std::size_t i = 0; i + 1 < args.size(); i++)
    if (args[i] == "--out" && args[i + 1].empty())
      throw InputError("--out", "empty folder name; expected a folder path");
  for (const auto& a : args)
    if (a == "--out=")
      throw InputError("--out", "empty folder name; expected a folder path");
  if (r.scenario.empty())
    throw InputError("command line", "no scenario file given; expected simcore " +
                                         std::string(allow_run_options ? "run" : "validate") + " SCENARIO.xml");
  return r;
}

simcore::Scenario load_with_overrides(const RunArgs& r)
{
  auto sc = simcore::Scenario::load(r.scenario);
  for (const auto& s : r.sets)
    sc.set_assignment(s);
  if (!r.seed.empty())
    sc.set_seed(simcore::parse_seed(r.seed, "--seed " + r.seed));
  if (!r.out.empty())
    sc.set_output_dir(r.out);
  if (r.calibration)
    sc.set_calibration(*r.calibration, "--calibration " + *r.calibration);
  return sc;
}

std::string metric_text(const nlohmann::ordered_json& v, const std::string& unit)
{
  if (v.is_null())
    return "n/a";
  if (v.is_number_integer())
    return v.dump() + (unit.empty() ? "" : " " + unit);
  double d = v.get<double>();
  if (unit == "s")
    return simcore::format_quantity(simcore::Quantity::Time, d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return std::string(buf) + (unit.empty() ? "" : " " + unit);
}

int cmd_run(const std::vector<std::string>& args)
{
  RunArgs r = parse_run_args(args, true);
  auto sc = load_with_overrides(r);
  auto summary = simcore::run_scenario(sc, r.options);
  if (r.json) {
    std::cout << summary.dump(2) << "\n";
    return 0;
  }
  if (r.quiet)
    return 0;
  std::printf("simcore %s: model %s, seed %llu\n", SIMCORE_VERSION, sc.model_name().c_str(),
              static_cast<unsigned long long>(sc.seed()));
  std::printf("  %-28s %s\n", "simulated time",
              simcore::format_quantity(simcore::Quantity::Time, summary["simulated_time"].get<double>()).c_str());
  std::printf("  %-28s %.3f s\n", "wall time", summary["wall_time"].get<double>());
  const auto& units = summary["metric_units"];
  for (const auto& [name, v] : summary["metrics"].items())
    std::printf("  %-28s %s\n", name.c_str(), metric_text(v, units[name].get<std::string>()).c_str());
  const std::string dir = summary["outputs"]["dir"].get<std::string>();
  std::printf("results: %s/summary.json%s\n", dir.c_str(), sc.write_trace() ? (" and " + dir + "/trace.h5").c_str() : "");
  return 0;
}

int cmd_validate(const std::vector<std::string>& args)
{
  RunArgs r = parse_run_args(args, false);
  auto sc = load_with_overrides(r);
  simcore::validate_scenario(sc, r.options);
  std::printf("%s: valid (model %s, %zu parameters, platform %s)\n", r.scenario.c_str(), sc.model_name().c_str(),
              sc.params().specs().size(), sc.platform_path().c_str());
  return 0;
}

std::string range_of(const simcore::ParamSpec& p)
{
  std::string s;
  char buf[64];
  if (p.min) {
    std::snprintf(buf, sizeof buf, ">= %g", *p.min);
    s += buf;
  }
  if (p.max) {
    std::snprintf(buf, sizeof buf, "%s<= %g", s.empty() ? "" : ", ", *p.max);
    s += buf;
  }
  for (const auto& c : p.choices)
    s += (s.empty() ? "" : "|") + c;
  return s;
}

int cmd_models(const std::vector<std::string>& args)
{
  bool json = false;
  for (const auto& a : args)
    if (a == "--json")
      json = true;
    else
      throw InputError("command line", "unexpected argument '" + a + "'; see simcore models --help");
  const auto models = simcore::ModelRegistry::instance().all();
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto* m : models) {
      nlohmann::ordered_json mj{{"name", m->name}, {"summary", m->summary}};
      mj["parameters"] = nlohmann::ordered_json::array();
      for (const auto& p : m->params) {
        nlohmann::ordered_json pj{{"name", p.name}, {"type", simcore::to_string(p.type)}, {"unit", p.unit()},
                                  {"default", p.default_value}, {"required", p.required()}, {"doc", p.doc}};
        if (p.min)
          pj["min"] = *p.min;
        if (p.max)
          pj["max"] = *p.max;
        if (!p.choices.empty())
          pj["choices"] = p.choices;
        mj["parameters"].push_back(pj);
      }
      std::function<nlohmann::ordered_json(const simcore::SectionSpec&)> section_json =
          [&](const simcore::SectionSpec& s) {
            nlohmann::ordered_json sj{{"element", s.name}, {"doc", s.doc}};
            sj["attributes"] = nlohmann::ordered_json::array();
            for (const auto& p : s.attributes)
              sj["attributes"].push_back({{"name", p.name}, {"type", simcore::to_string(p.type)}, {"unit", p.unit()},
                                          {"default", p.default_value}, {"required", p.required()}, {"doc", p.doc}});
            sj["children"] = nlohmann::ordered_json::array();
            for (const auto& c : s.children)
              sj["children"].push_back(section_json(c));
            return sj;
          };
      mj["elements"] = nlohmann::ordered_json::array();
      for (const auto& s : m->sections)
        mj["elements"].push_back(section_json(s));
      j.push_back(mj);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto* m : models) {
    std::printf("%s: %s\n", m->name.c_str(), m->summary.c_str());
    std::printf("  %-20s %-10s %-7s %-14s %-16s %s\n", "parameter", "type", "unit", "default", "range", "doc");
    for (const auto& p : m->params)
      std::printf("  %-20s %-10s %-7s %-14s %-16s %s\n", p.name.c_str(), simcore::to_string(p.type),
                  p.unit().c_str(), p.required() ? "(required)" : p.default_value.c_str(), range_of(p).c_str(),
                  p.doc.c_str());
    std::function<void(const simcore::SectionSpec&, int)> print_section = [&](const simcore::SectionSpec& s, int depth) {
      std::printf("  %*s<%s>: %s\n", 2 * depth, "", s.name.c_str(), s.doc.c_str());
      for (const auto& p : s.attributes)
        std::printf("  %*s  %-18s %-10s %-7s %-14s %-16s %s\n", 2 * depth, "", p.name.c_str(), simcore::to_string(p.type),
                    p.unit().c_str(), p.required() ? "(required)" : p.default_value.c_str(), range_of(p).c_str(),
                    p.doc.c_str());
      for (const auto& c : s.children)
        print_section(c, depth + 1);
    };
    if (!m->sections.empty())
      std::printf("  elements:\n");
    for (const auto& s : m->sections)
      print_section(s, 1);
    std::printf("\n");
  }
  return 0;
}

void print_zone(const nlohmann::ordered_json& z, int depth)
{
  std::printf("  %*s%s (%d hosts)\n", 2 * depth, "", z["name"].get<std::string>().c_str(), z["hosts"].get<int>());
  for (const auto& c : z["zones"])
    print_zone(c, depth + 1);
}

int cmd_platform(const std::vector<std::string>& args)
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
  simcore::load_platform(engine, file);
  auto d = simcore::describe_platform(engine);
  if (json) {
    std::cout << d.dump(2) << "\n";
    return 0;
  }
  const auto& t = d["totals"];
  using simcore::format_quantity;
  using simcore::Quantity;
  std::printf("%s: %d hosts, %d cores, %s total, %d links, %d zones\n", file.c_str(), t["hosts"].get<int>(),
              t["cores"].get<int>(), format_quantity(Quantity::Speed, t["speed"].get<double>()).c_str(),
              t["links"].get<int>(), t["zones"].get<int>());
  std::printf("zones:\n");
  print_zone(d["zones"], 0);
  const std::size_t show = 20;
  std::printf("hosts:\n");
  for (std::size_t i = 0; i < d["hosts"].size() && i < show; i++) {
    const auto& h = d["hosts"][i];
    std::printf("  %-24s %-14s %3d cores  zone %s\n", h["name"].get<std::string>().c_str(),
                format_quantity(Quantity::Speed, h["speed"].get<double>()).c_str(), h["cores"].get<int>(),
                h["zone"].get<std::string>().c_str());
  }
  if (d["hosts"].size() > show)
    std::printf("  ... and %zu more\n", d["hosts"].size() - show);
  std::printf("links:\n");
  for (std::size_t i = 0; i < d["links"].size() && i < show; i++) {
    const auto& l = d["links"][i];
    std::printf("  %-24s %-14s %-12s %s\n", l["name"].get<std::string>().c_str(),
                format_quantity(Quantity::Bandwidth, l["bandwidth"].get<double>()).c_str(),
                format_quantity(Quantity::Time, l["latency"].get<double>()).c_str(),
                l["sharing"].get<std::string>().c_str());
  }
  if (d["links"].size() > show)
    std::printf("  ... and %zu more\n", d["links"].size() - show);
  return 0;
}

int cmd_calibrate(const std::vector<std::string>& args)
{
  std::vector<std::string> traces;
  std::string out;
  calibration::FitOptions options;
  std::string host_pattern; // for the traces that follow; empty: every host
  for (std::size_t i = 0; i < args.size(); i++) {
    if (args[i] == "--hosts") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing pattern after --hosts; expected a regular expression over host names");
      host_pattern = args[++i];
    } else if (args[i] == "--network-pattern") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing value after --network-pattern; expected auto, pingping or pingpong");
      options.network_pattern = args[++i];
    } else if (args[i] == "--outlier-tolerance") {
      const std::string what = "expected a share >= 0 (0.25: 25 %; 0 keeps every size)";
      if (i + 1 >= args.size())
        throw InputError("command line", "missing value after --outlier-tolerance; " + what);
      const std::string v = args[++i];
      char* end = nullptr;
      const double t = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(t >= 0) || !std::isfinite(t))
        throw InputError("command line", "--outlier-tolerance '" + v + "'; " + what);
      options.outlier_tolerance = t;
    } else if (args[i] == "-o" || args[i] == "--out") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing file after " + args[i] + "; expected -o PROFILE.json");
      out = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw InputError("command line", "unknown option '" + args[i] + "'; see simcore calibrate --help");
    } else {
      traces.push_back(args[i]);
      options.host_match.push_back(host_pattern);
    }
  }
  if (traces.empty() || out.empty())
    throw InputError("command line", "expected simcore calibrate TRACE.h5... -o PROFILE.json");
  if (!host_pattern.empty() && (options.host_match.empty() || options.host_match.back() != host_pattern))
    throw InputError("command line", "--hosts '" + host_pattern + "' is followed by no trace; expected --hosts REGEX "
                                     "TRACE.h5... (the pattern applies to the traces after it)");
  for (const auto& t : traces) {
    std::error_code ec;
    if (t == out || std::filesystem::equivalent(t, out, ec))
      throw InputError("command line", "-o " + out + " is also a trace to fit (" + t +
                                           "); expected a new file for the profile, which would replace the trace");
  }
  const auto profile = calibration::fit_profile(traces, options);
  simcore::write_file_atomically(out, profile.dump(2) + "\n");
  std::printf("%s: %s\n", out.c_str(), profile["name"].get<std::string>().c_str());
  const auto& q = profile["quality"];
  if (q.contains("network")) {
    const auto& n = q["network"];
    std::printf("  network (%s, %s): %zu segments, R^2 %.4f, relative error median %.1f %% max %.1f %%\n",
                n["placement"].get<std::string>().c_str(), n["pattern"].get<std::string>().c_str(),
                n["segments"].size(), n["r2"].get<double>(),
                100 * n["median_rel_error"].get<double>(), 100 * n["max_rel_error"].get<double>());
    for (const auto& seg : n["segments"])
      std::printf("    from %10.0f B: latency %8.3f us, bandwidth %8.3f GB/s\n", seg["from"].get<double>(),
                  1e6 * seg["latency"].get<double>(), seg["bandwidth"].get<double>() / 1e9);
    if (n["protocol_switch"].get<double>() > 0)
      std::printf("    protocol switch at %.0f B\n", n["protocol_switch"].get<double>());
  }
  if (profile["rates"].contains("memcpy_bandwidth")) {
    std::printf("  memory: memcpy %.2f GB/s", profile["rates"]["memcpy_bandwidth"]["value"].get<double>() / 1e9);
    if (profile["rates"].contains("memcpy_bandwidth_one_core"))
      std::printf(" (one core %.2f GB/s)", profile["rates"]["memcpy_bandwidth_one_core"]["value"].get<double>() / 1e9);
    std::printf("\n");
  }
  for (const char* rate : {"dgemm_flops", "flops_per_cell", "hash_lookup_rate", "random_line_rate"})
    if (profile["rates"].contains(rate))
      std::printf("  %s: %.4g %s\n", rate, profile["rates"][rate]["value"].get<double>(),
                  profile["rates"][rate]["unit"].get<std::string>().c_str());
  // The fitter's notes (nodes of one type that differ widely, a rate it could not give): on
  // stderr, where they are seen, besides the profile's quality section.
  for (const auto& [part, entry] : q.items()) {
    const auto& entries = entry.is_array() ? entry : nlohmann::ordered_json::array({entry});
    for (const auto& e : entries)
      if (e.is_object() && e.contains("note"))
        std::fprintf(stderr, "simcore calibrate: note (%s%s): %s\n", part.c_str(),
                     e.contains("match") ? (", hosts matching '" + e["match"].get<std::string>() + "'").c_str() : "",
                     e["note"].get<std::string>().c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || is_help(args[0])) {
    std::fputs(kMainHelp, args.empty() ? stderr : stdout);
    return args.empty() ? simcore::kExitBadInput : 0;
  }
  if (args[0] == "--version") {
    std::printf("simcore %s\n", SIMCORE_VERSION);
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  const char* help = cmd == "run" ? kRunHelp
                     : cmd == "validate" ? kValidateHelp
                     : cmd == "models"   ? kModelsHelp
                     : cmd == "platform" ? kPlatformHelp
                     : cmd == "calibrate" ? kCalibrateHelp
                                         : nullptr;
  if (!help) {
    std::fprintf(stderr, "simcore: unknown command '%s'; expected run, validate, models, platform or calibrate (see --help)\n",
                 cmd.c_str());
    return simcore::kExitBadInput;
  }
  for (const auto& a : args)
    if (is_help(a)) {
      std::fputs(help, stdout);
      return 0;
    }
  try {
    if (cmd == "run")
      return cmd_run(args);
    if (cmd == "validate")
      return cmd_validate(args);
    if (cmd == "models")
      return cmd_models(args);
    if (cmd == "calibrate")
      return cmd_calibrate(args);
    return cmd_platform(args);
  } catch (const simcore::InputError& e) {
    std::fprintf(stderr, "simcore: error: %s\n", e.what());
    return simcore::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simcore: internal error: %s\n", e.what());
    return simcore::kExitInternal;
  }
}
