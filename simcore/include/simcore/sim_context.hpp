/* What the kernel hands a model: the engine, the validated parameters, the calibration
 * profile and seeded random streams. */
#pragma once

#include "simcore/calibration_profile.hpp"
#include "simcore/error.hpp"
#include "simcore/param_set.hpp"
#include "simcore/random_streams.hpp"
#include "simcore/scenario.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>

#include <exception>
#include <functional>

#include <string>
#include <utility>
#include <vector>

namespace simcore {

class Scenario;

class SimContext {
public:
  SimContext(simgrid::s4u::Engine& engine, const Scenario& scenario, const CalibrationProfile& profile);

  simgrid::s4u::Engine& engine() const { return engine_; }
  const Scenario& scenario() const { return scenario_; }
  const ParamSet& params() const;
  const CalibrationProfile& calibration() const { return profile_; }
  /** Independent generator per named use, seeded from the scenario's seed. */
  std::mt19937_64& rng(const std::string& name) { return streams_.stream(name); }

  /** Creates an actor whose exceptions end the simulation cleanly: the first exception
   *  thrown by any actor created this way stops every actor, and the kernel rethrows it
   *  after the run (InputError stays InputError: exit code 2; others: exit code 1).
   *  Plain s4u::Actor::create works too, but an exception escaping it ends the process. */
  simgrid::s4u::ActorPtr create_actor(const std::string& name, simgrid::s4u::Host* host, std::function<void()> code);
  /** The first exception an actor of create_actor() threw, or nullptr. */
  std::exception_ptr actor_failure() const { return failure_; }

  /** All hosts, sorted by name in natural order: digit runs compare as numbers, so node-2
   *  comes before node-10 (as in a Slurm node list and in an SMPI host file written by
   *  index). SimGrid's own order is not guaranteed stable. */
  std::vector<simgrid::s4u::Host*> hosts_sorted() const;
  /** An InputError about a parameter, located where its value came from ("file:line",
   *  "--set name=value", or "default"), for checks a model makes against the platform. */
  InputError param_error(const std::string& param, const std::string& message) const;
  /** A host by name; InputError naming the parameter when it does not exist. */
  simgrid::s4u::Host* host(const std::string& name, const std::string& param) const;
  /** Refuses the platform (InputError at the zone that lacks it) where SimGrid cannot give the
   *  route of a pair, first to second: the pairs the model sends between, asked for before it
   *  relies on them (see simcore/route_check.hpp; SimGrid 3.32 aborts, crashes or loops on a
   *  route a platform lacks). Call it in setup(), before asking SimGrid for routes. */
  void check_routes(const std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>>& pairs) const;
  /** Host speed in flop/s after calibration (SimGrid applies calibrated speeds as a speed
   *  profile at time 0, so Host::get_speed() shows the platform's value until then). */
  double host_speed(const simgrid::s4u::Host* host) const;

private:
  simgrid::s4u::Engine& engine_;
  const Scenario& scenario_;
  const CalibrationProfile& profile_;
  RandomStreams streams_;
  std::exception_ptr failure_;
};

} // namespace simcore
