#include "exchange.hpp"

#include <simcore/running_stats.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Io.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <numeric>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_halo, simcore_models, "halo: halo exchange of 3D stencil codes");

namespace sg4 = simgrid::s4u;

namespace halo {

namespace {
int g_payload; // what travels in a mailbox: the model counts bytes, not contents
} // namespace

const char* to_string(Protocol p)
{
  switch (p) {
    case Protocol::Eager: return "eager";
    case Protocol::Rendezvous: return "rendezvous";
    case Protocol::SingleCopy: return "single-copy";
  }
  return "?";
}

sg4::Disk* Exchange::bus(std::int64_t rank) const { return bus_.at(s_.host_of_rank[rank]); }

void Exchange::start(simcore::SimContext& ctx)
{
  const std::int64_t ranks = s_.grid.ranks();
  // The memory bus of each node: a resource whose bandwidth concurrent copies share
  // (SimGrid's disk model gives exactly that).
  for (auto* h : s_.host_of_rank)
    if (!bus_.count(h)) {
      auto* d = h->create_disk("halo-memory-bus", s_.memory_bandwidth, s_.memory_bandwidth);
      d->seal();
      bus_[h] = d;
    }
  out_.assign(static_cast<std::size_t>(ranks), {});
  in_.assign(static_cast<std::size_t>(ranks), {});
  for (std::int64_t r = 0; r < ranks; r++) {
    for (const auto& n : neighbours(s_.grid, s_.spec, r)) {
      const int dir = (n.offset[0] + 1) * 9 + (n.offset[1] + 1) * 3 + (n.offset[2] + 1);
      const std::int64_t parts = s_.bundled ? 1 : s_.spec.variables;
      {
        Message m{r,       n.rank,  static_cast<double>(n.bytes) / static_cast<double>(parts),
                  parts,   s_.host_of_rank[r] == s_.host_of_rank[n.rank],
                  Protocol::Eager, nullptr, nullptr, nullptr};
        if (m.intra) {
          m.protocol = m.bytes <= s_.protocols.intra_eager_limit ? Protocol::Eager : Protocol::SingleCopy;
          m.posted = sg4::Semaphore::create(0);
        } else {
          m.protocol = m.bytes <= s_.protocols.inter_eager_limit ? Protocol::Eager : Protocol::Rendezvous;
          const std::string key = std::to_string(r) + "/" + std::to_string(n.rank) + "/" + std::to_string(dir);
          m.data = sg4::Mailbox::by_name("halo/d/" + key);
          if (m.protocol == Protocol::Rendezvous)
            m.control = sg4::Mailbox::by_name("halo/c/" + key);
        }
        out_[r].push_back(messages_.size());
        in_[n.rank].push_back(messages_.size());
        messages_.push_back(m);
      }
    }
  }
  comm_time_.assign(static_cast<std::size_t>(ranks), 0);
  compute_time_.assign(static_cast<std::size_t>(ranks), 0);
  end_.assign(static_cast<std::size_t>(ranks), 0);
  iteration_end_.assign(static_cast<std::size_t>(s_.iterations), 0);
  for (std::int64_t r = 0; r < ranks; r++)
    ctx.create_actor("rank-" + std::to_string(r), s_.host_of_rank[r], [this, r] { run_rank(r); });
}

void Exchange::run_rank(std::int64_t rank)
{
  const Ext ext = s_.grid.local_extent(rank);
  const double cells = static_cast<double>(ext[0] * ext[1] * ext[2]);
  double inner = 1;
  for (int d = 0; d < 3; d++)
    inner *= static_cast<double>(std::max<std::int64_t>(ext[d] - 2 * s_.spec.width, 0));
  for (std::int64_t it = 0; it < s_.iterations; it++) {
    if (s_.overlap && s_.flops_per_cell > 0) {
      // Interior cells need no halo: compute them while exchanging, then the boundary.
      auto interior = sg4::this_actor::exec_async(inner * s_.flops_per_cell);
      const double c0 = sg4::Engine::get_clock();
      exchange(rank);
      comm_time_[rank] += sg4::Engine::get_clock() - c0;
      interior->wait();
      sg4::this_actor::execute((cells - inner) * s_.flops_per_cell);
    } else {
      if (s_.flops_per_cell > 0)
        sg4::this_actor::execute(cells * s_.flops_per_cell);
      const double c0 = sg4::Engine::get_clock();
      exchange(rank);
      comm_time_[rank] += sg4::Engine::get_clock() - c0;
    }
    iteration_end_[it] = std::max(iteration_end_[it], sg4::Engine::get_clock());
  }
  compute_time_[rank] = static_cast<double>(s_.iterations) * cells * s_.flops_per_cell /
                        s_.host_of_rank[rank]->get_speed();
  end_[rank] = sg4::Engine::get_clock();
}

void Exchange::exchange(std::int64_t rank)
{
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> sinks(in_[rank].size());
  // A rank's own memory copies run one after the other on its core: one transfer of their
  // total on the node's memory bus, which the node's ranks share.
  double copy_bytes = 0;
  // Phase 1: eager messages and rendezvous requests go out; intra-node eager copies into the
  // shared buffer, single-copy buffers are exposed.
  for (std::size_t mi : out_[rank]) {
    Message& m = messages_[mi];
    if (m.intra) {
      if (m.protocol == Protocol::Eager)
        copy_bytes += m.total();
    } else if (m.protocol == Protocol::Eager) {
      comms.push_back(m.data->put_async(&g_payload, m.total()));
    } else {
      comms.push_back(m.control->put_async(&g_payload, s_.protocols.control_bytes * static_cast<double>(m.parts)));
    }
  }
  for (std::size_t i = 0; i < in_[rank].size(); i++) {
    Message& m = messages_[in_[rank][i]];
    if (m.intra)
      continue;
    comms.push_back(m.protocol == Protocol::Eager ? m.data->get_async<void>(&sinks[i])
                                                  : m.control->get_async<void>(&sinks[i]));
  }
  sg4::IoPtr copy = copy_bytes > 0 ? bus(rank)->read_async(copy_bytes) : nullptr;
  sg4::Comm::wait_all(comms);
  if (copy)
    copy->wait();
  for (std::size_t mi : out_[rank])
    if (messages_[mi].intra)
      messages_[mi].posted->release();
  // Phase 2: rendezvous answers.
  comms.clear();
  for (std::size_t i = 0; i < in_[rank].size(); i++) {
    Message& m = messages_[in_[rank][i]];
    if (m.protocol == Protocol::Rendezvous)
      comms.push_back(m.control->put_async(&g_payload, s_.protocols.control_bytes * static_cast<double>(m.parts)));
  }
  void* answer = nullptr;
  for (std::size_t mi : out_[rank]) {
    Message& m = messages_[mi];
    if (m.protocol == Protocol::Rendezvous)
      comms.push_back(m.control->get_async<void>(&answer));
  }
  sg4::Comm::wait_all(comms);
  // Phase 3: rendezvous data; intra-node copies out of the shared buffer (eager) or straight
  // from the sender's buffer (single copy).
  comms.clear();
  copy_bytes = 0;
  for (std::size_t mi : out_[rank]) {
    Message& m = messages_[mi];
    if (m.protocol == Protocol::Rendezvous)
      comms.push_back(m.data->put_async(&g_payload, m.total()));
  }
  bool single_copy = false;
  for (std::size_t i = 0; i < in_[rank].size(); i++) {
    Message& m = messages_[in_[rank][i]];
    if (m.protocol == Protocol::Rendezvous) {
      comms.push_back(m.data->get_async<void>(&sinks[i]));
    } else if (m.intra) {
      m.posted->acquire();
      single_copy = single_copy || m.protocol == Protocol::SingleCopy;
    }
  }
  if (single_copy && s_.protocols.single_copy_startup > 0)
    sg4::this_actor::sleep_for(s_.protocols.single_copy_startup);
  for (std::size_t mi : in_[rank])
    if (messages_[mi].intra)
      copy_bytes += messages_[mi].total();
  copy = copy_bytes > 0 ? bus(rank)->read_async(copy_bytes) : nullptr;
  sg4::Comm::wait_all(comms);
  if (copy)
    copy->wait();
}

void Exchange::report(simcore::Results& results) const
{
  const double makespan = *std::max_element(end_.begin(), end_.end());
  double intra_bytes = 0, inter_bytes = 0;
  std::int64_t counts[2][3] = {{0, 0, 0}, {0, 0, 0}};
  std::int64_t message_count = 0;
  for (const auto& m : messages_) {
    (m.intra ? intra_bytes : inter_bytes) += m.total();
    counts[m.intra ? 1 : 0][static_cast<int>(m.protocol)] += m.parts;
    message_count += m.parts;
  }
  const double its = static_cast<double>(s_.iterations);
  const auto comm = simcore::stats_of(comm_time_);
  results.set_metric("makespan", makespan, "s");
  results.set_metric("iteration_time", makespan / its, "s");
  results.set_metric("ranks", s_.grid.ranks());
  results.set_metric("messages_per_iteration", message_count);
  results.set_metric("intra_bytes_per_iteration", intra_bytes, "B");
  results.set_metric("inter_bytes_per_iteration", inter_bytes, "B");
  results.set_metric("communication_time_mean", comm.mean() / its, "s");
  results.set_metric("communication_time_max", comm.max() / its, "s");
  results.set_metric("compute_time_mean", simcore::stats_of(compute_time_).mean() / its, "s");
  const char* kinds[2] = {"inter", "intra"};
  for (int intra = 0; intra < 2; intra++)
    for (int p = 0; p < 3; p++)
      if (counts[intra][p] > 0)
        results.set_metric(std::string(kinds[intra]) + "_" + to_string(static_cast<Protocol>(p)) + "_messages",
                           counts[intra][p]);

  std::vector<std::int64_t> iterations(static_cast<std::size_t>(s_.iterations)), ranks(end_.size());
  std::iota(iterations.begin(), iterations.end(), 0);
  std::iota(ranks.begin(), ranks.end(), 0);
  results.add_table("iterations", "when the last rank finished each iteration")
      .add_column("iteration", "", iterations)
      .add_column("end", "s", iteration_end_);
  results.add_table("ranks", "per rank: time in the exchange, time computing, end")
      .add_column("rank", "", ranks)
      .add_column("communication_time", "s", comm_time_)
      .add_column("compute_time", "s", compute_time_)
      .add_column("end", "s", end_);
}

} // namespace halo
