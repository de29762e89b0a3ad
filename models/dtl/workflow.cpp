#include "workflow.hpp"
#include "decomposition.hpp"

#include <simcore/error.hpp>

#include <regex>

namespace dtl {

namespace {

Box box_from(const std::vector<std::int64_t>& start, const std::vector<std::int64_t>& count)
{
  Box b;
  b.dims = static_cast<int>(count.size());
  for (std::size_t d = 0; d < count.size(); d++) {
    b.start[d] = start.empty() ? 0 : start[d];
    b.count[d] = count[d];
  }
  return b;
}

/** Block placement: ranks 0..r-1 on the first matching host, r..2r-1 on the next, ... */
std::vector<simgrid::s4u::Host*> place(const simcore::SimContext& ctx, const std::string& prefix, std::int64_t ranks)
{
  const auto& p = ctx.params();
  const std::string pattern_param = prefix + "_hosts";
  const std::string& pattern = p.get_string(pattern_param);
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw ctx.param_error(pattern_param, "parameter '" + pattern_param + "' = '" + pattern +
                                             "' is not a valid regular expression (" + e.what() + ")");
  }
  std::vector<simgrid::s4u::Host*> hosts;
  for (auto* h : ctx.hosts_sorted())
    if (std::regex_match(h->get_name(), re))
      hosts.push_back(h);
  if (hosts.empty())
    throw ctx.param_error(pattern_param, "parameter '" + pattern_param + "' = '" + pattern +
                                             "' matches no host of the platform; expected a regular expression "
                                             "matching host names");
  std::int64_t per_host = p.get_int(prefix + "_ranks_per_host");
  if (per_host == 0)
    per_host = hosts.front()->get_core_count();
  const std::int64_t needed = (ranks + per_host - 1) / per_host;
  if (needed > static_cast<std::int64_t>(hosts.size()))
    throw ctx.param_error(prefix + "_ranks", "parameter '" + prefix + "_ranks' = " + std::to_string(ranks) + " needs " +
                                                 std::to_string(needed) + " hosts at " + std::to_string(per_host) +
                                                 " ranks per host, but only " + std::to_string(hosts.size()) +
                                                 " hosts match '" + pattern + "'");
  std::vector<simgrid::s4u::Host*> out(static_cast<std::size_t>(ranks));
  for (std::int64_t r = 0; r < ranks; r++)
    out[static_cast<std::size_t>(r)] = hosts[static_cast<std::size_t>(r / per_host)];
  return out;
}

} // namespace

Workflow build_workflow(const simcore::SimContext& ctx)
{
  const auto& p = ctx.params();
  Workflow w;
  w.engine = p.get_string("engine");
  w.transport = p.get_string("transport");
  const auto& shape = p.get_int_list("shape");
  if (shape.empty() || shape.size() > static_cast<std::size_t>(kMaxDims))
    throw ctx.param_error("shape", "parameter 'shape' has " + std::to_string(shape.size()) +
                                       " dimensions; expected 1 to 3, e.g. 512,512,256");
  w.shape = box_from({}, shape);
  w.element_size = static_cast<std::int64_t>(p.get_double("element_size"));
  w.steps = p.get_int("steps");
  w.publish_every = p.get_int("publish_every");
  w.subscribe_every = p.get_int("subscribe_every");
  w.subscribe_first = p.get_int("subscribe_first");
  w.subscribe_last = p.get_int("subscribe_last");
  if (w.subscribe_first >= w.transactions())
    throw ctx.param_error("subscribe_first", "parameter 'subscribe_first' = " + std::to_string(w.subscribe_first) +
                                                 " but the simulation publishes only " +
                                                 std::to_string(w.transactions()) + " transactions (0 to " +
                                                 std::to_string(w.transactions() - 1) + ")");
  if (w.subscribe_last >= 0 && w.subscribe_last < w.subscribe_first)
    throw ctx.param_error("subscribe_last", "parameter 'subscribe_last' = " + std::to_string(w.subscribe_last) +
                                                " comes before subscribe_first = " +
                                                std::to_string(w.subscribe_first) + "; expected -1 or a later one");
  w.memcpy_bandwidth = p.get_double("memcpy_bandwidth");
  if (w.memcpy_bandwidth == 0)
    w.memcpy_bandwidth = ctx.calibration().rate_or("memcpy_bandwidth", 10e9);

  const auto& sel_start = p.get_int_list("selection_start");
  const auto& sel_count = p.get_int_list("selection_count");
  if (sel_start.empty() && sel_count.empty()) {
    w.selection = w.shape;
  } else {
    if (sel_start.size() != shape.size())
      throw ctx.param_error("selection_start", "parameter 'selection_start' has " + std::to_string(sel_start.size()) +
                                                   " values; expected one per dimension of 'shape' (" +
                                                   std::to_string(shape.size()) + ")");
    if (sel_count.size() != shape.size())
      throw ctx.param_error("selection_count", "parameter 'selection_count' has " + std::to_string(sel_count.size()) +
                                                   " values; expected one per dimension of 'shape' (" +
                                                   std::to_string(shape.size()) + ")");
    w.selection = box_from(sel_start, sel_count);
    if (!w.shape.contains(w.selection))
      throw ctx.param_error("selection_count", "the selection " + w.selection.to_string() +
                                                   " lies outside the array " + w.shape.to_string() +
                                                   "; expected start + count <= shape in every dimension");
  }

  // File engine: storage.
  w.storage.kind = p.get_string("storage");
  w.storage.disks_per_host = p.get_int("disks_per_storage_host");
  w.storage.read_bandwidth = p.get_double("disk_read_bandwidth");
  w.storage.write_bandwidth = p.get_double("disk_write_bandwidth");
  w.storage.metadata_time = p.get_double("metadata_time");
  w.post_hoc = p.get_string("analysis_start") == "after_simulation";
  if (w.post_hoc && w.engine == "staging")
    throw ctx.param_error("analysis_start", "parameter 'analysis_start' = 'after_simulation' needs engine 'file'; "
                                            "staging needs both sides connected");
  if (w.engine == "file" && w.storage.kind == "pfs") {
    const std::string& pattern = p.get_string("pfs_hosts");
    std::regex re;
    try {
      re = std::regex(pattern);
    } catch (const std::regex_error& e) {
      throw ctx.param_error("pfs_hosts", "parameter 'pfs_hosts' = '" + pattern +
                                             "' is not a valid regular expression (" + e.what() + ")");
    }
    for (auto* h : ctx.hosts_sorted())
      if (std::regex_match(h->get_name(), re))
        w.storage.hosts.push_back(h);
    if (w.storage.hosts.empty())
      throw ctx.param_error("pfs_hosts", "parameter 'pfs_hosts' = '" + pattern +
                                             "' matches no host; expected the storage hosts of a parallel file system");
  }

  // Reduction.
  const auto& stride = p.get_int_list("decimation");
  if (!stride.empty() && stride.size() != shape.size())
    throw ctx.param_error("decimation", "parameter 'decimation' has " + std::to_string(stride.size()) +
                                            " values; expected one stride per dimension of 'shape' (" +
                                            std::to_string(shape.size()) + ") or none");
  for (std::size_t d = 0; d < stride.size(); d++)
    w.reduction.stride[d] = stride[d];
  w.reduction.compression_ratio = p.get_double("compression_ratio");
  w.reduction.compress_flops_per_byte = p.get_double("compress_flops_per_byte");
  w.reduction.decompress_flops_per_byte = p.get_double("decompress_flops_per_byte");

  w.sim = App{"simulation", p.get_int("sim_ranks"), p.get_double("sim_flops_per_element"), {}};
  w.ana = App{"analysis", p.get_int("ana_ranks"), p.get_double("ana_flops_per_element"), {}};
  w.sim.host_of_rank = place(ctx, "sim", w.sim.ranks);
  w.ana.host_of_rank = place(ctx, "ana", w.ana.ranks);

  w.blocks = block_decomposition(w.shape, w.sim.ranks);
  w.selections = block_decomposition(w.selection, w.ana.ranks);
  w.plan = plan_redistribution(w.blocks, w.selections, w.element_size);
  for (auto& t : w.plan) // what travels, after decimation and compression
    t.bytes = w.reduction.wire_bytes(t.piece, w.element_size);
  return w;
}

} // namespace dtl
