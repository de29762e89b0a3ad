// master_worker on star.xml against its closed form. Each test case runs one simulation,
// so each needs a process of its own (ctest runs every test case separately).
//
// With c = route latency x latency factor + bytes / (bandwidth x bandwidth factor) the time of
// one transfer, x = task_flops / host speed, W workers and N tasks, transfer k starts at
//   s_k = floor(k/W) * max(c + x, W c) + (k mod W) c
// (the master sends one message at a time; worker k mod W is free again at s_{k-W} + c + x)
// and task k ends its computation at s_k + c + x, so makespan = s_{N-1} + c + x.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/runner.hpp"
#include "simcore/scenario.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kSource = SIMCORE_SOURCE_DIR;
const double kRouteLatency = 2 * 50e-6; // star.xml: source UP link + destination DOWN link
const double kBandwidth = 1.25e9;

struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("simcore-mw-" + std::to_string(::getpid())))
  {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

struct Setup {
  int workers;
  int tasks;
  std::string flops; // as written in the scenario
  std::string bytes;
  std::vector<std::pair<std::string, std::string>> config;
  std::string calibration; // absolute path or empty
};

simcore::Scenario make_scenario(const TempDir& tmp, const Setup& s)
{
  const fs::path file = tmp.path / "mw.xml";
  std::ofstream out(file);
  out << "<?xml version=\"1.0\"?>\n<scenario model=\"master_worker\" seed=\"3\">\n"
      << "  <platform file=\"" << kSource << "/platforms/star.xml\"/>\n";
  if (!s.calibration.empty())
    out << "  <calibration file=\"" << s.calibration << "\"/>\n";
  out << "  <param name=\"workers\" value=\"" << s.workers << "\"/>\n"
      << "  <param name=\"tasks\" value=\"" << s.tasks << "\"/>\n"
      << "  <param name=\"task_flops\" value=\"" << s.flops << "\"/>\n"
      << "  <param name=\"task_bytes\" value=\"" << s.bytes << "\"/>\n";
  for (const auto& [k, v] : s.config)
    out << "  <config name=\"" << k << "\" value=\"" << v << "\"/>\n";
  out << "</scenario>\n";
  out.close();
  auto sc = simcore::Scenario::load(file.string());
  sc.set_output_dir((tmp.path / "out").string());
  return sc;
}

double start_of(long k, int W, double c, double x)
{
  return std::floor(static_cast<double>(k / W)) * std::max(c + x, W * c) + static_cast<double>(k % W) * c;
}

/** compute_end column of the "tasks" table of trace.h5. */
std::vector<double> compute_ends(const fs::path& trace, std::size_t n)
{
  hid_t file = H5Fopen(trace.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  hid_t ds = H5Dopen2(file, "tasks", H5P_DEFAULT);
  REQUIRE(ds >= 0);
  hid_t mem = H5Tcreate(H5T_COMPOUND, sizeof(double));
  H5Tinsert(mem, "compute_end", 0, H5T_NATIVE_DOUBLE);
  std::vector<double> v(n);
  REQUIRE(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Tclose(mem);
  H5Dclose(ds);
  H5Fclose(file);
  return v;
}

/** Runs the scenario and compares makespan, derived metrics and every task's end with the closed form. */
void check_closed_form(const Setup& s, double c, double x)
{
  TempDir tmp;
  auto sc = make_scenario(tmp, s);
  simcore::RunOptions opts;
  opts.progress = simcore::Progress::Never;
  opts.simgrid_args = {"--log=root.thres:critical"};
  const auto summary = simcore::run_scenario(sc, opts);

  const int W = s.workers;
  const int N = s.tasks;
  const double makespan = start_of(N - 1, W, c, x) + c + x;
  INFO("c = " << c << " s, x = " << x << " s, expected makespan " << makespan << " s");
  const auto& m = summary["metrics"];
  CHECK(m["makespan"].get<double>() == Approx(makespan).epsilon(1e-9));
  CHECK(m["tasks"] == N);
  CHECK(m["workers"] == W);
  CHECK(m["throughput"].get<double>() == Approx(N / makespan).epsilon(1e-9));
  CHECK(m["worker_utilisation"].get<double>() == Approx(N * x / (makespan * W)).epsilon(1e-6));
  CHECK(summary["metric_units"]["makespan"] == "s");
  CHECK(summary["simulated_time"].get<double>() >= m["makespan"].get<double>());
  CHECK(summary["parameters"]["tasks"] == N);
  CHECK(summary["seed"] == 3);
  CHECK(summary["tables"]["tasks"]["rows"] == N);
  CHECK(summary["tables"]["workers"]["rows"] == W);

  REQUIRE(fs::is_regular_file(tmp.path / "out" / "summary.json"));
  const auto ends = compute_ends(tmp.path / "out" / "trace.h5", static_cast<std::size_t>(N));
  for (long k = 0; k < N; k++) {
    INFO("task " << k);
    CHECK(ends[k] == Approx(start_of(k, W, c, x) + c + x).epsilon(1e-9));
  }
}

const std::vector<std::pair<std::string, std::string>> kNoFactors{{"network/latency-factor", "1"},
                                                                 {"network/bandwidth-factor", "1"}};

} // namespace

TEST_CASE("master_worker closed form: compute-bound, no network factors", "[master_worker][sim]")
{
  // c = 100us + 1MB / 1.25GBps = 0.9 ms; x = 1 s > (W-1) c: each round lasts c + x.
  Setup s{4, 10, "1Gf", "1MB", kNoFactors, ""};
  const double c = kRouteLatency + 1e6 / kBandwidth;
  const double x = 1.0;
  REQUIRE(x > (s.workers - 1) * c);
  check_closed_form(s, c, x); // makespan 3.0036 s
}

TEST_CASE("master_worker closed form: master-bound, no network factors", "[master_worker][sim]")
{
  // c = 100us + 100MB / 1.25GBps = 80.1 ms; x = 0.2 s <= (W-1) c = 240.3 ms: the master is the
  // bottleneck, transfers go back to back and makespan = N c + x.
  Setup s{4, 10, "200Mf", "100MB", kNoFactors, ""};
  const double c = kRouteLatency + 1e8 / kBandwidth;
  const double x = 0.2;
  REQUIRE((s.workers - 1) * c >= x);
  REQUIRE(start_of(9, 4, c, x) + c + x == Approx(10 * c + x).epsilon(1e-12));
  check_closed_form(s, c, x); // makespan 1.001 s
}

TEST_CASE("master_worker closed form: master-bound with tiny tasks", "[master_worker][sim]")
{
  Setup s{16, 40, "1kf", "10MB", kNoFactors, ""};
  const double c = kRouteLatency + 1e7 / kBandwidth;
  check_closed_form(s, c, 1e-6);
}

TEST_CASE("master_worker closed form: SimGrid's default LV08 factors", "[master_worker][sim]")
{
  // No <config>: SimGrid applies latency x 13.01 and bandwidth x 0.97.
  Setup s{4, 10, "1Gf", "1MB", {}, ""};
  const double c = 13.01 * kRouteLatency + 1e6 / (0.97 * kBandwidth);
  check_closed_form(s, c, 1.0);
}

TEST_CASE("master_worker closed form: explicit factors from the scenario", "[master_worker][sim]")
{
  Setup s{3, 7, "500Mf", "5MB", {{"network/latency-factor", "2"}, {"network/bandwidth-factor", "0.5"}}, ""};
  const double c = 2 * kRouteLatency + 5e6 / (0.5 * kBandwidth);
  check_closed_form(s, c, 0.5);
}

TEST_CASE("master_worker closed form: calibration profile sets speeds, links and factors", "[master_worker][sim]")
{
  // profiles/star_calibrated.json: hosts 2 Gflop/s, links 2.5 GBps / 25 us, factors 1.
  Setup s{4, 10, "1Gf", "1MB", {}, std::string(SIMCORE_TEST_DATA) + "/profiles/star_calibrated.json"};
  const double c = 2 * 25e-6 + 1e6 / 2.5e9;
  check_closed_form(s, c, 0.5);
}

TEST_CASE("run_scenario: a model set-up error leaves no output", "[master_worker][sim]")
{
  TempDir tmp;
  Setup s{100, 10, "1Gf", "1MB", {}, ""};
  auto sc = make_scenario(tmp, s);
  try {
    simcore::run_scenario(sc);
    FAIL("workers=100 accepted on 17 hosts");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == (tmp.path / "mw.xml").string() + ":4"); // the <param name="workers"> line
    CHECK(e.detail() ==
          "parameter 'workers' = 100 but the platform has only 16 hosts besides the master; expected at most that");
  }
  CHECK_FALSE(fs::exists(tmp.path / "out"));
}

TEST_CASE("validate_scenario checks the model on the platform and writes nothing", "[master_worker][sim]")
{
  TempDir tmp;
  Setup s{16, 10, "1Gf", "1MB", {}, ""};
  auto sc = make_scenario(tmp, s);
  CHECK_NOTHROW(simcore::validate_scenario(sc));
  CHECK_FALSE(fs::exists(tmp.path / "out"));
}

TEST_CASE("run_scenario: an unknown master host is bad input", "[master_worker][sim]")
{
  TempDir tmp;
  auto sc = make_scenario(tmp, Setup{2, 4, "1Gf", "1MB", {}, ""});
  sc.set("master", "node-99");
  CHECK_THROWS_WITH(simcore::run_scenario(sc),
                    Catch::Contains("parameter 'master' names host 'node-99', which the platform") &&
                        Catch::Contains("platforms/star.xml does not have"));
  CHECK_FALSE(fs::exists(tmp.path / "out"));
}

TEST_CASE("run_scenario: an unknown SimGrid configuration item is bad input", "[master_worker][sim]")
{
  TempDir tmp;
  auto sc = make_scenario(tmp, Setup{2, 4, "1Gf", "1MB", {{"network/no-such-item", "1"}}, ""});
  CHECK_THROWS_WITH(simcore::run_scenario(sc),
                    Catch::StartsWith((tmp.path / "mw.xml").string() +
                                      ":8: SimGrid configuration 'network/no-such-item' = '1' is not accepted (") &&
                        Catch::EndsWith("); expected an item listed by SimGrid's --help-cfg"));
  CHECK_FALSE(fs::exists(tmp.path / "out"));
}
