/* What moves in one iteration: the agents that move it (ranks, or nodes carrying their ranks'
 * traffic), and the transfers between them with the protocol the policy picked. */
#pragma once

#include "copy_cost.hpp"
#include "halo_geometry.hpp"
#include "protocol.hpp"

#include <simcore/message_gaps.hpp>

#include <simgrid/s4u/Host.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace halo {

struct Setup {
  Grid grid;
  HaloSpec spec;
  bool bundled = true;          ///< one message per neighbour, else one per variable
  std::int64_t iterations = 1;
  double flops_per_cell = 0;    ///< per cell and iteration (hosts not in host_flops_per_cell)
  bool overlap = false;         ///< interior computation overlaps the exchange
  double memory_bandwidth = 0;  ///< B/s of a node's memory bus, shared by its copies (same)
  /** Per host, where a calibration profile's host type says otherwise. */
  std::map<const simgrid::s4u::Host*, double> host_flops_per_cell, host_memory_bandwidth;
  CachedCopies cached_copies; ///< intra-node copies of data in another core's cache (same)
  std::map<const simgrid::s4u::Host*, CachedCopies> host_cached_copies;
  Protocols protocols;
  Policy policy = Policy::Static;
  Mode mode = Mode::Detailed;
  Granularity granularity = Granularity::Rank;
  std::size_t transfers_per_actor = 32; ///< network transfers (SMPI mode: messages) per actor (see exchange.cpp)
  std::vector<simgrid::s4u::Host*> host_of_rank;
  /** Detailed mode: a rank's time between posting one eager message and the next: the
   *  scenario's (`fixed_message_gap` to other ranks, `fixed_self_gap` to itself), else the
   *  profile's law by size and placement, else none. */
  std::optional<double> fixed_message_gap, fixed_self_gap;
  simcore::MessageGaps message_gaps;
  /** SMPI mode: what SMPI's MPI_Isend sleeps before it posts a message (smpi/ois), by the
   *  message's size, whatever its placement; none where not given. */
  std::optional<simcore::GapLaw> smpi_ois;

  /** Detailed mode, within a host: a rank's eager messages to one other rank of its host take
   *  the queued gap once those it posted to that rank in the iteration hold more than
   *  `fast_box_bytes`, each counting its bytes and `fast_box_header` rounded up to a multiple of
   *  `fast_box_alignment` (Open MPI's fast box: the shared-memory slots for each peer, 4 KiB;
   *  past them messages take a slower queue). The queued gap: the scenario's
   *  (`fixed_queued_gap`), else, where the other gaps come from the profile, its
   *  intra-node-queued law, else none (every message its gap). */
  double fast_box_bytes = 4096, fast_box_header = 24, fast_box_alignment = 1;
  /** Detailed mode: the time MPI takes to pass over one posted receive (or one unexpected
   *  message) from the message's source while it matches a message, by the message's
   *  placement: a message whose tag matches the receiver's n-th receive still posted from that
   *  source passes over n - 1 (none where sends and receives go in the same order: the message
   *  gaps hold that case). The receiver pays it, spread over the messages it posts. */
  double match_scan_intra = 0, match_scan_inter = 0, match_scan_self = 0;
  /** The bytes one message of `bytes` takes in the fast box. */
  double fast_box_footprint(double bytes) const
  {
    return fast_box_alignment * std::ceil((bytes + fast_box_header) / fast_box_alignment);
  }
  std::optional<double> fixed_queued_gap;
  bool queues() const
  {
    return fixed_queued_gap || (!fixed_message_gap && message_gaps.has(simcore::MessageGaps::Placement::IntraNodeQueued));
  }

  double message_gap(double bytes, bool intra, bool self, bool queued = false) const
  {
    using P = simcore::MessageGaps::Placement;
    if (queued && intra && !self && queues())
      return fixed_queued_gap ? *fixed_queued_gap : message_gaps.gap(bytes, P::IntraNodeQueued).value_or(0.0);
    const auto& fixed = self ? fixed_self_gap : fixed_message_gap;
    if (fixed)
      return *fixed;
    return message_gaps.gap(bytes, self ? P::Self : intra ? P::IntraNode : P::InterNode).value_or(0.0);
  }

  double flops_per_cell_on(const simgrid::s4u::Host* h) const
  {
    auto it = host_flops_per_cell.find(h);
    return it == host_flops_per_cell.end() ? flops_per_cell : it->second;
  }
  double memory_bandwidth_on(const simgrid::s4u::Host* h) const
  {
    auto it = host_memory_bandwidth.find(h);
    return it == host_memory_bandwidth.end() ? memory_bandwidth : it->second;
  }
  /** An intra-node copy of `bytes` on host `h` (see intra_copy_cost). */
  CopyCost intra_copy_on(const simgrid::s4u::Host* h, double bytes) const
  {
    auto it = host_cached_copies.find(h);
    return intra_copy_cost(bytes, memory_bandwidth_on(h), it == host_cached_copies.end() ? cached_copies : it->second);
  }
};

/** One transfer of an iteration: a message (or, unbundled, the messages of all variables:
 *  without gaps they start together on one route and share it, so they travel as one flow of
 *  their total; with gaps each is a transfer of its own), or at node granularity all the
 *  messages of one protocol from one node to another. */
struct Transfer {
  std::int64_t from, to;        ///< agents
  bool intra;                   ///< both ends on one node
  Protocol protocol;
  double total = 0;             ///< bytes of all its messages
  std::int64_t messages = 0;    ///< MPI messages it stands for
  double first_chunk = 0;       ///< pipelined: bytes of the first chunk
  double copy_bus_bytes = 0;    ///< intra: what one copy of all its messages puts on the node's bus
  /** intra, eager: what its senders' copies in put on the bus once it is posted: all of them,
   *  except at node granularity, where the copies done within the gaps are done by then. */
  double copy_in_bus_bytes = 0;
  double copy_least = 0;        ///< intra: s, the least time of its senders' copies into shared buffers
                                ///< (eager: each sender copies its messages in turn, senders side by side;
                                ///< at node granularity those left after the latest sender's last gap)
  double post_delay = 0;        ///< s after the exchange starts: the message gaps before its (last) post
                                ///< (at node granularity, a transfer of the messages posted before
                                ///< its node pair's last post: its first; see make_plan)
  /** Intra-node, what its receiver does once it is posted (detailed mode, rank granularity):
   *  wait `arrival_latency` (an eager message from another rank in flight: see
   *  Plan::eager_latency_in),
   *  the single copies' start-ups one after another (`copy_startup`, s in all), then copy it
   *  out, no faster than `copy_out_least`. */
  double arrival_latency = 0;
  double copy_startup = 0;
  double copy_out_least = 0;
  /** Intra-node eager with gaps, rank granularity: the share of its copy out done inside its
   *  receiver's gaps (see hidden_in_gaps in transfer_plan.cpp): 1 costs nothing more. */
  double hidden_in_gaps = 0;
};

/** The route between two hosts as the network model sees a message of `bytes`. */
struct RouteView {
  double latency;   ///< s, factors applied
  double bandwidth; ///< B/s of the bottleneck link, factors applied
};
/** (a, b, bytes, loopback_only): with loopback_only, a host's route to itself counts only
 *  over its loopback (SimGrid's implicit one, a cluster's loopback link); over other links
 *  (a cluster without loopback, whose hosts reach themselves through the backbone), which
 *  describe no path within the node, it is free (latency 0, bandwidth infinite). */
using RouteFunction = std::function<RouteView(simgrid::s4u::Host*, simgrid::s4u::Host*, double bytes, bool)>;

struct Plan {
  std::vector<simgrid::s4u::Host*> host;        ///< per agent
  std::vector<std::vector<std::int64_t>> ranks; ///< per agent, the ranks it stands for
  std::vector<double> flops;                    ///< per agent and iteration (on one core)
  std::vector<double> interior_flops;           ///< of that, what needs no halo
  std::vector<Transfer> transfers;
  std::vector<std::vector<std::size_t>> out, in; ///< transfer indices per agent, in neighbour order
  std::vector<char> network_first;               ///< per agent: post network sends before eager copies (rank granularity;
                                                 ///< a node posts in time order, Exchange::exchange_detailed)
  /* Node granularity (a node's ranks copy side by side, so the node copies its intra-node
   * receives at once, after the last is posted), of what the gaps did not hide of its
   * receives (hidden_in_gaps in transfer_plan.cpp): */
  /** Per agent: the least time of those copies (each rank copies its own in turn at one
   *  core's rate, the ranks of a node side by side: the longest rank's). */
  std::vector<double> copy_least_in;
  /** Per agent: what those copies put on the node's bus. */
  std::vector<double> copy_bus_in;
  /** Per agent: s of single-copy start-ups before its receive copies: a rank's single copies
   *  from other ranks start one after another (a message to itself has none: MPI's self
   *  transport copies it at once); at node granularity the node's rank with the longest. */
  std::vector<double> copy_startup_in;
  /** Per agent: the in-flight time of those of them that are eager messages from other ranks
   *  (what the route within the node takes for them at their size, the profile's intra-node
   *  factors applied, less their two copies alone; at least its latency), the largest: the
   *  last of them arrives that long after it is posted. */
  std::vector<double> eager_latency_in;
  /** Per agent (detailed mode): s after the exchange starts when the rank is done posting:
   *  its last post, or a self gap after a message to itself posted last (a self window's time
   *  is all gaps); a node's, its latest rank's. Receives start then (MPI_Waitall), and eager
   *  ones in by then were received inside the gaps. */
  std::vector<double> posting_end;
  /** MPI messages per iteration by channel (0 inter, 1 intra) and protocol. */
  std::int64_t messages_by[2][kProtocols] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  double bytes_by[2] = {0, 0}; ///< per iteration, inter and intra
  /** Messages per iteration by class: (intra, kind 1 face/2 edge/3 corner, bytes, protocol). */
  std::map<std::tuple<int, int, double, int>, std::int64_t> classes;
};

/** Builds the plan of `setup`: neighbours, protocol per message (static thresholds, or the
 *  dynamic prediction with loads counted from the static choice), then the agents. */
Plan make_plan(const Setup& setup, const RouteFunction& route);

} // namespace halo
