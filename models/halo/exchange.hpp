/* The halo exchange itself: per iteration, each agent (a rank, or a node carrying its ranks)
 * computes and exchanges its halo, intra-node through the node's memory bus, inter-node over
 * the network, each transfer with the protocol of the plan. */
#pragma once

#include "transfer_plan.hpp"

#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <simcore/model.hpp>

#include <vector>

namespace halo {

class Exchange {
public:
  explicit Exchange(Setup setup) : s_(std::move(setup)) {}
  void start(simcore::SimContext& ctx);
  void report(const simcore::SimContext& ctx, simcore::Results& results) const;
  /** What report() is sure to take for its iterations table (the rest is per rank, as setup's). */
  simcore::MemoryNeed memory_need() const;
  /** The iterations, ranks and classes tables report() writes, with their rows. */
  std::vector<simcore::TableSize> table_sizes() const;

private:
  struct Channels {
    simgrid::s4u::Mailbox* data = nullptr;     ///< inter-node, or every message in smpi mode
    simgrid::s4u::Mailbox* control = nullptr;  ///< rendezvous and pipelined request and answer
    simgrid::s4u::SemaphorePtr posted;         ///< intra-node, node granularity: the sender's side is ready
  };
  /** An intra-node transfer whose sender's side is ready (rank granularity), and when. */
  struct Posted {
    std::size_t transfer;
    double at;
  };
  /** One agent's network transfers in progress (see exchange.cpp). */
  class Progress;
  /** Network transfers of an agent that another of its actors posts and progresses: SimGrid
   *  3.32's cost of ending a communication grows with the activities of the actors at both
   *  ends (see exchange.cpp). */
  struct Lane {
    std::vector<std::size_t> transfers;
    simgrid::s4u::SemaphorePtr post; ///< sends: released once per transfer as the agent posts it
  };
  void run_receive_lane(std::size_t agent, std::size_t lane);
  void run_send_lane(std::size_t agent, std::size_t lane);
  /** SMPI mode: messages of an agent that another of its actors posts and waits for, one
   *  entry per message (its transfer). */
  struct SmpiLane {
    std::vector<std::size_t> messages;
    bool sends = false;
    bool rendezvous = false; ///< sends: one of them is past the eager limit (its agent waits for it)
    std::size_t first = 0;   ///< sends: its first message's place among its agent's sends
  };
  void run_smpi_lane(std::size_t agent, std::size_t lane, double start);
  /** SMPI mode: post send `k` of `agent` (its k-th message, transfer `ti`) once its agent is
   *  done sleeping smpi/ois before it (`at`, the simulated time, moves on by that sleep). */
  simgrid::s4u::CommPtr smpi_post_send(std::size_t agent, std::size_t k, std::size_t ti, double& at);
  bool smpi_eager(const Transfer& t) const;           ///< SMPI mode: its messages are detached sends
  simgrid::s4u::CommPtr smpi_send(std::size_t transfer); ///< SMPI mode: one message of it, started
  static std::uint64_t smpi_bytes(const Transfer& t);   ///< SMPI mode: the bytes of one of its messages
  /** Iterations [first, ...) of an agent: a bounded number of them, then a successor actor
   *  takes the rest (see exchange.cpp). */
  void run_agent(std::size_t agent, std::int64_t first);
  void exchange_detailed(std::size_t agent);
  void exchange_smpi(std::size_t agent, double interior, simgrid::s4u::ExecPtr& inner);
  void run_copier(std::size_t agent, std::int64_t first); ///< iterations [first, ...), as run_agent
  void copy_on_bus(std::size_t agent, double bus_bytes, double least);
  void copy_intra(std::size_t agent, const Transfer& t); ///< an intra-node copy of all of t's messages
  void post_intra(std::size_t transfer);                 ///< the sender's side of an intra-node transfer is ready
  void pause(double seconds) const;                      ///< sleep, unless shorter than SimGrid's precision
  simgrid::s4u::Disk* bus(std::size_t agent) const { return bus_.at(plan_.host[agent]); }
  RouteView route(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes, bool loopback_only) const;

  Setup s_;
  simcore::SimContext* ctx_ = nullptr;
  std::vector<std::string> agent_name_; ///< per agent: its actors' name
  Plan plan_;
  std::vector<Channels> channels_; ///< per transfer
  std::vector<simgrid::s4u::SemaphorePtr> copier_go_, copier_done_; ///< per agent with intra receives
  /** Rank granularity, per agent with intra receives and per iteration's parity: what was
   *  posted to it, in the order it was, and how many (a copier copies its receives out as they
   *  come). A sender is at most one iteration ahead of a receiver's copier (halo neighbours
   *  are mutual: it needs the receiver's next posts to finish its own iteration), so two
   *  queues keep the iterations apart. */
  std::vector<std::array<std::deque<Posted>, 2>> posted_to_;
  std::vector<std::array<simgrid::s4u::SemaphorePtr, 2>> posted_count_;
  std::vector<std::int64_t> agent_activities_; ///< per agent: activities its own actor starts an iteration, at most
  std::vector<std::vector<std::size_t>> post_order_; ///< per agent: its sends in the order it posts them
  std::vector<std::vector<Lane>> receive_lanes_, send_lanes_; ///< per agent: none up to Setup::transfers_per_actor
  std::vector<std::size_t> send_lane_of_;                    ///< per transfer: its lane, or none
  /** Per agent with lanes: released once per receive lane when the agent is done posting (it
   *  progresses nothing before), and by each lane once it is done. */
  std::vector<simgrid::s4u::SemaphorePtr> lanes_posted_, lanes_done_;
  std::vector<std::vector<SmpiLane>> smpi_lanes_; ///< per agent: none up to Setup::transfers_per_actor messages
  /** SMPI mode, per agent without lanes: its eager sends in flight. SMPI detaches them, but
   *  SimGrid 3.32 keeps every detached communication in one list for the whole simulation
   *  and walks it each time one ends; the agent keeps them instead and lets them go once done. */
  std::vector<std::vector<simgrid::s4u::CommPtr>> smpi_eager_out_;
  /** SMPI mode with smpi/ois, per agent: what it sleeps before each of its sends, in order. */
  std::vector<std::vector<double>> smpi_ois_;
  std::vector<std::int64_t> posts_; ///< per transfer: how many times it was posted (its next iteration)
  double precision_ = 1e-9;         ///< SimGrid's timing precision (surf/precision)
  std::vector<double> copier_from_; ///< rank granularity, per agent: when its copier may start (done posting)
  std::map<simgrid::s4u::Host*, simgrid::s4u::Disk*> bus_;
  const simcore::NetworkFactors* factors_ = nullptr; ///< the profile's, where it has them
  std::vector<double> comm_time_, end_; ///< per agent
  std::vector<double> iteration_end_;   ///< per iteration: when the last agent finished it
  std::vector<double> iteration_comm_max_; ///< per iteration: the longest exchange of an agent
};

} // namespace halo
