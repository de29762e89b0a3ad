/* test_sections: a model linked only into the unit tests, declaring scenario elements, so
 * that the kernel's validation of model sections can be checked. */
#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>
#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

namespace {

class SectionsModel : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override
  {
    for (const auto& s : ctx.scenario().sections()) {
      probes_++;
      total_delay_ += s.attributes().get_double("at");
      notes_ += static_cast<std::int64_t>(s.children_named("note").size());
    }
  }
  void report(const simcore::SimContext&, simcore::Results& results) override
  {
    results.set_metric("probes", probes_);
    results.set_metric("total_delay", total_delay_, "s");
    results.set_metric("notes", notes_);
  }

private:
  std::int64_t probes_ = 0;
  std::int64_t notes_ = 0;
  double total_delay_ = 0;
};

simcore::ModelInfo make_info()
{
  using simcore::ParamSpec;
  using simcore::ParamType;
  simcore::SectionSpec note{"note", "a remark", {ParamSpec::string("text", "", "what")}, {}};
  simcore::SectionSpec probe{"probe",
                             "a probe",
                             {ParamSpec::quantity("at", ParamType::Time, "", "when"),
                              ParamSpec::integer("weight", 1, "how much").within(1, 10)},
                             {note}};
  simcore::ModelInfo info{"test_sections", "declares scenario elements (tests only)", {}, [] {
                            return std::make_unique<SectionsModel>();
                          }};
  info.sections = {probe};
  return info;
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
