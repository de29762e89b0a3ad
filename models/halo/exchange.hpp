/* The halo exchange itself: per iteration, each rank computes and exchanges its halo with
 * its neighbours, intra-node through the node's memory bus, inter-node over the network,
 * each message with the protocol the policy picks. */
#pragma once

#include "halo_geometry.hpp"

#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace halo {

enum class Protocol { Eager, Rendezvous, SingleCopy };
const char* to_string(Protocol p);

/** Protocol thresholds and costs (static policy). */
struct Protocols {
  double inter_eager_limit = 65536; ///< B: larger inter-node messages use rendezvous
  double intra_eager_limit = 4096;  ///< B: larger intra-node messages use a single copy
  double single_copy_startup = 0;   ///< s per single-copy transfer (kernel-assisted set-up)
  double control_bytes = 64;        ///< B of a rendezvous request or answer
};

struct Setup {
  Grid grid;
  HaloSpec spec;
  bool bundled = true;      ///< one message per neighbour, else one per variable
  std::int64_t iterations = 1;
  double flops_per_cell = 0; ///< per cell and iteration
  bool overlap = false;      ///< interior computation overlaps the exchange
  double memory_bandwidth = 0; ///< B/s of a node's memory bus, shared by its copies
  Protocols protocols;
  std::vector<simgrid::s4u::Host*> host_of_rank;
};

class Exchange {
public:
  explicit Exchange(Setup setup) : s_(std::move(setup)) {}
  void start(simcore::SimContext& ctx);
  void report(simcore::Results& results) const;

private:
  /** The messages of one iteration from `from` to `to` in one direction: one, or one per
   *  variable when not bundled. Those start together on the same route and share it, so they
   *  travel as one flow of their total (what max-min sharing gives them anyway), each still
   *  with the protocol its own size selects. */
  struct Message {
    std::int64_t from, to;
    double bytes;       ///< of each message
    std::int64_t parts; ///< messages
    double total() const { return bytes * static_cast<double>(parts); }
    bool intra;
    Protocol protocol;
    simgrid::s4u::Mailbox* data;    ///< inter-node
    simgrid::s4u::Mailbox* control; ///< rendezvous request and answer
    simgrid::s4u::SemaphorePtr posted; ///< intra-node: the sender's buffer is ready
  };
  void run_rank(std::int64_t rank);
  void exchange(std::int64_t rank);
  simgrid::s4u::Disk* bus(std::int64_t rank) const;

  Setup s_;
  std::vector<Message> messages_;
  std::vector<std::vector<std::size_t>> out_, in_; ///< message indices per rank
  std::map<simgrid::s4u::Host*, simgrid::s4u::Disk*> bus_;
  std::vector<double> comm_time_, compute_time_, end_;
  std::vector<double> iteration_end_; ///< per iteration: when the last rank finished it
};

} // namespace halo
