/* Routes a model needs, asked of SimGrid before the model relies on them. SimGrid 3.32 gives
 * no clean answer for a route a platform lacks: an empty route in a Full zone (then an abort
 * at the first message), an exception in a Floyd zone, an endless loop in a Dijkstra zone, an
 * abort in a zone without routing. So the routes are asked for in a child process, under a
 * time limit, and a missing one becomes an InputError. */
#pragma once

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <utility>
#include <vector>

namespace simcore {

using HostPair = std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>;

/** Refuses (InputError at the platform's line of the zone where the route is missing, else at
 *  `platform_path`) the first pair, in host-name order, whose route from first to second SimGrid
 *  cannot give; `who` says what needs it ("model 'halo' sends from one to the other"). A host's
 *  route to itself, and every route under the Constant network model, needs no check. Seals
 *  the platform. Where no child process can be started, warns and checks nothing. */
void check_routes(std::vector<HostPair> pairs, const std::string& platform_path, const std::string& who);

} // namespace simcore
