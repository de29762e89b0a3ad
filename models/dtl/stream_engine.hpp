/* The streams between the simulation (publishers) and the analyses (subscribers), with
 * either engine:
 *  - staging: publishers hand their pieces straight to the subscribers whose selections
 *    intersect them, over the network (transport "mailbox"), by a memory copy when both ranks
 *    share a host, or at no cost (transport "ideal", a lower bound);
 *  - file: each publisher writes its block to a file (local disk of its host, or a disk of a
 *    parallel file system's storage host); subscribers read their pieces once that
 *    transaction's files are written, possibly after the simulation ended (post hoc). */
#pragma once

#include "workflow.hpp"

#include <simcore/model.hpp>
#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <vector>

namespace dtl {

/** One DTL operation of one rank in one transaction of one stream, as traced. */
struct Operation {
  std::int64_t stream;
  std::int64_t reader; ///< -1 on the publisher side
  std::int64_t transaction;
  std::int64_t side; ///< 0 publisher, 1 subscriber
  std::int64_t rank;
  double begin;   ///< begin_step
  double io_done; ///< put done (publisher) or data received (subscriber)
  double end;     ///< end_step completed
  std::int64_t bytes;
};

class StreamEngine {
public:
  explicit StreamEngine(Workflow workflow) : w_(std::move(workflow)) {}
  /** Creates storage, channels and the actors of every app. */
  void start(simcore::SimContext& ctx);
  /** Metrics and tables, after the simulation. */
  void report(simcore::Results& results) const;
  /** What the run is sure to take besides what start() took: its operation records (one per
   *  rank, stream and transaction it puts or gets), the two copies report() makes of them, and
   *  the transactions table. */
  simcore::MemoryNeed memory_need() const;
  /** The operations, transactions and readers tables report() writes, with their rows. */
  std::vector<simcore::TableSize> table_sizes() const;

private:
  /** Rows of the operations and transactions tables, counted from the workflow (in doubles:
   *  the counts are the scenario's to choose, their product may pass 2^64). */
  struct RowCounts {
    double operations = 0;
    double groups = 0;
  };
  RowCounts row_counts() const;

  struct Channel {
    std::size_t stream;
    std::size_t reader;
    Transfer transfer;
    bool local;                       ///< publisher and subscriber share a host
    simgrid::s4u::Mailbox* mailbox;   ///< staging over the network
    simgrid::s4u::SemaphorePtr ready; ///< otherwise: the data (or its file) is ready
  };
  /** Where a publisher's file of a stream lives. */
  struct FileHome {
    simgrid::s4u::Host* host;
    simgrid::s4u::Disk* disk;
  };
  void create_storage(std::size_t s);
  /** Steps [first, ...) of a publisher rank, or transactions [first, ...) of a subscriber
   *  rank: a bounded number of them, then a successor actor takes the rest (see the .cpp). */
  void run_publisher(std::int64_t rank, std::int64_t first);
  void run_subscriber(std::size_t s, std::size_t r, std::int64_t rank, std::int64_t first, double in_dtl);
  void put_staging(std::size_t s, std::int64_t rank, std::int64_t k, Operation& op);
  void put_file(std::size_t s, std::int64_t rank, std::int64_t k, Operation& op);
  double get_staging(std::size_t s, std::size_t r, std::int64_t rank, Operation& op);
  void get_file(std::size_t s, std::size_t r, std::int64_t rank, Operation& op);
  bool over_network(const Channel& c) const
  {
    const Stream& st = w_.streams[c.stream];
    return st.engine == "staging" && st.transport == "mailbox" && !c.local;
  }

  Workflow w_;
  std::vector<Channel> channels_;
  /** [stream][publisher rank] -> channel indices (all readers). */
  std::vector<std::vector<std::vector<std::size_t>>> outgoing_;
  /** [stream][reader][subscriber rank] -> channel indices. */
  std::vector<std::vector<std::vector<std::vector<std::size_t>>>> incoming_;
  /** [stream][publisher rank] (file engine). */
  std::vector<std::vector<FileHome>> file_home_;
  std::vector<Operation> ops_;
  simcore::SimContext* ctx_ = nullptr;
  std::vector<double> sim_dtl_time_; ///< per simulation rank: time inside DTL calls
  std::vector<double> ana_dtl_time_; ///< per analysis rank of every reader
  double bytes_network_ = 0, bytes_memcpy_ = 0, bytes_ideal_ = 0;
  double bytes_written_ = 0, bytes_read_ = 0;
  double sim_end_ = 0, ana_end_ = 0;
  // Post hoc analyses wait for every publisher to finish.
  std::int64_t publishers_done_ = 0;
  simgrid::s4u::MutexPtr done_mutex_;
  simgrid::s4u::ConditionVariablePtr done_cv_;
};

} // namespace dtl
