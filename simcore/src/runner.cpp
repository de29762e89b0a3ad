#include "simcore/runner.hpp"
#include "simcore/calibration_profile.hpp"
#include "simcore/disk_room.hpp"
#include "simcore/error.hpp"
#include "simcore/file_to_replace.hpp"
#include "simcore/memory_guard.hpp"
#include "simcore/model.hpp"
#include "simcore/model_registry.hpp"
#include "simcore/network_factors.hpp"
#include "simcore/platform.hpp"
#include "simcore/result_writer.hpp"
#include "simcore/results.hpp"
#include "simcore/sim_context.hpp"
#include "simcore/version.hpp"
#include "default_child_signal.hpp"

#include <simgrid/Exception.hpp>
#include <xbt/config.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <exception>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(simcore_runner, simcore, "running scenarios");

namespace simcore {

namespace {

using Clock = std::chrono::steady_clock;

/** Prints "simulated X s, wall Y s" on stderr, at most twice a second, once the run took
 *  longer than two seconds. */
class ProgressLine {
public:
  explicit ProgressLine(Progress mode)
  {
    tty_ = ::isatty(STDERR_FILENO) != 0;
    enabled_ = mode == Progress::Always || (mode == Progress::Auto && tty_);
    start_ = Clock::now();
    next_ = start_ + std::chrono::seconds(2);
  }
  void update(double sim_time)
  {
    if (!enabled_)
      return;
    auto now = Clock::now();
    if (now < next_)
      return;
    next_ = now + std::chrono::milliseconds(tty_ ? 500 : 5000);
    double wall = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "%ssimcore: simulated time %.6g s, wall time %.1f s%s", tty_ ? "\r" : "", sim_time, wall,
                 tty_ ? "   " : "\n");
    std::fflush(stderr);
    printed_ = true;
  }
  void finish()
  {
    if (printed_ && tty_)
      std::fputc('\n', stderr);
  }

private:
  bool enabled_ = false;
  bool tty_ = false;
  bool printed_ = false;
  Clock::time_point start_;
  Clock::time_point next_;
};

ProgressLine* g_progress = nullptr;
bool g_deadlock = false;

/** Where a run's memory guard reports: the error stream, or the pipe of run_in_children's child. */
struct GuardReport {
  int fd = STDERR_FILENO;
  std::string prefix = "simcore: error: ";
  bool end_line = true;
  std::string default_origin; ///< how a default limit was set, where run_in_children set it
};
GuardReport g_guard_report;

/** Watches the run's memory (RunOptions::max_memory_bytes) until stopped. */
std::unique_ptr<MemoryGuard> guard_memory(const Scenario& scenario, const RunOptions& options)
{
  std::uint64_t limit = options.max_memory_bytes;
  std::string origin = "set by --max-memory";
  if (limit == kNoMemoryLimit)
    limit = 0;
  else if (limit == 0) {
    limit = default_memory_limit(1);
    origin = "90 % of the " + format_memory(available_memory_bytes()) + " available when it started";
  }
  if (!g_guard_report.default_origin.empty() && options.max_memory_bytes != kNoMemoryLimit)
    origin = g_guard_report.default_origin;
  return std::make_unique<MemoryGuard>(limit, scenario.path(), origin, g_guard_report.fd, g_guard_report.prefix,
                                       g_guard_report.end_line);
}

std::string simgrid_version_string()
{
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

/** High-water mark of the resident set (VmHWM), which a forked child can reset. */
long peak_memory_bytes()
{
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atol(line.c_str() + 6) * 1024L; // kB
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L; // Linux reports KiB
}

/** A forked child inherits its parent's high-water mark; start counting afresh. */
void reset_peak_memory()
{
  std::ofstream("/proc/self/clear_refs") << "5";
}

nlohmann::ordered_json tables_json(const Results& results)
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& t : results.tables()) {
    nlohmann::ordered_json cols = nlohmann::ordered_json::object();
    for (const auto& c : t.columns())
      cols[c.name] = c.unit;
    j[t.name()] = {{"rows", t.rows()}, {"columns", cols}};
  }
  return j;
}

/** The first line of a SimGrid message, without trailing punctuation. */
std::string first_line(const std::string& text)
{
  std::string s = text.substr(0, text.find('\n'));
  while (!s.empty() && (s.back() == '.' || s.back() == ' ' || s.back() == ':'))
    s.pop_back();
  return s;
}

void set_simgrid_config(const std::string& name, const std::string& value, const std::string& where)
{
  check_simgrid_config_item(name, value, where);
  try {
    simgrid::s4u::Engine::set_config(name + ":" + value);
  } catch (const std::exception& e) {
    const std::string why = first_line(e.what()); // SimGrid appends the list of every known item
    throw InputError(where, "SimGrid configuration '" + name + "' = '" + value + "' is not accepted (" + why +
                                "); expected an item listed by SimGrid's --help-cfg");
  }
}

} // namespace

namespace {

/** Fails before the simulation, not after it, when results could not be written:
 *  the folder (or its nearest existing parent) must be a writable directory. */
/** `dir` is a folder, or can be made one, that this process can write; InputError at `where`
 *  (the <output dir> line), else at `dir`, otherwise. */
void check_output_dir(const std::string& dir, const std::string& where = "")
{
  const std::string at = where.empty() ? dir : where + " (<output dir=\"" + dir + "\">)";
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  // A name the file system cannot hold was found only when the results were written, after the run.
  const long name_max = ::pathconf("/", _PC_NAME_MAX) > 0 ? ::pathconf("/", _PC_NAME_MAX) : 255;
  for (const auto& part : p)
    if (static_cast<long>(part.string().size()) > name_max)
      throw InputError(at, "output folder: a name of " + std::to_string(part.string().size()) + " bytes ('" +
                               part.string().substr(0, 20) + "...'); expected names of at most " +
                               std::to_string(name_max) + " bytes");
  if (p.string().size() + 64 >= PATH_MAX)
    throw InputError(at, "output folder: a path of " + std::to_string(p.string().size()) +
                             " bytes; expected a path that leaves room for its files' names, below " +
                             std::to_string(PATH_MAX - 64) + " bytes");
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path())
    p = p.parent_path();
  if (!fs::is_directory(p, ec))
    throw InputError(at, "output folder: '" + p.string() + "' is not a directory; expected a folder path");
  // access() grants root every folder, /proc and read-only mounts included: make a file there.
  std::string probe = (p / ".simcore-write-check-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw InputError(at, "output folder: '" + p.string() + "' is not writable (" + std::strerror(errno) +
                             "); expected a writable folder");
  ::close(fd);
  ::unlink(probe.c_str());
  // A result file's place taken by a folder (or a device) is found now, not after the run.
  if (fs::is_directory(dir, ec))
    for (const char* name : {"summary.json", "trace.h5"})
      file_to_replace((fs::path(dir) / name).string());
}

/** An exception escaping an actor that was not created through SimContext::create_actor
 *  ends the process; make it end with our exit codes and a one-line message. */
[[noreturn]] void on_uncaught_exception()
{
  int code = kExitInternal;
  std::string what = "unknown exception";
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const InputError& ex) {
      code = kExitBadInput;
      what = ex.what();
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
  }
  std::fprintf(stderr, "simcore: %s: %s\n", code == kExitBadInput ? "error" : "internal error (uncaught in an actor)",
               what.c_str());
  std::fflush(nullptr);
  ::_exit(code);
}

/** Everything up to the start of the simulation: engine, configuration, platform,
 *  calibration, model actors. */
struct Prepared {
  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared()
  {
    // Actors created by set-up that never ran make SimGrid warn at teardown; nothing is wrong.
    if (engine && !ran)
      xbt_log_control_set("ker_engine.thres:error");
  }
  bool ran = false;
  CalibrationProfile profile;
  std::vector<std::string> args;
  std::vector<char*> argv;
  int argc = 0;
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::unique_ptr<SimContext> ctx;
  std::unique_ptr<Model> model;
};

void prepare(Prepared& p, const Scenario& scenario, const RunOptions& options)
{
  // The profile is read before the engine exists, so its errors come first and cheaply.
  if (!scenario.calibration_path().empty())
    p.profile = CalibrationProfile::load(scenario.calibration_path());

  // SimGrid aborts the process on a --log item it cannot parse ("foo", "a.b.thres:debug").
  static const std::regex log_item("[A-Za-z0-9_]+\\.(thres|threshold|fmt|layout|app|appender|add|additivity):\\S+");
  for (const auto& a : options.simgrid_args)
    if (a.rfind("--log=", 0) == 0) {
      std::istringstream items(a.substr(6));
      std::vector<std::string> list;
      for (std::string item; items >> item;)
        list.push_back(item);
      for (const auto& item : list)
        if (!(item == "no_loc" && list.size() == 1) && !std::regex_match(item, log_item))
          throw InputError("command line", "'" + a + "': item '" + item + "'; expected CATEGORY.thres:LEVEL (or "
                                           "CATEGORY.fmt:, .app:, .add: VALUE) items separated by blanks, or "
                                           "--log=no_loc alone");
    }
  p.args = {"simcore", "--log=xbt_cfg.thres:warning"};
  p.args.insert(p.args.end(), options.simgrid_args.begin(), options.simgrid_args.end());
  for (auto& a : p.args)
    p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  p.argc = static_cast<int>(p.args.size());
  try {
    p.engine = std::make_unique<simgrid::s4u::Engine>(&p.argc, p.argv.data());
  } catch (const std::exception& e) {
    std::string args;
    for (const auto& a : options.simgrid_args)
      args += (args.empty() ? "" : " ") + a;
    throw InputError("command line", "SimGrid rejected '" + args + "' (" + first_line(e.what()) +
                                         "); expected --log=CATEGORY.thres:LEVEL items");
  }
  std::set_terminate(on_uncaught_exception); // after SimGrid installed its own

  for (const auto& [k, v] : p.profile.config())
    set_simgrid_config(k, v, p.profile.path());
  for (const auto& item : scenario.simgrid_config())
    set_simgrid_config(item.name, item.value, item.where);
  for (const auto& [k, v] : options.simgrid_config)
    set_simgrid_config(k, v, "--cfg=" + k + ":" + v);

  load_platform(*p.engine, scenario.platform_path());
  p.profile.apply_to_platform(scenario.platform_path());

  p.ctx = std::make_unique<SimContext>(*p.engine, scenario, p.profile);
  p.model = scenario.model().factory();
  p.model->setup(*p.ctx);
}

/** Where the SimGrid configuration item `name` was set: the last of the profile, the scenario's
 *  <config>, --cfg, which SimGrid takes before the platform's own <config>; else the
 *  platform's item; else the platform file. */
std::string config_origin(const std::string& name, const Prepared& p, const Scenario& scenario,
                          const RunOptions& options)
{
  std::string origin;
  for (const auto& [k, v] : p.profile.config())
    if (k == name)
      origin = p.profile.path();
  for (const auto& item : scenario.simgrid_config())
    if (item.name == name)
      origin = item.where;
  for (const auto& [k, v] : options.simgrid_config)
    if (k == name)
      origin = "--cfg=" + k + ":" + v;
  if (origin.empty())
    origin = platform_config_origin(scenario.platform_path(), name);
  return origin.empty() ? scenario.platform_path() : origin;
}

/** A run whose model is sure to take more memory than its limit allows is refused now, not
 *  minutes into the simulation. */
MemoryNeed require_memory(const Prepared& p, const MemoryGuard& guard)
{
  const MemoryNeed need = p.model->memory_need(*p.ctx);
  guard.require(need.bytes, need.what);
  return need;
}

/** A run whose result files are sure not to fit on the output folder's disk is refused now,
 *  not when it has ended. */
std::pair<DiskNeed, std::vector<TableSize>> require_disk(const Prepared& p, const Scenario& scenario)
{
  std::vector<TableSize> tables = p.model->table_sizes(*p.ctx);
  const DiskNeed need = result_disk_need(tables, scenario.write_trace(), scenario.write_csv());
  require_disk_room(scenario.output_dir(), scenario.output_origin(), need);
  return {need, std::move(tables)};
}

} // namespace

void validate_scenario(const Scenario& scenario, const RunOptions& options)
{
  const auto guard = guard_memory(scenario, options);
  check_output_dir(scenario.output_dir(), scenario.output_origin());
  Prepared p;
  prepare(p, scenario, options);
  require_memory(p, *guard);
  require_disk(p, scenario);
  NetworkFactors::check_self_routes(); // what a run checks when it starts
}

nlohmann::ordered_json run_scenario(const Scenario& scenario, const RunOptions& options)
{
  const auto wall_start = Clock::now();
  const auto guard = guard_memory(scenario, options);
  check_output_dir(scenario.output_dir(), scenario.output_origin());
  Prepared p;
  prepare(p, scenario, options);
  const std::uint64_t set_up_memory = resident_memory_bytes();
  const MemoryNeed need = require_memory(p, *guard);
  const auto [disk_need, table_sizes] = require_disk(p, scenario);
  // From here on the folder must not show the previous run's result as if it were this one's.
  remove_result(scenario.output_dir());
  auto& engine = *p.engine;
  auto& profile = p.profile;
  auto& ctx = *p.ctx;
  auto& model = p.model;

  ProgressLine progress(options.progress);
  g_progress = &progress;
  g_deadlock = false;
  simgrid::s4u::Engine::on_time_advance_cb([](double) {
    if (g_progress)
      g_progress->update(simgrid::s4u::Engine::get_clock());
  });
  simgrid::s4u::Engine::on_deadlock_cb([]() { g_deadlock = true; });
  const auto sim_start = Clock::now();
  p.ran = true;
  try {
    engine.run();
  } catch (const InputError&) {
    g_progress = nullptr;
    throw;
  } catch (const simgrid::Exception& e) {
    g_progress = nullptr;
    throw InternalError(std::string("simulation failed: ") + e.what());
  }
  progress.finish();
  g_progress = nullptr;
  if (auto failure = ctx.actor_failure()) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw InternalError(std::string("model '") + scenario.model_name() + "' failed: " + e.what());
    }
  }
  if (g_deadlock && simgrid::config::get_value<std::string>("network/model") == "Constant")
    throw InputError(config_origin("network/model", p, scenario, options),
                     "the run deadlocked at t=" + std::to_string(simgrid::s4u::Engine::get_clock()) +
                         " s under network/model Constant, most likely because SimGrid 3.32's Constant model "
                         "leaves a message unfinished where the size it has left is rounded above zero as its "
                         "constant time ends (no event is left to end it; otherwise, a bug of model '" +
                         scenario.model_name() + "'); expected another network model (CM02 or LV08, with links "
                         "whose latency gives the delay)");
  if (g_deadlock)
    throw InternalError("simulation deadlocked at t=" + std::to_string(simgrid::s4u::Engine::get_clock()) +
                        " s: actors were still waiting on each other (a bug of model '" + scenario.model_name() + "')");
  const double sim_wall = std::chrono::duration<double>(Clock::now() - sim_start).count();

  Results results;
  model->report(ctx, results);

  nlohmann::ordered_json summary;
  summary["simcore_version"] = SIMCORE_VERSION;
  summary["simgrid_version"] = simgrid_version_string();
  summary["scenario"] = {{"path", scenario.path()},
                         {"sha256", scenario.sha256()},
                         {"description", scenario.description()},
                         {"model", scenario.model_name()},
                         {"platform", scenario.platform_path()},
                         {"calibration", scenario.calibration_path()},
                         {"calibration_sha256", profile.sha256()}};
  summary["seed"] = scenario.seed();
  summary["parameters"] = scenario.params().to_json();
  if (!scenario.sections().empty()) {
    summary["sections"] = nlohmann::ordered_json::array();
    for (const auto& s : scenario.sections())
      summary["sections"].push_back(s.to_json());
  }
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  for (const auto& [k, v] : profile.config())
    config[k] = v;
  for (const auto& item : scenario.simgrid_config())
    config[item.name] = item.value;
  for (const auto& [k, v] : options.simgrid_config)
    config[k] = v;
  summary["simgrid_config"] = config;
  if (!profile.network_factors().empty())
    summary["network_factors"] = profile.network_factors().to_json();
  if (!profile.message_gaps().empty())
    summary["message_gaps"] = profile.message_gaps().to_json();
  summary["simulated_time"] = simgrid::s4u::Engine::get_clock();
  summary["metrics"] = results.metrics();
  summary["metric_units"] = results.metric_units();
  summary["tables"] = tables_json(results);
  const std::string out = scenario.output_dir();
  summary["outputs"] = {{"dir", std::filesystem::absolute(out).lexically_normal().string()},
                        {"summary", "summary.json"},
                        {"trace", scenario.write_trace() ? "trace.h5" : ""}};
  if (scenario.write_csv()) { // named, so that the next run in this folder removes them first
    summary["outputs"]["csv"] = nlohmann::ordered_json::array();
    for (const auto& table : results.tables())
      summary["outputs"]["csv"].push_back(table.name() + ".csv");
  }
  summary["wall_time"] = std::chrono::duration<double>(Clock::now() - wall_start).count();
  summary["simulation_wall_time"] = sim_wall;
  summary["peak_memory_bytes"] = peak_memory_bytes();
  summary["set_up_memory_bytes"] = set_up_memory;
  summary["memory_need"] = {{"bytes", need.bytes}, {"what", need.what}};
  summary["disk_need"] = {{"bytes", disk_need.bytes}, {"what", disk_need.what}, {"tables", nlohmann::ordered_json::array()}};
  for (const auto& t : table_sizes)
    summary["disk_need"]["tables"].push_back({{"name", t.name}, {"rows", t.rows}, {"columns", t.columns}});
  if (guard->limit_bytes() > 0)
    summary["memory_limit_bytes"] = guard->limit_bytes();
  else
    summary["memory_limit_bytes"] = nullptr;
  guard->stop(); // ending the process while it writes would leave a part of the result
  XBT_DEBUG("writing results into %s", out.c_str());
  write_results(out, summary, results, scenario.write_trace(), scenario.write_csv());
  return summary;
}

std::vector<ChildOutcome> run_in_children(const std::vector<Scenario>& scenarios, int jobs, const RunOptions& options,
                                          const std::function<bool()>& interrupted)
{
  if (jobs < 1)
    jobs = 1;
  const DefaultChildSignal children_to_wait_for;
  struct Running {
    pid_t pid;
    int fd;
    std::size_t index;
  };
  std::vector<ChildOutcome> outcomes(scenarios.size());
  std::vector<Running> running;
  // The default limit: the memory available now, shared by the runs at once.
  RunOptions child_options = options;
  std::string default_origin;
  if (options.max_memory_bytes == 0) {
    const int at_once = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(jobs), scenarios.size()));
    child_options.max_memory_bytes = default_memory_limit(at_once);
    if (child_options.max_memory_bytes == 0)
      child_options.max_memory_bytes = kNoMemoryLimit;
    default_origin = "90 % of the " + format_memory(available_memory_bytes()) + " available when the runs started" +
                     (at_once > 1 ? ", shared by " + std::to_string(at_once) + " runs at once" : "");
  } else if (options.max_memory_bytes != kNoMemoryLimit)
    default_origin = "set by max_memory";
  std::size_t next = 0;

  auto reap = [&](Running& r, int status) {
    std::string msg;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(r.fd, buf, sizeof buf)) > 0)
      msg.append(buf, static_cast<std::size_t>(n));
    ::close(r.fd);
    ChildOutcome& o = outcomes[r.index];
    if (WIFEXITED(status))
      o.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      o.exit_code = 128 + WTERMSIG(status);
    else
      o.exit_code = kExitInternal;
    if (o.exit_code != 0)
      o.error = msg.empty() ? "child process ended with status " + std::to_string(o.exit_code) : msg;
  };

  // The children running ended and reaped, their pipes closed; how many there were.
  const auto end_all = [&running] {
    for (auto& r : running)
      ::kill(r.pid, SIGTERM);
    for (auto& r : running) {
      int status = 0;
      ::waitpid(r.pid, &status, 0);
      ::close(r.fd);
    }
    const std::size_t ended = running.size();
    running.clear();
    return ended;
  };
  while (next < scenarios.size() || !running.empty()) {
    while (next < scenarios.size() && static_cast<int>(running.size()) < jobs) {
      // A pipe or a child that cannot be had (too many open files, processes): the children
      // running are ended, and the reason given.
      const auto give_up = [&end_all](const char* what) {
        const std::string why = std::string(what) + " failed (" + std::strerror(errno) + ")";
        end_all();
        return InternalError(why + ": no more simulations could be started; expected fewer at once (jobs) or "
                                   "a higher limit on open files and processes");
      };
      int fds[2];
      if (::pipe(fds) != 0)
        throw give_up("pipe()");
      std::fflush(nullptr);
      if (options.before_fork)
        options.before_fork();
      pid_t pid = ::fork();
      if (pid != 0 && options.after_fork)
        options.after_fork();
      if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw give_up("fork()");
      }
      if (pid == 0) {
        ::close(fds[0]);
        // The parent (e.g. Python) may catch SIGINT to set a flag; a child must die of it.
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        reset_peak_memory();
        g_guard_report = GuardReport{fds[1], "", false, default_origin};
        int code = kExitOk;
        std::string error;
        try {
          run_scenario(scenarios[next], child_options);
        } catch (const InputError& e) {
          code = kExitBadInput;
          error = e.what();
        } catch (const std::exception& e) {
          code = kExitInternal;
          error = e.what();
        }
        if (error.size() > 16000) { // cut at a character, not inside one (UTF-8)
          error.resize(16000);
          while (!error.empty() && (static_cast<unsigned char>(error.back()) & 0xC0) == 0x80)
            error.pop_back();
          if (!error.empty() && (static_cast<unsigned char>(error.back()) & 0x80) != 0)
            error.pop_back();
        }
        if (!error.empty() && ::write(fds[1], error.data(), error.size()) < 0)
          code = kExitInternal;
        ::close(fds[1]);
        std::fflush(nullptr);
        ::_exit(code);
      }
      ::close(fds[1]);
      outcomes[next].output_dir = scenarios[next].output_dir();
      running.push_back(Running{pid, fds[0], next});
      next++;
    }
    bool reaped = false;
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      pid_t rc = ::waitpid(it->pid, &status, WNOHANG);
      if (rc == it->pid || (rc < 0 && errno == ECHILD)) {
        // ECHILD: reaped by another waitpid of the process (a handler of the caller's), its
        // status lost; what it wrote to the pipe still says what went wrong, if anything did.
        if (rc < 0)
          status = kExitInternal << 8;
        reap(*it, status);
        it = running.erase(it);
        reaped = true;
      } else {
        ++it;
      }
    }
    if (interrupted && interrupted())
      throw Interrupted("interrupted: " + std::to_string(end_all()) + " running simulation(s) ended");
    if (!reaped && !running.empty())
      ::usleep(2000);
  }
  return outcomes;
}

} // namespace simcore
