/* Cluster topologies (TORUS, FAT_TREE, DRAGONFLY) and the size of a platform, checked before
 * SimGrid 3.32 builds them: it aborts, crashes or allocates without end on what it parses
 * (private to simcore/src: the platform loader). */
#pragma once

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace simcore {

/** The most hosts a platform may declare (SimGrid 3.32 took 48 s and 5 GB for a flat cluster
 *  of 2^20), and the most links a cluster's topology may make. */
constexpr double kMostHosts = 1048576;
constexpr double kMostTopologyLinks = 4194304;

/** Every `<cluster topology=...>`'s topo_parameters against its topology's grammar and the
 *  limits SimGrid 3.32 needs (InputError at the cluster's line); its radicals naming exactly
 *  the hosts the topology makes; at most kMostHosts hosts in all. Radicals must have been
 *  checked already (numbers and ranges of ints). */
void check_cluster_topologies(const pugi::xml_document& doc,
                              const std::function<std::string(const pugi::xml_node&)>& where);

} // namespace simcore
