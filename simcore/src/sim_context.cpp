#include "simcore/sim_context.hpp"
#include "simcore/natural_order.hpp"
#include "simcore/error.hpp"
#include "simcore/route_check.hpp"
#include "simcore/scenario.hpp"

#include <simgrid/Exception.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

namespace simcore {

SimContext::SimContext(simgrid::s4u::Engine& engine, const Scenario& scenario, const CalibrationProfile& profile)
    : engine_(engine), scenario_(scenario), profile_(profile), streams_(scenario.seed())
{
}

const ParamSet& SimContext::params() const { return scenario_.params(); }

void SimContext::check_routes(const std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>>& pairs) const
{
  simcore::check_routes(pairs, scenario_.platform_path(),
                        "model '" + scenario_.model_name() + "' sends messages from one to the other");
}

namespace {

/** Actors this process can hold at once: each has a stack of its own, two memory mappings with
 *  its guard page, of the vm.max_map_count Linux allows a process (65,530 by default); past it
 *  SimGrid 3.32 aborts ("Failed to protect stack"). Measured at the first actor: what the
 *  process maps already, less 1,024 mappings kept for the libraries' own. Without guard pages
 *  (contexts/guard-size 0) the stacks merge into few mappings: no bound. */
std::size_t actor_capacity(std::size_t alive)
{
  if (simgrid::config::get_value<int>("contexts/guard-size") == 0)
    return std::numeric_limits<std::size_t>::max();
  static const std::size_t free_maps = [] {
    long most = 65530;
    std::ifstream("/proc/sys/vm/max_map_count") >> most;
    std::ifstream maps("/proc/self/maps");
    long used = 0;
    for (std::string line; std::getline(maps, line);)
      ++used;
    return static_cast<std::size_t>(std::max(most - used - 1024, 0L));
  }();
  static const std::size_t at_first = alive;
  return at_first + free_maps / 2;
}

} // namespace

simgrid::s4u::ActorPtr SimContext::create_actor(const std::string& name, simgrid::s4u::Host* host,
                                               std::function<void()> code)
{
  const std::size_t alive = engine_.get_actor_count();
  const std::size_t most = actor_capacity(alive);
  if (alive + 1 > most)
    throw InputError(scenario_.path(), "model '" + scenario_.model_name() + "' runs more than " +
                                           std::to_string(most) + " actors at once (each has a stack: two of the " +
                                           "memory mappings this system allows a process, vm.max_map_count); "
                                           "expected a smaller scenario (fewer ranks or tasks at once), or a larger "
                                           "vm.max_map_count");
  return simgrid::s4u::Actor::create(name, host, [this, code = std::move(code)]() {
    try {
      code();
    } catch (const simgrid::ForcefulKillException&) {
      throw; // SimGrid's own way of ending an actor
    } catch (...) {
      if (!failure_)
        failure_ = std::current_exception();
      simgrid::s4u::Actor::kill_all();
    }
  });
}

std::vector<simgrid::s4u::Host*> SimContext::hosts_sorted() const
{
  auto hosts = engine_.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(), [](auto a, auto b) { return natural_less(a->get_name(), b->get_name()); });
  return hosts;
}

InputError SimContext::param_error(const std::string& param, const std::string& message) const
{
  const std::string& origin = params().origin(param);
  if (origin != "default")
    return InputError(origin, message);
  // A default: the model's, named at the <scenario> element.
  const std::string& at = scenario_.model_origin().empty() ? scenario_.path() : scenario_.model_origin();
  return InputError(at + " (default of '" + param + "')", message);
}

simgrid::s4u::Host* SimContext::host(const std::string& name, const std::string& param) const
{
  auto* h = engine_.host_by_name_or_null(name);
  if (!h)
    throw param_error(param, "parameter '" + param + "' names host '" + name + "', which the platform " +
                                 scenario_.platform_path() + " does not have; expected the name of one of its hosts");
  return h;
}

double SimContext::host_speed(const simgrid::s4u::Host* host) const
{
  return profile_.host_speed(host->get_name()).value_or(host->get_speed());
}

} // namespace simcore
