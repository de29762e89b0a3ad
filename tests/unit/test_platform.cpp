// load_platform + describe_platform on the shipped platforms. One SimGrid engine per process:
// every test case here creates one, so run them one per process (ctest does).
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/platform.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {

const std::string kSource = SIMCORE_SOURCE_DIR;

/** The process's SimGrid engine, with SimGrid's own logging turned down. */
std::unique_ptr<simgrid::s4u::Engine> make_engine()
{
  static std::vector<std::string> args{"simcore_unit_tests", "--log=root.thres:critical"};
  static std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  static int argc = static_cast<int>(args.size());
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv.data());
}

/** The description of the link named `name`; fails the test when there is none. */
nlohmann::ordered_json link_named(const nlohmann::ordered_json& description, const std::string& name)
{
  for (const auto& l : description["links"])
    if (l["name"] == name)
      return l;
  FAIL("no link named " << name);
  return {};
}

nlohmann::ordered_json describe(const std::string& platform)
{
  auto engine = make_engine();
  simcore::load_platform(*engine, kSource + "/platforms/" + platform);
  auto d = simcore::describe_platform(*engine);
  engine.release(); // SimGrid cleans its engine up at exit
  return d;
}

} // namespace

TEST_CASE("platform star.xml: 17 hosts, 34 private links", "[platform]")
{
  auto d = describe("star.xml");
  const auto& t = d["totals"];
  CHECK(t["hosts"] == 17);
  CHECK(t["cores"] == 17);
  CHECK(t["speed"] == 17e9);
  CHECK(t["links"] == 35); // 17 split-duplex links (UP + DOWN) and SimGrid's __loopback__
  CHECK(t["zones"] == 1);
  CHECK(d["hosts"][0]["name"] == "node-0");
  CHECK(d["hosts"][1]["name"] == "node-1"); // sorted by name: node-0, node-1, node-10, ...
  CHECK(d["hosts"][2]["name"] == "node-10");
  CHECK(d["hosts"][0]["speed"] == 1e9);
  CHECK(d["hosts"][0]["zone"] == "star");
  int up = 0;
  for (const auto& l : d["links"]) {
    if (l["name"] == "__loopback__")
      continue;
    CHECK(l["bandwidth"] == 1.25e9);
    CHECK(l["latency"].get<double>() == Approx(50e-6).epsilon(1e-12));
    CHECK(l["sharing"] == "shared");
    up += l["name"].get<std::string>().size() > 3 &&
          l["name"].get<std::string>().compare(l["name"].get<std::string>().size() - 3, 3, "_UP") == 0;
  }
  CHECK(up == 17);
  CHECK(d["zones"]["name"] == "star");
  CHECK(d["zones"]["hosts"] == 17);
}

TEST_CASE("platform small_cluster.xml: 16 hosts of 8 cores", "[platform]")
{
  auto d = describe("small_cluster.xml");
  const auto& t = d["totals"];
  CHECK(t["hosts"] == 16);
  CHECK(t["cores"] == 128);
  CHECK(t["speed"] == 128 * 50e9);
  CHECK(t["links"] == 50); // 16 x (UP + DOWN + loopback), the backbone, __loopback__
  CHECK(t["zones"] == 1);
  for (const auto& h : d["hosts"]) {
    CHECK(h["cores"] == 8);
    CHECK(h["speed"] == 50e9);
  }
  const auto backbone = link_named(d, "small_backbone");
  CHECK(backbone["bandwidth"] == 100e9);
  CHECK(backbone["latency"].get<double>() == Approx(500e-9).epsilon(1e-12));
  // Each node's ranks talk through its loopback, not its NIC link (the intra-node fit of this
  // machine's ping-pong, rounded).
  const auto loopback = link_named(d, "small_link_3_loopback");
  CHECK(loopback["bandwidth"] == 13e9);
  CHECK(loopback["latency"].get<double>() == Approx(160e-9).epsilon(1e-12));
  CHECK(loopback["sharing"] == "fatpipe");
}

TEST_CASE("platform two_clusters.xml: 40 hosts in two zones", "[platform]")
{
  auto d = describe("two_clusters.xml");
  const auto& t = d["totals"];
  CHECK(t["hosts"] == 40);
  CHECK(t["cores"] == 640);
  CHECK(t["links"] == 124); // 40 x (UP + DOWN + loopback), 2 backbones, inter-cluster, __loopback__
  CHECK(t["zones"] == 3);
  CHECK(d["zones"]["name"] == "world");
  CHECK(d["zones"]["hosts"] == 40); // hosts of a zone include those of its sub-zones
  REQUIRE(d["zones"]["zones"].size() == 2);
  CHECK(d["zones"]["zones"][0]["name"] == "analysis");
  CHECK(d["zones"]["zones"][0]["hosts"] == 8);
  CHECK(d["zones"]["zones"][1]["name"] == "compute");
  CHECK(d["zones"]["zones"][1]["hosts"] == 32);
  const auto inter = link_named(d, "inter-cluster");
  CHECK(inter["bandwidth"] == 25e9);
  CHECK(inter["latency"].get<double>() == Approx(10e-6).epsilon(1e-12));
}

TEST_CASE("platform fat_tree.xml: 64 hosts of 32 cores", "[platform]")
{
  auto d = describe("fat_tree.xml");
  const auto& t = d["totals"];
  CHECK(t["hosts"] == 64);
  CHECK(t["cores"] == 2048);
  CHECK(t["speed"] == 2048 * 40e9);
  CHECK(t["links"] == 257); // (64 node links + 8 leaves x 4 spines) x (UP + DOWN), 64 loopbacks, __loopback__
  CHECK(t["zones"] == 1);
  CHECK(d["hosts"].size() == 64);
  CHECK(d["links"].size() == 257);
}

TEST_CASE("platform: an unknown unit in a host speed is bad input with file:line", "[platform]")
{
  const std::string path = std::string(SIMCORE_TEST_DATA) + "/platforms/bad_host_speed.xml";
  auto engine = make_engine();
  try {
    simcore::load_platform(*engine, path);
    FAIL("broken platform accepted");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == path + ":8");
    CHECK_THAT(e.detail(), Catch::StartsWith("invalid platform: unknown unit: Gx; expected a unit of SimGrid's: f, "
                                             "kf, Mf, Gf (speeds)"));
  }
  engine.release();
}

TEST_CASE("platform: a missing platform file is bad input", "[platform]")
{
  auto engine = make_engine();
  const std::string path = kSource + "/platforms/no_such_platform.xml";
  CHECK_THROWS_WITH(simcore::load_platform(*engine, path),
                    path + ": platform file does not exist; expected a SimGrid XML platform (DTD 4.1)");
  engine.release();
}
