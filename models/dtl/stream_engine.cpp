#include "stream_engine.hpp"

#include <simcore/running_stats.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_dtl, simcore_models, "dtl: data transport layer for in situ workflows");

namespace sg4 = simgrid::s4u;

namespace dtl {

namespace {
int g_payload; // what travels in a mailbox: the model counts bytes, not contents
} // namespace

void StreamEngine::create_storage(std::size_t s)
{
  // Disks are created on the loaded platform: on every publisher host (local) or on the
  // storage hosts (pfs); a stream's files go round robin over its disks.
  const Storage& st = w_.streams[s].storage;
  auto make_disks = [&](simgrid::s4u::Host* h) {
    std::vector<FileHome> out;
    for (std::int64_t d = 0; d < st.disks_per_host; d++) {
      auto* disk = h->create_disk("dtl-" + w_.streams[s].name + "-disk-" + std::to_string(d), st.read_bandwidth,
                                  st.write_bandwidth);
      disk->seal();
      out.push_back(FileHome{h, disk});
    }
    return out;
  };
  auto& homes = file_home_[s];
  if (st.kind == "pfs") {
    std::vector<FileHome> pool;
    for (auto* h : st.hosts)
      for (auto& fh : make_disks(h))
        pool.push_back(fh);
    for (std::int64_t r = 0; r < w_.sim.ranks; r++)
      homes.push_back(pool[static_cast<std::size_t>(r) % pool.size()]);
  } else {
    std::map<simgrid::s4u::Host*, std::vector<FileHome>> per_host;
    std::map<simgrid::s4u::Host*, std::size_t> next;
    for (std::int64_t r = 0; r < w_.sim.ranks; r++) {
      auto* h = w_.sim.host_of_rank[r];
      if (!per_host.count(h))
        per_host[h] = make_disks(h);
      homes.push_back(per_host[h][next[h]++ % per_host[h].size()]);
    }
  }
}

void StreamEngine::start(simcore::SimContext& ctx)
{
  ctx_ = &ctx;
  const std::size_t ns = w_.streams.size();
  outgoing_.assign(ns, std::vector<std::vector<std::size_t>>(static_cast<std::size_t>(w_.sim.ranks)));
  incoming_.resize(ns);
  file_home_.resize(ns);
  bool post_hoc = false;
  std::size_t ana_ranks = 0;
  for (std::size_t s = 0; s < ns; s++) {
    const Stream& st = w_.streams[s];
    if (st.engine == "file")
      create_storage(s);
    incoming_[s].resize(st.readers.size());
    for (std::size_t r = 0; r < st.readers.size(); r++) {
      const Reader& rd = st.readers[r];
      post_hoc = post_hoc || rd.post_hoc;
      ana_ranks += static_cast<std::size_t>(rd.app.ranks);
      incoming_[s][r].resize(static_cast<std::size_t>(rd.app.ranks));
      for (std::size_t v = 0; v < rd.vars.size(); v++)
      for (const auto& t : rd.vars[v].plan) {
        Channel c{s, r, t, w_.sim.host_of_rank[t.publisher] == rd.app.host_of_rank[t.subscriber], nullptr, nullptr};
        if (over_network(c))
          c.mailbox = sg4::Mailbox::by_name("dtl/" + std::to_string(s) + "/" + std::to_string(v) + "/" +
                                            std::to_string(r) + "/" + std::to_string(t.publisher) + "/" +
                                            std::to_string(t.subscriber));
        else
          c.ready = sg4::Semaphore::create(0);
        outgoing_[s][t.publisher].push_back(channels_.size());
        incoming_[s][r][t.subscriber].push_back(channels_.size());
        channels_.push_back(c);
      }
    }
  }
  // The routes the streams send over: publisher to subscriber (staging), or publisher to its
  // file's storage host and that host to the file's readers (file).
  std::set<std::pair<sg4::Host*, sg4::Host*>> routes;
  for (const Channel& c : channels_) {
    sg4::Host* from = w_.sim.host_of_rank[c.transfer.publisher];
    sg4::Host* to = w_.streams[c.stream].readers[c.reader].app.host_of_rank[c.transfer.subscriber];
    if (w_.streams[c.stream].engine == "file") {
      sg4::Host* home = file_home_[c.stream][static_cast<std::size_t>(c.transfer.publisher)].host;
      routes.emplace(from, home);
      routes.emplace(home, to);
    } else {
      routes.emplace(from, to);
    }
  }
  ctx.check_routes({routes.begin(), routes.end()});
  if (post_hoc) {
    done_mutex_ = sg4::Mutex::create();
    done_cv_ = sg4::ConditionVariable::create();
  }
  sim_dtl_time_.assign(static_cast<std::size_t>(w_.sim.ranks), 0);
  ana_dtl_time_.reserve(ana_ranks);
  for (std::int64_t r = 0; r < w_.sim.ranks; r++)
    ctx.create_actor("sim-" + std::to_string(r), w_.sim.host_of_rank[r], [this, r] { run_publisher(r, 0); });
  for (std::size_t s = 0; s < ns; s++)
    for (std::size_t r = 0; r < w_.streams[s].readers.size(); r++) {
      const App& app = w_.streams[s].readers[r].app;
      for (std::int64_t rank = 0; rank < app.ranks; rank++)
        ctx.create_actor(app.name + "-" + std::to_string(rank), app.host_of_rank[rank],
                         [this, s, r, rank] { run_subscriber(s, r, rank, 0, 0.0); });
    }
  XBT_DEBUG("%zu streams, %lld publishers, %zu subscriber ranks, %zu channels", ns,
            static_cast<long long>(w_.sim.ranks), ana_ranks, channels_.size());
}

namespace {
/** Steps (publishers) or transactions (subscribers) one actor runs before a successor takes
 *  over. SimGrid 3.32 keeps every I/O an actor starts (a file's write or read) in the actor's
 *  list of activities for good, and each of its communications searches that list as it
 *  ends: one actor for a whole run of the file engine took time quadratic in the steps
 *  (file_pfs_two_clusters: 40 steps 1.2 s, 160 steps 11.8 s). A successor starts with an
 *  empty list, at the same simulated time. */
constexpr std::int64_t kStepsPerActor = 32;
} // namespace

void StreamEngine::run_publisher(std::int64_t rank, std::int64_t first)
{
  double compute = 0;
  for (const auto& st : w_.streams)
    for (const auto& var : st.variables)
      compute += static_cast<double>(var.blocks[rank].volume()) * w_.sim.flops_per_element;
  const std::int64_t last = std::min(w_.steps, first + kStepsPerActor);
  for (std::int64_t step = first; step < last; step++) {
    if (compute > 0)
      sg4::this_actor::execute(compute);
    for (std::size_t s = 0; s < w_.streams.size(); s++) {
      const Stream& st = w_.streams[s];
      if (step % st.publish_every != 0)
        continue;
      const std::int64_t k = step / st.publish_every;
      bool wanted = st.engine == "file"; // a file is written whether or not someone reads it now
      for (const auto& rd : st.readers)
        wanted = wanted || rd.reads(k);
      Operation op{static_cast<std::int64_t>(s), -1, k, 0, rank, sg4::Engine::get_clock(), 0, 0, 0};
      // Reduction cost: compressing the decimated block.
      double kept_bytes = 0;
      for (const auto& var : st.variables)
        kept_bytes += static_cast<double>(st.reduction.kept_elements(var.blocks[rank]) * var.element_size);
      const double compress = st.reduction.compress_flops_per_byte * kept_bytes;
      if (compress > 0 && wanted)
        sg4::this_actor::execute(compress);
      if (st.engine == "file")
        put_file(s, rank, k, op);
      else
        put_staging(s, rank, k, op);
      op.end = sg4::Engine::get_clock();
      sim_dtl_time_[rank] += op.end - op.begin;
      ops_.push_back(op);
    }
  }
  if (last < w_.steps) {
    ctx_->create_actor(sg4::this_actor::get_name(), sg4::this_actor::get_host(),
                       [this, rank, last] { run_publisher(rank, last); });
    return;
  }
  sim_end_ = std::max(sim_end_, sg4::Engine::get_clock());
  if (done_mutex_) {
    std::unique_lock<sg4::Mutex> lock(*done_mutex_);
    publishers_done_++;
    done_cv_->notify_all();
  }
}

void StreamEngine::put_staging(std::size_t s, std::int64_t rank, std::int64_t k, Operation& op)
{
  std::vector<sg4::CommPtr> comms;
  for (std::size_t ci : outgoing_[s][rank]) {
    Channel& c = channels_[ci];
    if (!w_.streams[s].readers[c.reader].reads(k))
      continue;
    op.bytes += c.transfer.bytes;
    if (over_network(c)) {
      comms.push_back(c.mailbox->put_async(&g_payload, static_cast<double>(c.transfer.bytes)));
      bytes_network_ += static_cast<double>(c.transfer.bytes);
    } else {
      c.ready->release();
    }
  }
  op.io_done = sg4::Engine::get_clock();
  // end_step: the transaction is complete when the subscribers took the data.
  sg4::Comm::wait_all(comms);
}

void StreamEngine::put_file(std::size_t s, std::int64_t rank, std::int64_t k, Operation& op)
{
  // One file per publisher, stream and transaction: open, (send to the storage host,) write, close.
  const Stream& st = w_.streams[s];
  const FileHome& home = file_home_[s][static_cast<std::size_t>(rank)];
  double bytes = 0; // one file holds every variable of the transaction
  for (const auto& var : st.variables)
    bytes += static_cast<double>(st.reduction.wire_bytes(var.blocks[rank], var.element_size));
  op.bytes = static_cast<std::int64_t>(bytes);
  if (st.storage.metadata_time > 0)
    sg4::this_actor::sleep_for(st.storage.metadata_time);
  if (home.host != w_.sim.host_of_rank[rank]) {
    sg4::Comm::sendto(w_.sim.host_of_rank[rank], home.host, bytes);
    bytes_network_ += bytes;
  }
  home.disk->write(bytes);
  bytes_written_ += bytes;
  op.io_done = sg4::Engine::get_clock();
  if (st.storage.metadata_time > 0)
    sg4::this_actor::sleep_for(st.storage.metadata_time);
  // The file is complete: its readers for this transaction may go.
  for (std::size_t ci : outgoing_[s][rank])
    if (st.readers[channels_[ci].reader].reads(k))
      channels_[ci].ready->release();
}

StreamEngine::RowCounts StreamEngine::row_counts() const
{
  RowCounts rows; // groups: rows of the transactions table
  for (const auto& st : w_.streams) {
    const std::int64_t n = st.transactions(w_.steps);
    rows.operations += static_cast<double>(n) * static_cast<double>(w_.sim.ranks);
    rows.groups += static_cast<double>(n);
    for (const auto& rd : st.readers) {
      const std::int64_t last = rd.last < 0 ? n - 1 : std::min(rd.last, n - 1);
      const double read = last >= rd.first ? static_cast<double>((last - rd.first) / rd.every + 1) : 0;
      rows.operations += read * static_cast<double>(rd.app.ranks);
      rows.groups += read;
    }
  }
  return rows;
}

std::vector<simcore::TableSize> StreamEngine::table_sizes() const
{
  const auto whole = [](double rows) { return rows >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(rows); };
  const RowCounts rows = row_counts();
  std::uint64_t readers = 0;
  for (const auto& st : w_.streams)
    readers += st.readers.size();
  return {{"transactions", whole(rows.groups), 12}, {"operations", whole(rows.operations), 9}, {"readers", readers, 5}};
}

simcore::MemoryNeed StreamEngine::memory_need() const
{
  const auto [operations, groups] = row_counts();
  // Each operation: its record, report()'s sorted copy and its row of the operations table
  // (9 columns of 8 B). Each group: its row of the transactions table (12 columns).
  const double per_operation = 2 * sizeof(Operation) + 9 * 8, per_group = 12 * 8;
  const double bytes = operations * per_operation + groups * per_group;
  char what[200];
  std::snprintf(what, sizeof what, "%.0f operations x %.0f B and %.0f transaction rows x %.0f B", operations,
                per_operation, groups, per_group);
  return {bytes >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(bytes), what};
}

void StreamEngine::run_subscriber(std::size_t s, std::size_t r, std::int64_t rank, std::int64_t first,
                                  double in_dtl)
{
  const Stream& st = w_.streams[s];
  const Reader& rd = st.readers[r];
  double elements = 0, kept_bytes = 0;
  for (std::size_t v = 0; v < rd.vars.size(); v++) {
    elements += static_cast<double>(rd.vars[v].selections[rank].volume());
    kept_bytes += static_cast<double>(st.reduction.kept_elements(rd.vars[v].selections[rank]) *
                                      st.variables[v].element_size);
  }
  const double compute = elements * rd.app.flops_per_element;
  const double decompress = st.reduction.decompress_flops_per_byte * kept_bytes;
  if (rd.post_hoc && first == 0) {
    std::unique_lock<sg4::Mutex> lock(*done_mutex_);
    while (publishers_done_ < w_.sim.ranks)
      done_cv_->wait(lock);
  }
  std::int64_t read = 0; // transactions read by this actor
  for (std::int64_t k = first; k < st.transactions(w_.steps); k++) {
    if (!rd.reads(k))
      continue;
    if (read++ == kStepsPerActor) {
      ctx_->create_actor(sg4::this_actor::get_name(), sg4::this_actor::get_host(),
                         [this, s, r, rank, k, in_dtl] { run_subscriber(s, r, rank, k, in_dtl); });
      return;
    }
    Operation op{static_cast<std::int64_t>(s), static_cast<std::int64_t>(r), k, 1, rank, sg4::Engine::get_clock(), 0, 0, 0};
    if (st.engine == "file") {
      get_file(s, r, rank, op);
    } else {
      const double copy_time = get_staging(s, r, rank, op);
      if (copy_time > 0)
        sg4::this_actor::sleep_for(copy_time); // co-located pieces: one copy each, one after the other
    }
    if (decompress > 0)
      sg4::this_actor::execute(decompress);
    op.io_done = sg4::Engine::get_clock();
    op.end = sg4::Engine::get_clock(); // get is synchronous: end_step has nothing left to wait for
    in_dtl += op.end - op.begin;
    ops_.push_back(op);
    if (compute > 0)
      sg4::this_actor::execute(compute);
  }
  ana_dtl_time_.push_back(in_dtl);
  ana_end_ = std::max(ana_end_, sg4::Engine::get_clock());
}

double StreamEngine::get_staging(std::size_t s, std::size_t r, std::int64_t rank, Operation& op)
{
  const auto& in = incoming_[s][r][static_cast<std::size_t>(rank)];
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> sinks(in.size());
  double copy_time = 0;
  for (std::size_t i = 0; i < in.size(); i++) {
    Channel& c = channels_[in[i]];
    op.bytes += c.transfer.bytes;
    if (over_network(c)) {
      comms.push_back(c.mailbox->get_async<void>(&sinks[i]));
    } else {
      c.ready->acquire();
      if (w_.streams[s].transport == "mailbox") {
        copy_time += static_cast<double>(c.transfer.bytes) / w_.memcpy_bandwidth_on(sg4::this_actor::get_host());
        bytes_memcpy_ += static_cast<double>(c.transfer.bytes);
      } else {
        bytes_ideal_ += static_cast<double>(c.transfer.bytes);
      }
    }
  }
  sg4::Comm::wait_all(comms);
  return copy_time;
}

void StreamEngine::get_file(std::size_t s, std::size_t r, std::int64_t rank, Operation& op)
{
  // For each intersecting file, once written: open, read the piece, (receive it,) close.
  const Stream& st = w_.streams[s];
  auto* me = st.readers[r].app.host_of_rank[rank];
  for (std::size_t ci : incoming_[s][r][static_cast<std::size_t>(rank)]) {
    Channel& c = channels_[ci];
    c.ready->acquire();
    const FileHome& home = file_home_[s][static_cast<std::size_t>(c.transfer.publisher)];
    const double bytes = static_cast<double>(c.transfer.bytes);
    op.bytes += c.transfer.bytes;
    if (st.storage.metadata_time > 0)
      sg4::this_actor::sleep_for(st.storage.metadata_time);
    home.disk->read(bytes);
    bytes_read_ += bytes;
    if (home.host != me) {
      sg4::Comm::sendto(home.host, me, bytes);
      bytes_network_ += bytes;
    }
    if (st.storage.metadata_time > 0)
      sg4::this_actor::sleep_for(st.storage.metadata_time);
  }
}

void StreamEngine::report(simcore::Results& results) const
{
  const double makespan = std::max(sim_end_, ana_end_);
  double received = 0;
  for (const auto& op : ops_)
    if (op.side == 1)
      received += static_cast<double>(op.bytes);
  std::int64_t transactions = 0;
  for (const auto& st : w_.streams)
    transactions += st.transactions(w_.steps);
  results.set_metric("makespan", makespan, "s");
  results.set_metric("simulation_end", sim_end_, "s");
  results.set_metric("analysis_end", ana_end_, "s");
  results.set_metric("streams", w_.streams.size());
  results.set_metric("transactions", transactions);
  results.set_metric("channels", channels_.size());
  results.set_metric("bytes_received", received, "B");
  results.set_metric("bytes_network", bytes_network_, "B");
  results.set_metric("bytes_memcpy", bytes_memcpy_, "B");
  results.set_metric("bytes_storage_written", bytes_written_, "B");
  results.set_metric("bytes_storage_read", bytes_read_, "B");
  results.set_metric("simulation_dtl_time_mean", simcore::stats_of(sim_dtl_time_).mean(), "s");
  results.set_metric("analysis_dtl_time_mean", simcore::stats_of(ana_dtl_time_).mean(), "s");
  results.set_metric("throughput", makespan > 0 ? received / makespan : 0.0, "Bps");

  // Per (stream, transaction, side, reader): min / mean / max over ranks of the put-or-get
  // and end_step times.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>; // stream, transaction, side, reader
  struct Acc {
    simcore::RunningStats io, end;
    std::int64_t bytes = 0;
  };
  std::map<Key, Acc> acc;
  for (const auto& op : ops_) {
    Acc& a = acc[Key{op.stream, op.transaction, op.side, op.reader}];
    a.io.add(op.io_done - op.begin);
    a.end.add(op.end - op.io_done);
    a.bytes += op.bytes;
  }
  using Row = std::pair<const Key, Acc>;
  results.add_table("transactions", "per stream, transaction and side (0 publishers: put, 1 subscribers of reader "
                                    "app 'reader': get): min/mean/max over ranks of the put-or-get time and the "
                                    "end_step time")
      .add_column("stream", "", acc, [](const Row& r) { return std::get<0>(r.first); })
      .add_column("reader", "", acc, [](const Row& r) { return std::get<3>(r.first); })
      .add_column("transaction", "", acc, [](const Row& r) { return std::get<1>(r.first); })
      .add_column("side", "", acc, [](const Row& r) { return std::get<2>(r.first); })
      .add_column("ranks", "", acc, [](const Row& r) { return r.second.io.count(); })
      .add_column("bytes", "B", acc, [](const Row& r) { return r.second.bytes; })
      .add_column("io_min", "s", acc, [](const Row& r) { return r.second.io.min(); })
      .add_column("io_mean", "s", acc, [](const Row& r) { return r.second.io.mean(); })
      .add_column("io_max", "s", acc, [](const Row& r) { return r.second.io.max(); })
      .add_column("end_min", "s", acc, [](const Row& r) { return r.second.end.min(); })
      .add_column("end_mean", "s", acc, [](const Row& r) { return r.second.end.mean(); })
      .add_column("end_max", "s", acc, [](const Row& r) { return r.second.end.max(); });

  // One row per (stream, transaction, side, reader, rank), sorted so that the trace does not
  // depend on the order in which actors happened to finish.
  auto ops = ops_;
  std::sort(ops.begin(), ops.end(), [](const Operation& a, const Operation& b) {
    return std::tie(a.stream, a.transaction, a.side, a.reader, a.rank) <
           std::tie(b.stream, b.transaction, b.side, b.reader, b.rank);
  });
  using Op = Operation;
  results.add_table("operations", "one row per (stream, transaction, side, reader, rank); side 0 publisher "
                                  "(reader -1), 1 subscriber")
      .add_column("stream", "", ops, [](const Op& o) { return o.stream; })
      .add_column("reader", "", ops, [](const Op& o) { return o.reader; })
      .add_column("transaction", "", ops, [](const Op& o) { return o.transaction; })
      .add_column("side", "", ops, [](const Op& o) { return o.side; })
      .add_column("rank", "", ops, [](const Op& o) { return o.rank; })
      .add_column("begin", "s", ops, [](const Op& o) { return o.begin; })
      .add_column("io_done", "s", ops, [](const Op& o) { return o.io_done; })
      .add_column("end", "s", ops, [](const Op& o) { return o.end; })
      .add_column("bytes", "B", ops, [](const Op& o) { return o.bytes; });

  // Per reader app: what it received and when it finished.
  struct ReaderRow {
    std::int64_t stream, reader, ranks;
    double bytes = 0, last_end = 0;
  };
  std::vector<ReaderRow> readers;
  for (std::size_t si = 0; si < w_.streams.size(); si++)
    for (std::size_t ri = 0; ri < w_.streams[si].readers.size(); ri++)
      readers.push_back(ReaderRow{static_cast<std::int64_t>(si), static_cast<std::int64_t>(ri),
                                  w_.streams[si].readers[ri].app.ranks});
  for (const auto& op : ops_)
    if (op.side == 1) {
      auto& row = *std::find_if(readers.begin(), readers.end(), [&op](const ReaderRow& r) {
        return r.stream == op.stream && r.reader == op.reader;
      });
      row.bytes += static_cast<double>(op.bytes);
      row.last_end = std::max(row.last_end, op.end);
    }
  using RR = ReaderRow;
  results.add_table("readers", "per stream and reader app: ranks, bytes received, end of its last get")
      .add_column("stream", "", readers, [](const RR& r) { return r.stream; })
      .add_column("reader", "", readers, [](const RR& r) { return r.reader; })
      .add_column("ranks", "", readers, [](const RR& r) { return r.ranks; })
      .add_column("bytes_received", "B", readers, [](const RR& r) { return r.bytes; })
      .add_column("last_get_end", "s", readers, [](const RR& r) { return r.last_end; });
}

} // namespace dtl
