/* test_failing: a model linked only into the unit tests, failing in a chosen way so that
 * the kernel's handling of model failures can be checked. */
#include <simcore/error.hpp>
#include <simcore/model.hpp>
#include <simcore/model_registry.hpp>
#include <simcore/results.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace {

class FailingModel : public simcore::Model {
public:
  void setup(simcore::SimContext& ctx) override
  {
    mode_ = ctx.params().get_string("mode");
    auto hosts = ctx.hosts_sorted();
    if (mode_ == "setup")
      throw simcore::InputError(ctx.scenario().path(), "set-up rejected the platform");
    ctx.create_actor("sleeper", hosts[1], [] { sg4::this_actor::sleep_for(10); });
    auto body = [mode = mode_] {
      sg4::this_actor::sleep_for(1);
      if (mode == "input")
        throw simcore::InputError("actor", "bad input found at run time");
      if (mode == "internal")
        throw std::runtime_error("model bug at run time");
      if (mode == "deadlock" || mode == "uncaught_deadlock")
        sg4::Mailbox::by_name("nobody-sends-here")->get<int>();
      if (mode == "uncaught")
        throw std::runtime_error("escaped from a plain actor");
    };
    if (mode_ == "uncaught")
      sg4::Actor::create("plain", hosts[0], body);
    else
      ctx.create_actor("failing", hosts[0], body);
  }
  void report(const simcore::SimContext&, simcore::Results& results) override
  {
    results.set_metric("end", sg4::Engine::get_clock(), "s");
  }

private:
  std::string mode_;
};

simcore::ModelInfo make_info()
{
  return {"test_failing",
          "fails in a chosen way (tests only)",
          {simcore::ParamSpec::choice("mode", {"none", "setup", "input", "internal", "deadlock", "uncaught"}, "none",
                                      "how to fail")},
          [] { return std::make_unique<FailingModel>(); }};
}

} // namespace

SIMCORE_REGISTER_MODEL(make_info())
