#include "staging_engine.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <limits>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_dtl, simcore_models, "dtl: data transport layer for in situ workflows");

namespace sg4 = simgrid::s4u;

namespace dtl {

namespace {
int g_payload; // what travels in a mailbox: the model counts bytes, not contents
double now() { return sg4::Engine::get_clock(); }
} // namespace

void StagingEngine::start(simcore::SimContext& ctx)
{
  outgoing_.assign(static_cast<std::size_t>(w_.sim.ranks), {});
  incoming_.assign(static_cast<std::size_t>(w_.ana.ranks), {});
  channels_.reserve(w_.plan.size());
  for (const auto& t : w_.plan) {
    Channel c{t, w_.sim.host_of_rank[t.publisher] == w_.ana.host_of_rank[t.subscriber], nullptr, nullptr};
    if (over_network(c))
      c.mailbox = sg4::Mailbox::by_name("dtl/" + std::to_string(t.publisher) + "/" + std::to_string(t.subscriber));
    else
      c.ready = sg4::Semaphore::create(0);
    outgoing_[t.publisher].push_back(channels_.size());
    incoming_[t.subscriber].push_back(channels_.size());
    channels_.push_back(c);
  }
  sim_dtl_time_.assign(static_cast<std::size_t>(w_.sim.ranks), 0);
  ana_dtl_time_.assign(static_cast<std::size_t>(w_.ana.ranks), 0);
  for (std::int64_t r = 0; r < w_.sim.ranks; r++)
    ctx.create_actor("sim-" + std::to_string(r), w_.sim.host_of_rank[r], [this, r] { run_publisher(r); });
  for (std::int64_t r = 0; r < w_.ana.ranks; r++)
    ctx.create_actor("ana-" + std::to_string(r), w_.ana.host_of_rank[r], [this, r] { run_subscriber(r); });
  XBT_DEBUG("staging/%s: %lld publishers, %lld subscribers, %zu channels, %lld transactions", w_.transport.c_str(),
           static_cast<long long>(w_.sim.ranks), static_cast<long long>(w_.ana.ranks), channels_.size(),
           static_cast<long long>(w_.transactions()));
}

void StagingEngine::run_publisher(std::int64_t rank)
{
  const double compute = static_cast<double>(w_.blocks[rank].volume()) * w_.sim.flops_per_element;
  std::vector<sg4::CommPtr> comms;
  for (std::int64_t step = 0; step < w_.steps; step++) {
    if (compute > 0)
      sg4::this_actor::execute(compute);
    if (step % w_.publish_every != 0)
      continue;
    const std::int64_t k = step / w_.publish_every;
    Operation op{k, 0, rank, now(), 0, 0, 0};
    comms.clear();
    if (w_.subscribed(k)) {
      for (std::size_t ci : outgoing_[rank]) {
        Channel& c = channels_[ci];
        op.bytes += c.transfer.bytes;
        if (over_network(c)) {
          comms.push_back(c.mailbox->put_async(&g_payload, static_cast<double>(c.transfer.bytes)));
          bytes_network_ += static_cast<double>(c.transfer.bytes);
        } else {
          c.ready->release();
        }
      }
    }
    op.io_done = now();
    // end_step: the transaction is complete when the subscribers took the data.
    sg4::Comm::wait_all(comms);
    op.end = now();
    sim_dtl_time_[rank] += op.end - op.begin;
    ops_.push_back(op);
  }
  sim_end_ = std::max(sim_end_, now());
}

void StagingEngine::run_subscriber(std::int64_t rank)
{
  const double compute = static_cast<double>(w_.selections[rank].volume()) * w_.ana.flops_per_element;
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> sinks(incoming_[rank].size());
  for (std::int64_t k = 0; k < w_.transactions(); k++) {
    if (!w_.subscribed(k))
      continue;
    Operation op{k, 1, rank, now(), 0, 0, 0};
    comms.clear();
    double copy_time = 0;
    for (std::size_t i = 0; i < incoming_[rank].size(); i++) {
      Channel& c = channels_[incoming_[rank][i]];
      op.bytes += c.transfer.bytes;
      if (over_network(c)) {
        comms.push_back(c.mailbox->get_async<void>(&sinks[i]));
      } else {
        c.ready->acquire();
        if (w_.transport == "mailbox") {
          copy_time += static_cast<double>(c.transfer.bytes) / w_.memcpy_bandwidth;
          bytes_memcpy_ += static_cast<double>(c.transfer.bytes);
        } else {
          bytes_ideal_ += static_cast<double>(c.transfer.bytes);
        }
      }
    }
    sg4::Comm::wait_all(comms);
    if (copy_time > 0)
      sg4::this_actor::sleep_for(copy_time); // co-located pieces: one copy each, one after the other
    op.io_done = now();
    op.end = now(); // get is synchronous: end_step has nothing left to wait for
    ana_dtl_time_[rank] += op.end - op.begin;
    ops_.push_back(op);
    if (compute > 0)
      sg4::this_actor::execute(compute);
  }
  ana_end_ = std::max(ana_end_, now());
}

void StagingEngine::report(simcore::Results& results) const
{
  const double makespan = std::max(sim_end_, ana_end_);
  double received = 0;
  for (const auto& op : ops_)
    if (op.side == 1)
      received += static_cast<double>(op.bytes);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v)
      s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  results.set_metric("makespan", makespan, "s");
  results.set_metric("simulation_end", sim_end_, "s");
  results.set_metric("analysis_end", ana_end_, "s");
  results.set_metric("transactions", w_.transactions());
  results.set_metric("channels", channels_.size());
  results.set_metric("bytes_received", received, "B");
  results.set_metric("bytes_network", bytes_network_, "B");
  results.set_metric("bytes_memcpy", bytes_memcpy_, "B");
  results.set_metric("bytes_storage_written", 0.0, "B");
  results.set_metric("bytes_storage_read", 0.0, "B");
  results.set_metric("simulation_dtl_time_mean", mean(sim_dtl_time_), "s");
  results.set_metric("analysis_dtl_time_mean", mean(ana_dtl_time_), "s");
  results.set_metric("throughput", makespan > 0 ? received / makespan : 0.0, "Bps");

  // Per (transaction, side): min / mean / max over ranks of the put-or-get and end times.
  struct Acc {
    double io_min = std::numeric_limits<double>::infinity(), io_sum = 0, io_max = 0;
    double end_min = std::numeric_limits<double>::infinity(), end_sum = 0, end_max = 0;
    std::int64_t n = 0;
    std::int64_t bytes = 0;
  };
  const std::int64_t nk = w_.transactions();
  std::vector<Acc> acc(static_cast<std::size_t>(2 * nk));
  for (const auto& op : ops_) {
    Acc& a = acc[static_cast<std::size_t>(2 * op.transaction + op.side)];
    const double io = op.io_done - op.begin, end = op.end - op.io_done;
    a.io_min = std::min(a.io_min, io);
    a.io_max = std::max(a.io_max, io);
    a.io_sum += io;
    a.end_min = std::min(a.end_min, end);
    a.end_max = std::max(a.end_max, end);
    a.end_sum += end;
    a.n++;
    a.bytes += op.bytes;
  }
  std::vector<std::int64_t> tk, side, ranks, bytes;
  std::vector<double> io_min, io_mean, io_max, end_min, end_mean, end_max;
  for (std::int64_t k = 0; k < nk; k++)
    for (std::int64_t s = 0; s < 2; s++) {
      const Acc& a = acc[static_cast<std::size_t>(2 * k + s)];
      if (a.n == 0)
        continue;
      tk.push_back(k);
      side.push_back(s);
      ranks.push_back(a.n);
      bytes.push_back(a.bytes);
      io_min.push_back(a.io_min);
      io_mean.push_back(a.io_sum / static_cast<double>(a.n));
      io_max.push_back(a.io_max);
      end_min.push_back(a.end_min);
      end_mean.push_back(a.end_sum / static_cast<double>(a.n));
      end_max.push_back(a.end_max);
    }
  results.add_table("transactions", "per transaction and side (0 publishers: put, 1 subscribers: get): "
                                    "min/mean/max over ranks of the put-or-get time and the end_step time")
      .add_column("transaction", "", tk)
      .add_column("side", "", side)
      .add_column("ranks", "", ranks)
      .add_column("bytes", "B", bytes)
      .add_column("io_min", "s", io_min)
      .add_column("io_mean", "s", io_mean)
      .add_column("io_max", "s", io_max)
      .add_column("end_min", "s", end_min)
      .add_column("end_mean", "s", end_mean)
      .add_column("end_max", "s", end_max);

  // One row per (transaction, rank, side), sorted so that the trace does not depend on the
  // order in which actors happened to finish.
  auto ops = ops_;
  std::sort(ops.begin(), ops.end(), [](const Operation& a, const Operation& b) {
    return std::tie(a.transaction, a.side, a.rank) < std::tie(b.transaction, b.side, b.rank);
  });
  std::vector<std::int64_t> ot, os, orank, obytes;
  std::vector<double> obegin, oio, oend;
  for (const auto& op : ops) {
    ot.push_back(op.transaction);
    os.push_back(op.side);
    orank.push_back(op.rank);
    obytes.push_back(op.bytes);
    obegin.push_back(op.begin);
    oio.push_back(op.io_done);
    oend.push_back(op.end);
  }
  results.add_table("operations", "one row per (transaction, side, rank); side 0 publisher, 1 subscriber")
      .add_column("transaction", "", ot)
      .add_column("side", "", os)
      .add_column("rank", "", orank)
      .add_column("begin", "s", obegin)
      .add_column("io_done", "s", oio)
      .add_column("end", "s", oend)
      .add_column("bytes", "B", obytes);
}

} // namespace dtl
