#include "stream_engine.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <limits>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_dtl, simcore_models, "dtl: data transport layer for in situ workflows");

namespace sg4 = simgrid::s4u;

namespace dtl {

namespace {
int g_payload; // what travels in a mailbox: the model counts bytes, not contents
double now() { return sg4::Engine::get_clock(); }
} // namespace

void StreamEngine::start(simcore::SimContext& ctx)
{
  if (w_.engine == "file") {
    // Disks are created on the loaded platform: on every publisher host (local) or on the
    // storage hosts (pfs); files are spread round robin over the pfs disks.
    const Storage& st = w_.storage;
    std::vector<FileHome> pool;
    auto make_disks = [&](simgrid::s4u::Host* h) {
      std::vector<FileHome> out;
      for (std::int64_t d = 0; d < st.disks_per_host; d++) {
        auto* disk = h->create_disk("dtl-disk-" + std::to_string(d), st.read_bandwidth, st.write_bandwidth);
        disk->seal();
        out.push_back(FileHome{h, disk});
      }
      return out;
    };
    if (st.kind == "pfs") {
      for (auto* h : st.hosts)
        for (auto& fh : make_disks(h))
          pool.push_back(fh);
      for (std::int64_t r = 0; r < w_.sim.ranks; r++)
        file_home_.push_back(pool[static_cast<std::size_t>(r) % pool.size()]);
    } else {
      std::map<simgrid::s4u::Host*, std::vector<FileHome>> per_host;
      std::map<simgrid::s4u::Host*, std::size_t> next;
      for (std::int64_t r = 0; r < w_.sim.ranks; r++) {
        auto* h = w_.sim.host_of_rank[r];
        if (!per_host.count(h))
          per_host[h] = make_disks(h);
        file_home_.push_back(per_host[h][next[h]++ % per_host[h].size()]);
      }
    }
    done_mutex_ = simgrid::s4u::Mutex::create();
    done_cv_ = simgrid::s4u::ConditionVariable::create();
  }
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
  XBT_DEBUG("%s/%s: %lld publishers, %lld subscribers, %zu channels, %lld transactions", w_.transport.c_str(),
           w_.engine.c_str(), static_cast<long long>(w_.sim.ranks), static_cast<long long>(w_.ana.ranks), channels_.size(),
           static_cast<long long>(w_.transactions()));
}

void StreamEngine::run_publisher(std::int64_t rank)
{
  const double compute = static_cast<double>(w_.blocks[rank].volume()) * w_.sim.flops_per_element;
  // Reduction cost: compressing the decimated block, once per published transaction.
  const double compress = w_.reduction.compress_flops_per_byte *
                          static_cast<double>(w_.reduction.kept_elements(w_.blocks[rank]) * w_.element_size);
  for (std::int64_t step = 0; step < w_.steps; step++) {
    if (compute > 0)
      sg4::this_actor::execute(compute);
    if (step % w_.publish_every != 0)
      continue;
    const std::int64_t k = step / w_.publish_every;
    Operation op{k, 0, rank, now(), 0, 0, 0};
    if (compress > 0 && (w_.engine == "file" || w_.subscribed(k)))
      sg4::this_actor::execute(compress);
    if (w_.engine == "file")
      put_file(rank, k, op);
    else
      put_staging(rank, k, op);
    op.end = now();
    sim_dtl_time_[rank] += op.end - op.begin;
    ops_.push_back(op);
  }
  sim_end_ = std::max(sim_end_, now());
  if (done_mutex_) {
    std::unique_lock<sg4::Mutex> lock(*done_mutex_);
    publishers_done_++;
    done_cv_->notify_all();
  }
}

void StreamEngine::put_staging(std::int64_t rank, std::int64_t k, Operation& op)
{
  std::vector<sg4::CommPtr> comms;
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
}

void StreamEngine::put_file(std::int64_t rank, std::int64_t k, Operation& op)
{
  // One file per publisher and transaction: open, (send to the storage host,) write, close.
  const FileHome& home = file_home_[static_cast<std::size_t>(rank)];
  const double bytes = static_cast<double>(w_.reduction.wire_bytes(w_.blocks[rank], w_.element_size));
  op.bytes = static_cast<std::int64_t>(bytes);
  if (w_.storage.metadata_time > 0)
    sg4::this_actor::sleep_for(w_.storage.metadata_time);
  if (home.host != w_.sim.host_of_rank[rank]) {
    sg4::Comm::sendto(w_.sim.host_of_rank[rank], home.host, bytes);
    bytes_network_ += bytes;
  }
  home.disk->write(bytes);
  bytes_written_ += bytes;
  op.io_done = now();
  if (w_.storage.metadata_time > 0)
    sg4::this_actor::sleep_for(w_.storage.metadata_time);
  // The file is complete: its readers for this transaction may go.
  if (w_.subscribed(k))
    for (std::size_t ci : outgoing_[rank])
      channels_[ci].ready->release();
}

void StreamEngine::run_subscriber(std::int64_t rank)
{
  const double compute = static_cast<double>(w_.selections[rank].volume()) * w_.ana.flops_per_element;
  const double decompress = w_.reduction.decompress_flops_per_byte *
                            static_cast<double>(w_.reduction.kept_elements(w_.selections[rank]) * w_.element_size);
  if (w_.post_hoc) {
    std::unique_lock<sg4::Mutex> lock(*done_mutex_);
    while (publishers_done_ < w_.sim.ranks)
      done_cv_->wait(lock);
  }
  for (std::int64_t k = 0; k < w_.transactions(); k++) {
    if (!w_.subscribed(k))
      continue;
    Operation op{k, 1, rank, now(), 0, 0, 0};
    if (w_.engine == "file") {
      get_file(rank, op);
    } else {
      const double copy_time = get_staging(rank, op);
      if (copy_time > 0)
        sg4::this_actor::sleep_for(copy_time); // co-located pieces: one copy each, one after the other
    }
    if (decompress > 0)
      sg4::this_actor::execute(decompress);
    op.io_done = now();
    op.end = now(); // get is synchronous: end_step has nothing left to wait for
    ana_dtl_time_[rank] += op.end - op.begin;
    ops_.push_back(op);
    if (compute > 0)
      sg4::this_actor::execute(compute);
  }
  ana_end_ = std::max(ana_end_, now());
}

double StreamEngine::get_staging(std::int64_t rank, Operation& op)
{
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> sinks(incoming_[rank].size());
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
  return copy_time;
}

void StreamEngine::get_file(std::int64_t rank, Operation& op)
{
  // For each intersecting file, once written: open, read the piece, (receive it,) close.
  auto* me = w_.ana.host_of_rank[rank];
  for (std::size_t ci : incoming_[rank]) {
    Channel& c = channels_[ci];
    c.ready->acquire();
    const FileHome& home = file_home_[static_cast<std::size_t>(c.transfer.publisher)];
    const double bytes = static_cast<double>(c.transfer.bytes);
    op.bytes += c.transfer.bytes;
    if (w_.storage.metadata_time > 0)
      sg4::this_actor::sleep_for(w_.storage.metadata_time);
    home.disk->read(bytes);
    bytes_read_ += bytes;
    if (home.host != me) {
      sg4::Comm::sendto(home.host, me, bytes);
      bytes_network_ += bytes;
    }
    if (w_.storage.metadata_time > 0)
      sg4::this_actor::sleep_for(w_.storage.metadata_time);
  }
}

void StreamEngine::report(simcore::Results& results) const
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
  results.set_metric("bytes_storage_written", bytes_written_, "B");
  results.set_metric("bytes_storage_read", bytes_read_, "B");
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
