/* simcore run and simcore validate: one scenario, its overrides, run or only checked. */
#include "commands.hpp"

#include "simcore/error.hpp"
#include "simcore/memory_guard.hpp"
#include "simcore/runner.hpp"
#include "simcore/scenario.hpp"
#include "simcore/units.hpp"
#include "simcore/version.hpp"

#include <cstdio>
#include <iostream>
#include <optional>

namespace simcore::cli {
namespace {

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
  --max-memory SIZE  end the run (exit 2, nothing written) once it takes more than
                     SIZE of memory (e.g. 8GiB, 500MB; "none" for no limit).
                     Default: 90 % of the memory available when it starts
  --json             print summary.json on stdout instead of the human summary
  --quiet            print nothing on success
  --log=... --cfg=...  passed to SimGrid (e.g. --cfg=network/latency-factor:1)
)";

const char* kValidateHelp = R"(simcore validate SCENARIO.xml [--set NAME=VALUE]... [--seed N] [--calibration FILE]
                 [--max-memory SIZE]

Checks the scenario, its parameters, its calibration profile, its platform and the
model's set-up on that platform, without running. Exit 0 when valid, 2 otherwise.
)";

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string seed;
  std::string out;
  std::optional<std::string> calibration;
  RunOptions options;
  bool json = false;
  bool quiet = false;
};

/** The options of run (allow_run_options) or of validate, which takes those that change
 *  the scenario but none about output. */
RunArgs parse_run_args(const Args& args, bool allow_run_options)
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
      r.options.progress = Progress::Always;
    else if (allow_run_options && a == "--no-progress")
      r.options.progress = Progress::Never;
    else if (a == "--max-memory")
      r.options.max_memory_bytes = parse_memory_limit(value("--max-memory"), "--max-memory");
    else if (a.rfind("--max-memory=", 0) == 0)
      r.options.max_memory_bytes = parse_memory_limit(a.substr(13), "--max-memory");
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
      throw InputError("command line", "unknown option '" + a + "'; expected an option of --help (--cfg and --log take =)");
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

Scenario load_with_overrides(const RunArgs& r)
{
  auto sc = Scenario::load(r.scenario);
  for (const auto& s : r.sets)
    sc.set_assignment(s);
  if (!r.seed.empty())
    sc.set_seed(parse_seed(r.seed, "--seed " + r.seed));
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
    return format_quantity(Quantity::Time, d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return std::string(buf) + (unit.empty() ? "" : " " + unit);
}

int run(const Args& args)
{
  RunArgs r = parse_run_args(args, true);
  auto sc = load_with_overrides(r);
  auto summary = run_scenario(sc, r.options);
  if (r.json) {
    std::cout << summary.dump(2) << "\n";
    return 0;
  }
  if (r.quiet)
    return 0;
  std::printf("simcore %s: model %s, seed %llu\n", SIMCORE_VERSION, sc.model_name().c_str(),
              static_cast<unsigned long long>(sc.seed()));
  std::printf("  %-28s %s\n", "simulated time",
              format_quantity(Quantity::Time, summary["simulated_time"].get<double>()).c_str());
  std::printf("  %-28s %.3f s\n", "wall time", summary["wall_time"].get<double>());
  const auto& units = summary["metric_units"];
  for (const auto& [name, v] : summary["metrics"].items())
    std::printf("  %-28s %s\n", name.c_str(), metric_text(v, units[name].get<std::string>()).c_str());
  const std::string dir = summary["outputs"]["dir"].get<std::string>();
  std::printf("results: %s/summary.json%s\n", dir.c_str(), sc.write_trace() ? (" and " + dir + "/trace.h5").c_str() : "");
  return 0;
}

int validate(const Args& args)
{
  RunArgs r = parse_run_args(args, false);
  auto sc = load_with_overrides(r);
  validate_scenario(sc, r.options);
  std::printf("%s: valid (model %s, %zu parameters, platform %s)\n", r.scenario.c_str(), sc.model_name().c_str(),
              sc.params().specs().size(), sc.platform_path().c_str());
  return 0;
}

} // namespace

Command run_command() { return {"run", kRunHelp, &run}; }
Command validate_command() { return {"validate", kValidateHelp, &validate}; }

} // namespace simcore::cli
