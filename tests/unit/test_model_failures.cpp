/* How the kernel reports a model that fails: set-up, actor exceptions, deadlocks. */
#include <simcore/error.hpp>
#include <simcore/runner.hpp>
#include <simcore/scenario.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/** A scenario of the test-only model in a fresh temp folder; output goes to OUT there. */
simcore::Scenario failing_scenario(const std::string& mode, fs::path& dir)
{
  dir = fs::temp_directory_path() / ("simcore-fail-" + mode + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "s.xml") << "<scenario model=\"test_failing\">\n  <platform file=\"" SIMCORE_SOURCE_DIR
                                  "/platforms/star.xml\"/>\n  <param name=\"mode\" value=\""
                               << mode << "\"/>\n</scenario>\n";
  auto sc = simcore::Scenario::load((dir / "s.xml").string());
  sc.set_output_dir((dir / "OUT").string());
  return sc;
}

} // namespace

TEST_CASE("a model that runs cleanly reports the end of the simulation", "[failures]")
{
  fs::path dir;
  auto sc = failing_scenario("none", dir);
  auto summary = simcore::run_scenario(sc);
  CHECK(summary["metrics"]["end"].get<double>() == 10.0);
  CHECK(fs::exists(dir / "OUT" / "summary.json"));
  fs::remove_all(dir);
}

TEST_CASE("InputError from set-up names the scenario and writes nothing", "[failures]")
{
  fs::path dir;
  auto sc = failing_scenario("setup", dir);
  CHECK_THROWS_WITH(simcore::run_scenario(sc), Catch::Contains("set-up rejected the platform"));
  CHECK_FALSE(fs::exists(dir / "OUT"));
  fs::remove_all(dir);
}

TEST_CASE("InputError thrown by an actor stops the run and stays an InputError", "[failures]")
{
  fs::path dir;
  auto sc = failing_scenario("input", dir);
  CHECK_THROWS_AS(simcore::run_scenario(sc), simcore::InputError);
  CHECK_FALSE(fs::exists(dir / "OUT"));
  fs::remove_all(dir);
}

TEST_CASE("another exception thrown by an actor becomes an InternalError naming the model", "[failures]")
{
  fs::path dir;
  auto sc = failing_scenario("internal", dir);
  CHECK_THROWS_WITH(simcore::run_scenario(sc),
                    Catch::Contains("model 'test_failing' failed") && Catch::Contains("model bug at run time"));
  CHECK_FALSE(fs::exists(dir / "OUT"));
  fs::remove_all(dir);
}

TEST_CASE("a deadlocked simulation is an InternalError, not a result", "[failures]")
{
  fs::path dir;
  auto sc = failing_scenario("deadlock", dir);
  CHECK_THROWS_WITH(simcore::run_scenario(sc), Catch::Contains("deadlocked at t=10"));
  CHECK_FALSE(fs::exists(dir / "OUT"));
  fs::remove_all(dir);
}

TEST_CASE("children report exit codes: 0 ok, 2 bad input, 1 internal, 1 for an exception escaping a plain actor",
          "[failures][children]")
{
  std::vector<fs::path> dirs(5);
  std::vector<simcore::Scenario> scs;
  const std::vector<std::string> modes{"none", "setup", "internal", "uncaught", "input"};
  for (std::size_t i = 0; i < modes.size(); i++)
    scs.push_back(failing_scenario(modes[i], dirs[i]));
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
  CHECK(fs::exists(dirs[0] / "OUT" / "summary.json"));
  for (std::size_t i = 1; i < modes.size(); i++)
    CHECK_FALSE(fs::exists(dirs[i] / "OUT"));
  for (const auto& d : dirs)
    fs::remove_all(d);
}
