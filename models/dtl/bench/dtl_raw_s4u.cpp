/* The reference for the dtl benchmark: the same transfers and computations as a dtl staging
 * scenario, written as a plain SimGrid S4U program (mailboxes, put_async/get_async, no
 * bookkeeping). It reuses the dtl workflow only to read the scenario and plan the transfers.
 *
 *   dtl_raw_s4u SCENARIO.xml   prints: wall_s, simulated_s, transfers, peak_rss_bytes */
#include "../workflow.hpp"

#include <simcore/calibration_profile.hpp>
#include <simcore/platform.hpp>
#include <simcore/scenario.hpp>
#include <simcore/sim_context.hpp>

#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace sg4 = simgrid::s4u;

namespace {
int g_payload;

long peak_rss()
{
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atol(line.c_str() + 6) * 1024L;
  return 0;
}
} // namespace

int main(int argc, char** argv)
{
  if (argc != 2) {
    std::fprintf(stderr, "usage: dtl_raw_s4u SCENARIO.xml\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto scenario = simcore::Scenario::load(argv[1]);
  std::vector<std::string> args{"dtl_raw_s4u", "--log=xbt_cfg.thres:warning"};
  std::vector<char*> cargv;
  for (auto& a : args)
    cargv.push_back(a.data());
  int cargc = static_cast<int>(cargv.size());
  sg4::Engine engine(&cargc, cargv.data());
  for (const auto& item : scenario.simgrid_config())
    sg4::Engine::set_config(item.name + ":" + item.value);
  simcore::load_platform(engine, scenario.platform_path());
  simcore::CalibrationProfile profile;
  simcore::SimContext ctx(engine, scenario, profile);
  const dtl::Workflow wf = dtl::build_workflow(ctx);
  if (wf.streams.size() != 1 || wf.streams[0].readers.size() != 1 || wf.streams[0].variables.size() != 1 ||
      wf.streams[0].engine != "staging") {
    std::fprintf(stderr, "dtl_raw_s4u: expected a scenario of the simple form with the staging engine\n");
    return 2;
  }
  const dtl::Stream& st = wf.streams[0];
  const dtl::Reader& rd = st.readers[0];
  const dtl::Variable& var = st.variables[0];
  const dtl::VariableRead& vr = rd.vars[0];
  const auto& sim = wf.sim;
  const std::int64_t steps = wf.steps;

  // Per (publisher, subscriber) pair: one mailbox, as the model uses.
  std::vector<std::vector<std::pair<sg4::Mailbox*, double>>> out(sim.ranks), in(rd.app.ranks);
  for (const auto& t : vr.plan) {
    auto* mb = sg4::Mailbox::by_name("raw/" + std::to_string(t.publisher) + "/" + std::to_string(t.subscriber));
    out[t.publisher].emplace_back(mb, static_cast<double>(t.bytes));
    in[t.subscriber].emplace_back(mb, static_cast<double>(t.bytes));
  }
  long transfers = 0;
  for (std::int64_t r = 0; r < sim.ranks; r++)
    sg4::Actor::create("p", sim.host_of_rank[r], [&st, &rd, &var, &sim, &out, steps, r] {
      const double flops = static_cast<double>(var.blocks[r].volume()) * sim.flops_per_element;
      for (std::int64_t step = 0; step < steps; step++) {
        if (flops > 0)
          sg4::this_actor::execute(flops);
        if (step % st.publish_every != 0 || !rd.reads(step / st.publish_every))
          continue;
        std::vector<sg4::CommPtr> comms;
        for (auto& [mb, bytes] : out[r])
          comms.push_back(mb->put_async(&g_payload, bytes));
        sg4::Comm::wait_all(comms);
      }
    });
  for (std::int64_t r = 0; r < rd.app.ranks; r++)
    sg4::Actor::create("s", rd.app.host_of_rank[r], [&st, &rd, &vr, &in, &transfers, steps, r] {
      const double flops = static_cast<double>(vr.selections[r].volume()) * rd.app.flops_per_element;
      std::vector<void*> sinks(in[r].size());
      for (std::int64_t k = 0; k < st.transactions(steps); k++) {
        if (!rd.reads(k))
          continue;
        std::vector<sg4::CommPtr> comms;
        for (std::size_t i = 0; i < in[r].size(); i++)
          comms.push_back(in[r][i].first->get_async<void>(&sinks[i]));
        sg4::Comm::wait_all(comms);
        transfers += static_cast<long>(in[r].size());
        if (flops > 0)
          sg4::this_actor::execute(flops);
      }
    });
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wall_s %.6f\nsimulated_s %.9g\ntransfers %ld\npeak_rss_bytes %ld\n", wall, sg4::Engine::get_clock(),
              transfers, peak_rss());
  return 0;
}
