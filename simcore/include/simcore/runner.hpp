/* Running one scenario in this process, and several in child processes. */
#pragma once

#include "simcore/scenario.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace simcore {

enum class Progress { Auto, Always, Never };

/** RunOptions::max_memory_bytes for a run without a memory limit. */
constexpr std::uint64_t kNoMemoryLimit = UINT64_MAX;

struct RunOptions {
  /** Auto: a progress line on stderr for runs longer than about 2 s when stderr is a terminal. */
  Progress progress = Progress::Auto;
  /** SimGrid configuration items (name, value) applied after the scenario's own, like
   *  <config> elements ("--cfg=name:value" on the command line). Recorded in summary.json. */
  std::vector<std::pair<std::string, std::string>> simgrid_config;
  /** The resident memory a run may take, in bytes (see MemoryGuard): past it the run ends with
   *  exit code 2 and a message instead of being killed by the system. 0: the default, 90 % of
   *  the memory available when the run starts (run_in_children: when the runs start, shared
   *  equally among `jobs`); kNoMemoryLimit: none. Recorded in summary.json. */
  std::uint64_t max_memory_bytes = 0;
  /** Extra SimGrid command line items, e.g. "--log=model_dtl.thres:debug". */
  std::vector<std::string> simgrid_args;
  /** run_in_children: called just before each fork and, in the parent, just after it (Python
   *  holds its GIL across the fork there). */
  std::function<void()> before_fork, after_fork;
};

/** Runs the scenario in this process (one SimGrid engine per process: call it at most once),
 *  writes summary.json and trace.h5 into scenario.output_dir(), and returns the summary.
 *  Throws InputError or InternalError; no result file is left behind on failure. */
nlohmann::ordered_json run_scenario(const Scenario& scenario, const RunOptions& options = {});

/** All checks of a run without running it: scenario, calibration profile, SimGrid
 *  configuration, platform, and the model's own set-up on that platform. Creates this
 *  process's SimGrid engine (so a process either validates or runs). */
void validate_scenario(const Scenario& scenario, const RunOptions& options = {});

/** Outcome of a run in a child process. */
struct ChildOutcome {
  int exit_code = 0;      ///< kExitOk, kExitBadInput, kExitInternal, or 128+signal
  std::string error;      ///< message when exit_code != 0
  std::string output_dir; ///< where results went
  bool ok() const { return exit_code == 0; }
};

/** Runs each scenario in its own forked child process, at most `jobs` at a time, and waits
 *  for all. Outcomes are in the order of `scenarios`. `interrupted` is polled while waiting:
 *  when it returns true, the children get SIGTERM, are reaped, and Interrupted is thrown.
 *  Children also die when the parent dies. */
std::vector<ChildOutcome> run_in_children(const std::vector<Scenario>& scenarios, int jobs,
                                          const RunOptions& options = {},
                                          const std::function<bool()>& interrupted = {});

} // namespace simcore
