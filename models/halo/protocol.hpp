/* Transfer protocols of an MPI library, the policies that pick them, and their settings. */
#pragma once

#include <cstdint>
#include <optional>

namespace halo {

enum class Protocol {
  Eager,      ///< inter: one message, the receiver copies it out; intra: copy in, copy out
  Rendezvous, ///< inter: request and answer, then the data straight into the user buffer
  SingleCopy, ///< intra: kernel-assisted (CMA/XPMEM) copy from the sender's buffer
  Pipelined,  ///< inter: request and answer, then chunks whose copy-out overlaps the network
};
constexpr int kProtocols = 4;
const char* to_string(Protocol p);

/** static: fixed thresholds per channel; dynamic: per transfer, the protocol with the lowest
 *  predicted completion given the load on the memory buses and NICs, and per rank the order
 *  of its sends. */
enum class Policy { Static, Dynamic };

/** detailed: the protocols above with a memory bus per node; smpi: what SMPI simulates for
 *  the same MPI program (one network transfer per message, intra-node over the platform's
 *  loopback, sends up to the eager limit detached). */
enum class Mode { Detailed, Smpi };

/** rank: one actor per rank; node: one actor per node carrying the traffic of its ranks,
 *  aggregated per node pair and protocol (far fewer flows, for large runs). */
enum class Granularity { Rank, Node };

struct Protocols {
  double inter_eager_limit = 65536;  ///< B: larger inter-node messages use `inter_large`
  double intra_eager_limit = 4096;   ///< B: larger intra-node messages use a single copy
  Protocol inter_large = Protocol::Rendezvous;
  double single_copy_startup = 2e-6; ///< s per single copy (kernel-assisted set-up)
  /** A single copy between two ranks goes no faster than the node's loopback route at its
   *  size (with a profile: the intra-node fit's rate past the switch, a kernel-assisted copy's
   *  measured rate), besides the bus and the cached-copy bounds. */
  bool single_copy_at_route_rate = false;
  /** A single copy between two ranks starts up in the loopback route's latency at its size
   *  (with a profile: the intercept of the intra-node fit's segment that holds the size), not
   *  in `single_copy_startup`: alone, it then takes what the fit measured at its size. */
  bool single_copy_startup_at_route_latency = false;
  double control_bytes = 64;         ///< B of a rendezvous request or answer
  double chunk_size = 131072;        ///< B per chunk of a pipelined transfer
  bool nic_dma = true;               ///< inter-node data also crosses both nodes' memory buses
  double dynamic_margin = 0.5;       ///< dynamic: least predicted gain (fraction) to leave the static choice
  bool network_first = false;        ///< post every network send before the intra-node eager copies
};

/** The static choice: thresholds per channel. */
Protocol static_protocol(double bytes, bool intra, const Protocols& p);

/** SMPI mode's: on either channel, a send strictly below SMPI's detached threshold
 *  (`smpi/send-is-detached-thresh`, whose default `inter_eager_limit` shares) is detached
 *  (eager); any other the sender waits for (rendezvous). No single copy: SMPI moves every
 *  message over the network model, within a node over the loopback. */
Protocol smpi_protocol(double bytes, const Protocols& p);

/** What a dynamic choice knows about one transfer and the load around it. */
struct TransferOutlook {
  double bytes = 0;            ///< of the message
  bool intra = false;
  bool self = false;           ///< a message to itself: eager copies it once (MPI's self transport)
  double latency = 0;          ///< s, of the route (inter), factors applied
  double bandwidth = 1;        ///< B/s, bottleneck of the route (inter), factors applied
  double nic_seconds = 0;      ///< time the busier of the two NICs needs for all its traffic
  double memory_bandwidth = 1; ///< B/s of the receiving node's bus
  double bus_seconds = 0;      ///< time that bus needs for everything but this message's copies
  double bus_users = 1;        ///< ranks copying on that bus (sharing it at the end)
  double copy_least = 0;       ///< s: one copy of the message takes at least this (one core's rate)
  double single_copy_least = 0; ///< s: a single copy takes at least this (Protocols::single_copy_at_route_rate)
  /** s: this single copy's start-up where it depends on the size
   *  (Protocols::single_copy_startup_at_route_latency); unset: Protocols::single_copy_startup. */
  std::optional<double> single_copy_startup;
  /** s: intra, between two ranks: an eager message's time in flight between its copy in and
   *  its copy out (the route within the node at its size, less its two copies; at least the
   *  route's latency), as the detailed mode charges it. */
  double eager_in_flight = 0;
};

/** Predicted completion of one transfer under protocol `p` (the dynamic policy's cost). */
double predicted_time(Protocol p, const TransferOutlook& t, const Protocols& settings);

/** The protocol with the lowest predicted completion; ties go to the static choice. */
Protocol dynamic_protocol(const TransferOutlook& t, const Protocols& settings);

} // namespace halo
