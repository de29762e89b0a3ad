#include "simcore/route_check.hpp"
#include "simcore/error.hpp"
#include "default_child_signal.hpp"

#include <pugixml.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <typeinfo>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(simcore_routes, simcore, "routes a model needs");

namespace simcore {

namespace {

/** What the child tells its parent, in memory they share. */
struct Shared {
  std::atomic<std::int64_t> index{-1}; ///< the pair being asked for
  std::atomic<int> status{0};          ///< 0: not done (still asking, or it died asking)
  char text[1024] = {};                ///< the exception's message
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared between processes");

/** Processor time one route may take the child before it counts as SimGrid 3.32's endless
 *  search of a Dijkstra zone without the path (a route of a Dijkstra zone of 6,000 nodes took
 *  about 2 ms). */
constexpr double kCpuSecondsPerRoute = 2.0;
enum Status { kAllFound = 1, kNoPath = 2, kThrew = 3 };

/** SimGrid's last critical message in what the child wrote to its error stream, if any. */
std::string last_critical(int fd)
{
  std::string text;
  char buffer[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  std::string found;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    const std::string line = text.substr(start, end - start);
    const auto mark = line.find("/CRITICAL] ");
    if (mark != std::string::npos)
      found = line.substr(mark + 11);
    start = end + 1;
  }
  return found;
}

/** The zone where the routes of `a` and `b` meet: where a route between them is declared. */
const simgrid::s4u::NetZone* common_zone(const simgrid::s4u::Host* a, const simgrid::s4u::Host* b)
{
  // The root's get_parent() dereferences a null parent in SimGrid 3.32: stop at the root.
  const auto* root = simgrid::s4u::Engine::get_instance()->get_netzone_root();
  const auto parent = [root](const simgrid::s4u::NetZone* z) { return z == root ? nullptr : z->get_parent(); };
  std::set<const simgrid::s4u::NetZone*> above_a;
  for (const auto* z = a->get_englobing_zone(); z != nullptr; z = parent(z))
    above_a.insert(z);
  for (const auto* z = b->get_englobing_zone(); z != nullptr; z = parent(z))
    if (above_a.count(z))
      return z;
  return nullptr;
}

/** "path:line" of the element of the platform whose id is `id`, else `path`. */
std::string located(const std::string& path, const std::string& id)
{
  pugi::xml_document doc;
  if (id.find('\'') != std::string::npos || !doc.load_file(path.c_str()))
    return path;
  const auto hit = doc.select_node(("//*[@id='" + id + "']").c_str());
  if (!hit)
    return path;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto offset = std::min(static_cast<std::size_t>(hit.node().offset_debug()), text.size());
  return path + ":" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

/** Both hosts in one zone that a <cluster topology=...> made (a fat tree, torus or dragonfly):
 *  it routes every host to every other. A flat <cluster> is a star zone, as is a
 *  <zone routing="Cluster">, whose hosts may lack their links: those are asked. The classes are
 *  private to SimGrid, so they are known by their type's name. */
bool within_one_cluster(const HostPair& p)
{
  const auto* zone = p.first->get_englobing_zone();
  if (zone != p.second->get_englobing_zone() || zone->get_impl() == nullptr)
    return false;
  const std::string kind = typeid(*zone->get_impl()).name();
  for (const char* cluster : {"FatTreeZone", "TorusZone", "DragonflyZone"})
    if (kind.find(cluster) != std::string::npos)
      return true;
  return false;
}

[[noreturn]] void ask_in_child(const std::vector<HostPair>& pairs, Shared* shared, int error_fd, pid_t parent)
{
  // It ends with its parent (a run killed while SimGrid searches without end), leaves no core
  // file where SimGrid aborts, and writes SimGrid's message where the parent reads it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent)
    ::_exit(1);
  const struct rlimit no_core {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::dup2(error_fd, STDERR_FILENO);
  for (std::size_t i = 0; i < pairs.size(); i++) {
    shared->index = static_cast<std::int64_t>(i);
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    try {
      pairs[i].first->route_to(pairs[i].second, links, &latency);
    } catch (const std::exception& e) {
      std::strncpy(shared->text, e.what(), sizeof shared->text - 1);
      shared->status = kThrew;
      ::_exit(0);
    }
    if (links.empty() && !(latency > 0)) {
      shared->status = kNoPath;
      ::_exit(0);
    }
  }
  shared->status = kAllFound;
  ::_exit(0);
}

} // namespace

void check_routes(std::vector<HostPair> pairs, const std::string& platform_path, const std::string& who)
{
  if (simgrid::config::get_value<std::string>("network/model") == "Constant")
    return;
  pairs.erase(std::remove_if(pairs.begin(), pairs.end(),
                             [](const HostPair& p) { return p.first == p.second || within_one_cluster(p); }),
              pairs.end());
  std::sort(pairs.begin(), pairs.end(), [](const HostPair& x, const HostPair& y) {
    return std::make_pair(x.first->get_name(), x.second->get_name()) <
           std::make_pair(y.first->get_name(), y.second->get_name());
  });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  // Under network/crosstraffic (LV08's default) SimGrid 3.32 also routes each message's
  // acknowledgements back: a one-way route made the run search without end (Dijkstra zones).
  std::set<HostPair> back_only;
  if (simgrid::config::get_value<bool>("network/crosstraffic")) {
    const std::set<HostPair> declared(pairs.begin(), pairs.end());
    for (const auto& [a, b] : declared)
      if (!declared.count({b, a}) && back_only.insert({b, a}).second)
        pairs.emplace_back(b, a);
  }
  if (pairs.empty())
    return;
  simgrid::s4u::Engine::get_instance()->seal_platform(); // routes are asked of a sealed platform

  void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  const int error_fd = ::memfd_create("simcore-routes", MFD_CLOEXEC);
  if (memory == MAP_FAILED || error_fd < 0) {
    XBT_WARN("the routes the model needs are not checked: %s", std::strerror(errno));
    if (memory != MAP_FAILED)
      ::munmap(memory, sizeof(Shared));
    return;
  }
  auto* shared = new (memory) Shared();
  const DefaultChildSignal children_to_wait_for;
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0)
    ask_in_child(pairs, shared, error_fd, parent);
  bool timed_out = false;
  int wait_status = 0;
  if (pid > 0) {
    // An endless search is told by the child's processor time on one route, not by the clock:
    // a loaded machine, or a run stopped and resumed, gives it no less time to answer. Where
    // that time cannot be read, a minute and 10 ms a pair.
    clockid_t clock{};
    const bool timed = ::clock_getcpuclockid(pid, &clock) == 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60) +
                          std::chrono::milliseconds(10 * static_cast<long>(pairs.size()));
    std::int64_t last_index = -2;
    double cpu_at_last = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid, &wait_status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) // ECHILD: reaped by another waitpid of the process
        break;
      bool endless = !timed && std::chrono::steady_clock::now() > deadline;
      timespec t{};
      if (timed && ::clock_gettime(clock, &t) == 0) {
        const double cpu = static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
        const std::int64_t index = shared->index.load();
        if (index != last_index)
          last_index = index, cpu_at_last = cpu;
        else
          endless = cpu - cpu_at_last > kCpuSecondsPerRoute;
      }
      if (endless) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &wait_status, 0);
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  const std::int64_t result_index = shared->index.load();
  const int result_status = shared->status.load();
  const std::string result_text(shared->text, strnlen(shared->text, sizeof shared->text));
  const std::string critical = last_critical(error_fd);
  ::munmap(memory, sizeof(Shared));
  ::close(error_fd);
  if (pid < 0) {
    XBT_WARN("the routes the model needs are not checked: no child process (%s)", std::strerror(errno));
    return;
  }
  if (result_status == kAllFound)
    return;
  if (result_index < 0 || result_index >= static_cast<std::int64_t>(pairs.size()))
    throw InternalError("checking the routes the model needs: the child process ended before asking for one");
  const auto& [a, b] = pairs[static_cast<std::size_t>(result_index)];
  std::string why = result_status == kNoPath ? "SimGrid finds no path"
                    : result_status == kThrew ? "SimGrid: " + result_text
                    : timed_out ? "SimGrid 3.32 never finished looking for it, as in a Dijkstra zone without a path"
                    : !critical.empty() ? "SimGrid 3.32 aborted: " + critical
                                        : "SimGrid 3.32 crashed looking for it";
  if (why.size() > 300)
    why = why.substr(0, 300) + "...";
  const auto* zone = common_zone(a, b);
  const std::string zone_name = zone != nullptr ? zone->get_name() : std::string();
  const bool back = back_only.count({a, b}) > 0;
  throw InputError(zone != nullptr ? located(platform_path, zone_name) : platform_path,
                   "no route from host '" + a->get_name() + "' to host '" + b->get_name() + "'" +
                       (zone != nullptr ? " in zone '" + zone_name + "'" : std::string()) + " (" + why + "); " + who +
                       (back ? " the other way, and network/crosstraffic (on) routes each message's acknowledgements "
                               "back"
                             : "") +
                       "; expected a <route> (or a <zoneRoute> between their zones) that joins them" +
                       (back ? " both ways (symmetrical), or --cfg=network/crosstraffic:0" : ""));
}

} // namespace simcore
