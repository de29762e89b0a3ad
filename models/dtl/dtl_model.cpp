/* dtl: a simulated data transport layer between a simulation (publishers) and analyses
 * (subscribers) of an in situ workflow. Registration, parameters and scenario elements. */
#include "stream_engine.hpp"
#include "workflow.hpp"

#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>

#include <memory>
#include <optional>

namespace {

using simcore::ParamSpec;
using simcore::ParamType;

class DtlModel : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override
  {
    engine_.emplace(dtl::build_workflow(ctx));
    engine_->start(ctx);
  }
  simcore::MemoryNeed memory_need(const simcore::SimContext&) const override { return engine_->memory_need(); }
  std::vector<simcore::TableSize> table_sizes(const simcore::SimContext&) const override
  {
    return engine_->table_sizes();
  }
  void report(const simcore::SimContext&, simcore::Results& results) override { engine_->report(results); }

private:
  std::optional<dtl::StreamEngine> engine_;
};

/** A stream's settings: parameters of the simple form, attributes of <stream>. */
std::vector<ParamSpec> stream_specs()
{
  return {
      ParamSpec::choice("engine", {"staging", "file"}, "staging",
                        "DTL engine: staging (memory to memory) or file (through storage)"),
      ParamSpec::choice("transport", {"mailbox", "ideal"}, "mailbox",
                        "staging transport: mailbox (network or memory copy) or ideal (zero cost)"),
      ParamSpec::integer_list("shape", "512,512,256", "global array shape, 1 to 3 dimensions").within(1, 1e12),
      ParamSpec::quantity("element_size", ParamType::Size, "8B", "bytes per array element").within(1, 1 << 20),
      ParamSpec::integer("publish_every", 1, "the simulation publishes a transaction every k steps").within(1, 1e7),
      ParamSpec::choice("storage", {"local", "pfs"}, "local",
                        "file engine: local disks of the publishers' hosts, or a parallel file system"),
      ParamSpec::string("pfs_hosts", "", "file engine with pfs: regular expression naming the storage hosts"),
      ParamSpec::integer("disks_per_storage_host", 1, "file engine: disks per storage host").within(1, 1024),
      ParamSpec::quantity("disk_read_bandwidth", ParamType::Bandwidth, "2GBps", "file engine: read rate of a disk")
          .at_least(1),
      ParamSpec::quantity("disk_write_bandwidth", ParamType::Bandwidth, "1GBps", "file engine: write rate of a disk")
          .at_least(1),
      ParamSpec::quantity("metadata_time", ParamType::Time, "1ms", "file engine: cost of one file open or close")
          .at_least(0),
      ParamSpec::integer_list("decimation", "", "keep every s-th element per dimension; empty: no decimation")
          .within(1, 1e9),
      ParamSpec::real("compression_ratio", 1, "bytes before / after compression; 1: none").within(1, 1e6),
      ParamSpec::real("compress_flops_per_byte", 0, "publisher work per byte compressed (flop)").within(0, 1e12),
      ParamSpec::real("decompress_flops_per_byte", 0, "subscriber work per byte decompressed (flop)").within(0, 1e12),
      ParamSpec::optional_file("compression_profile",
                               "JSON ratio/accuracy profile of a lossy compressor (instead of a fixed ratio)"),
      ParamSpec::real("error_bound", 0, "accuracy at which the compression_profile is read").at_least(0),
  };
}

/** A reader's settings; the simple form prefixes them (ana_ranks, subscribe_every, ...). */
std::vector<ParamSpec> reader_specs(bool simple)
{
  auto n = [simple](const char* simple_name, const char* element_name) { return simple ? simple_name : element_name; };
  std::vector<ParamSpec> specs{
      ParamSpec::integer(n("ana_ranks", "ranks"), 4, "ranks of the analysis (subscribers)").within(1, 1e7),
      ParamSpec::string(n("ana_hosts", "hosts"), ".*", "regular expression: hosts of the analysis ranks"),
      ParamSpec::integer(n("ana_ranks_per_host", "ranks_per_host"), 0, "analysis ranks per host; 0 = the host's cores")
          .within(0, 1e6),
      ParamSpec::real(n("ana_flops_per_element", "flops_per_element"), 50, "analysis work per element read (flop)")
          .within(0, 1e12),
      ParamSpec::integer(n("subscribe_every", "every"), 1, "the analysis reads every k-th transaction").within(1, 1e7),
      ParamSpec::integer(n("subscribe_first", "first"), 0, "first transaction the analysis reads").within(0, 1e7),
      ParamSpec::integer(n("subscribe_last", "last"), -1, "last transaction the analysis reads; -1: the last")
          .within(-1, 1e7),
      ParamSpec::integer_list("selection_start", "", "start of the part the analysis reads; empty: all").at_least(0),
      ParamSpec::integer_list("selection_count", "", "size of the part the analysis reads; empty: all").at_least(0),
      ParamSpec::choice("analysis_start", {"concurrent", "after_simulation"}, "concurrent",
                        "the analysis runs with the simulation, or after it (post hoc, file engine only)"),
  };
  if (!simple)
    specs.insert(specs.begin(), ParamSpec::string("name", "analysis", "name of the analysis app"));
  return specs;
}

simcore::ModelInfo make_info()
{
  std::vector<ParamSpec> params{
      ParamSpec::integer("steps", 10, "simulation steps").within(1, 1e7),
      ParamSpec::integer("sim_ranks", 16, "ranks of the simulation (publishers)").within(1, 1e7),
      ParamSpec::string("sim_hosts", ".*", "regular expression: hosts of the simulation ranks"),
      ParamSpec::integer("sim_ranks_per_host", 0, "simulation ranks per host; 0 = the host's cores").within(0, 1e6),
      ParamSpec::real("sim_flops_per_element", 100, "simulation work per element per step (flop)").within(0, 1e12),
      ParamSpec::quantity("memcpy_bandwidth", ParamType::Bandwidth, "0",
                          "copy rate between ranks on one host; 0: the profile's rate 'memcpy_bandwidth', else 10GBps")
          .at_least(0),
  };
  for (auto& s : stream_specs())
    params.push_back(s);
  for (auto& s : reader_specs(true))
    params.push_back(s);

  simcore::SectionSpec block{"block",
                             "the block a simulation rank publishes (all ranks or none)",
                             {ParamSpec::integer("rank", 0, "simulation rank").within(0, 1e7),
                              ParamSpec::integer_list("start", "", "start per dimension").at_least(0),
                              ParamSpec::integer_list("count", "", "size per dimension").at_least(0)},
                             {}};
  simcore::SectionSpec select{"select",
                              "the part of one variable a reader reads (default: all of it)",
                              {ParamSpec::string("variable", "", "name of the variable"),
                               ParamSpec::integer_list("start", "", "start per dimension").at_least(0),
                               ParamSpec::integer_list("count", "", "size per dimension").at_least(0)},
                              {}};
  simcore::SectionSpec reader{"reader", "an analysis app reading this stream", reader_specs(false), {select}};
  simcore::SectionSpec variable{"variable",
                                "a variable of the stream (without any, the stream's shape and element_size "
                                "describe its one variable)",
                                {ParamSpec::string("name", "", "name of the variable"),
                                 ParamSpec::integer_list("shape", "512,512,256", "global array shape, 1 to 3 dimensions")
                                     .within(1, 1e12),
                                 ParamSpec::quantity("element_size", ParamType::Size, "8B", "bytes per array element")
                                     .within(1, 1 << 20)},
                                {block}};
  std::vector<ParamSpec> stream_attrs{ParamSpec::string("name", "stream", "name of the stream")};
  for (auto& s : stream_specs())
    stream_attrs.push_back(s);
  simcore::SectionSpec stream{"stream", "variables published together by the simulation (replaces the simple "
                                        "form's stream and analysis parameters)",
                              stream_attrs, {variable, block, reader}};

  simcore::ModelInfo info{"dtl",
                          "data transport layer of an in situ workflow: a simulation publishes, analyses subscribe",
                          params, [] { return std::make_unique<DtlModel>(); }};
  info.sections = {stream};
  return info;
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
