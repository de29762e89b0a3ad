#include "transfer_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace halo {

namespace {

struct RankMessage {
  std::int64_t from, to;
  double bytes;          ///< of each message
  std::int64_t parts;    ///< messages (variables when unbundled)
  bool intra;
  Protocol protocol;
  int kind; ///< offset dimensions: 1 face, 2 edge, 3 corner
  std::array<int, 3> offset; ///< of its receiver, seen from its sender
  std::int64_t first_part = 0; ///< the variable of its first part (an unbundled message split in parts)
  bool self() const { return from == to; }
  /** Whether its receiver copies it out of MPI's buffer: every intra-node message but an
   *  eager one to itself, which Open MPI's self transport copies straight into the posted
   *  receive inside MPI_Isend (its one copy, charged as the copy in at its post). */
  bool copied_out() const { return intra && !(protocol == Protocol::Eager && self()); }
};

std::vector<RankMessage> rank_messages(const Setup& s)
{
  std::vector<RankMessage> out;
  const std::int64_t parts = s.bundled ? 1 : s.spec.variables;
  for (std::int64_t r = 0; r < s.grid.ranks(); r++)
    for (const auto& n : neighbours(s.grid, s.spec, r)) {
      const bool intra = s.host_of_rank[r] == s.host_of_rank[n.rank];
      const double bytes = static_cast<double>(n.bytes) / static_cast<double>(parts);
      const Protocol protocol =
          s.mode == Mode::Smpi ? smpi_protocol(bytes, s.protocols) : static_protocol(bytes, intra, s.protocols);
      out.push_back({r, n.rank, bytes, parts, intra, protocol, static_cast<int>(n.kind), n.offset});
    }
  return out;
}

/** Memory-bus bytes a message (`parts` messages of `bytes`) adds to its receiving node `h`
 *  under protocol `p`, beyond what every protocol moves (the NIC's transfers); intra-node
 *  copies weigh as their cached rate says (eager: in and out, one copy to itself). */
double copy_bytes(const Setup& s, const simgrid::s4u::Host* h, Protocol p, double bytes, std::int64_t parts, bool intra,
                  bool self)
{
  const double n = static_cast<double>(parts);
  if (intra)
    return (p == Protocol::Eager && !self ? 2 : 1) * n * s.intra_copy_on(h, bytes).bus_bytes;
  return p == Protocol::Rendezvous ? 0 : n * bytes;
}

/** The start-up of a single copy of `bytes` between two ranks of node `h`: the loopback's
 *  latency at that size (factors applied: with a profile, the intercept of the fit's segment
 *  at that size) where the protocols say so and the node has a loopback, else the fixed one. */
double single_copy_startup_on(const Setup& s, const RouteFunction& route, simgrid::s4u::Host* h, double bytes)
{
  if (s.mode == Mode::Detailed && s.protocols.single_copy_startup_at_route_latency) {
    const RouteView r = route(h, h, bytes, true);
    if (std::isfinite(r.bandwidth))
      return r.latency;
  }
  return s.protocols.single_copy_startup;
}

/** The time in flight of an intra-node eager message (`parts` messages of `bytes`, unbundled
 *  variables without gaps, as one flow) on node `h`, beyond its two copies: an eager message
 *  alone takes what the route within the node says (with a profile, the fitted ping-ping time
 *  at its size), its copies in and out, and the rest in flight, at least the route's latency. */
double eager_in_flight(const Setup& s, const RouteFunction& route, simgrid::s4u::Host* h, double bytes,
                       std::int64_t parts)
{
  const RouteView r = route(h, h, bytes, true);
  const CopyCost c = s.intra_copy_on(h, bytes);
  const double n = static_cast<double>(parts);
  const double copy = n * std::max(c.bus_bytes / s.memory_bandwidth_on(h), c.least_seconds);
  return std::max(r.latency, r.latency + n * bytes / r.bandwidth - 2 * copy);
}

/** The dynamic policy: each message gets the protocol with the lowest predicted completion
 *  given the load of its NICs and of the receiving node's memory bus, counted from the
 *  choices made so far (starting from the static ones). */
std::vector<char> choose_dynamic(const Setup& s, const RouteFunction& route, std::vector<RankMessage>& msgs)
{
  std::map<simgrid::s4u::Host*, double> nic_out, nic_in, bus_bytes, ranks_on;
  for (auto* h : s.host_of_rank)
    ranks_on[h] += 1;
  for (const auto& m : msgs) {
    auto* a = s.host_of_rank[m.from];
    auto* b = s.host_of_rank[m.to];
    const double total = m.bytes * static_cast<double>(m.parts);
    if (!m.intra) {
      nic_out[a] += total;
      nic_in[b] += total;
      if (s.protocols.nic_dma) {
        bus_bytes[a] += total;
        bus_bytes[b] += total;
      }
    }
    bus_bytes[b] += copy_bytes(s, b, m.protocol, m.bytes, m.parts, m.intra, m.self());
  }
  std::map<std::tuple<simgrid::s4u::Host*, simgrid::s4u::Host*, double>, RouteView> routes;
  struct WithinNode {
    double startup = 0, in_flight = 0, rate = 0; // rate 0: not bounded by the route
  };
  std::map<std::pair<simgrid::s4u::Host*, double>, WithinNode> within_node; // by node and size
  std::vector<double> network_path(static_cast<std::size_t>(s.grid.ranks()), std::numeric_limits<double>::infinity());
  for (auto& m : msgs) {
    auto* a = s.host_of_rank[m.from];
    auto* b = s.host_of_rank[m.to];
    bus_bytes[b] -= copy_bytes(s, b, m.protocol, m.bytes, m.parts, m.intra, m.self());
    TransferOutlook t;
    t.bytes = m.bytes;
    t.intra = m.intra;
    const double bus = s.memory_bandwidth_on(b);
    // The rate this message's copies get alone (cached, for intra-node data that fits).
    t.memory_bandwidth = m.intra ? m.bytes * bus / s.intra_copy_on(b, m.bytes).bus_bytes : bus;
    t.copy_least = m.intra ? s.intra_copy_on(b, m.bytes).least_seconds : 0;
    t.single_copy_least = t.copy_least;
    if (m.intra && m.from != m.to) { // what the route within the node says at this size
      auto [it, added] = within_node.emplace(std::make_pair(b, m.bytes), WithinNode{});
      if (added) {
        WithinNode& w = it->second;
        w.startup = single_copy_startup_on(s, route, b, m.bytes);
        if (s.mode == Mode::Detailed) {
          w.in_flight = eager_in_flight(s, route, b, m.bytes, 1);
          if (s.protocols.single_copy_at_route_rate)
            w.rate = route(b, b, m.bytes, true).bandwidth;
        }
      }
      const WithinNode& w = it->second;
      if (w.rate > 0 && std::isfinite(w.rate))
        t.single_copy_least = std::max(t.copy_least, m.bytes / w.rate);
      t.single_copy_startup = w.startup;
      t.eager_in_flight = w.in_flight;
    } else if (m.intra) { // a message to itself: MPI's self transport copies it at once, once
      t.single_copy_startup = 0;
      t.self = true;
    }
    t.bus_seconds = bus_bytes[b] / bus;
    t.bus_users = ranks_on[b];
    if (!m.intra) {
      const auto key = std::make_tuple(a, b, m.bytes);
      auto it = routes.find(key);
      if (it == routes.end())
        it = routes.emplace(key, route(a, b, m.bytes, false)).first;
      t.latency = it->second.latency;
      t.bandwidth = it->second.bandwidth;
      t.nic_seconds = std::max(nic_out[a], nic_in[b]) / t.bandwidth;
    }
    m.protocol = dynamic_protocol(t, s.protocols);
    bus_bytes[b] += copy_bytes(s, b, m.protocol, m.bytes, m.parts, m.intra, m.self());
    if (!m.intra)
      network_path[m.from] = std::min(network_path[m.from], t.latency + t.nic_seconds);
  }
  // The order: in neighbour order, a rank's intra-node eager copy-ins hold back the network
  // sends after them. Post the network first when that delay is a clear share of the network
  // path and the node's bus has time to spare (else the earlier network traffic only slows
  // the copies down on the bus).
  std::vector<char> first(static_cast<std::size_t>(s.grid.ranks()), 0);
  std::vector<double> delay(first.size(), 0), pending(first.size(), 0);
  for (const auto& m : msgs) {
    auto* h = s.host_of_rank[m.from];
    if (m.intra && m.protocol == Protocol::Eager) {
      const CopyCost c = s.intra_copy_on(h, m.bytes);
      pending[m.from] += static_cast<double>(m.parts) *
                         std::max(c.bus_bytes * ranks_on[h] / s.memory_bandwidth_on(h), c.least_seconds);
    }
    else if (!m.intra)
      delay[m.from] = pending[m.from]; // copies before this network send
  }
  for (std::size_t r = 0; r < first.size(); r++) {
    const double bus = bus_bytes[s.host_of_rank[r]] / s.memory_bandwidth_on(s.host_of_rank[r]);
    first[r] = delay[r] > 0 && delay[r] >= s.protocols.dynamic_margin * network_path[r] && bus < network_path[r];
  }
  return first;
}

/** The message gaps (detailed mode): a rank posts its eager messages one gap apart (to itself,
 *  the self transport's gap), in the order it posts its sends (neighbour order, or its
 *  network sends first); each message waits for the gaps of the eager messages posted before
 *  it, a message of several parts (unbundled variables) for its own parts' too, until its
 *  last is posted. Messages past the eager limit add no gap (their start-ups and handshakes
 *  are their per-message cost). */
struct PostSchedule {
  std::vector<double> posting_end; ///< per rank: done posting (see Plan::posting_end)
  std::vector<double> at;          ///< per message: its (last part's) post, s after the exchange starts
  std::vector<double> gap;         ///< per message: the gap after each of its parts (0: none)
  std::vector<std::size_t> order;  ///< message indices in the order their ranks post them
};

/** Per rank: the time MPI spends passing over posted receives while it matches the messages
 *  the rank receives (Setup::match_scan_*), over the messages the rank posts. A rank posts its
 *  receives in its neighbour order, as the MPI program does: from a source, the receive for
 *  the neighbour at offset o and variable p expects the message the source sends with offset
 *  -o and variable p (their tag). The source sends in `send_order` (its neighbour order, or
 *  its network sends first); a message passes over the receives from it still posted before
 *  its own: over all of them, the inversions between the two orders (counted with a Fenwick
 *  tree). */
std::vector<double> matching_per_post(const Setup& s, const std::vector<RankMessage>& msgs,
                                      const std::vector<std::size_t>& send_order)
{
  const auto ranks = static_cast<std::size_t>(s.grid.ranks());
  std::vector<double> seconds(ranks, 0), posts(ranks, 0);
  if (s.match_scan_intra <= 0 && s.match_scan_inter <= 0 && s.match_scan_self <= 0)
    return seconds;
  using Key = std::tuple<int, int, int, std::int64_t>; // offset the message comes with, its part
  // Per (receiver, source): the position of each receive it posts, in order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<Key, std::size_t>> posted;
  for (const auto& m : msgs) {
    auto& list = posted[{m.from, m.to}];
    for (std::int64_t p = 0; p < m.parts; p++)
      list.emplace(Key{-m.offset[0], -m.offset[1], -m.offset[2], m.first_part + p}, list.size());
  }
  // Per (receiver, source): the receives already matched (a Fenwick tree over positions).
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> matched;
  for (std::size_t i : send_order) {
    const RankMessage& m = msgs[i];
    const auto& list = posted.at({m.to, m.from});
    auto& tree = matched[{m.to, m.from}];
    tree.resize(list.size() + 1, 0);
    const double cost = m.self() ? s.match_scan_self : m.intra ? s.match_scan_intra : s.match_scan_inter;
    for (std::int64_t p = 0; p < m.parts; p++) {
      const auto it = list.find(Key{m.offset[0], m.offset[1], m.offset[2], m.first_part + p});
      if (it == list.end())
        continue;
      std::size_t before = 0; // receives before it already matched
      for (std::size_t i = it->second; i > 0; i -= i & (~i + 1))
        before += static_cast<std::size_t>(tree[i]);
      for (std::size_t i = it->second + 1; i < tree.size(); i += i & (~i + 1))
        tree[i]++;
      seconds[static_cast<std::size_t>(m.to)] += cost * static_cast<double>(it->second - before);
    }
    posts[static_cast<std::size_t>(m.from)] += static_cast<double>(m.parts);
  }
  for (std::size_t r = 0; r < ranks; r++)
    seconds[r] = posts[r] > 0 ? seconds[r] / posts[r] : 0;
  return seconds;
}

PostSchedule schedule_posts(const Setup& s, const std::vector<RankMessage>& msgs,
                            const std::vector<char>& network_first)
{
  PostSchedule schedule;
  std::vector<double>& posting_end = schedule.posting_end;
  posting_end.assign(static_cast<std::size_t>(s.grid.ranks()), 0);
  schedule.at.assign(msgs.size(), 0);
  schedule.gap.assign(msgs.size(), 0);
  std::vector<double> posted(posting_end.size(), 0); // gaps so far, per rank
  // The order each rank posts its sends in: msgs hold each rank's messages together, in
  // neighbour order; a rank that sends over the network first posts its intra-node eager
  // messages last.
  std::vector<std::size_t> order;
  for (std::size_t first = 0; first < msgs.size();) {
    std::size_t end = first;
    while (end < msgs.size() && msgs[end].from == msgs[first].from)
      end++;
    const bool net_first = s.mode == Mode::Detailed && network_first[static_cast<std::size_t>(msgs[first].from)];
    for (std::size_t i = first; i < end; i++)
      if (!(net_first && msgs[i].intra && msgs[i].protocol == Protocol::Eager))
        order.push_back(i);
    if (net_first)
      for (std::size_t i = first; i < end; i++)
        if (msgs[i].intra && msgs[i].protocol == Protocol::Eager)
          order.push_back(i);
    first = end;
  }
  // Each post also carries its share of the rank's matching (none in SMPI mode).
  const std::vector<double> matching =
      s.mode == Mode::Detailed ? matching_per_post(s, msgs, order) : std::vector<double>(posting_end.size(), 0);
  // Per (rank, peer within its host): the bytes of its eager messages to it so far, with
  // their headers and rounding (what its fast box holds, while the peer is busy posting its own).
  std::map<std::pair<std::int64_t, std::int64_t>, double> in_fast_box;
  auto post = [&](std::size_t i) {
    schedule.order.push_back(i);
    if (s.mode != Mode::Detailed)
      return; // SMPI mode: what SMPI simulates, which charges no gap
    const RankMessage& m = msgs[i];
    bool queued = false;
    if (m.protocol == Protocol::Eager && m.intra && !m.self() && s.queues()) {
      double& held = in_fast_box[{m.from, m.to}];
      held += s.fast_box_footprint(m.bytes) * static_cast<double>(m.parts);
      queued = held > s.fast_box_bytes;
    }
    const double gap = m.protocol == Protocol::Eager ? s.message_gap(m.bytes, m.intra, m.self(), queued) : 0;
    const auto r = static_cast<std::size_t>(m.from);
    const double step = gap + matching[r]; // each part's time on the rank
    double& at = posted[r];
    const double last = at + step * static_cast<double>(m.parts - 1);
    schedule.at[i] = last;
    schedule.gap[i] = gap;
    posting_end[r] = std::max(posting_end[r], m.from == m.to ? last + step : last);
    at += step * static_cast<double>(m.parts);
  };
  for (std::size_t i : order)
    post(i);
  return schedule;
}

/** A copy's time with every rank of its node copying at once on the node's bus (as they do in
 *  a symmetric exchange), at least one core's: what decides whether it fits in a gap. */
double busy_copy_seconds(const Setup& s, simgrid::s4u::Host* h, double bytes, double ranks_on_node)
{
  const CopyCost c = s.intra_copy_on(h, bytes);
  return std::max(c.least_seconds, c.bus_bytes * ranks_on_node / s.memory_bandwidth_on(h));
}

/** Per message: the share of its copy out done inside its receiver's gaps. An intra-node
 *  eager message with gaps that is in, by the plan, before its receiver is done posting
 *  (post + in-flight time < the receiver's posting end) was copied out while the receiver
 *  posted. A gap was measured with that work in it, and with the copy in of the receiver's
 *  own message of that gap (which the model charges after each wait): what the message's
 *  gap (its sender's at its size, standing for the receiver's slot: in a symmetric exchange
 *  they are alike) leaves after one copy in of its size hides the copy out, its node's ranks
 *  all copying; what does not fit is left to copy (all of it where a copy in takes the whole
 *  gap). */
std::vector<double> hidden_in_gaps(const Setup& s, const std::vector<RankMessage>& msgs,
                                   const PostSchedule& schedule, const std::vector<double>& arrival,
                                   const std::map<simgrid::s4u::Host*, double>& ranks_on)
{
  std::vector<double> hidden(msgs.size(), 0);
  for (std::size_t i = 0; i < msgs.size(); i++) {
    const RankMessage& m = msgs[i];
    if (!m.copied_out() || m.protocol != Protocol::Eager || schedule.gap[i] <= 0 ||
        schedule.at[i] + arrival[i] >= schedule.posting_end[static_cast<std::size_t>(m.to)])
      continue;
    auto* h = s.host_of_rank[m.to];
    const double copy = busy_copy_seconds(s, h, m.bytes, ranks_on.at(h));
    hidden[i] = copy > 0 ? std::clamp((schedule.gap[i] - copy) / copy, 0.0, 1.0) : 1.0;
  }
  return hidden;
}

/** What a node copies out once its receives are posted (node granularity): per agent, the
 *  copy-out of its intra-node receives that were not received inside the gaps, the least time
 *  of each rank's (one core each, the ranks side by side: the longest), their bus bytes, and
 *  the in-flight time of the latest eager one from another rank; of a copy partly hidden in
 *  the gaps, what is left. (A rank's copier takes its transfers one by one:
 *  Transfer::hidden_in_gaps.) */
void receives_after_posting(const Setup& s, const std::vector<RankMessage>& msgs, const std::vector<double>& hidden,
                            const std::vector<double>& arrival, const std::vector<double>& copy_out_least,
                            const std::vector<std::int64_t>& agent_of_rank, Plan& plan)
{
  const auto agents = plan.host.size();
  plan.copy_least_in.assign(agents, 0);
  plan.copy_bus_in.assign(agents, 0);
  plan.eager_latency_in.assign(agents, 0);
  std::map<std::int64_t, double> receiver_least;
  for (std::size_t i = 0; i < msgs.size(); i++) {
    const RankMessage& m = msgs[i];
    if (!m.copied_out() || hidden[i] >= 1)
      continue;
    const CopyCost c = s.intra_copy_on(s.host_of_rank[m.from], m.bytes);
    const double parts = static_cast<double>(m.parts) * (1 - hidden[i]);
    const auto a = static_cast<std::size_t>(agent_of_rank[m.to]);
    plan.copy_bus_in[a] += c.bus_bytes * parts;
    plan.copy_least_in[a] = std::max(plan.copy_least_in[a], receiver_least[m.to] += copy_out_least[i] * parts);
    plan.eager_latency_in[a] = std::max(plan.eager_latency_in[a], arrival[i]);
  }
}

/** Node granularity, detailed mode: when a node's intra-node eager transfer is posted and what
 *  of its senders' copies into the shared buffers is left by then. A rank copies a message in
 *  as it posts it, once it has waited for its gaps (as its actor does at rank granularity): a
 *  copy that fits in a gap (its node's ranks all copying: busy_copy_seconds) is done before
 *  the next post. So what is
 *  left of a rank's copies at its last intra-node eager post are those since its last wait
 *  for a gap (all of them without gaps). The node posts once its ranks' last waits are over
 *  (the latest), then copies what is left: the least time of the rank with the most, the bus
 *  bytes of them all. */
void node_copies_in(const Setup& s, const std::vector<RankMessage>& msgs, const PostSchedule& schedule,
                    const std::map<simgrid::s4u::Host*, double>& ranks_on,
                    const std::vector<std::size_t>& transfer_of, std::vector<Transfer>& transfers)
{
  struct Rank {
    double clock = 0, waited = 0, left = 0, left_bus = 0; // its actor's time; since its last wait
    double posted_waited = 0, posted_left = 0, posted_left_bus = 0; // as at its last intra eager post
  };
  std::map<std::int64_t, Rank> ranks;
  for (std::size_t i : schedule.order) {
    const RankMessage& m = msgs[i];
    Rank& r = ranks[m.from];
    if (schedule.at[i] > r.clock) { // waits for its gaps
      r.clock = r.waited = schedule.at[i];
      r.left = r.left_bus = 0;
    }
    if (m.intra && m.protocol == Protocol::Eager) {
      auto* h = s.host_of_rank[m.from];
      const CopyCost c = s.intra_copy_on(h, m.bytes);
      const double parts = static_cast<double>(m.parts);
      r.clock += busy_copy_seconds(s, h, m.bytes, ranks_on.at(h)) * parts;
      r.left += c.least_seconds * parts;
      r.left_bus += c.bus_bytes * parts;
      r.posted_waited = r.waited;
      r.posted_left = r.left;
      r.posted_left_bus = r.left_bus;
    }
  }
  // Per transfer (a node's intra-node eager messages), each sending rank once.
  std::map<std::size_t, std::map<std::int64_t, const Rank*>> senders;
  for (std::size_t i = 0; i < msgs.size(); i++)
    if (msgs[i].intra && msgs[i].protocol == Protocol::Eager)
      senders[transfer_of[i]][msgs[i].from] = &ranks[msgs[i].from];
  for (const auto& [ti, of] : senders) {
    Transfer& t = transfers[ti];
    t.post_delay = t.copy_least = t.copy_in_bus_bytes = 0;
    for (const auto& [rank, r] : of) {
      t.post_delay = std::max(t.post_delay, r->posted_waited);
      t.copy_least = std::max(t.copy_least, r->posted_left);
      t.copy_in_bus_bytes += r->posted_left_bus;
    }
  }
}

} // namespace

Plan make_plan(const Setup& s, const RouteFunction& route)
{
  auto msgs = rank_messages(s);
  std::vector<char> rank_network_first(static_cast<std::size_t>(s.grid.ranks()), s.protocols.network_first ? 1 : 0);
  if (s.policy == Policy::Dynamic && s.mode == Mode::Detailed) {
    const auto chosen = choose_dynamic(s, route, msgs);
    for (std::size_t r = 0; r < chosen.size(); r++)
      rank_network_first[r] = rank_network_first[r] || chosen[r];
  }

  // Detailed mode: the variables of an unbundled eager message are posted one gap apart, so
  // they are transfers of their own (together they would move all their bytes after the last
  // post, which the earlier gaps had already paid for).
  if (s.mode == Mode::Detailed && !s.bundled) {
    // A rank's eager messages to another rank of its host that overflow its fast box take the
    // queued gap: each pair whose messages hold more than it, with a queued gap.
    std::map<std::pair<std::int64_t, std::int64_t>, double> fast_box_load;
    if (s.queues())
      for (const auto& m : msgs)
        if (m.protocol == Protocol::Eager && m.intra && !m.self())
          fast_box_load[{m.from, m.to}] += s.fast_box_footprint(m.bytes) * static_cast<double>(m.parts);
    auto overflows = [&](const RankMessage& m) {
      const auto it = fast_box_load.find({m.from, m.to});
      return it != fast_box_load.end() && it->second > s.fast_box_bytes &&
             s.message_gap(m.bytes, m.intra, m.self(), true) > 0;
    };
    std::vector<RankMessage> split;
    split.reserve(msgs.size());
    for (const auto& m : msgs) {
      const bool gapped = m.protocol == Protocol::Eager && (s.message_gap(m.bytes, m.intra, m.self()) > 0 || overflows(m));
      for (std::int64_t k = 0; k < (gapped ? m.parts : 1); k++) {
        split.push_back(m);
        if (gapped)
          split.back().parts = 1, split.back().first_part = k;
      }
    }
    msgs = std::move(split);
  }

  Plan plan;
  const std::int64_t ranks = s.grid.ranks();
  std::vector<std::int64_t> agent_of_rank(static_cast<std::size_t>(ranks));
  if (s.granularity == Granularity::Node) {
    std::map<simgrid::s4u::Host*, std::int64_t> index;
    for (std::int64_t r = 0; r < ranks; r++) {
      auto* h = s.host_of_rank[r];
      auto it = index.find(h);
      if (it == index.end()) {
        it = index.emplace(h, static_cast<std::int64_t>(plan.host.size())).first;
        plan.host.push_back(h);
        plan.ranks.emplace_back();
      }
      agent_of_rank[r] = it->second;
      plan.ranks[it->second].push_back(r);
    }
  } else {
    for (std::int64_t r = 0; r < ranks; r++) {
      agent_of_rank[r] = r;
      plan.host.push_back(s.host_of_rank[r]);
      plan.ranks.push_back({r});
    }
  }

  // Work per agent: a node's ranks run on its cores, as many rounds as they need.
  const auto agents = plan.host.size();
  plan.flops.assign(agents, 0);
  plan.interior_flops.assign(agents, 0);
  for (std::size_t a = 0; a < agents; a++) {
    const double rounds = std::ceil(static_cast<double>(plan.ranks[a].size()) /
                                    static_cast<double>(plan.host[a]->get_core_count()));
    for (std::int64_t r : plan.ranks[a]) {
      const Ext ext = s.grid.local_extent(r);
      double inner = 1;
      for (int d = 0; d < 3; d++)
        inner *= static_cast<double>(std::max<std::int64_t>(ext[d] - 2 * s.spec.width, 0));
      const double cells = static_cast<double>(ext[0] * ext[1] * ext[2]);
      const double per_cell = s.flops_per_cell_on(plan.host[a]);
      plan.flops[a] = std::max(plan.flops[a], cells * per_cell * (plan.ranks[a].size() > 1 ? rounds : 1));
      plan.interior_flops[a] =
          std::max(plan.interior_flops[a], inner * per_cell * (plan.ranks[a].size() > 1 ? rounds : 1));
    }
  }

  // When each message is posted (message gaps), before the transfers that carry them.
  const PostSchedule schedule = schedule_posts(s, msgs, rank_network_first);
  std::map<simgrid::s4u::Host*, double> ranks_on; // ranks per node
  for (auto* h : s.host_of_rank)
    ranks_on[h] += 1;

  // Transfers: one per message at rank granularity, one per (node pair, protocol) at node
  // granularity, kept in the order their first message has (the neighbour order). Between
  // two nodes, the messages posted before the pair's last post are a transfer of their own,
  // which leaves at their first post: its ranks' messages move while later ones are still
  // being posted (at rank granularity each from its own post).
  std::map<std::tuple<std::int64_t, std::int64_t, int>, double> last_post;
  if (s.granularity == Granularity::Node)
    for (std::size_t i = 0; i < msgs.size(); i++)
      if (!msgs[i].intra) {
        const auto key = std::make_tuple(agent_of_rank[msgs[i].from], agent_of_rank[msgs[i].to],
                                         static_cast<int>(msgs[i].protocol));
        auto [it, added] = last_post.emplace(key, schedule.at[i]);
        it->second = std::max(it->second, schedule.at[i]);
      }
  std::map<std::tuple<std::int64_t, std::int64_t, int, bool>, std::size_t> merged;
  // One core's least copy times, summed per rank: what each sender copies in (eager) per
  // transfer, what each receiver copies out or single-copies.
  std::map<std::pair<std::size_t, std::int64_t>, double> sender_least;
  std::map<std::int64_t, double> receiver_startups; // s of single-copy start-ups per rank
  std::vector<std::size_t> transfer_of; // per message
  // Intra-node eager messages in flight (eager_in_flight), by node, size and parts.
  std::map<std::tuple<simgrid::s4u::Host*, double, std::int64_t>, double> intra_latency;
  std::vector<double> arrival(msgs.size(), 0); // per message: its in-flight time within the node
  // Per message: the least time of one copy out (one core's), a single copy between two ranks
  // no faster than the loopback at its size where the protocols say so.
  std::vector<double> copy_out_least(msgs.size(), 0);
  std::map<std::pair<simgrid::s4u::Host*, double>, double> single_rate; // loopback B/s by node and size
  // Per message: the start-up of a single copy between two ranks (cached by node and size).
  std::vector<double> startup(msgs.size(), 0);
  std::map<std::pair<simgrid::s4u::Host*, double>, double> startup_at;
  for (std::size_t i = 0; i < msgs.size(); i++) {
    const RankMessage& m = msgs[i];
    if (!m.intra)
      continue;
    auto* h = s.host_of_rank[m.to];
    if (m.copied_out())
      copy_out_least[i] = s.intra_copy_on(s.host_of_rank[m.from], m.bytes).least_seconds;
    if (m.protocol == Protocol::SingleCopy && m.from != m.to) {
      auto [it, added] = startup_at.emplace(std::make_pair(h, m.bytes), 0.0);
      if (added)
        it->second = single_copy_startup_on(s, route, h, m.bytes);
      startup[i] = it->second;
    }
    if (m.protocol == Protocol::SingleCopy && m.from != m.to && s.mode == Mode::Detailed &&
        s.protocols.single_copy_at_route_rate) {
      auto [it, added] = single_rate.emplace(std::make_pair(h, m.bytes), 0.0);
      if (added)
        it->second = route(h, h, m.bytes, true).bandwidth;
      if (it->second > 0 && std::isfinite(it->second))
        copy_out_least[i] = std::max(copy_out_least[i], m.bytes / it->second);
    }
  }
  for (const auto& m : msgs) {
    plan.messages_by[m.intra ? 1 : 0][static_cast<int>(m.protocol)] += m.parts;
    plan.bytes_by[m.intra ? 1 : 0] += m.bytes * static_cast<double>(m.parts);
    plan.classes[{m.intra ? 1 : 0, m.kind, m.bytes, static_cast<int>(m.protocol)}] += m.parts;
    const std::int64_t from = agent_of_rank[m.from], to = agent_of_rank[m.to];
    std::size_t ti = plan.transfers.size();
    const std::size_t mi = transfer_of.size(); // this message's index
    bool early = false;
    if (s.granularity == Granularity::Node) {
      early = !m.intra && schedule.at[mi] < last_post.at(std::make_tuple(from, to, static_cast<int>(m.protocol)));
      const auto key = std::make_tuple(from, to, static_cast<int>(m.protocol), early);
      auto it = merged.find(key);
      if (it != merged.end())
        ti = it->second;
      else
        merged.emplace(key, ti);
    }
    if (ti == plan.transfers.size()) {
      plan.transfers.push_back({from, to, m.intra, m.protocol, 0, 0, std::min(s.protocols.chunk_size, m.bytes)});
      plan.transfers.back().post_delay = schedule.at[mi];
    }
    transfer_of.push_back(ti);
    Transfer& t = plan.transfers[ti];
    // Posted when its last message is; an early one when its first is.
    t.post_delay = early ? std::min(t.post_delay, schedule.at[mi]) : std::max(t.post_delay, schedule.at[mi]);
    t.total += m.bytes * static_cast<double>(m.parts);
    t.messages += m.parts;
    t.first_chunk = std::min(t.first_chunk, std::min(s.protocols.chunk_size, m.bytes));
    if (m.intra) {
      const CopyCost c = s.intra_copy_on(s.host_of_rank[m.from], m.bytes);
      const double parts = static_cast<double>(m.parts);
      if (m.copied_out())
        t.copy_bus_bytes += c.bus_bytes * parts;
      t.copy_in_bus_bytes += c.bus_bytes * parts;
      if (m.protocol == Protocol::Eager)
        t.copy_least = std::max(t.copy_least, sender_least[{ti, m.from}] += c.least_seconds * parts);
      t.copy_out_least += copy_out_least[mi] * parts;
      if (m.protocol == Protocol::SingleCopy && m.from != m.to) {
        receiver_startups[m.to] += startup[mi] * parts;
        t.copy_startup += startup[mi] * parts;
      }
      if (s.mode == Mode::Detailed && m.protocol == Protocol::Eager && m.from != m.to) { // arrives that long after
        auto* h = s.host_of_rank[m.to];
        const auto key = std::make_tuple(h, m.bytes, m.parts);
        auto it = intra_latency.find(key);
        if (it == intra_latency.end())
          it = intra_latency.emplace(key, eager_in_flight(s, route, h, m.bytes, m.parts)).first;
        arrival[mi] = it->second;
        t.arrival_latency = std::max(t.arrival_latency, it->second);
      }
    }
  }
  plan.copy_startup_in.assign(agents, 0);
  for (const auto& [rank, seconds] : receiver_startups) {
    double& in = plan.copy_startup_in[static_cast<std::size_t>(agent_of_rank[rank])];
    in = std::max(in, seconds);
  }
  const std::vector<double> hidden = hidden_in_gaps(s, msgs, schedule, arrival, ranks_on);
  if (s.granularity == Granularity::Rank) // where a gapped transfer is one message
    for (std::size_t i = 0; i < msgs.size(); i++)
      if (hidden[i] > 0)
        plan.transfers[transfer_of[i]].hidden_in_gaps = hidden[i];
  receives_after_posting(s, msgs, hidden, arrival, copy_out_least, agent_of_rank, plan);
  plan.posting_end.assign(agents, 0);
  for (std::int64_t r = 0; r < ranks; r++) { // a node: its latest rank
    double& end = plan.posting_end[static_cast<std::size_t>(agent_of_rank[r])];
    end = std::max(end, schedule.posting_end[static_cast<std::size_t>(r)]);
  }
  if (s.granularity == Granularity::Node && s.mode == Mode::Detailed)
    node_copies_in(s, msgs, schedule, ranks_on, transfer_of, plan.transfers);
  // Node granularity: its posts in time order, its aggregated copy in after the network sends
  // of its time (Exchange::exchange_detailed).
  plan.network_first.assign(agents, 0);
  if (s.granularity == Granularity::Rank)
    plan.network_first = rank_network_first;
  plan.out.assign(agents, {});
  plan.in.assign(agents, {});
  for (std::size_t i = 0; i < plan.transfers.size(); i++) {
    plan.out[plan.transfers[i].from].push_back(i);
    plan.in[plan.transfers[i].to].push_back(i);
  }
  return plan;
}

} // namespace halo
