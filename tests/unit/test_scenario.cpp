// Scenario::load on valid files: every element, defaults, overrides, seed and output folder.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/model_registry.hpp"
#include "simcore/scenario.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {
const std::string kData = SIMCORE_TEST_DATA;
const std::string kSource = SIMCORE_SOURCE_DIR;

std::string norm(const std::string& p) { return fs::path(p).lexically_normal().string(); }
} // namespace

TEST_CASE("Scenario::load reads every element of a valid scenario", "[scenario]")
{
  auto sc = simcore::Scenario::load(kData + "/scenarios/full.xml");
  CHECK(sc.path() == norm(kData + "/scenarios/full.xml"));
  CHECK(sc.base_dir() == norm(kData + "/scenarios"));
  CHECK(sc.model_name() == "master_worker");
  CHECK(sc.model().name == "master_worker");
  CHECK(sc.seed() == 18446744073709551615ULL);
  CHECK(sc.description() == "every element once");
  CHECK(sc.platform_path() == norm(kSource + "/platforms/star.xml"));
  CHECK(sc.calibration_path() == norm(kData + "/profiles/valid.json"));
  CHECK(sc.output_dir() == "out/full");
  CHECK_FALSE(sc.write_trace());
  REQUIRE(sc.simgrid_config().size() == 2);
  CHECK(sc.simgrid_config()[0].name == "network/latency-factor");
  CHECK(sc.simgrid_config()[0].value == "1");
  CHECK(sc.simgrid_config()[0].where == kData + "/scenarios/full.xml:12");
  CHECK(sc.simgrid_config()[1].name == "network/bandwidth-factor");
  CHECK(sc.simgrid_config()[1].value == "0.5");
  CHECK(sc.simgrid_config()[1].where == kData + "/scenarios/full.xml:13");

  const auto& p = sc.params();
  CHECK(p.get_int("tasks") == 12);
  CHECK(p.get_double("task_flops") == 2.5e9);
  CHECK(p.get_double("task_bytes") == 4194304.0);
  CHECK(p.get_int("workers") == 3);
  CHECK(p.text("workers") == " 3 ");
  CHECK(p.get_string("master") == "node-5");
  // Origins name the file as it was given and the line of the <param>.
  CHECK(p.origin("tasks") == kData + "/scenarios/full.xml:7");
  CHECK(p.origin("master") == kData + "/scenarios/full.xml:11");
}

TEST_CASE("Scenario::load: the file's SHA-256 and default outputs", "[scenario]")
{
  const std::string path = kSource + "/scenarios/master_worker/star.xml";
  auto sc = simcore::Scenario::load(path);
  CHECK(sc.seed() == 1);
  CHECK(sc.write_trace());
  CHECK(sc.output_dir() == "results/star"); // results/<file stem>
  CHECK(sc.calibration_path().empty());
  CHECK(sc.simgrid_config().empty());
  CHECK(sc.params().get_int("tasks") == 200);
  CHECK(sc.params().get_double("task_bytes") == 1e7);
  CHECK(sc.params().get_int("workers") == 16);
  CHECK(sc.params().origin("master") == "default");
  REQUIRE(sc.sha256().size() == 64);
  CHECK(sc.sha256().find_first_not_of("0123456789abcdef") == std::string::npos);

  // The hash is that of the file's bytes, computed here independently.
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  REQUIRE(EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr) == 1);
  std::string hex;
  for (unsigned i = 0; i < len; i++) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  CHECK(sc.sha256() == hex);
}

TEST_CASE("Scenario overrides: set, set_assignment, seed and output folder", "[scenario]")
{
  auto sc = simcore::Scenario::load(kSource + "/scenarios/master_worker/star.xml");
  sc.set_assignment("tasks=10");
  CHECK(sc.params().get_int("tasks") == 10);
  CHECK(sc.params().origin("tasks") == "--set tasks=10");
  sc.set_assignment("task_bytes=1kB");
  CHECK(sc.params().get_double("task_bytes") == 1000.0);
  sc.set_assignment("master=node-3=x"); // only the first '=' splits
  CHECK(sc.params().get_string("master") == "node-3=x");
  sc.set("workers", "4", "python");
  CHECK(sc.params().origin("workers") == "python");
  sc.set_seed(99);
  CHECK(sc.seed() == 99);
  sc.set_output_dir("/tmp/elsewhere");
  CHECK(sc.output_dir() == "/tmp/elsewhere");
}

TEST_CASE("Scenario: a <param>, --set and set() mark a parameter as given, defaults do not", "[scenario]")
{
  auto sc = simcore::Scenario::load(kSource + "/scenarios/master_worker/star.xml");
  CHECK(sc.params().given("tasks")); // <param name="tasks"> in the file
  CHECK_FALSE(sc.params().given("master"));
  sc.set_assignment("master=node-3");
  CHECK(sc.params().given("master"));
  auto other = simcore::Scenario::load(kSource + "/scenarios/master_worker/star.xml");
  CHECK_FALSE(other.params().given("master"));
  other.set("master", "", "python"); // the default's text, given explicitly
  CHECK(other.params().given("master"));
}

TEST_CASE("Scenario::set_assignment errors name the assignment", "[scenario]")
{
  auto sc = simcore::Scenario::load(kSource + "/scenarios/master_worker/star.xml");
  CHECK_THROWS_WITH(sc.set_assignment("tasks=abc"),
                    "--set tasks=abc: parameter 'tasks' = 'abc' is not an integer; expected a whole number such as 42");
  CHECK_THROWS_WITH(sc.set_assignment("nonsense"), "--set nonsense: expected name=value");
  CHECK_THROWS_WITH(sc.set_assignment("=5"), "--set =5: expected name=value");
  CHECK_THROWS_WITH(sc.set_assignment("tasks=0"),
                    "--set tasks=0: parameter 'tasks' = '0' is out of range; expected a value between 1 and 100000000");
  CHECK_THROWS_WITH(sc.set_assignment("nope=1"),
                    "--set nope=1: unknown parameter 'nope'; expected one of: tasks, task_flops, task_bytes, workers, master, flops_jitter");
  CHECK_THROWS_AS(sc.set_assignment("task_flops=1Gx"), simcore::InputError);
  CHECK(sc.params().get_int("tasks") == 200); // unchanged by the failed overrides
}

TEST_CASE("Scenario::load of a file that does not exist", "[scenario]")
{
  CHECK_THROWS_WITH(simcore::Scenario::load(kData + "/bad/no_such_scenario.xml"),
                    kData + "/bad/no_such_scenario.xml: cannot read the scenario file; expected an existing XML file");
  CHECK_THROWS_WITH(simcore::Scenario::load(kData + "/bad"), Catch::Contains("cannot read the scenario file"));
}
