/* How the kernel reports a model that fails: set-up, actor exceptions, deadlocks. */
#include <simcore/error.hpp>
#include <simcore/runner.hpp>
#include <simcore/scenario.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/** A scenario of the test-only model in a fresh temp folder (removed at the end); output
 *  goes to OUT there. */
struct FailingRun {
  explicit FailingRun(const std::string& mode)
      : dir(fs::temp_directory_path() / ("simcore-fail-" + mode + "-" + std::to_string(::getpid())))
  {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "s.xml") << "<scenario model=\"test_failing\">\n  <platform file=\"" SIMCORE_SOURCE_DIR
                                    "/platforms/star.xml\"/>\n  <param name=\"mode\" value=\""
                                 << mode << "\"/>\n</scenario>\n";
  }
  ~FailingRun() { fs::remove_all(dir); }
  simcore::Scenario scenario() const
  {
    auto sc = simcore::Scenario::load((dir / "s.xml").string());
    sc.set_output_dir((dir / "OUT").string());
    return sc;
  }
  bool wrote_output() const { return fs::exists(dir / "OUT"); }
  fs::path dir;
};

} // namespace

TEST_CASE("a model that runs cleanly reports the end of the simulation", "[failures]")
{
  FailingRun run("none");
  auto summary = simcore::run_scenario(run.scenario());
  CHECK(summary["metrics"]["end"].get<double>() == 10.0);
  CHECK(fs::exists(run.dir / "OUT" / "summary.json"));
}

TEST_CASE("InputError from set-up names the scenario and writes nothing", "[failures]")
{
  FailingRun run("setup");
  CHECK_THROWS_WITH(simcore::run_scenario(run.scenario()), Catch::Contains("set-up rejected the platform"));
  CHECK_FALSE(run.wrote_output());
}

TEST_CASE("InputError thrown by an actor stops the run and stays an InputError", "[failures]")
{
  FailingRun run("input");
  CHECK_THROWS_AS(simcore::run_scenario(run.scenario()), simcore::InputError);
  CHECK_FALSE(run.wrote_output());
}

TEST_CASE("another exception thrown by an actor becomes an InternalError naming the model", "[failures]")
{
  FailingRun run("internal");
  CHECK_THROWS_WITH(simcore::run_scenario(run.scenario()),
                    Catch::Contains("model 'test_failing' failed") && Catch::Contains("model bug at run time"));
  CHECK_FALSE(run.wrote_output());
}

TEST_CASE("a deadlocked simulation is an InternalError, not a result", "[failures]")
{
  FailingRun run("deadlock");
  CHECK_THROWS_WITH(simcore::run_scenario(run.scenario()), Catch::Contains("deadlocked at t=10"));
  CHECK_FALSE(run.wrote_output());
}

TEST_CASE("children report exit codes: 0 ok, 2 bad input, 1 internal, 1 for an exception escaping a plain actor",
          "[failures][children]")
{
  const std::vector<std::string> modes{"none", "setup", "internal", "uncaught", "input"};
  std::vector<std::unique_ptr<FailingRun>> runs;
  std::vector<simcore::Scenario> scs;
  for (const auto& mode : modes) {
    runs.push_back(std::make_unique<FailingRun>(mode));
    scs.push_back(runs.back()->scenario());
  }
  auto out = simcore::run_in_children(scs, 2);
  REQUIRE(out.size() == 5);
  CHECK(out[0].exit_code == 0);
  CHECK(out[0].error.empty());
  CHECK(out[1].exit_code == simcore::kExitBadInput);
  CHECK_THAT(out[1].error, Catch::Contains("set-up rejected the platform"));
  CHECK(out[2].exit_code == simcore::kExitInternal);
  CHECK_THAT(out[2].error, Catch::Contains("model bug at run time"));
  CHECK(out[3].exit_code == simcore::kExitInternal);
  CHECK(out[4].exit_code == simcore::kExitBadInput);
  CHECK(fs::exists(runs[0]->dir / "OUT" / "summary.json"));
  for (std::size_t i = 1; i < modes.size(); i++)
    CHECK_FALSE(runs[i]->wrote_output());
}
