#include "workflow.hpp"
#include "compression_profile.hpp"
#include "decomposition.hpp"

#include <simcore/error.hpp>
#include <simcore/name_pattern.hpp>
#include <simcore/units.hpp>

#include <regex>

namespace dtl {

namespace {

using simcore::InputError;
using simcore::ParamSet;

/** Where an error about a value lies: the element's attribute (its origin) or the parameter. */
struct Source {
  const simcore::SimContext& ctx;
  const ParamSet& values;
  const simcore::Section* element; ///< nullptr: scenario parameters

  InputError error(const std::string& name, const std::string& message) const
  {
    if (!element)
      return ctx.param_error(name, message);
    const std::string& origin = values.origin(name);
    return InputError(origin == "default" ? element->where() : origin, message);
  }
  std::string what(const std::string& name) const
  {
    return element ? "<" + element->name() + "> attribute '" + name + "'" : "parameter '" + name + "'";
  }
};

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

std::vector<simgrid::s4u::Host*> hosts_matching(const Source& src, const std::string& param)
{
  const std::string& pattern = src.values.get_string(param);
  std::regex re;
  try {
    re = simcore::compile_name_pattern(pattern, "", src.what(param) + " =");
  } catch (const simcore::InputError& e) {
    throw src.error(param, e.detail());
  }
  std::vector<simgrid::s4u::Host*> hosts;
  for (auto* h : src.ctx.hosts_sorted())
    if (std::regex_match(h->get_name(), re))
      hosts.push_back(h);
  if (hosts.empty())
    throw src.error(param, src.what(param) + " = '" + pattern +
                               "' matches no host of the platform; expected a regular expression matching host names");
  return hosts;
}

/** Block placement: ranks 0..r-1 on the first matching host, r..2r-1 on the next, ... */
std::vector<simgrid::s4u::Host*> place(const Source& src, const std::string& ranks_param,
                                       const std::string& hosts_param, const std::string& per_host_param)
{
  const auto hosts = hosts_matching(src, hosts_param);
  const std::int64_t ranks = src.values.get_int(ranks_param);
  std::int64_t per_host = src.values.get_int(per_host_param);
  if (per_host == 0)
    per_host = hosts.front()->get_core_count();
  const std::int64_t needed = (ranks + per_host - 1) / per_host;
  if (needed > static_cast<std::int64_t>(hosts.size()))
    throw src.error(ranks_param, src.what(ranks_param) + " = " + std::to_string(ranks) + " needs " +
                                     std::to_string(needed) + " hosts at " + std::to_string(per_host) +
                                     " ranks per host, but only " + std::to_string(hosts.size()) + " hosts match '" +
                                     src.values.get_string(hosts_param) + "'; expected at most " +
                                     std::to_string(static_cast<std::int64_t>(hosts.size()) * per_host) + " ranks, or more hosts");
  std::vector<simgrid::s4u::Host*> out(static_cast<std::size_t>(ranks));
  for (std::int64_t r = 0; r < ranks; r++)
    out[static_cast<std::size_t>(r)] = hosts[static_cast<std::size_t>(r / per_host)];
  return out;
}

/** Stream settings shared by the simple form (parameters) and <stream> elements. */
Stream read_stream(const Source& src, const std::string& name)
{
  const auto& v = src.values;
  Stream s;
  s.name = name;
  s.engine = v.get_string("engine");
  s.transport = v.get_string("transport");
  s.publish_every = v.get_int("publish_every");

  s.storage.kind = v.get_string("storage");
  s.storage.disks_per_host = v.get_int("disks_per_storage_host");
  s.storage.read_bandwidth = v.get_double("disk_read_bandwidth");
  s.storage.write_bandwidth = v.get_double("disk_write_bandwidth");
  s.storage.metadata_time = v.get_double("metadata_time");
  if (s.engine == "file" && s.storage.kind == "pfs") {
    if (v.get_string("pfs_hosts").empty())
      throw src.error("pfs_hosts", src.what("pfs_hosts") + " is empty; expected a regular expression matching the storage hosts, which storage 'pfs' "
                                                         "needs");
    s.storage.hosts = hosts_matching(src, "pfs_hosts");
  }

  const auto& stride = v.get_int_list("decimation");
  if (stride.size() > static_cast<std::size_t>(kMaxDims)) // before it fills the strides (it wrote past them)
    throw src.error("decimation", src.what("decimation") + " has " + std::to_string(stride.size()) +
                                      " values; expected one stride per dimension of the variable, at most " +
                                      std::to_string(kMaxDims));
  for (std::size_t d = 0; d < stride.size(); d++)
    s.reduction.stride[d] = stride[d];
  s.reduction.compression_ratio = v.get_double("compression_ratio");
  s.reduction.compress_flops_per_byte = v.get_double("compress_flops_per_byte");
  s.reduction.decompress_flops_per_byte = v.get_double("decompress_flops_per_byte");
  const std::string& profile = v.get_string("compression_profile");
  if (!profile.empty()) {
    for (const char* fixed : {"compression_ratio", "compress_flops_per_byte", "decompress_flops_per_byte"})
      if (v.origin(fixed) != "default")
        throw src.error(fixed, src.what(fixed) + " is given together with a compression_profile; expected either "
                                                 "a fixed ratio and costs or a profile and an error_bound");
    if (v.get_double("error_bound") == 0)
      throw src.error("compression_profile", src.what("compression_profile") +
                                                 " needs error_bound: the accuracy at which to read the profile; expected error_bound "
                                                 "above 0");
    const auto point = CompressionProfile::load(profile).at(v.get_double("error_bound"),
                                                            v.origin("error_bound"));
    s.reduction.compression_ratio = point.ratio;
    s.reduction.compress_flops_per_byte = point.compress_flops_per_byte;
    s.reduction.decompress_flops_per_byte = point.decompress_flops_per_byte;
  } else if (v.get_double("error_bound") != 0) {
    throw src.error("error_bound", src.what("error_bound") + " needs a compression_profile to read ratios from; expected a "
                                                               "compression_profile, or no error_bound");
  }
  if (s.engine == "file" && s.transport == "ideal")
    throw src.error("transport", src.what("transport") + " = 'ideal' belongs to the staging engine; the file "
                                                         "engine moves data through storage (leave transport unset)");
  return s;
}

/** A variable's shape and element size, from the simple form's parameters, a <stream>'s
 *  attributes, or a <variable>. */
Variable read_variable(const Source& src, const std::string& name, const Stream& stream)
{
  const auto& v = src.values;
  Variable var;
  var.name = name;
  const auto& shape = v.get_int_list("shape");
  if (shape.empty() || shape.size() > static_cast<std::size_t>(kMaxDims))
    throw src.error("shape", src.what("shape") + " has " + std::to_string(shape.size()) +
                                 " dimensions; expected 1 to 3, e.g. 512,512,256");
  var.shape = box_from({}, shape);
  var.element_size = static_cast<std::int64_t>(v.get_double("element_size"));
  // Volumes and byte counts are 64-bit integers: 1e12 x 1e12 x 1e11 wrapped to negative
  // bytes, exit 0. 2^53 bytes (9 PB) keeps them exact as doubles too.
  double bytes = static_cast<double>(var.element_size);
  for (auto n : shape)
    bytes *= static_cast<double>(n);
  if (bytes > 9007199254740992.0)
    throw src.error("shape", src.what("shape") + " of " + std::to_string(var.element_size) + "-byte elements holds " +
                                 simcore::format_quantity(simcore::Quantity::Size, bytes) +
                                 "; expected an array of at most 2^53 bytes (9 PB)");
  (void)stream;
  return var;
}

/** Checks the stream's decimation against a variable's dimensions. */
void check_decimation(const Source& stream_src, const Variable& var)
{
  const auto& stride = stream_src.values.get_int_list("decimation");
  if (!stride.empty() && stride.size() != static_cast<std::size_t>(var.shape.dims))
    throw stream_src.error("decimation", stream_src.what("decimation") + " has " + std::to_string(stride.size()) +
                                             " values; expected one stride per dimension of variable '" + var.name +
                                             "' (" + std::to_string(var.shape.dims) + ") or none");
}

/** A reader's selection of one variable: given start/count lists, or the whole array. */
VariableRead read_selection(const Source& src, const std::string& ss, const std::string& sc, const Variable& var,
                            const Stream& stream, std::int64_t ranks)
{
  const auto& sel_start = src.values.get_int_list(ss);
  const auto& sel_count = src.values.get_int_list(sc);
  const std::size_t dims = static_cast<std::size_t>(var.shape.dims);
  VariableRead vr;
  if (sel_start.empty() && sel_count.empty()) {
    vr.selection = var.shape;
  } else {
    // One list without the other: located at the one given (the other's default has no line).
    if (sel_start.empty() != sel_count.empty()) {
      const std::string& given = sel_start.empty() ? sc : ss;
      const std::string& missing = sel_start.empty() ? ss : sc;
      throw src.error(given, src.what(given) + " is given without " + src.what(missing) +
                                 "; expected both (one value per dimension of 'shape' each) or neither (the whole "
                                 "array)");
    }
    if (sel_start.size() != dims)
      throw src.error(ss, src.what(ss) + " has " + std::to_string(sel_start.size()) +
                              " values; expected one per dimension of 'shape' (" + std::to_string(dims) + ")");
    if (sel_count.size() != dims)
      throw src.error(sc, src.what(sc) + " has " + std::to_string(sel_count.size()) +
                              " values; expected one per dimension of 'shape' (" + std::to_string(dims) + ")");
    vr.selection = box_from(sel_start, sel_count);
    if (!var.shape.contains(vr.selection))
      throw src.error(sc, "the selection " + vr.selection.to_string() + " lies outside the array " +
                              var.shape.to_string() + "; expected start + count <= shape in every dimension");
  }
  vr.selections = block_decomposition(vr.selection, ranks);
  vr.plan = plan_redistribution(var.blocks, vr.selections, var.element_size);
  for (auto& t : vr.plan) // what travels, after decimation and compression
    t.bytes = stream.reduction.wire_bytes(t.piece, var.element_size);
  return vr;
}

/** Reader settings, from the simple form's parameters (ana_*, subscribe_*) or a <reader>. */
Reader read_reader(const Source& src, const Stream& stream, std::int64_t steps, bool simple)
{
  const auto& v = src.values;
  auto key = [simple](const std::string& simple_name, const std::string& element_name) {
    return simple ? simple_name : element_name;
  };
  Reader r;
  r.app.name = simple ? "analysis" : v.get_string("name");
  r.app.ranks = v.get_int(key("ana_ranks", "ranks"));
  r.app.flops_per_element = v.get_double(key("ana_flops_per_element", "flops_per_element"));
  r.app.host_of_rank = place(src, key("ana_ranks", "ranks"), key("ana_hosts", "hosts"),
                             key("ana_ranks_per_host", "ranks_per_host"));
  r.every = v.get_int(key("subscribe_every", "every"));
  r.first = v.get_int(key("subscribe_first", "first"));
  r.last = v.get_int(key("subscribe_last", "last"));
  r.post_hoc = v.get_string("analysis_start") == "after_simulation";
  const std::int64_t nk = stream.transactions(steps);
  const std::string first = key("subscribe_first", "first"), last = key("subscribe_last", "last");
  if (r.first >= nk)
    throw src.error(first, src.what(first) + " = " + std::to_string(r.first) + " but the simulation publishes only " +
                               std::to_string(nk) + " transactions (0 to " + std::to_string(nk - 1) +
                               "); expected a transaction from 0 to " + std::to_string(nk - 1));
  if (r.last >= 0 && r.last < r.first)
    throw src.error(last, src.what(last) + " = " + std::to_string(r.last) + " comes before " + first + " = " +
                              std::to_string(r.first) + "; expected -1 or a later one");
  if (r.post_hoc && stream.engine == "staging")
    throw src.error("analysis_start", src.what("analysis_start") +
                                          " = 'after_simulation' needs engine 'file'; staging needs both sides connected");

  // Selections: the selection_* lists for a stream of one variable; <select> elements otherwise.
  const bool listed = !v.get_int_list("selection_start").empty() || !v.get_int_list("selection_count").empty();
  if (listed && stream.variables.size() != 1)
    throw src.error("selection_start", src.what("selection_start") + " applies to streams of one variable; this one "
                                                                      "has " + std::to_string(stream.variables.size()) +
                                           ": use <select variable=\"...\" start=\"...\" count=\"...\"/>");
  for (const auto& var : stream.variables) {
    const simcore::Section* select = nullptr;
    if (src.element)
      for (const auto* sel : src.element->children_named("select")) {
        if (sel->attributes().get_string("variable") == var.name) {
          if (select)
            throw InputError(sel->where(), "a second <select> of variable '" + var.name + "' (the first is at " +
                                               select->where() + "); expected one per variable");
          select = sel;
        }
      }
    if (select) {
      const Source ssrc{src.ctx, select->attributes(), select};
      r.vars.push_back(read_selection(ssrc, "start", "count", var, stream, r.app.ranks));
    } else {
      r.vars.push_back(read_selection(src, "selection_start", "selection_count", var, stream, r.app.ranks));
    }
  }
  if (src.element)
    for (const auto* sel : src.element->children_named("select")) {
      const std::string& name = sel->attributes().get_string("variable");
      bool known = false;
      std::string names;
      for (const auto& var : stream.variables) {
        known = known || var.name == name;
        names += (names.empty() ? "" : ", ") + var.name;
      }
      // Without the attribute its origin is "default": the <select> line says where.
      const std::string& origin = sel->attributes().origin("variable");
      if (!known)
        throw InputError(origin == "default" ? sel->where() : origin,
                         "<select variable=\"" + name + "\">: the stream has no such variable; expected one of " +
                             names);
    }
  return r;
}

/** Explicit publisher blocks (<block rank start count>): one per rank, inside the shape,
 *  not overlapping. */
std::vector<Box> explicit_blocks(const simcore::Section& parent, const Variable& s, std::int64_t ranks)
{
  const auto blocks_el = parent.children_named("block");
  std::vector<Box> blocks(static_cast<std::size_t>(ranks));
  std::vector<const simcore::Section*> given(static_cast<std::size_t>(ranks), nullptr);
  for (const auto* b : blocks_el) {
    const auto& a = b->attributes();
    const std::int64_t rank = a.get_int("rank");
    if (rank >= ranks)
      throw InputError(a.origin("rank"), "<block rank=\"" + std::to_string(rank) + "\">: the simulation has only " +
                                             std::to_string(ranks) + " ranks (sim_ranks); expected 0 to " +
                                             std::to_string(ranks - 1));
    if (given[static_cast<std::size_t>(rank)])
      throw InputError(b->where(), "a second <block> for rank " + std::to_string(rank) + " (the first is at " +
                                       given[static_cast<std::size_t>(rank)]->where() + "); expected one per rank");
    const auto& start = a.get_int_list("start");
    const auto& count = a.get_int_list("count");
    if (start.size() != static_cast<std::size_t>(s.shape.dims) || count.size() != start.size())
      throw InputError(b->where(), "<block> start and count need one value per dimension of the stream's shape (" +
                                       std::to_string(s.shape.dims) + ")");
    Box box = box_from(start, count);
    if (!s.shape.contains(box))
      throw InputError(b->where(), "<block> " + box.to_string() + " lies outside the array " + s.shape.to_string() +
                                       "; expected start + count <= shape");
    blocks[static_cast<std::size_t>(rank)] = box;
    given[static_cast<std::size_t>(rank)] = b;
  }
  for (std::int64_t r = 0; r < ranks; r++)
    if (!given[static_cast<std::size_t>(r)])
      throw InputError(parent.where(), "<" + parent.name() + " name=\"" +
                                           parent.attributes().get_string("name") + "\"> gives <block>s but none for rank " +
                                           std::to_string(r) + "; expected one per simulation rank, or none");
  // Overlaps: the plan of the blocks against themselves pairs only blocks that meet.
  for (const auto& t : plan_redistribution(blocks, blocks, 1))
    if (t.publisher != t.subscriber)
      throw InputError(given[static_cast<std::size_t>(std::max(t.publisher, t.subscriber))]->where(),
                       "<block> of rank " + std::to_string(std::max(t.publisher, t.subscriber)) + " overlaps rank " +
                           std::to_string(std::min(t.publisher, t.subscriber)) + "'s on " + t.piece.to_string() +
                           "; expected disjoint blocks");
  return blocks;
}

/** Parameters of the simple form that <stream> elements replace. */
const char* const kStreamParams[] = {"engine", "transport", "shape", "element_size", "publish_every", "subscribe_every",
                                     "subscribe_first", "subscribe_last", "ana_ranks", "ana_hosts",
                                     "ana_ranks_per_host", "ana_flops_per_element", "selection_start",
                                     "selection_count", "storage", "pfs_hosts", "disks_per_storage_host",
                                     "disk_read_bandwidth", "disk_write_bandwidth", "metadata_time", "analysis_start",
                                     "decimation", "compression_ratio", "compress_flops_per_byte",
                                     "decompress_flops_per_byte"};

} // namespace

Workflow build_workflow(const simcore::SimContext& ctx)
{
  const auto& p = ctx.params();
  const Source params{ctx, p, nullptr};
  Workflow w;
  w.steps = p.get_int("steps");
  w.memcpy_bandwidth = p.get_double("memcpy_bandwidth");
  if (w.memcpy_bandwidth == 0)
    w.memcpy_bandwidth = ctx.calibration().rate_or("memcpy_bandwidth", simcore::Quantity::Bandwidth, 10e9);
  w.sim = App{"simulation", p.get_int("sim_ranks"), p.get_double("sim_flops_per_element"), {}};
  w.sim.host_of_rank = place(params, "sim_ranks", "sim_hosts", "sim_ranks_per_host");
  // Copies happen on a publisher's host: there, a profile's host type may have its own rate.
  if (p.get_double("memcpy_bandwidth") == 0)
    for (const auto* h : w.sim.host_of_rank)
      if (!w.host_memcpy_bandwidth.count(h))
        w.host_memcpy_bandwidth[h] = ctx.calibration().rate_or("memcpy_bandwidth", h->get_name(),
                                                                  simcore::Quantity::Bandwidth, w.memcpy_bandwidth);

  const auto& elements = ctx.scenario().sections();
  if (elements.empty()) { // the simple form
    Stream s = read_stream(params, "stream");
    Variable var = read_variable(params, "data", s);
    check_decimation(params, var);
    var.blocks = block_decomposition(var.shape, w.sim.ranks);
    s.variables.push_back(std::move(var));
    s.readers.push_back(read_reader(params, s, w.steps, true));
    w.streams.push_back(std::move(s));
    return w;
  }
  for (const char* name : kStreamParams)
    if (p.origin(name) != "default")
      throw ctx.param_error(name, "parameter '" + std::string(name) +
                                      "' belongs to the simple form; with <stream> elements, expected it on the <stream> "
                                      "or <reader>");
  for (const auto& el : elements) {
    const Source src{ctx, el.attributes(), &el};
    Stream s = read_stream(src, el.attributes().get_string("name"));
    for (const auto& other : w.streams)
      if (other.name == s.name)
        throw InputError(el.where(), "a second <stream name=\"" + s.name + "\">; expected unique stream names");
    const auto var_els = el.children_named("variable");
    if (var_els.empty()) { // one variable, described by the stream's own attributes
      Variable var = read_variable(src, s.name, s);
      check_decimation(src, var);
      var.blocks = el.children_named("block").empty() ? block_decomposition(var.shape, w.sim.ranks)
                                                      : explicit_blocks(el, var, w.sim.ranks);
      s.variables.push_back(std::move(var));
    } else {
      for (const char* attr : {"shape", "element_size"})
        if (el.attributes().origin(attr) != "default")
          throw InputError(el.attributes().origin(attr), std::string("<stream> attribute '") + attr +
                                                             "' with <variable> elements; expected it on each <variable>");
      if (!el.children_named("block").empty())
        throw InputError(el.children_named("block").front()->where(),
                         "<block> directly in a <stream> with <variable> elements; expected it inside its <variable>");
      for (const auto* ve : var_els) {
        const Source vsrc{ctx, ve->attributes(), ve};
        if (ve->attributes().get_string("name").empty())
          throw InputError(ve->where(), "<variable> needs a name=\"...\"");
        Variable var = read_variable(vsrc, ve->attributes().get_string("name"), s);
        for (const auto& other : s.variables)
          if (other.name == var.name)
            throw InputError(ve->where(), "a second <variable name=\"" + var.name + "\">; expected unique names");
        check_decimation(src, var);
        var.blocks = ve->children_named("block").empty() ? block_decomposition(var.shape, w.sim.ranks)
                                                         : explicit_blocks(*ve, var, w.sim.ranks);
        s.variables.push_back(std::move(var));
      }
    }
    const auto readers = el.children_named("reader");
    if (readers.empty())
      throw InputError(el.where(), "<stream name=\"" + s.name + "\"> has no <reader>; expected at least one");
    for (const auto* rd : readers) {
      const Source rsrc{ctx, rd->attributes(), rd};
      s.readers.push_back(read_reader(rsrc, s, w.steps, false));
      // The outputs name a stream's readers: two of one name were told apart by nothing.
      for (std::size_t k = 0; k + 1 < s.readers.size(); k++)
        if (s.readers[k].app.name == s.readers.back().app.name)
          throw InputError(rd->where(), "a second <reader name=\"" + s.readers.back().app.name + "\"> in <stream name=\"" +
                                            s.name + "\"> (the first is at " + readers[k]->where() +
                                            "); expected unique reader names");
    }
    w.streams.push_back(std::move(s));
  }
  return w;
}

} // namespace dtl
