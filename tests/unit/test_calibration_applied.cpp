/* A calibration profile changes the simulated platform: host speeds, link bandwidth and
 * latency, SimGrid factors; checked through the master_worker closed form. */
#include <simcore/runner.hpp>
#include <simcore/scenario.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

double closed_form(long n, long w, double c, double x)
{
  const long k = n - 1;
  return std::floor(static_cast<double>(k / w)) * std::max(c + x, w * c) + static_cast<double>(k % w) * c + c + x;
}

} // namespace

TEST_CASE("a calibration profile sets host speeds, links and factors", "[calibration]")
{
  const fs::path dir = fs::temp_directory_path() / ("simcore-calib-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "s.xml") << "<scenario model=\"master_worker\">\n"
                                  "  <platform file=\"" SIMCORE_SOURCE_DIR "/platforms/star.xml\"/>\n"
                                  "  <calibration file=\"" SIMCORE_TEST_DATA "/calibration/star_2x.json\"/>\n"
                                  "  <param name=\"tasks\" value=\"37\"/>\n"
                                  "  <param name=\"workers\" value=\"4\"/>\n"
                                  "  <param name=\"task_flops\" value=\"3Gf\"/>\n"
                                  "  <param name=\"task_bytes\" value=\"50MB\"/>\n"
                                  "</scenario>\n";
  auto sc = simcore::Scenario::load((dir / "s.xml").string());
  sc.set_output_dir((dir / "OUT").string());
  auto summary = simcore::run_scenario(sc);

  // Profile: 2 Gflop/s hosts, 2.5 GBps / 10 us links, factors 1. Route = 2 links.
  const double c = 2 * 10e-6 + 50e6 / 2.5e9;
  const double x = 3e9 / 2e9;
  const double expected = closed_form(37, 4, c, x);
  CHECK(summary["metrics"]["makespan"].get<double>() == Approx(expected).epsilon(1e-12));
  // Without the profile (1 Gflop/s, 1.25 GBps, 50 us, default factors) it would differ a lot.
  CHECK(std::fabs(expected - closed_form(37, 4, 2 * 50e-6 * 13.01 + 50e6 / (1.25e9 * 0.97), 3.0)) > 1.0);
  CHECK(summary["simgrid_config"]["network/latency-factor"] == "1");
  CHECK_THAT(summary["scenario"]["calibration"].get<std::string>(), Catch::EndsWith("star_2x.json"));
  fs::remove_all(dir);
}
