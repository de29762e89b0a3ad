/* The staging engine: publishers hand their blocks straight to the subscribers whose
 * selections intersect them, over the network (transport "mailbox"), by a memory copy when
 * both ranks share a host, or at no cost (transport "ideal", a lower bound). */
#pragma once

#include "workflow.hpp"

#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <vector>

namespace dtl {

/** One DTL operation of one rank in one transaction, as traced. */
struct Operation {
  std::int64_t transaction;
  std::int64_t side; ///< 0 publisher, 1 subscriber
  std::int64_t rank;
  double begin;   ///< begin_step
  double io_done; ///< put posted (publisher) or data received (subscriber)
  double end;     ///< end_step completed
  std::int64_t bytes;
};

class StagingEngine {
public:
  explicit StagingEngine(Workflow workflow) : w_(std::move(workflow)) {}
  /** Creates the channels and the actors of both apps. */
  void start(simcore::SimContext& ctx);
  /** Metrics and tables, after the simulation. */
  void report(simcore::Results& results) const;

private:
  struct Channel {
    Transfer transfer;
    bool local;                    ///< publisher and subscriber share a host
    simgrid::s4u::Mailbox* mailbox; ///< remote pairs over the network
    simgrid::s4u::SemaphorePtr ready; ///< local pairs and the ideal transport
  };
  void run_publisher(std::int64_t rank);
  void run_subscriber(std::int64_t rank);
  bool over_network(const Channel& c) const { return w_.transport == "mailbox" && !c.local; }

  Workflow w_;
  std::vector<Channel> channels_;
  std::vector<std::vector<std::size_t>> outgoing_; ///< channel indices per publisher
  std::vector<std::vector<std::size_t>> incoming_; ///< channel indices per subscriber
  std::vector<Operation> ops_;
  std::vector<double> sim_dtl_time_, ana_dtl_time_; ///< per rank: time inside DTL calls
  double bytes_network_ = 0, bytes_memcpy_ = 0, bytes_ideal_ = 0;
  double sim_end_ = 0, ana_end_ = 0;
};

} // namespace dtl
