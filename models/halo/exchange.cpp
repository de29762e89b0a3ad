#include "exchange.hpp"

#include <simcore/running_stats.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Io.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <set>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(model_halo, simcore_models, "halo: halo exchange of 3D stencil codes");

namespace sg4 = simgrid::s4u;

namespace halo {

namespace {

int g_payload; // what travels in a mailbox: the model counts bytes, not contents

constexpr std::size_t kNoLane = std::numeric_limits<std::size_t>::max(); // a send its agent posts itself

/** A number of SimGrid's configuration: a network correction factor (SimGrid 3.32 keeps
 *  `network/latency-factor` and `network/bandwidth-factor` as plain numbers; SMPI's
 *  size-dependent factors live in other settings and are not seen here; a profile's
 *  network_factors, which replace both, are), or the implicit loopback's latency and bandwidth. */
double network_config(const char* name, double otherwise = 1)
{
  try {
    return simgrid::config::get_value<double>(name);
  } catch (const std::exception&) {
    return otherwise;
  }
}

} // namespace

RouteView Exchange::route(sg4::Host* a, sg4::Host* b, double bytes, bool loopback_only) const
{
  std::vector<sg4::Link*> links;
  double latency = 0;
  // A zone of one host without routes (single_node.xml) has its route table only once the
  // platform is sealed (asked before, SimGrid crashes); sealing twice does nothing.
  if (a == b)
    sg4::Engine::get_instance()->seal_platform();
  a->route_to(b, links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (auto* l : links)
    bandwidth = std::min(bandwidth, l->get_bandwidth());
  if (a == b && links.empty()) { // SimGrid's implicit loopback, which route_to leaves out
    latency = network_config("network/loopback-lat", 0);
    bandwidth = network_config("network/loopback-bw", 10e9);
  }
  if (loopback_only && !simcore::NetworkFactors::is_intra_node(a, b, links))
    return {0, std::numeric_limits<double>::infinity()};
  if (factors_ && !factors_->empty()) { // the profile's factors by placement, as the simulation applies them
    const bool intra = simcore::NetworkFactors::is_intra_node(a, b, links);
    return {latency * factors_->latency_factor(bytes, intra), bandwidth * factors_->bandwidth_factor(bytes, intra)};
  }
  return {latency * network_config("network/latency-factor"), bandwidth * network_config("network/bandwidth-factor")};
}

/* A wait shorter than SimGrid's timing precision is no wait (SimGrid would skip it too, with a
 * message per actor): such remainders are rounding, a copy that ended a hair early. */
void Exchange::pause(double seconds) const
{
  if (seconds >= precision_)
    sg4::this_actor::sleep_for(seconds);
}

namespace {
/** Lane actors alive at once, all agents together, at most. Each has a stack of its own: two
 *  memory mappings with its guard page, of the 65,530 Linux allows a process by default. */
constexpr std::size_t kLaneActors = 12288;

/** The transfers a lane takes: `per_actor`, or more where an agent's share of kLaneActors
 *  would not hold its lanes (`transfers`: its transfers, each counted once per lane it holds a
 *  place in at one time). */
std::size_t lane_size(std::size_t per_actor, std::size_t transfers, std::size_t agents)
{
  const std::size_t lanes = std::max<std::size_t>(kLaneActors / std::max<std::size_t>(agents, 1), 1);
  return std::max(per_actor, (transfers + lanes - 1) / lanes);
}
} // namespace

void Exchange::start(simcore::SimContext& ctx)
{
  ctx_ = &ctx;
  precision_ = network_config("surf/precision", 1e-9);
  factors_ = &ctx.calibration().network_factors();
  // The memory bus of each node: a resource whose bandwidth concurrent copies share
  // (SimGrid's disk model gives exactly that); made before the plan, which may seal the
  // platform.
  if (s_.mode == Mode::Detailed)
    for (auto* h : s_.host_of_rank)
      if (!bus_.count(h)) {
        const double bw = s_.memory_bandwidth_on(h);
        auto* d = h->create_disk("halo-memory-bus", bw, bw);
        d->seal();
        bus_[h] = d;
      }
  // The plan asks SimGrid for the route of every pair of neighbours on two hosts.
  std::set<std::pair<sg4::Host*, sg4::Host*>> routes;
  for (std::int64_t r = 0; r < s_.grid.ranks(); r++)
    for (const auto& n : neighbours(s_.grid, s_.spec, r))
      routes.emplace(s_.host_of_rank[static_cast<std::size_t>(r)], s_.host_of_rank[static_cast<std::size_t>(n.rank)]);
  ctx.check_routes({routes.begin(), routes.end()});
  plan_ = make_plan(s_, [this](sg4::Host* a, sg4::Host* b, double bytes, bool loopback_only) {
    return route(a, b, bytes, loopback_only);
  });
  channels_.resize(plan_.transfers.size());
  for (std::size_t i = 0; i < plan_.transfers.size(); i++) {
    const Transfer& t = plan_.transfers[i];
    Channels& c = channels_[i];
    if (s_.mode == Mode::Smpi || !t.intra)
      c.data = sg4::Mailbox::by_name("halo/d/" + std::to_string(i));
    if (s_.mode == Mode::Detailed && (t.protocol == Protocol::Rendezvous || t.protocol == Protocol::Pipelined))
      c.control = sg4::Mailbox::by_name("halo/c/" + std::to_string(i));
    if (s_.mode == Mode::Detailed && t.intra && s_.granularity == Granularity::Node)
      c.posted = sg4::Semaphore::create(0);
  }
  const auto agents = plan_.host.size();
  comm_time_.assign(agents, 0);
  end_.assign(agents, 0);
  iteration_end_.assign(static_cast<std::size_t>(s_.iterations), 0);
  iteration_comm_max_.assign(static_cast<std::size_t>(s_.iterations), 0);
  copier_go_.assign(agents, nullptr);
  copier_done_.assign(agents, nullptr);
  posted_to_.assign(agents, {});
  posted_count_.assign(agents, {});
  posts_.assign(plan_.transfers.size(), 0);
  copier_from_.assign(agents, 0);
  // An agent posts its sends in neighbour order; a node in its ranks' time order (an early
  // transfer's at its first message), at one time its intra-node eager copies after its
  // network sends.
  post_order_ = plan_.out;
  if (s_.granularity == Granularity::Node)
    for (auto& posts : post_order_)
      std::stable_sort(posts.begin(), posts.end(), [this](std::size_t x, std::size_t y) {
        const Transfer &tx = plan_.transfers[x], &ty = plan_.transfers[y];
        const bool cx = tx.intra && tx.protocol == Protocol::Eager, cy = ty.intra && ty.protocol == Protocol::Eager;
        return std::make_pair(tx.post_delay, cx) < std::make_pair(ty.post_delay, cy);
      });
  receive_lanes_.assign(agents, {});
  send_lanes_.assign(agents, {});
  send_lane_of_.assign(plan_.transfers.size(), kNoLane);
  lanes_posted_.assign(agents, nullptr);
  agent_activities_.assign(agents, 0);
  lanes_done_.assign(agents, nullptr);
  // Lanes. SimGrid 3.32 keeps the activities an actor started in a list (its I/Os for good,
  // see kIterationsPerActor), walks the lists of both ends each time a communication ends,
  // and Comm::wait_any walks all it waits for: an actor with n transfers in progress spends
  // time quadratic in n. Unbundled variables with gaps make many (128 ranks, 4^3 cells, 40
  // variables, 27-point: 1,440 network transfers a rank, one iteration took 79 s). An agent
  // with more than `transfers_per_actor` hands them to lanes, actors of its own for one
  // iteration that post and progress that many each (9.5 s there, results identical).
  if (s_.mode == Mode::Detailed)
    for (std::size_t a = 0; a < agents; a++) {
      // Its network receives, and its eager network sends (which need nothing once posted
      // but their end) in its posting order, in lanes of consecutive transfers.
      std::vector<std::size_t> in, out;
      for (std::size_t ti : plan_.in[a])
        if (!plan_.transfers[ti].intra)
          in.push_back(ti);
      for (std::size_t ti : post_order_[a])
        if (!plan_.transfers[ti].intra && plan_.transfers[ti].protocol == Protocol::Eager)
          out.push_back(ti);
      const std::size_t per_lane = lane_size(s_.transfers_per_actor, in.size() + out.size(), agents);
      auto split = [&](const std::vector<std::size_t>& transfers, std::vector<Lane>& lanes, bool sends) {
        if (transfers.size() <= per_lane)
          return;
        for (std::size_t i = 0; i < transfers.size(); i++) {
          if (i % per_lane == 0)
            lanes.push_back({{}, sends ? sg4::Semaphore::create(0) : nullptr});
          lanes.back().transfers.push_back(transfers[i]);
          if (sends)
            send_lane_of_[transfers[i]] = lanes.size() - 1;
        }
      };
      split(in, receive_lanes_[a], false);
      split(out, send_lanes_[a], true);
      if (!receive_lanes_[a].empty() || !send_lanes_[a].empty()) {
        lanes_posted_[a] = sg4::Semaphore::create(0);
        lanes_done_[a] = sg4::Semaphore::create(0);
      }
      // The activities it starts an iteration, at most: a wait for its gaps per send, a copy
      // in and its least time per intra-node eager one, up to three per network transfer it
      // keeps (NIC reads and writes, copies out), its lanes' ends, its computation.
      const std::size_t kept = (receive_lanes_[a].empty() ? in.size() : 0) + (send_lanes_[a].empty() ? out.size() : 0);
      agent_activities_[a] = static_cast<std::int64_t>(3 * plan_.out[a].size() + 3 * kept + receive_lanes_[a].size() +
                                                       send_lanes_[a].size() + 4);
    }
  // SMPI mode has the same cost per message (every message is a transfer of its own): an
  // agent with more receives, or more sends, than `transfers_per_actor` hands them to lanes of
  // consecutive messages, in its posting order.
  smpi_lanes_.assign(agents, {});
  smpi_eager_out_.assign(agents, {});
  smpi_ois_.assign(agents, {});
  if (s_.mode == Mode::Smpi)
    for (std::size_t a = 0; a < agents; a++) {
      auto messages_of = [&](const std::vector<std::size_t>& transfers) {
        std::vector<std::size_t> messages;
        for (std::size_t ti : transfers)
          messages.insert(messages.end(), static_cast<std::size_t>(plan_.transfers[ti].messages), ti);
        return messages;
      };
      const auto in = messages_of(plan_.in[a]), out = messages_of(plan_.out[a]);
      // A lane of eager sends outlives its iteration until they are in: up to two a transfer.
      const std::size_t per_lane = lane_size(s_.transfers_per_actor, in.size() + 2 * out.size(), agents);
      auto split = [&](const std::vector<std::size_t>& messages, bool sends) {
        if (messages.size() <= per_lane)
          return;
        for (std::size_t i = 0; i < messages.size(); i++) {
          if (i % per_lane == 0)
            smpi_lanes_[a].push_back({{}, sends, false, i});
          SmpiLane& lane = smpi_lanes_[a].back();
          lane.messages.push_back(messages[i]);
          lane.rendezvous = lane.rendezvous || (sends && !smpi_eager(plan_.transfers[messages[i]]));
        }
      };
      split(in, false);
      split(out, true);
      if (!smpi_lanes_[a].empty())
        lanes_done_[a] = sg4::Semaphore::create(0);
      // SMPI's MPI_Isend sleeps smpi/ois (at the message's size) before it posts the message.
      if (s_.smpi_ois)
        for (std::size_t ti : out) {
          const Transfer& t = plan_.transfers[ti];
          smpi_ois_[a].push_back(s_.smpi_ois->at(static_cast<double>(smpi_bytes(t))));
        }
    }
  for (std::size_t a = 0; a < agents; a++) {
    const std::string name = s_.granularity == Granularity::Node ? "node-" + plan_.host[a]->get_name()
                                                                 : "rank-" + std::to_string(a);
    agent_name_.push_back(name);
    ctx.create_actor(name, plan_.host[a], [this, a] { run_agent(a, 0); });
    const bool intra_in = std::any_of(plan_.in[a].begin(), plan_.in[a].end(),
                                      [this](std::size_t ti) { return plan_.transfers[ti].intra; });
    if (s_.mode == Mode::Detailed && intra_in) {
      copier_go_[a] = sg4::Semaphore::create(0);
      copier_done_[a] = sg4::Semaphore::create(0);
      if (s_.granularity == Granularity::Rank)
        posted_count_[a] = {sg4::Semaphore::create(0), sg4::Semaphore::create(0)};
      ctx.create_actor(name + "-copier", plan_.host[a], [this, a] { run_copier(a, 0); });
    }
  }
}

namespace {
/** Iterations an agent's actor runs in detailed mode before a successor takes over. SimGrid
 *  3.32 keeps every I/O an actor starts (the memory bus's copies) in the actor's list of
 *  activities for good, and each communication of the actor searches that list as it ends:
 *  one actor for every iteration took time quadratic in them (a two-node exchange: 2,000
 *  iterations in 0.4 s, 16,000 in 29 s). A successor starts with an empty list, at the same
 *  simulated time. */
constexpr std::int64_t kIterationsPerActor = 32;
/** Fewer iterations where an actor starts many activities each: those it keeps (its I/Os,
 *  and its waits) hold their memory until it ends. */
constexpr std::int64_t kActivitiesPerActor = 4096;

std::int64_t iterations_per_actor(std::int64_t activities_per_iteration)
{
  return std::clamp<std::int64_t>(kActivitiesPerActor / std::max<std::int64_t>(activities_per_iteration, 1), 1,
                                  kIterationsPerActor);
}
} // namespace

void Exchange::run_agent(std::size_t a, std::int64_t first)
{
  const double flops = plan_.flops[a], interior = plan_.interior_flops[a];
  const std::int64_t last =
      s_.mode == Mode::Detailed ? std::min(s_.iterations, first + iterations_per_actor(agent_activities_[a])) : s_.iterations;
  for (std::int64_t it = first; it < last; it++) {
    sg4::ExecPtr inner;
    const bool overlapped = s_.overlap && interior > 0;
    if (overlapped && s_.mode == Mode::Detailed)
      inner = sg4::this_actor::exec_async(interior); // needs no halo: runs during the exchange
    else if (!overlapped && flops > 0)
      sg4::this_actor::execute(flops);
    const double c0 = sg4::Engine::get_clock();
    if (s_.mode == Mode::Smpi)
      exchange_smpi(a, overlapped ? interior : 0, inner);
    else
      exchange_detailed(a);
    const double spent = sg4::Engine::get_clock() - c0;
    comm_time_[a] += spent;
    iteration_comm_max_[it] = std::max(iteration_comm_max_[it], spent);
    if (inner) {
      inner->wait();
      sg4::this_actor::execute(flops - interior); // the boundary cells, once the halo is in
    }
    iteration_end_[it] = std::max(iteration_end_[it], sg4::Engine::get_clock());
  }
  if (last < s_.iterations) {
    ctx_->create_actor(agent_name_[a], plan_.host[a], [this, a, last] { run_agent(a, last); });
    return;
  }
  end_[a] = sg4::Engine::get_clock();
  // Its last eager sends may still be in flight: an actor that ends cancels what it started.
  sg4::Comm::wait_all(smpi_eager_out_[a]);
}

/* SMPI's view of MPI_Irecv/MPI_Isend/MPI_Waitall: every message is one network transfer that
 * starts once both sides posted it; sends below the eager limit are detached (MPI_Waitall does
 * not wait for them). Receives are posted first, then sends in neighbour order; lanes, where
 * the agent has them, post theirs at the same simulated time, in that order within each (with
 * smpi/ois, each send once the agent would be done sleeping before it). With overlap the
 * agent computes its `interior` flops (`inner`) once its sends are posted, as the MPI program
 * does between MPI_Isend and MPI_Waitall. */
void Exchange::exchange_smpi(std::size_t a, double interior, sg4::ExecPtr& inner)
{
  auto& eager_out = smpi_eager_out_[a];
  eager_out.erase(std::remove_if(eager_out.begin(), eager_out.end(), [](const sg4::CommPtr& c) { return c->test(); }),
                  eager_out.end());
  const auto& lanes = smpi_lanes_[a];
  const double start = sg4::Engine::get_clock();
  bool lanes_in = false, lanes_out = false;
  std::size_t waited_lanes = 0;
  for (std::size_t k = 0; k < lanes.size(); k++) {
    (lanes[k].sends ? lanes_out : lanes_in) = true;
    if (!lanes[k].sends || lanes[k].rendezvous)
      waited_lanes++;
    ctx_->create_actor(agent_name_[a] + "-smpi-" + std::to_string(k), plan_.host[a],
                       [this, a, k, start] { run_smpi_lane(a, k, start); });
  }
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> sinks;
  if (!lanes_in) {
    std::size_t incoming = 0;
    for (std::size_t ti : plan_.in[a])
      incoming += static_cast<std::size_t>(plan_.transfers[ti].messages);
    sinks.resize(incoming);
    std::size_t k = 0;
    for (std::size_t ti : plan_.in[a])
      for (std::int64_t m = 0; m < plan_.transfers[ti].messages; m++)
        comms.push_back(channels_[ti].data->get_async<void>(&sinks[k++]));
  }
  if (!lanes_out) {
    double at = start;
    std::size_t k = 0;
    for (std::size_t ti : plan_.out[a])
      for (std::int64_t m = 0; m < plan_.transfers[ti].messages; m++)
        (smpi_eager(plan_.transfers[ti]) ? eager_out : comms).push_back(smpi_post_send(a, k++, ti, at));
  }
  // With smpi/ois a rank's last send is posted once it slept before each: where its lanes post
  // them, it waits as long itself (it is not done before, even if none of them is waited for).
  if (lanes_out && !smpi_ois_[a].empty()) {
    double at = start;
    for (double o : smpi_ois_[a])
      at += o > 0 ? o : 0;
    if (sg4::Engine::get_clock() < at)
      sg4::this_actor::sleep_until(at);
  }
  if (interior > 0)
    inner = sg4::this_actor::exec_async(interior); // needs no halo: runs during the exchange
  sg4::Comm::wait_all(comms);
  for (std::size_t k = 0; k < waited_lanes; k++)
    lanes_done_[a]->acquire();
}

/* SMPI detaches a send below its threshold: the plan's protocol in SMPI mode (smpi_protocol). */
bool Exchange::smpi_eager(const Transfer& t) const
{
  return t.protocol == Protocol::Eager;
}

/* The bytes of one message of a transfer in SMPI mode (MPI counts whole bytes). */
std::uint64_t Exchange::smpi_bytes(const Transfer& t)
{
  return static_cast<std::uint64_t>(t.total / static_cast<double>(t.messages));
}

/* SMPI puts on the network each message's bytes and an envelope of 16 bytes (tag, source,
 * communicator), so a corner of 8 bytes costs three times its size in bandwidth. */
sg4::CommPtr Exchange::smpi_send(std::size_t ti)
{
  constexpr std::uint64_t kSmpiEnvelope = 16;
  auto c = channels_[ti].data->put_init(&g_payload, smpi_bytes(plan_.transfers[ti]) + kSmpiEnvelope);
  c->start();
  return c;
}

/* SMPI's MPI_Isend with smpi/ois: the agent's sends go one after another, each after its
 * sleep; `at` follows the agent's clock as its sleeps one after another would move it, so
 * that a lane posting sends k... lands them when the agent itself would have. */
sg4::CommPtr Exchange::smpi_post_send(std::size_t a, std::size_t k, std::size_t ti, double& at)
{
  if (!smpi_ois_[a].empty() && smpi_ois_[a][k] > 0) {
    at += smpi_ois_[a][k];
    sg4::this_actor::sleep_until(at);
  }
  return smpi_send(ti);
}

/* An SMPI lane: its receives, or its sends, then its agent's release once those its agent
 * waits for are done; a lane of sends then waits for its eager ones (detached for its agent).
 * A lane of sends starts with its agent's exchange (`start`) and, with smpi/ois, posts each
 * of its sends when the agent, sleeping before each send of its own, would have. */
void Exchange::run_smpi_lane(std::size_t a, std::size_t lane, double start)
{
  const SmpiLane& l = smpi_lanes_[a][lane];
  std::vector<sg4::CommPtr> waited, eager;
  std::vector<void*> sinks(l.sends ? 0 : l.messages.size());
  double at = start;
  if (l.sends && !smpi_ois_[a].empty())
    for (std::size_t k = 0; k < l.first; k++)
      at += smpi_ois_[a][k] > 0 ? smpi_ois_[a][k] : 0;
  for (std::size_t i = 0; i < l.messages.size(); i++) {
    const std::size_t ti = l.messages[i];
    if (!l.sends)
      waited.push_back(channels_[ti].data->get_async<void>(&sinks[i]));
    else
      (smpi_eager(plan_.transfers[ti]) ? eager : waited).push_back(smpi_post_send(a, l.first + i, ti, at));
  }
  sg4::Comm::wait_all(waited);
  if (!l.sends || l.rendezvous)
    lanes_done_[a]->release();
  sg4::Comm::wait_all(eager);
}

/* The network side of the detailed exchange: every transfer progresses on its own, as an MPI
 * library's progress engine does: a request is answered as soon as it arrives, received eager
 * data is copied out as soon as it is in, the next step of a transfer follows its previous one.
 * One Progress per actor: the agent's own, and each of its lanes'. */
class Exchange::Progress {
public:
  Progress(Exchange& x, std::size_t a) : x_(x), bus_(x.bus(a)) {}

  /** MPI_Irecv: the data of an eager transfer, a rendezvous or pipelined one's request. */
  void post_receive(std::size_t ti)
  {
    if (x_.plan_.transfers[ti].protocol == Protocol::Eager)
      receive(ti, x_.channels_[ti].data, Step::EagerIn);
    else
      receive(ti, x_.channels_[ti].control, Step::RequestIn);
  }
  /** MPI_Isend: the data of an eager transfer, a rendezvous or pipelined one's request. */
  void post_send(std::size_t ti)
  {
    const Transfer& t = x_.plan_.transfers[ti];
    if (t.protocol == Protocol::Eager)
      send(ti, x_.channels_[ti].data, t.total, Step::Done, true);
    else
      send(ti, x_.channels_[ti].control, x_.s_.protocols.control_bytes * static_cast<double>(t.messages),
           Step::RequestOut, false);
  }
  /** Until every transfer posted here is done, its copies on the bus included. */
  void finish()
  {
    while (!pending_.empty()) {
      std::vector<sg4::CommPtr> comms;
      comms.reserve(pending_.size());
      for (const auto& p : pending_)
        comms.push_back(p.comm);
      const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
      const Pending done = pending_[i];
      pending_[i] = pending_.back();
      pending_.pop_back();
      next(done.transfer, done.next);
    }
    for (auto& io : ios_)
      io->wait();
  }

private:
  enum class Step { Done, RequestOut, RequestIn, AnswerIn, DataOut, DataIn, RestIn, EagerIn };
  struct Pending {
    sg4::CommPtr comm;
    std::size_t transfer;
    Step next;
  };

  void copy_async(double bytes)
  {
    if (bytes > 0)
      ios_.push_back(bus_->read_async(bytes));
  }
  void dma_async(double bytes)
  {
    if (x_.s_.protocols.nic_dma && bytes > 0)
      ios_.push_back(bus_->write_async(bytes));
  }
  void send(std::size_t ti, sg4::Mailbox* mb, double bytes, Step next, bool data)
  {
    pending_.push_back({mb->put_async(&g_payload, bytes), ti, next});
    if (data)
      dma_async(bytes);
  }
  void receive(std::size_t ti, sg4::Mailbox* mb, Step next) { pending_.push_back({mb->get_async<void>(&sink_), ti, next}); }

  /** What follows a step of transfer ti once its communication is done. */
  void next(std::size_t ti, Step step)
  {
    const Transfer& t = x_.plan_.transfers[ti];
    const Channels& c = x_.channels_[ti];
    const double control = x_.s_.protocols.control_bytes * static_cast<double>(t.messages);
    const bool whole = t.protocol == Protocol::Rendezvous;
    switch (step) {
      case Step::Done: break;
      case Step::EagerIn: // the data is in the receive buffer: copy it out
        dma_async(t.total);
        copy_async(t.total);
        break;
      case Step::RequestOut: // our request is delivered: wait for the answer
        receive(ti, c.control, Step::AnswerIn);
        break;
      case Step::RequestIn: // answer at once, then receive the data
        send(ti, c.control, control, Step::Done, false);
        receive(ti, c.data, Step::DataIn);
        break;
      case Step::AnswerIn: // send the data: all of it, or the first chunk
        send(ti, c.data, whole ? t.total : t.first_chunk, whole ? Step::Done : Step::DataOut, true);
        break;
      case Step::DataOut: // pipelined: the rest follows the first chunk
        if (t.total > t.first_chunk)
          send(ti, c.data, t.total - t.first_chunk, Step::Done, true);
        break;
      case Step::DataIn:
        if (!whole) {
          dma_async(t.first_chunk);
          if (t.total > t.first_chunk) { // copy out what is in while the rest arrives
            copy_async(t.total - t.first_chunk);
            receive(ti, c.data, Step::RestIn);
          } else {
            copy_async(t.total);
          }
        } else {
          dma_async(t.total);
        }
        break;
      case Step::RestIn: // the last chunk is copied out once it is in
        dma_async(t.total - t.first_chunk);
        copy_async(t.first_chunk);
        break;
    }
  }

  Exchange& x_;
  sg4::Disk* bus_;
  std::vector<Pending> pending_;
  std::vector<sg4::IoPtr> ios_;
  void* sink_ = nullptr;
};

/* An agent posts its receives, then its sends (with the gaps between them and its intra-node
 * eager copies), then waits for all of them. Where it has many network transfers, lanes post
 * and progress them (see start()). Intra-node receives (waiting for the sender's side, then
 * copying) run beside it in the agent's copier. */
void Exchange::exchange_detailed(std::size_t a)
{
  Progress progress(*this, a);
  const bool in_order = !plan_.network_first[a];
  const auto lanes = receive_lanes_[a].size() + send_lanes_[a].size();

  // Receives are posted first (MPI_Irecv), then the sends in neighbour order (MPI_Isend).
  if (receive_lanes_[a].empty()) {
    for (std::size_t ti : plan_.in[a])
      if (!plan_.transfers[ti].intra)
        progress.post_receive(ti);
  }
  for (std::size_t k = 0; k < receive_lanes_[a].size(); k++)
    ctx_->create_actor(agent_name_[a] + "-in-" + std::to_string(k), plan_.host[a],
                       [this, a, k] { run_receive_lane(a, k); });
  for (std::size_t k = 0; k < send_lanes_[a].size(); k++)
    ctx_->create_actor(agent_name_[a] + "-out-" + std::to_string(k), plan_.host[a],
                       [this, a, k] { run_send_lane(a, k); });
  // A rank receives from other ranks of its node once it is done posting its sends (in
  // MPI_Waitall); a node (node granularity) stands for its ranks: its copier waits for the
  // posts itself, then for its latest rank to be done posting.
  const double start = sg4::Engine::get_clock();
  const bool rank_copier = copier_go_[a] && s_.granularity == Granularity::Rank;
  if (copier_go_[a] && !rank_copier) {
    copier_from_[a] = start + plan_.posting_end[a];
    copier_go_[a]->release();
  }
  // An intra-node eager send copies into the shared buffer inside MPI_Isend: in neighbour
  // order (later sends wait for it), or after every network send is out (`network_first`,
  // rank granularity). Each send waits for the message gaps before it (post_delay).
  auto wait_gaps = [&](const Transfer& t) {
    pause(start + t.post_delay - sg4::Engine::get_clock());
  };
  bool deferred = false;
  for (std::size_t ti : post_order_[a]) {
    const Transfer& t = plan_.transfers[ti];
    if (!(t.intra && t.protocol == Protocol::Eager && !in_order)) // deferred ones wait below
      wait_gaps(t);
    if (t.intra) {
      if (t.protocol == Protocol::Eager && in_order) {
        copy_intra(a, t);
        post_intra(ti);
      } else if (t.protocol == Protocol::Eager) {
        deferred = true;
      } else {
        post_intra(ti); // single copy: the buffer is exposed
      }
    } else if (send_lane_of_[ti] != kNoLane) {
      send_lanes_[a][send_lane_of_[ti]].post->release();
    } else {
      progress.post_send(ti);
    }
  }
  if (deferred)
    for (std::size_t ti : plan_.out[a])
      if (plan_.transfers[ti].intra && plan_.transfers[ti].protocol == Protocol::Eager) {
        wait_gaps(plan_.transfers[ti]);
        copy_intra(a, plan_.transfers[ti]);
        post_intra(ti);
      }
  if (rank_copier) {
    copier_from_[a] = start + plan_.posting_end[a];
    copier_go_[a]->release();
  }
  // Done posting: what came in meanwhile is progressed now, here and in the receive lanes.
  for (std::size_t k = 0; k < receive_lanes_[a].size(); k++)
    lanes_posted_[a]->release();
  progress.finish();
  for (std::size_t k = 0; k < lanes; k++)
    lanes_done_[a]->acquire();
  if (copier_done_[a])
    copier_done_[a]->acquire();
}

void Exchange::run_receive_lane(std::size_t a, std::size_t lane)
{
  Progress progress(*this, a);
  for (std::size_t ti : receive_lanes_[a][lane].transfers)
    progress.post_receive(ti);
  lanes_posted_[a]->acquire();
  progress.finish();
  lanes_done_[a]->release();
}

/* A lane's sends leave as its agent posts them, in the agent's order. */
void Exchange::run_send_lane(std::size_t a, std::size_t lane)
{
  Progress progress(*this, a);
  const Lane& l = send_lanes_[a][lane];
  for (std::size_t ti : l.transfers) {
    l.post->acquire();
    progress.post_send(ti);
  }
  progress.finish();
  lanes_done_[a]->release();
}

/* The intra-node receives of one agent, iterations [first, ...). Its copies stay in its
 * activity list (see kIterationsPerActor): it communicates with nobody, so nothing searches
 * that list (8,000 iterations of two_ranks_one_node in 0.22 s on one actor), but the list
 * holds their memory, so a successor takes over as for the agent.
 *
 * A rank receives once it is done posting its sends, as in MPI_Waitall: one receive at a time,
 * the first to have arrived first (an eager message from another rank its in-flight time after
 * its post, one to itself at once), a single copy after its kernel-assisted start-up. An eager
 * message with gaps that came in before the rank was done posting (by the plan) was received
 * inside the gaps, which were measured with that work: it costs nothing more. A node (node
 * granularity) stands for its ranks copying side by side: it waits until every one of its
 * receives is posted and its latest rank is done posting, then the single copies' start-ups one after another beside the in-flight
 * time of the slowest eager message, then copies all those not received inside the gaps (the
 * plan's copy_bus_in and copy_least_in). */
void Exchange::run_copier(std::size_t a, std::int64_t first)
{
  std::size_t intra_in = 0;
  for (std::size_t ti : plan_.in[a])
    if (plan_.transfers[ti].intra)
      intra_in++;
  // Each receive: a wait for it, its start-up, its copy and its least time.
  const std::int64_t last = std::min(s_.iterations, first + iterations_per_actor(4 * static_cast<std::int64_t>(intra_in)));
  const double bus_bytes = plan_.copy_bus_in[a], least = plan_.copy_least_in[a];
  const double startup = std::max(plan_.copy_startup_in[a], plan_.eager_latency_in[a]);
  for (std::int64_t it = first; it < last; it++) {
    copier_go_[a]->acquire();
    if (s_.granularity == Granularity::Rank) {
      // Done posting (a self gap after a message to itself posted last).
      pause(copier_from_[a] - sg4::Engine::get_clock());
      auto& queue = posted_to_[a][static_cast<std::size_t>(it % 2)];
      auto& count = posted_count_[a][static_cast<std::size_t>(it % 2)];
      // Posted to this rank and not yet copied out; more may come while it waits for one.
      std::vector<Posted> waiting;
      std::size_t taken = 0;
      auto take = [&] {
        waiting.push_back(queue.front());
        queue.pop_front();
        taken++;
      };
      auto ready = [&](const Posted& p) { return p.at + plan_.transfers[p.transfer].arrival_latency; };
      for (std::size_t done = 0; done < intra_in;) {
        while (taken < intra_in && !count->would_block()) {
          count->acquire();
          take();
        }
        if (waiting.empty()) {
          count->acquire();
          take();
          continue;
        }
        // The first to have arrived (the first posted among equals: in symmetric exchanges
        // every rank then takes its receives in the same order), unless another is posted
        // meanwhile that arrives before it.
        auto next = std::min_element(waiting.begin(), waiting.end(),
                                     [&](const Posted& x, const Posted& y) { return ready(x) < ready(y); });
        const double until = ready(*next) - sg4::Engine::get_clock();
        if (until >= precision_ && taken < intra_in) {
          if (!count->acquire_timeout(until)) {
            take();
            continue;
          }
        } else {
          pause(until);
        }
        const Transfer& t = plan_.transfers[next->transfer];
        waiting.erase(next);
        done++;
        // In before the rank was done posting, as planned: copied out inside the gaps, all of
        // it or what a gap hides.
        const double left = 1 - t.hidden_in_gaps;
        if (left <= 0)
          continue;
        pause(t.copy_startup);
        copy_on_bus(a, t.copy_bus_bytes * left, t.copy_out_least * left);
      }
    } else {
      for (std::size_t ti : plan_.in[a])
        if (plan_.transfers[ti].intra)
          channels_[ti].posted->acquire();
      pause(copier_from_[a] - sg4::Engine::get_clock());
      pause(startup);
      copy_on_bus(a, bus_bytes, least);
    }
    copier_done_[a]->release();
  }
  if (last < s_.iterations)
    ctx_->create_actor(agent_name_[a] + "-copier", plan_.host[a], [this, a, last] { run_copier(a, last); });
}

void Exchange::post_intra(std::size_t ti)
{
  if (s_.granularity == Granularity::Node) {
    channels_[ti].posted->release();
    return;
  }
  const std::size_t to = static_cast<std::size_t>(plan_.transfers[ti].to);
  const auto parity = static_cast<std::size_t>(posts_[ti]++ % 2);
  posted_to_[to][parity].push_back({ti, sg4::Engine::get_clock()});
  posted_count_[to][parity]->release();
}

/* One core copies: its bytes weigh on the node's bus (cached copies less than their bytes),
 * and however idle the bus, the copy takes at least `least` seconds. */
void Exchange::copy_on_bus(std::size_t a, double bus_bytes, double least)
{
  const double start = sg4::Engine::get_clock();
  if (bus_bytes > 0)
    bus(a)->read(bus_bytes);
  pause(start + least - sg4::Engine::get_clock());
}

void Exchange::copy_intra(std::size_t a, const Transfer& t) { copy_on_bus(a, t.copy_in_bus_bytes, t.copy_least); }

void Exchange::report(const simcore::SimContext& ctx, simcore::Results& results) const
{
  const double makespan = *std::max_element(end_.begin(), end_.end());
  const std::int64_t ranks = s_.grid.ranks();
  std::vector<double> rank_comm(static_cast<std::size_t>(ranks)), rank_compute(rank_comm.size()),
      rank_end(rank_comm.size());
  std::vector<std::int64_t> rank_node(rank_comm.size());
  std::map<sg4::Host*, std::int64_t> node_index;
  for (std::size_t a = 0; a < plan_.host.size(); a++)
    for (std::int64_t r : plan_.ranks[a]) {
      rank_comm[r] = comm_time_[a];
      rank_end[r] = end_[a];
      const Ext ext = s_.grid.local_extent(r);
      rank_compute[r] = static_cast<double>(s_.iterations) * static_cast<double>(ext[0] * ext[1] * ext[2]) *
                        s_.flops_per_cell_on(plan_.host[a]) / ctx.host_speed(plan_.host[a]); // calibrated
    }
  for (std::int64_t r = 0; r < ranks; r++)
    rank_node[r] = node_index.emplace(s_.host_of_rank[r], static_cast<std::int64_t>(node_index.size())).first->second;
  std::int64_t message_count = 0;
  for (const auto& channel : plan_.messages_by)
    for (std::int64_t n : channel)
      message_count += n;
  const double its = static_cast<double>(s_.iterations);
  const auto comm = simcore::stats_of(rank_comm);
  // The slowest rank: the one whose exchanges took longest (the critical path of the run).
  const auto slowest = std::max_element(rank_comm.begin(), rank_comm.end()) - rank_comm.begin();
  results.set_metric("makespan", makespan, "s");
  results.set_metric("iteration_time", makespan / its, "s");
  results.set_metric("ranks", ranks);
  results.set_metric("nodes", static_cast<std::int64_t>(node_index.size()));
  results.set_metric("messages_per_iteration", message_count);
  results.set_metric("intra_bytes_per_iteration", plan_.bytes_by[1], "B");
  results.set_metric("inter_bytes_per_iteration", plan_.bytes_by[0], "B");
  results.set_metric("communication_time_mean", comm.mean() / its, "s");
  results.set_metric("communication_time_max", comm.max() / its, "s");
  results.set_metric("communication_time_slowest", simcore::stats_of(iteration_comm_max_).mean(), "s");
  results.set_metric("critical_rank", static_cast<std::int64_t>(slowest));
  results.set_metric("compute_time_mean", simcore::stats_of(rank_compute).mean() / its, "s");
  const char* kinds[2] = {"inter", "intra"};
  for (int intra = 0; intra < 2; intra++)
    for (int p = 0; p < kProtocols; p++)
      if (plan_.messages_by[intra][p] > 0)
        results.set_metric(std::string(kinds[intra]) + "_" + to_string(static_cast<Protocol>(p)) + "_messages",
                           plan_.messages_by[intra][p]);

  std::vector<std::int64_t> iterations(static_cast<std::size_t>(s_.iterations)), rank_ids(rank_comm.size());
  std::iota(iterations.begin(), iterations.end(), 0);
  std::iota(rank_ids.begin(), rank_ids.end(), 0);
  std::vector<double> durations(iteration_end_.size());
  for (std::size_t i = 0; i < durations.size(); i++)
    durations[i] = iteration_end_[i] - (i > 0 ? iteration_end_[i - 1] : 0);
  results.add_table("iterations", "when the last rank finished each iteration, the time since the previous one, "
                                  "and the slowest rank's time in that iteration's exchange")
      .add_column("iteration", "", iterations)
      .add_column("end", "s", iteration_end_)
      .add_column("duration", "s", durations)
      .add_column("communication_max", "s", iteration_comm_max_);
  results.add_table("ranks", "per rank: node, time in the exchange, time computing, end (all iterations)")
      .add_column("rank", "", rank_ids)
      .add_column("node", "", rank_node)
      .add_column("communication_time", "s", rank_comm)
      .add_column("compute_time", "s", rank_compute)
      .add_column("end", "s", rank_end);
  std::vector<std::int64_t> c_intra, c_kind, c_protocol, c_messages;
  std::vector<double> c_bytes;
  for (const auto& [key, count] : plan_.classes) {
    c_intra.push_back(std::get<0>(key));
    c_kind.push_back(std::get<1>(key));
    c_bytes.push_back(std::get<2>(key));
    c_protocol.push_back(std::get<3>(key));
    c_messages.push_back(count);
  }
  results.add_table("classes",
                    "messages per iteration by class: intra (0 inter-node, 1 intra-node), kind (1 face, 2 edge, "
                    "3 corner), size, protocol (0 eager, 1 rendezvous, 2 single copy, 3 pipelined)")
      .add_column("intra", "", c_intra)
      .add_column("kind", "", c_kind)
      .add_column("bytes", "B", c_bytes)
      .add_column("protocol", "", c_protocol)
      .add_column("messages", "", c_messages);
}

simcore::MemoryNeed Exchange::memory_need() const
{
  // Per iteration: its 4 columns, and the ids and durations report() builds before copying them in.
  constexpr std::uint64_t per_iteration = 6 * 8;
  return {static_cast<std::uint64_t>(s_.iterations) * per_iteration,
          "the iterations table (" + std::to_string(s_.iterations) + " iterations x " + std::to_string(per_iteration) +
              " B)"};
}

std::vector<simcore::TableSize> Exchange::table_sizes() const
{
  return {{"iterations", static_cast<std::uint64_t>(s_.iterations), 4},
          {"ranks", static_cast<std::uint64_t>(s_.grid.ranks()), 5},
          {"classes", plan_.classes.size(), 5}};
}

} // namespace halo
