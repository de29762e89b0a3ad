/* halo: registration, parameters, and the set-up that turns them into an Exchange. */
#include "exchange.hpp"
#include "halo_geometry.hpp"

#include <simcore/error.hpp>
#include <simcore/name_pattern.hpp>
#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>
#include <simcore/process_grid.hpp>

#include <xbt/log.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(model_halo);

namespace {

using simcore::ParamSpec;
using simcore::ParamType;

std::string list_text(const halo::Ext& e)
{
  return std::to_string(e[0]) + "," + std::to_string(e[1]) + "," + std::to_string(e[2]);
}

/** SMPI mode's smpi/ois (what SMPI's MPI_Isend sleeps before it posts a message): a law in
 *  SimGrid's syntax, read as SMPI reads it, or the name of a placement whose message gaps the
 *  profile holds (its law as SMPI reads it, none past the placement's fitted protocol switch,
 *  where the law has no data). The law SMPI would take goes to the log (verbose), for smpirun. */
simcore::GapLaw smpi_ois(const simcore::SimContext& ctx, halo::Mode mode)
{
  using P = simcore::MessageGaps::Placement;
  const std::string v = ctx.params().get_string("smpi_ois");
  if (mode != halo::Mode::Smpi)
    throw ctx.param_error("smpi_ois", "parameter 'smpi_ois' is SMPI's overhead of MPI_Isend and applies to mode "
                                      "'smpi' only (the detailed mode charges message_gap); expected mode=smpi");
  std::string text = v;
  if (v == "intra-node" || v == "inter-node" || v == "self") {
    const P placement = v == "intra-node" ? P::IntraNode : v == "inter-node" ? P::InterNode : P::Self;
    const auto& law = ctx.calibration().message_gaps().law(placement);
    if (!law)
      throw ctx.param_error("smpi_ois", "parameter 'smpi_ois' = '" + v + "': the calibration profile has no " +
                                            "message_gaps." + v + "; expected a profile fitted from calib_pingpong's " +
                                            (placement == P::Self ? "self" : "exchange") +
                                            " windows, or a law BYTES:SECONDS:SECONDS_PER_BYTE;...");
    const std::string cut = placement == P::InterNode ? "network_protocol_switch_inter_node"
                                                      : "network_protocol_switch_intra_node";
    std::optional<double> none_from;
    if (ctx.calibration().has_rate(cut))
      none_from = ctx.calibration().rate(cut, simcore::Quantity::Size);
    text = law->smpi_text(none_from);
  }
  simcore::GapLaw law;
  try {
    law = simcore::GapLaw::parse_smpi(text, "");
  } catch (const simcore::InputError& e) {
    throw ctx.param_error("smpi_ois", "parameter 'smpi_ois' = '" + v + "': " + e.detail() +
                                          "; or intra-node, inter-node or self (the profile's message gaps)");
  }
  XBT_VERB("smpi_ois: %s (for smpirun: --cfg=smpi/ois:'%s')", v.c_str(), text.c_str());
  return law;
}

/** The cached-copy rates of `host` (all hosts: ""): each the scenario's where it gives one,
 *  else the profile's (its host type's, else profile-wide), else none. */
halo::CachedCopies cached_copies(const simcore::SimContext& ctx, const std::string& host)
{
  const auto& p = ctx.params();
  const auto& profile = ctx.calibration();
  auto take = [&](const char* name, simcore::Quantity q) {
    if (p.get_double(name) > 0)
      return p.get_double(name);
    return host.empty() ? profile.rate_or(name, q, 0) : profile.rate_or(name, host, q, 0);
  };
  halo::CachedCopies c;
  c.bandwidth = take("cached_copy_bandwidth", simcore::Quantity::Bandwidth);
  c.one_core = take("cached_copy_bandwidth_one_core", simcore::Quantity::Bandwidth);
  c.limit = take("cached_copy_limit", simcore::Quantity::Size);
  if (c.bandwidth > 0 && !(c.limit > 0))
    throw ctx.param_error("cached_copy_bandwidth",
                          std::string(p.get_double("cached_copy_bandwidth") > 0 ? "parameter" : "the profile's rate") +
                              " 'cached_copy_bandwidth' is set but no 'cached_copy_limit' (in the scenario or the "
                              "profile); expected the largest copy that runs at the cached rate");
  return c;
}

halo::Setup build_setup(const simcore::SimContext& ctx)
{
  const auto& p = ctx.params();
  halo::Setup s;
  const std::int64_t ranks = p.get_int("ranks");
  const auto& procs = p.get_int_list("procs");
  if (procs.empty()) {
    const auto g = simcore::balanced_grid(ranks, 3);
    s.grid.procs = {g[0], g[1], g[2]};
  } else {
    if (procs.size() != 3)
      throw ctx.param_error("procs", "parameter 'procs' has " + std::to_string(procs.size()) +
                                         " values; expected 3 (px,py,pz) or none");
    s.grid.procs = {procs[0], procs[1], procs[2]};
    if (s.grid.ranks() != ranks)
      throw ctx.param_error("procs", "the process grid " + list_text(s.grid.procs) + " holds " +
                                         std::to_string(s.grid.ranks()) + " ranks but 'ranks' = " +
                                         std::to_string(ranks) + "; expected px x py x pz = ranks");
  }
  const auto& cells = p.get_int_list("cells");
  const auto& local = p.get_int_list("local_cells");
  if (!cells.empty()) {
    if (cells.size() != 3)
      throw ctx.param_error("cells", "parameter 'cells' has " + std::to_string(cells.size()) + " values; expected 3");
    s.grid.cells = {cells[0], cells[1], cells[2]};
  } else {
    if (local.size() != 3)
      throw ctx.param_error("local_cells", "parameter 'local_cells' has " + std::to_string(local.size()) +
                                               " values; expected 3");
    for (int d = 0; d < 3; d++)
      s.grid.cells[d] = local[d] * s.grid.procs[d];
  }
  const bool periodic = p.get_bool("periodic");
  s.grid.periodic = {periodic, periodic, periodic};
  s.spec.stencil = p.get_string("stencil") == "27-point" ? halo::Stencil::Point27 : halo::Stencil::Point7;
  s.spec.width = p.get_int("halo_width");
  s.spec.variables = p.get_int("variables");
  s.spec.element_size = static_cast<std::int64_t>(p.get_double("element_size"));
  const std::string problem = halo::check_decomposition(s.grid, s.spec);
  if (!problem.empty())
    throw ctx.param_error(cells.empty() ? "local_cells" : "cells", "the grid " + list_text(s.grid.cells) +
                                                                       " over " + list_text(s.grid.procs) + " ranks: " +
                                                                       problem);
  s.bundled = p.get_bool("bundled");
  s.iterations = p.get_int("iterations");
  // The scenario's value wins, even one equal to the default; else the profile's measured
  // cost of a cell update (calib_stencil against calib_dgemm's core speed); else the default.
  s.flops_per_cell = p.given("flops_per_cell")
                         ? p.get_double("flops_per_cell")
                         : ctx.calibration().rate_or("flops_per_cell", simcore::Quantity::Flops, p.get_double("flops_per_cell"));
  s.overlap = p.get_bool("overlap");
  s.memory_bandwidth = p.get_double("memory_bandwidth");
  if (s.memory_bandwidth == 0)
    s.memory_bandwidth = ctx.calibration().rate_or("memcpy_bandwidth", simcore::Quantity::Bandwidth, 20e9);
  s.protocols.inter_eager_limit = p.get_double("inter_eager_limit");
  s.protocols.intra_eager_limit = p.get_double("intra_eager_limit");
  // The detailed protocols: where the scenario gives no eager limit, the switch that the
  // profile's network fit found (its first size past the step: the messages below it went
  // eager). SMPI mode keeps SMPI's own detached threshold (the default of 64 KiB).
  if (p.get_string("mode") != "smpi") {
    if (!p.given("inter_eager_limit"))
      s.protocols.inter_eager_limit =
          ctx.calibration().rate_or("network_protocol_switch_inter_node", simcore::Quantity::Size,
                                      s.protocols.inter_eager_limit + 1) - 1;
    if (!p.given("intra_eager_limit"))
      s.protocols.intra_eager_limit =
          ctx.calibration().rate_or("network_protocol_switch_intra_node", simcore::Quantity::Size,
                                      s.protocols.intra_eager_limit + 1) - 1;
  }
  // The single copy's start-up: the scenario's, else the fixed cost of an intra-node message
  // past the protocol switch in the profile's network fit (request, answer, set-up), else 2 us.
  s.protocols.single_copy_startup =
      p.given("single_copy_startup")
          ? p.get_double("single_copy_startup")
          : ctx.calibration().rate_or("network_latency_past_switch_intra_node", simcore::Quantity::Time,
                                      p.get_double("single_copy_startup"));
  // The single copy's rate: where a profile carries an intra-node network fit, or where the
  // scenario says so, no faster than the loopback at the message's size (with the fit: its
  // rate there, a kernel-assisted copy's with both ranks copying).
  const std::string single_rate = p.get_string("single_copy_rate");
  s.protocols.single_copy_at_route_rate =
      single_rate == "route" || (single_rate == "auto" && ctx.calibration().network_factors().has_intra_node());
  // At that rate with a fit, a single copy starts up in the fit's latency at its size (the
  // intercept of the segment holding it): alone, it takes what the ping-ping measured there.
  // The scenario's start-up, where given, holds for every size.
  s.protocols.single_copy_startup_at_route_latency = s.protocols.single_copy_at_route_rate &&
                                                     ctx.calibration().network_factors().has_intra_node() &&
                                                     !p.given("single_copy_startup");
  // The message gaps: the scenario's, else the profile's law by size and placement.
  s.message_gaps = ctx.calibration().message_gaps();
  if (p.given("message_gap"))
    s.fixed_message_gap = p.get_double("message_gap");
  if (p.given("self_message_gap"))
    s.fixed_self_gap = p.get_double("self_message_gap");
  // Past a peer's fast box (within a host): the scenario's queued gap, else the profile's.
  if (p.given("queued_message_gap"))
    s.fixed_queued_gap = p.get_double("queued_message_gap");
  // The fast box (detailed mode): capacity, header and slots fitted together, so taken
  // together: the scenario's (each not given at its default) where it gives any, else the
  // profile's (calib_pingpong's fast-box sweep), else Open MPI's defaults.
  const std::vector<std::string> box{"fast_box_bytes", "fast_box_header", "fast_box_alignment"};
  const bool box_given = std::any_of(box.begin(), box.end(), [&](const std::string& n) { return p.given(n); });
  const auto fast_box = [&](const std::string& name) {
    return box_given || p.get_string("mode") == "smpi"
               ? p.get_double(name)
               : ctx.calibration().rate_or(name, simcore::Quantity::Size, p.get_double(name));
  };
  s.fast_box_bytes = fast_box(box[0]);
  s.fast_box_header = fast_box(box[1]);
  s.fast_box_alignment = fast_box(box[2]);
  // Matching (detailed mode): the scenario's, else the profile's by placement (calib_pingpong's
  // matching windows), else none.
  const auto match_scan = [&](const char* param, const char* rate) {
    if (p.given(param) || p.get_string("mode") == "smpi")
      return p.get_double(param);
    return ctx.calibration().rate_or(rate, simcore::Quantity::Time, 0.0);
  };
  s.match_scan_intra = match_scan("match_scan_cost", "match_scan_seconds_intra_node");
  // Between hosts the same matching runs on the receiver's core: a profile of one node's
  // traces gives its intra-node rate to both.
  s.match_scan_inter = ctx.calibration().has_rate("match_scan_seconds_inter_node")
                           ? match_scan("match_scan_cost", "match_scan_seconds_inter_node")
                           : s.match_scan_intra;
  s.match_scan_self = match_scan("self_match_scan_cost", "match_scan_seconds_self");
  s.protocols.inter_large =
      p.get_string("inter_large_protocol") == "pipelined" ? halo::Protocol::Pipelined : halo::Protocol::Rendezvous;
  s.protocols.chunk_size = p.get_double("pipeline_chunk");
  s.protocols.nic_dma = p.get_bool("nic_dma");
  s.protocols.dynamic_margin = p.get_double("dynamic_margin");
  s.protocols.network_first = p.get_string("send_order") == "network_first";
  s.policy = p.get_string("policy") == "dynamic" ? halo::Policy::Dynamic : halo::Policy::Static;
  s.mode = p.get_string("mode") == "smpi" ? halo::Mode::Smpi : halo::Mode::Detailed;
  s.granularity = p.get_string("granularity") == "node" ? halo::Granularity::Node : halo::Granularity::Rank;
  s.transfers_per_actor = static_cast<std::size_t>(p.get_int("transfers_per_actor"));
  if (s.mode == halo::Mode::Smpi && s.granularity == halo::Granularity::Node)
    throw ctx.param_error("granularity", "parameter 'granularity' = 'node' cannot be used with mode 'smpi' "
                                         "(SMPI sends every message on its own); expected 'rank'");
  if (!p.get_string("smpi_ois").empty())
    s.smpi_ois = smpi_ois(ctx, s.mode);

  // Placement: `ranks_per_node` ranks on each matching host, block or round robin.
  std::regex re;
  try {
    re = simcore::compile_name_pattern(p.get_string("hosts"), "", "parameter 'hosts' =");
  } catch (const simcore::InputError& e) {
    throw ctx.param_error("hosts", e.detail());
  }
  std::vector<simgrid::s4u::Host*> hosts;
  for (auto* h : ctx.hosts_sorted())
    if (std::regex_match(h->get_name(), re))
      hosts.push_back(h);
  if (hosts.empty())
    throw ctx.param_error("hosts", "parameter 'hosts' = '" + p.get_string("hosts") + "' matches no host; expected a regular expression of host names");
  std::int64_t per = p.get_int("ranks_per_node");
  if (per == 0)
    per = hosts.front()->get_core_count();
  const std::int64_t nodes = (ranks + per - 1) / per;
  if (nodes > static_cast<std::int64_t>(hosts.size()))
    throw ctx.param_error("ranks", "parameter 'ranks' = " + std::to_string(ranks) + " needs " + std::to_string(nodes) +
                                       " nodes at " + std::to_string(per) + " ranks per node, but only " +
                                       std::to_string(hosts.size()) + " hosts match; expected at most " +
                                       std::to_string(static_cast<std::int64_t>(hosts.size()) * per) + " ranks, or more hosts");
  const bool round_robin = p.get_string("placement") == "round_robin";
  for (std::int64_t r = 0; r < ranks; r++)
    s.host_of_rank.push_back(hosts[static_cast<std::size_t>(round_robin ? r % nodes : r / per)]);
  // A profile with host types may measure each type on its own: its rates win over the
  // profile-wide ones on the hosts they match (the scenario's values win over both).
  const auto& profile = ctx.calibration();
  for (std::int64_t n = 0; n < nodes; n++) {
    const auto* h = hosts[static_cast<std::size_t>(n)];
    if (!p.given("flops_per_cell"))
      s.host_flops_per_cell[h] = profile.rate_or("flops_per_cell", h->get_name(), simcore::Quantity::Flops, s.flops_per_cell);
    if (p.get_double("memory_bandwidth") == 0)
      s.host_memory_bandwidth[h] = profile.rate_or("memcpy_bandwidth", h->get_name(), simcore::Quantity::Bandwidth,
                                                       s.memory_bandwidth);
    s.host_cached_copies[h] = cached_copies(ctx, h->get_name());
  }
  s.cached_copies = s.host_cached_copies.empty() ? cached_copies(ctx, "") : s.host_cached_copies.begin()->second;
  return s;
}

class HaloModel : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override
  {
    exchange_.emplace(build_setup(ctx));
    exchange_->start(ctx);
  }
  simcore::MemoryNeed memory_need(const simcore::SimContext&) const override { return exchange_->memory_need(); }
  std::vector<simcore::TableSize> table_sizes(const simcore::SimContext&) const override
  {
    return exchange_->table_sizes();
  }
  void report(const simcore::SimContext& ctx, simcore::Results& results) override { exchange_->report(ctx, results); }

private:
  std::optional<halo::Exchange> exchange_;
};

simcore::ModelInfo make_info()
{
  return {"halo",
          "halo exchange of a 3D stencil code: intra-node copies through the memory bus, inter-node messages",
          {
              ParamSpec::integer("ranks", 8, "MPI ranks").within(1, 1e7),
              ParamSpec::integer_list("procs", "", "process grid px,py,pz; empty: chosen like MPI_Dims_create")
                  .within(1, 1e7),
              ParamSpec::integer_list("local_cells", "64,64,64", "cells per rank (weak scaling), if 'cells' is empty")
                  .within(1, 1e9),
              ParamSpec::integer_list("cells", "", "global cells nx,ny,nz (strong scaling); empty: local x procs")
                  .within(1, 1e12),
              ParamSpec::boolean("periodic", true, "periodic boundaries in every dimension"),
              ParamSpec::choice("stencil", {"7-point", "27-point"}, "7-point",
                                "7-point: 6 faces; 27-point: faces, edges and corners"),
              ParamSpec::integer("halo_width", 1, "halo width in cells").within(1, 1e6),
              ParamSpec::integer("variables", 5, "fields exchanged per cell").within(1, 1e6),
              ParamSpec::quantity("element_size", ParamType::Size, "8B", "bytes per cell and field").within(1, 1 << 20),
              ParamSpec::boolean("bundled", true, "one message per neighbour (else one per variable)"),
              ParamSpec::integer("iterations", 10, "iterations").within(1, 1e7),
              ParamSpec::real("flops_per_cell", 50,
                              "work per cell per iteration (flop, at the host's speed); unless given, the "
                              "profile's 'flops_per_cell' (calib_stencil with calib_dgemm), else 50")
                  .within(0, 1e12),
              ParamSpec::boolean("overlap", false, "compute interior cells while exchanging"),
              ParamSpec::string("hosts", ".*", "regular expression: the nodes"),
              ParamSpec::integer("ranks_per_node", 0, "ranks per node; 0 = the node's cores").within(0, 1e6),
              ParamSpec::choice("placement", {"block", "round_robin"}, "block", "how ranks map onto nodes"),
              ParamSpec::quantity("memory_bandwidth", ParamType::Bandwidth, "0",
                                  "a node's memory bus, shared by its copies; 0: the profile's "
                                  "'memcpy_bandwidth', else 20GBps")
                  .at_least(0),
              ParamSpec::quantity("cached_copy_bandwidth", ParamType::Bandwidth, "0",
                                  "detailed mode: intra-node copies up to 'cached_copy_limit' (data in another "
                                  "core's cache) reach this rate, all the node's copies together; 0: the "
                                  "profile's 'cached_copy_bandwidth' (calib_copy), else every copy at memory_bandwidth")
                  .at_least(0),
              ParamSpec::quantity("cached_copy_bandwidth_one_core", ParamType::Bandwidth, "0",
                                  "detailed mode: the rate of one cached copy alone; 0: the profile's, else no "
                                  "bound but the bus")
                  .at_least(0),
              ParamSpec::quantity("cached_copy_limit", ParamType::Size, "0",
                                  "detailed mode: the largest copy at the cached rates; 0: the profile's "
                                  "'cached_copy_limit'")
                  .at_least(0),
              ParamSpec::quantity("inter_eager_limit", ParamType::Size, "64KiB",
                                  "inter-node: larger messages use rendezvous (Open MPI btl_tcp_eager_limit; detailed mode: "
                                  "else below the profile's 'network_protocol_switch_inter_node'; smpi mode: "
                                  "smaller messages are detached sends, as smpi/send-is-detached-thresh)")
                  .at_least(0),
              ParamSpec::quantity("intra_eager_limit", ParamType::Size, "4KiB",
                                  "intra-node: larger messages use a single copy (Open MPI btl_vader_eager_limit; detailed "
                                  "mode: else below the profile's 'network_protocol_switch_intra_node')")
                  .at_least(0),
              ParamSpec::quantity("single_copy_startup", ParamType::Time, "2us",
                                  "set-up cost of a kernel-assisted single copy (CMA/XPMEM); unless given: with "
                                  "single copies at the route's rate and an intra-node network fit, the fit's "
                                  "latency at the message's size; else the profile's "
                                  "'network_latency_past_switch_intra_node', else 2us")
                  .at_least(0),
              ParamSpec::choice("single_copy_rate", {"auto", "bus", "route"}, "auto",
                                "detailed mode: a single copy between two ranks at the bus's and cached-copy rates "
                                "('bus'), or also no faster than the node's loopback at its size ('route': with a "
                                "profile, the intra-node network fit's rate at that size); 'auto': 'route' where the "
                                "profile has an intra-node network fit, else 'bus'"),
              ParamSpec::quantity("message_gap", ParamType::Time, "0s",
                                  "detailed mode: a rank's time between posting one eager message to another "
                                  "rank and the next (each further message of an exchange); unless given, the "
                                  "profile's 'message_gaps' at the message's size and placement "
                                  "(calib_pingpong's exchange_window), else 0")
                  .at_least(0),
              ParamSpec::quantity("self_message_gap", ParamType::Time, "0s",
                                  "detailed mode: the same for a rank's eager messages to itself (MPI's self "
                                  "transport); unless given, the profile's 'message_gaps' for 'self' "
                                  "(calib_pingpong's self_window), else 0")
                  .at_least(0),
              ParamSpec::quantity("queued_message_gap", ParamType::Time, "0s",
                                  "detailed mode: the gap of an eager message to another rank of the host once "
                                  "those the rank posted to it in the iteration fill its fast box (fast_box_bytes); "
                                  "unless given, the profile's 'message_gaps' for 'intra-node-queued' where the "
                                  "other gaps come from the profile (calib_pingpong's long exchange windows), "
                                  "else the message's gap")
                  .at_least(0),
              ParamSpec::quantity("fast_box_bytes", ParamType::Size, "4KiB",
                                  "detailed mode: what a rank's eager messages to one other rank of its host may "
                                  "hold, each its bytes and fast_box_header rounded up to fast_box_alignment; the "
                                  "message that overflows it and those after it take the queued gap; unless the "
                                  "scenario gives it, fast_box_header or fast_box_alignment, the profile's rates of "
                                  "the three names (calib_pingpong's fast-box sweep), else Open MPI's "
                                  "btl_vader_fbox_size and its defaults")
                  .at_least(0),
              ParamSpec::quantity("fast_box_header", ParamType::Size, "24B",
                                  "detailed mode: what each message adds to its bytes in the fast box (headers); "
                                  "from the profile with fast_box_bytes")
                  .at_least(0),
              ParamSpec::quantity("fast_box_alignment", ParamType::Size, "1B",
                                  "detailed mode: a message's bytes in the fast box, with its header, are rounded "
                                  "up to a multiple of this; from the profile with fast_box_bytes")
                  .at_least(1),
              ParamSpec::quantity("match_scan_cost", ParamType::Time, "0s",
                                  "detailed mode: the time MPI takes to pass over one receive still posted from a "
                                  "message's source (another rank) while it matches the message: a rank posts its "
                                  "receives in its neighbour order and its neighbours send in theirs, so a message "
                                  "passes over those posted before its own; the receiver pays it; unless given, the "
                                  "profile's rate match_scan_seconds_intra_node or _inter_node by placement (the "
                                  "intra-node one between hosts too where the profile has no inter-node one; "
                                  "calib_pingpong's matching windows), else 0")
                  .at_least(0),
              ParamSpec::quantity("self_match_scan_cost", ParamType::Time, "0s",
                                  "detailed mode: the same for a rank's messages to itself; unless given, the "
                                  "profile's rate match_scan_seconds_self, else 0")
                  .at_least(0),
              ParamSpec::string("smpi_ois", "",
                                "smpi mode: what MPI_Isend sleeps before it posts a message, as SMPI's smpi/ois: "
                                "a law BYTES:SECONDS:SECONDS_PER_BYTE;... read as SMPI reads it (an entry holds "
                                "above its size, the first also below), or intra-node, inter-node or self: the "
                                "profile's message gaps of that placement (none from its fitted protocol switch "
                                "on), for every message as SMPI has one law; empty (the default): none"),
              ParamSpec::quantity("pipeline_chunk", ParamType::Size, "128KiB",
                                  "chunk of a pipelined transfer (Open MPI btl_tcp_max_send_size)")
                  .at_least(1),
              ParamSpec::choice("inter_large_protocol", {"rendezvous", "pipelined"}, "rendezvous",
                                "static policy, inter-node messages above the eager limit: rendezvous "
                                "(zero copy, RDMA-like) or pipelined (chunks copied out as they arrive)"),
              ParamSpec::boolean("nic_dma", true, "inter-node data also crosses both nodes' memory buses"),
              ParamSpec::choice("policy", {"static", "dynamic"}, "static",
                                "protocol choice: static thresholds, or per transfer the lowest predicted "
                                "completion given the memory bus and NIC load"),
              ParamSpec::real("dynamic_margin", 0.5,
                               "dynamic policy: least predicted gain (fraction) for leaving the static choice")
                  .within(0, 0.99),
              ParamSpec::choice("send_order", {"neighbour", "network_first"}, "neighbour",
                                "neighbour: MPI_Isend in neighbour order, intra-node eager copies inline; "
                                "network_first: every network send is posted before those copies"),
              ParamSpec::choice("mode", {"detailed", "smpi"}, "detailed",
                                "detailed: protocols and memory buses; smpi: what SMPI simulates for the "
                                "same MPI program (one transfer per message, intra-node over the loopback)"),
              ParamSpec::choice("granularity", {"rank", "node"}, "rank",
                                "rank: one actor per rank; node: one per node, traffic aggregated per node "
                                "pair and protocol (fast, for thousands of ranks)"),
              ParamSpec::integer("transfers_per_actor", 32,
                                 "network transfers (SMPI mode: messages) one actor of an agent posts and "
                                 "progresses at most; an agent with more hands them to actors of its own this many "
                                 "each (simulation speed only: results are the same up to rounding)")
                  .within(1, 1e9),
          },
          [] { return std::make_unique<HaloModel>(); }};
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
