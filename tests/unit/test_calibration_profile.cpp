// CalibrationProfile: loading valid and invalid profiles, rule matching, named rates.
#include <catch2/catch.hpp>

#include "simcore/calibration_profile.hpp"
#include "simcore/error.hpp"
#include "simcore/name_pattern.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <fstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using nlohmann::json;
using simcore::CalibrationProfile;
using simcore::Quantity;

namespace {
const std::string kProfiles = std::string(SIMCORE_TEST_DATA) + "/profiles/";

std::string from_json_error(const json& j)
{
  try {
    CalibrationProfile::from_json(j, "p.json");
  } catch (const simcore::InputError& e) {
    return e.what();
  }
  FAIL("profile accepted: " << j.dump() << "; expected an InputError");
  return "";
}
} // namespace

TEST_CASE("CalibrationProfile::load reads a valid profile", "[calibration]")
{
  auto p = CalibrationProfile::load(kProfiles + "valid.json");
  CHECK_FALSE(p.empty());
  CHECK(p.path() == kProfiles + "valid.json");
  CHECK(p.name() == "unit-test-profile");

  REQUIRE(p.host_rules().size() == 3);
  CHECK(p.host_rules()[0].pattern == "node-1[0-9]");
  CHECK(p.host_rules()[0].speed == 3e9);
  CHECK(p.host_rules()[1].speed == 2e9);
  CHECK(p.host_rules()[2].speed == 5e10); // a plain number is in flop/s

  REQUIRE(p.link_rules().size() == 3);
  CHECK(p.link_rules()[0].pattern == ".*_UP");
  CHECK(p.link_rules()[0].bandwidth == 1e10);
  REQUIRE(p.link_rules()[0].latency.has_value());
  CHECK(*p.link_rules()[0].latency == Approx(2e-6).epsilon(1e-15));
  CHECK(p.link_rules()[1].bandwidth == 5e8);
  CHECK_FALSE(p.link_rules()[1].latency.has_value());
  CHECK_FALSE(p.link_rules()[2].bandwidth.has_value());
  CHECK(p.link_rules()[2].latency == 1e-6);

  // Strings are kept, other JSON values are dumped.
  CHECK(p.config() == std::map<std::string, std::string>{{"network/bandwidth-factor", "1.0"},
                                                         {"network/latency-factor", "1"}});

  REQUIRE(p.rates().size() == 2);
  const auto& memcpy = p.rates().at("memcpy_bandwidth");
  CHECK(memcpy.value == 1e10);
  CHECK(memcpy.unit == "Bps");
  CHECK(memcpy.doc == "measured with memcpy");
  CHECK(p.rates().at("dgemm").value == 5e10);
  CHECK(p.rates().at("dgemm").unit.empty());
}

TEST_CASE("CalibrationProfile: host rules match whole names, first match wins", "[calibration]")
{
  auto p = CalibrationProfile::load(kProfiles + "valid.json");
  CHECK(p.host_speed("node-12") == 3e9); // both rules 0 and 1 match: the first wins
  CHECK(p.host_speed("node-19") == 3e9);
  CHECK(p.host_speed("node-3") == 2e9);
  CHECK(p.host_speed("node-1") == 2e9);   // "node-1[0-9]" needs two digits
  CHECK(p.host_speed("node-100") == 2e9); // "node-1[0-9]" must match the whole name
  CHECK(p.host_speed("c-0") == 5e10);
  CHECK_FALSE(p.host_speed("c-01").has_value());
  CHECK_FALSE(p.host_speed("xnode-3").has_value());
}

TEST_CASE("CalibrationProfile: rate and rate_or", "[calibration]")
{
  auto p = CalibrationProfile::load(kProfiles + "valid.json");
  CHECK(p.has_rate("dgemm"));
  CHECK_FALSE(p.has_rate("stream"));
  CHECK(p.rate("memcpy_bandwidth", Quantity::Bandwidth) == 1e10);
  CHECK(p.rate_or("dgemm", Quantity::Speed, 1.0) == 5e10); // a plain number: in the unit read
  CHECK(p.rate_or("stream", Quantity::Bandwidth, 42.0) == 42.0);
  CHECK_THROWS_WITH(p.rate("stream", Quantity::Bandwidth),
                    kProfiles + "valid.json: no rate named 'stream'; the model needs it in \"rates\"");
  CalibrationProfile none;
  CHECK(none.empty());
  CHECK_FALSE(none.host_speed("node-0").has_value());
  CHECK_THROWS_WITH(none.rate("x", Quantity::Time), "calibration profile: no rate named 'x'; the model needs it in \"rates\"");
}

TEST_CASE("CalibrationProfile: a host type's rates win on its hosts, the profile-wide ones elsewhere", "[calibration]")
{
  // gpu-* has its own copy rate and no speed; cpu-* its own speed and stencil cost; the
  // catch-all rule only a speed.
  auto p = CalibrationProfile::from_json(json::parse(R"({
    "hosts": [
      {"match": "gpu-.*", "rates": {"memcpy_bandwidth": "40GBps"}},
      {"match": "cpu-.*", "speed": "2Gf", "rates": {"flops_per_cell": 300, "memcpy_bandwidth": {"value": 2e10, "unit": "Bps"}}},
      {"match": ".*", "speed": "1Gf", "rates": {"flops_per_cell": 100}}
    ],
    "rates": {"memcpy_bandwidth": "10GBps", "network_latency": "1us"}})"),
                                         "inline");
  CHECK(p.host_rules()[0].rates.at("memcpy_bandwidth").unit == "Bps");
  CHECK(p.rate("memcpy_bandwidth", "gpu-0", Quantity::Bandwidth) == 4e10);
  CHECK(p.rate("memcpy_bandwidth", "cpu-0", Quantity::Bandwidth) == 2e10);
  CHECK(p.rate("memcpy_bandwidth", "login", Quantity::Bandwidth) == 1e10); // no rule defines it: the profile's
  CHECK(p.rate("flops_per_cell", "cpu-3", Quantity::Flops) == 300);
  CHECK(p.rate("flops_per_cell", "gpu-3", Quantity::Flops) == 100); // gpu-* has none: the next matching rule's
  CHECK(p.rate_or("network_latency", "cpu-1", Quantity::Time, 0) == 1e-6);
  CHECK(p.rate_or("stencil_cell_rate", "cpu-1", Quantity::Speed, 7) == 7);
  CHECK_FALSE(p.has_rate("flops_per_cell")); // not profile-wide
  CHECK(p.has_rate("flops_per_cell", "x"));
  // A rule without a speed leaves the speed to the next matching rule.
  CHECK(p.host_speed("gpu-0") == 1e9);
  CHECK(p.host_speed("cpu-0") == 2e9);
  CHECK_THROWS_WITH(p.rate("hash_lookup_rate", "cpu-0", Quantity::Speed),
                    "calibration profile: no rate named 'hash_lookup_rate' for host 'cpu-0'; the model needs it in "
                    "\"rates\" or in a host rule matching the host");
}

TEST_CASE("CalibrationProfile::from_json accepts a minimal profile", "[calibration]")
{
  auto p = CalibrationProfile::from_json(json::parse(R"({"hosts": [{"match": "a", "speed": "1Mf"}]})"), "inline");
  CHECK(p.path().empty());
  CHECK(p.host_speed("a") == 1e6);
  CHECK(p.link_rules().empty());
  auto empty = CalibrationProfile::from_json(json::object(), "inline");
  CHECK(empty.empty());
}

TEST_CASE("CalibrationProfile: invalid profiles name the place and what was expected", "[calibration]")
{
  CHECK(from_json_error(json::parse(R"({"host": []})")) ==
        "p.json: unknown key 'host'; expected one of: hosts, links, message_gaps, meta, name, network_factors, quality, "
        "rates, schema, simgrid_config");
  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "speed": "1Gf", "cores": 4}]})")) ==
        "p.json (hosts[0]): unknown key 'cores'; expected one of: match, rates, speed");
  CHECK(from_json_error(json::parse(R"([1, 2])")) == "p.json: expected a JSON object");
  CHECK(from_json_error(json::parse(R"({"schema": "simcore-profile/2"})")) ==
        "p.json (schema): unsupported schema \"simcore-profile/2\"; expected \"simcore-profile/1\"");

  std::string msg = from_json_error(json::parse(R"({"hosts": [{"match": "ok", "speed": 1}, {"match": "node-[", "speed": "1Gf"}]})"));
  CHECK_THAT(msg, Catch::StartsWith("p.json (hosts[1]): match 'node-[' is not a valid regular expression ("));

  msg = from_json_error(json::parse(R"({"hosts": [{"match": "a", "speed": "2Gx"}]})"));
  CHECK_THAT(msg, Catch::StartsWith("p.json (hosts[0]): '2Gx' is not valid"));
  CHECK_THAT(msg, Catch::Contains("expected a speed such as 1Gf"));
  msg = from_json_error(json::parse(R"({"links": [{"match": "l", "bandwidth": "10GBs"}]})"));
  CHECK_THAT(msg, Catch::StartsWith("p.json (links[0]): '10GBs' is not valid"));
  msg = from_json_error(json::parse(R"({"links": [{"match": "l", "latency": "1 parsec"}]})"));
  CHECK_THAT(msg, Catch::StartsWith("p.json (links[0]): '1 parsec' is not valid"));

  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "speed": 0}]})")) ==
        "p.json (hosts[0]): speed 0.0 flop/s; expected a positive speed");
  CHECK(from_json_error(json::parse(R"({"hosts": [{"speed": "1Gf"}]})")) ==
        "p.json (hosts[0]): expected {\"match\": regex, \"speed\": \"1Gf\"} and/or \"rates\": {...}");
  CHECK(from_json_error(json::parse(R"({"hosts": {"match": "a"}})")) ==
        "p.json (hosts): expected an array of {\"match\": regex, \"speed\": \"1Gf\", \"rates\": {...}}");
  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "rates": {"r": {"value": "fast"}}}]})")) ==
        "p.json (hosts[0].rates.r): 'fast' has no known unit; expected a bandwidth (10GBps), speed (1Gf), size (4MiB) "
        "or time (2us), or a plain number");
  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "rates": [1]}]})")) ==
        "p.json (hosts[0].rates): expected an object {\"name\": {\"value\": 1e10, \"unit\": \"Bps\"}}");
  CHECK(from_json_error(json::parse(R"({"links": [{"match": "l", "bandwidth": -1}]})")) ==
        "p.json (links[0]): bandwidth -1.0 B/s; expected a bandwidth from 1 B/s to 1e18 B/s");
  CHECK(from_json_error(json::parse(R"({"links": [{"match": "l", "latency": -1e-6}]})")) ==
        "p.json (links[0]): latency -1e-06 s; expected a latency from 0 to 1e6 s");
  CHECK(from_json_error(json::parse(R"({"simgrid_config": ["network/latency-factor"]})")) ==
        "p.json (simgrid_config): expected an object {\"network/latency-factor\": \"1\"}");
  CHECK(from_json_error(json::parse(R"({"rates": {"r": {"value": "fast"}}})")) ==
        "p.json (rates.r): 'fast' has no known unit; expected a bandwidth (10GBps), speed (1Gf), size (4MiB) or time "
        "(2us), or a plain number");
  CHECK(from_json_error(json::parse(R"({"rates": {"r": {"value": -2, "unit": "Bps"}}})")) ==
        "p.json (rates.r): value -2; expected a finite number >= 0");
  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "rates": {"r": -1e9}}]})")) ==
        "p.json (hosts[0].rates.r): value -1000000000.0; expected a finite number >= 0");
  CHECK(from_json_error(json::parse(R"({"rates": {"r": {"value": "10GBps", "unit": "s"}}})")) ==
        "p.json (rates.r): \"unit\" says \"s\" but the value is in Bps; expected the value's own unit, or no \"unit\"");
  CHECK(from_json_error(json::parse(R"({"rates": {"r": {"value": []}}})")) ==
        "p.json (rates.r): expected {\"value\": number or \"10GBps\", \"unit\": \"...\"}");
  CHECK(from_json_error(json::parse(R"({"rates": {"r": {"value": 1, "units": "B"}}})")) ==
        "p.json (rates.r): unknown key 'units'; expected one of: doc, unit, value");
  CHECK_THAT(from_json_error(json::parse(R"({"hosts": [{"match": "a", "speed": true}]})")),
             Catch::StartsWith("p.json (hosts[0]): expected a number or a string with a unit"));
}

TEST_CASE("CalibrationProfile::load: malformed JSON gives the line", "[calibration]")
{
  try {
    CalibrationProfile::load(kProfiles + "malformed.json");
    FAIL("malformed profile accepted");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == kProfiles + "malformed.json:4");
    CHECK_THAT(e.detail(), Catch::StartsWith("malformed JSON (") &&
                               Catch::EndsWith("); expected a calibration profile object"));
  }
}

TEST_CASE("CalibrationProfile::load: errors of a file name the file", "[calibration]")
{
  CHECK_THROWS_WITH(CalibrationProfile::load(kProfiles + "unknown_key.json"),
                    kProfiles + "unknown_key.json:3: unknown key 'host'; expected one of: hosts, links, message_gaps, "
                                "meta, name, network_factors, quality, rates, schema, simgrid_config");
  CHECK_THROWS_WITH(CalibrationProfile::load(kProfiles + "nope.json"),
                    kProfiles + "nope.json: cannot read the calibration profile; expected an existing JSON file");
}

TEST_CASE("CalibrationProfile: a non-string rate unit is bad input", "[calibration]")
{
  CHECK_THROWS_AS(CalibrationProfile::from_json(json::parse(R"({"rates": {"r": {"value": 1, "unit": 5}}})"), "p.json"),
                  simcore::InputError);
  CHECK_THROWS_AS(CalibrationProfile::from_json(json::parse(R"({"rates": {"r": {"value": 1, "doc": []}}})"), "p.json"),
                  simcore::InputError);
}

TEST_CASE("CalibrationProfile: rates written with a unit are stored in base units", "[calibration]")
{
  auto p = CalibrationProfile::from_json(
      json::parse(R"({"rates": {"copy": "12.5GBps", "dense": {"value": "2Tf", "doc": "DGEMM"}, "lat": "2us",
                                 "plain": {"value": 3, "unit": "widgets"}}})"),
      "p.json");
  CHECK(p.rate("copy", Quantity::Bandwidth) == 12.5e9);
  CHECK(p.rates().at("copy").unit == "Bps");
  CHECK(p.rate("dense", Quantity::Speed) == 2e12);
  CHECK(p.rates().at("dense").unit == "flop/s");
  CHECK(p.rates().at("dense").doc == "DGEMM");
  CHECK(p.rate("lat", Quantity::Time) == Approx(2e-6).epsilon(1e-15));
  CHECK(p.rates().at("lat").unit == "s");
  CHECK(p.rates().at("plain").value == 3);
  CHECK(p.rates().at("plain").unit == "widgets");
}

TEST_CASE("SizeFactors read SimGrid's factor syntax as SimGrid does", "[calibration]")
{
  const auto f = simcore::SizeFactors::parse("65535:0.5;0:2;1023:1.5", "x");
  // A message of s bytes takes the factor of the largest threshold below s; none at or below
  // the smallest (SimGrid's FactorSet: "size <= threshold" uses the entry before).
  CHECK(f.at(0) == 1);
  CHECK(f.at(1) == 2);
  CHECK(f.at(1023) == 2);
  CHECK(f.at(1024) == 1.5);
  CHECK(f.at(65535) == 1.5);
  CHECK(f.at(65536) == 0.5);
  CHECK(f.at(1e12) == 0.5);
  CHECK(simcore::SizeFactors::parse("2147483647:3", "x").at(2147483648.0) == 3); // SimGrid's int bound
  for (const std::string bad : {"", "0:1;", "x:1", "-1:2", "1.5:2", "0:0", "0:-1", "0:nan", "0:inf", "0", "0:1;0:2",
                                "0:1e400", "10:2x", "2147483648:2", "99999999999:2", "100:0x2", "100: 2", "100:+2"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(simcore::SizeFactors::parse(bad, "x"), simcore::InputError);
  }
}

TEST_CASE("GapLaw reads SimGrid's smpi/os syntax: the entry of the largest threshold at or below", "[calibration]")
{
  const auto law = simcore::GapLaw::parse("256:4e-07:1e-10;0:2e-07:0", "p");
  CHECK(law.at(1) == 2e-7);
  CHECK(law.at(255) == 2e-7);
  CHECK(law.at(256) == Approx(4e-7 + 256e-10).epsilon(1e-15));
  CHECK(law.at(1e6) == Approx(4e-7 + 1e-4).epsilon(1e-15));
  CHECK(simcore::GapLaw::parse("100:1e-06:0", "p").at(99) == 0); // below the smallest threshold: none
  // A fitted segment may start below 0 where it climbs steeply: the gap is never below 0.
  const auto steep = simcore::GapLaw::parse("0:1e-07:0;100:-2e-07:3e-09", "p");
  CHECK(steep.at(99) == 1e-7);
  CHECK(steep.at(100) == Approx(1e-7).epsilon(1e-12));
  CHECK(simcore::GapLaw::parse("0:-1e-06:1e-09", "p").at(100) == 0);
  for (const char* bad : {"", "0:1e-6", "0:1e-6:0:1", "0:--1e-6:0", "0:1e-6:-1", "x:1e-6:0", "0:1e-6:0;",
                          "0: 1e-6:0", "0:0x1p-20:0", "0:-0x1p-20:0", "0:inf:0", "0:-inf:0", "0:1e-6:0;0:2e-6:0",
                          "-1:1e-6:0", "0:- 1:0"})
    CHECK_THROWS_AS(simcore::GapLaw::parse(bad, "p"), simcore::InputError);
  CHECK_THROWS_WITH(simcore::GapLaw::parse("0:1e-6:0;0:2e-6:0", "p (message_gaps.intra-node)"),
                    "p (message_gaps.intra-node): '0:1e-6:0;0:2e-6:0' gives the threshold 0 twice; expected each once");
  CHECK_THROWS_WITH(simcore::GapLaw::parse("0:1:-1", "p"),
                    Catch::Contains("entry '0:1:-1' of '0:1:-1'; expected BYTES:SECONDS:SECONDS_PER_BYTE"));
}

namespace {
/** SimGrid's reading of smpi/os, smpi/ois and smpi/or (smpi_host.cpp, 3.32), written out on
 *  its own: entries sorted by X; start with the first; at the first X the size does not pass,
 *  stop with what was taken; else take that entry and go on. */
double smpi_reading(std::vector<std::tuple<double, double, double>> entries, double size)
{
  std::sort(entries.begin(), entries.end());
  double current = std::get<1>(entries.front()) + std::get<2>(entries.front()) * size;
  for (const auto& [x, seconds, per_byte] : entries) {
    if (size <= x)
      return current;
    current = seconds + per_byte * size;
  }
  return current;
}
} // namespace

TEST_CASE("GapLaw::parse_smpi reads a law as SMPI does, and smpi_text writes one for it", "[calibration]")
{
  // An entry holds for the sizes above its X; the first below its own X as well.
  const std::vector<std::tuple<double, double, double>> entries{{100, 1e-6, 0}, {127, 3e-7, 1e-10}, {2047, 2e-6, 0}};
  const auto smpi = simcore::GapLaw::parse_smpi("2047:2e-6:0;100:1e-6:0;127:3e-7:1e-10", "p");
  for (double size : {0.0, 1.0, 99.0, 100.0, 101.0, 127.0, 128.0, 2047.0, 2048.0, 1e6})
    CHECK(smpi.at(size) == smpi_reading(entries, size));
  CHECK(smpi.at(127) == 1e-6);
  CHECK(smpi.at(128) == 3e-7 + 128e-10);
  CHECK(smpi.text() == "2047:2e-6:0;100:1e-6:0;127:3e-7:1e-10");
  CHECK_THROWS_WITH(simcore::GapLaw::parse_smpi("0:1e-6", "p"), Catch::Contains("entry '0:1e-6' of '0:1e-6'"));

  // This project's laws (an entry from its X on, none below the first), written for SMPI and
  // read back: the same gap at every size of one byte or more.
  for (const char* text : {"0:2.09248e-07:0;12:2.85334e-07:2.31257e-09;96:1.00164e-07:3.08689e-09;1536:1.04409e-06:0",
                           "200:1e-5:0;800:3e-5:0", "1:1e-6:0;2:2e-6:0", "0:1e-6:0;1:2e-6:0;3:3e-6:0"}) {
    const auto law = simcore::GapLaw::parse(text, "p");
    const auto back = simcore::GapLaw::parse_smpi(law.smpi_text(), "p");
    for (double size = 1; size < 4000; size++)
      REQUIRE(back.at(size) == law.at(size));
    // With none from 1,024 B on (a protocol switch), 0 from there, the same below.
    const auto cut = simcore::GapLaw::parse_smpi(law.smpi_text(1024), "p");
    for (double size = 1; size < 4000; size++)
      REQUIRE(cut.at(size) == (size < 1024 ? law.at(size) : 0.0));
  }
  CHECK(simcore::GapLaw::parse("200:1e-5:0;800:3e-5:1e-9", "p").smpi_text(4096) == "0:0:0;199:1e-05:0;799:3e-05:1e-09;4095:0:0");
  CHECK(simcore::GapLaw::parse("0:2.09248e-07:0;12:2.85334e-07:2.31257e-09", "p").smpi_text() ==
        "0:2.09248e-07:0;11:2.85334e-07:2.31257e-09");
  CHECK(simcore::GapLaw::parse("0:1e-6:0", "p").smpi_text(1) == "0:0:0");
  CHECK(simcore::GapLaw{}.smpi_text() == "0:0:0"); // no entry: none everywhere
  CHECK(simcore::GapLaw::parse("0:1e-6:0", "p").smpi_text(std::nan("")) == "0:1e-06:0");
  // A cut below the first entry: none from there on (SMPI's first entry also holds below it).
  CHECK(simcore::GapLaw::parse("200:1e-5:0", "p").smpi_text(100) == "0:0:0;99:0:0");
  // Negative seconds stay as they are: SMPI sleeps only what is above 0, as at() gives.
  const auto steep = simcore::GapLaw::parse("0:1e-07:0;100:-2e-07:3e-09", "p");
  const auto steep_back = simcore::GapLaw::parse_smpi(steep.smpi_text(), "p");
  for (double size : {1.0, 99.0, 100.0, 101.0, 1000.0})
    CHECK(steep_back.at(size) == steep.at(size));
  // SimGrid reads thresholds as an int.
  CHECK_NOTHROW(simcore::GapLaw::parse_smpi("0:1e-6:0;2147483647:0:0", "p"));
  CHECK_THROWS_WITH(simcore::GapLaw::parse_smpi("0:1e-6:0;2147483648:0:0", "p"),
                    Catch::Contains("expected thresholds of at most 2147483647 bytes"));
}

TEST_CASE("CalibrationProfile: message gaps by placement", "[calibration]")
{
  const auto p = CalibrationProfile::from_json(
      json::parse(R"({"message_gaps": {"intra-node": "0:3e-07:1e-10", "inter-node": "0:1e-06:0", "self": "0:1e-07:0"}})"),
      "p.json");
  using P = simcore::MessageGaps::Placement;
  const auto& g = p.message_gaps();
  CHECK(g.has(P::IntraNode));
  CHECK(g.has(P::InterNode));
  CHECK(g.has(P::Self));
  CHECK(*g.gap(1000, P::IntraNode) == Approx(3e-7 + 1e-7).epsilon(1e-15));
  CHECK(*g.gap(1000, P::InterNode) == 1e-6);
  CHECK(*g.gap(1000, P::Self) == 1e-7);
  CHECK(!p.empty());
  const auto only = CalibrationProfile::from_json(json::parse(R"({"message_gaps": {"intra-node": "0:3e-07:0"}})"), "p");
  CHECK(!only.message_gaps().gap(10, P::InterNode));
  CHECK(!only.message_gaps().gap(10, P::Self));
  CHECK(only.message_gaps().to_json() == json::parse(R"({"intra-node": "0:3e-07:0"})"));
  CHECK(from_json_error(json::parse(R"({"message_gaps": {"same-rack": "0:1e-6:0"}})")) ==
        "p.json (message_gaps.same-rack): unknown placement; expected intra-node (messages between ranks of a host), "
        "inter-node, self (a rank's messages to itself) or intra-node-queued (within a host, past the peer's fast "
        "box)");
  const auto queued = CalibrationProfile::from_json(
      json::parse(R"({"message_gaps": {"intra-node": "0:2e-07:0", "intra-node-queued": "0:6e-07:1e-10"}})"), "p");
  CHECK(*queued.message_gaps().gap(1000, P::IntraNodeQueued) == Approx(6e-7 + 1e-7).epsilon(1e-15));
  CHECK(!only.message_gaps().has(P::IntraNodeQueued));
  CHECK(queued.message_gaps().to_json() ==
        json::parse(R"({"intra-node": "0:2e-07:0", "intra-node-queued": "0:6e-07:1e-10"})"));
  CHECK(from_json_error(json::parse(R"({"message_gaps": {"intra-node": 1e-6}})")) ==
        "p.json (message_gaps.intra-node): expected a string BYTES:SECONDS:SECONDS_PER_BYTE;... (\"0:3e-07:1e-10\")");
  CHECK_THAT(from_json_error(json::parse(R"({"message_gaps": []})")), Catch::StartsWith("p.json (message_gaps): expected an object"));
}

TEST_CASE("CalibrationProfile: network factors by placement", "[calibration]")
{
  const auto p = CalibrationProfile::from_json(
      json::parse(R"({"network_factors": {"intra-node": {"latency": "0:2;1000:3", "bandwidth": "0:0.5"},
                                          "inter-node": {"bandwidth": "0:0.25;65535:0.75"}}})"),
      "p.json");
  const auto& nf = p.network_factors();
  CHECK_FALSE(p.empty());
  CHECK(nf.to_json() == json::parse(R"({"intra-node": {"latency": "0:2;1000:3", "bandwidth": "0:0.5"},
                                         "inter-node": {"bandwidth": "0:0.25;65535:0.75"}})"));
  CHECK(nf.latency_factor(10, true) == 2);
  CHECK(nf.latency_factor(1001, true) == 3);
  CHECK(nf.latency_factor(1001, false) == 1); // not given for inter-node: 1
  CHECK(nf.bandwidth_factor(10, true) == 0.5);
  CHECK(nf.bandwidth_factor(10, false) == 0.25);
  CHECK(nf.bandwidth_factor(65536, false) == 0.75);

  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"same-rack": {"latency": "0:1"}}})")),
             Catch::Contains("p.json (network_factors.same-rack): unknown placement; expected intra-node"));
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"intra-node": {"lat": "0:1"}}})")),
             Catch::Contains("p.json (network_factors.intra-node.lat): unknown key; expected latency or bandwidth"));
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"inter-node": {"bandwidth": "0:1;64K:2"}}})")),
             Catch::Contains("p.json (network_factors.inter-node.bandwidth): entry '64K:2'"));
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"inter-node": {"bandwidth": 0.5}}})")),
             Catch::Contains("expected a string in SimGrid's factor syntax"));
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": []})")),
             Catch::Contains("p.json (network_factors): expected an object"));
  // SimGrid takes its configured factors or callbacks, not both: refused when loading.
  CHECK_THAT(from_json_error(json::parse(R"({"simgrid_config": {"smpi/bw-factor": "0:1"},
                                             "network_factors": {"inter-node": {"bandwidth": "0:0.5"}}})")),
             Catch::Contains("p.json (simgrid_config.smpi/bw-factor): set beside network_factors"));
  // Both factors are installed whenever network_factors are (1 where not given): SimGrid's
  // own bandwidth factor may not stand beside latency factors alone either.
  CHECK_THAT(from_json_error(json::parse(R"({"simgrid_config": {"network/bandwidth-factor": "0.9"},
                                             "network_factors": {"inter-node": {"latency": "0:2"}}})")),
             Catch::Contains("p.json (simgrid_config.network/bandwidth-factor): set beside network_factors"));
}

TEST_CASE("CalibrationProfile: a number with a unit SimGrid knows is stored in the base unit", "[calibration]")
{
  auto p = CalibrationProfile::from_json(json::parse(R"({"rates": {
      "copy": {"value": 10, "unit": "GBps"}, "dense": {"value": 3, "unit": "flops"}, "work": {"value": "30", "unit": "flop"},
      "lat": {"value": 2, "unit": "us"}, "eager": {"value": 16, "unit": "KiB"}, "lines": {"value": 5, "unit": "1/s"},
      "bare": "7", "copy_text": {"value": "4GBps", "unit": "Bps"}}})"),
                                         "p.json");
  CHECK(p.rate("copy", Quantity::Bandwidth) == 1e10);
  CHECK(p.rates().at("copy").unit == "Bps");
  CHECK(p.rate("dense", Quantity::Speed) == 3); // the fitter's spelling of flop/s
  CHECK(p.rates().at("dense").unit == "flop/s");
  CHECK(p.rate("work", Quantity::Flops) == 30); // a bare number in a string takes the unit given
  CHECK(p.rate("lat", Quantity::Time) == Approx(2e-6).epsilon(1e-15));
  CHECK(p.rate("eager", Quantity::Size) == 16384);
  CHECK(p.rates().at("lines").unit == "1/s"); // not SimGrid's: kept as written
  CHECK(p.rates().at("bare").unit.empty());
  CHECK(p.rate("bare", Quantity::Bandwidth) == 7);
  CHECK(p.rate("copy_text", Quantity::Bandwidth) == 4e9);
}

TEST_CASE("CalibrationProfile: a rate read in another unit, or not positive, names the rate", "[calibration]")
{
  auto p = CalibrationProfile::from_json(json::parse(R"({
      "hosts": [{"match": "gpu-.*", "rates": {"memcpy_bandwidth": 0}}],
      "rates": {"memcpy_bandwidth": "2us", "lines": {"value": 5, "unit": "1/s"}, "cells": {"value": 30, "unit": "flop"}}})"),
                                         "p.json");
  CHECK_THROWS_WITH(p.rate_or("memcpy_bandwidth", Quantity::Bandwidth, 1e9),
                    "p.json (rates.memcpy_bandwidth): a rate in s; the model reads it as a bandwidth such as 10GBps, "
                    "100Mbps, 1.25GBps, in Bps");
  CHECK_THROWS_WITH(p.rate_or("memcpy_bandwidth", "gpu-1", Quantity::Bandwidth, 1e9),
                    "p.json (hosts[0].rates.memcpy_bandwidth): value 0.0; the model reads it as a bandwidth such as "
                    "10GBps, 100Mbps, 1.25GBps, which must be positive");
  CHECK_THROWS_AS(p.rate("lines", Quantity::Speed), simcore::InputError);
  CHECK_THROWS_AS(p.rate("cells", Quantity::Speed), simcore::InputError); // an amount, not a rate
  CHECK(p.rate("cells", Quantity::Flops) == 30);
  // SimGrid spells an amount of work as a speed ("600f", "1Gf"): read as flop, it is one.
  auto work = CalibrationProfile::from_json(json::parse(R"({"rates": {"a": "600f", "b": {"value": 2, "unit": "Gf"}}})"),
                                            "p.json");
  CHECK(work.rate("a", Quantity::Flops) == 600);
  CHECK(work.rate("b", Quantity::Flops) == 2e9);
  CHECK(p.rate_or("missing", Quantity::Bandwidth, 5) == 5);
}

TEST_CASE("CalibrationProfile: values SimGrid cannot run with are refused when loaded", "[calibration]")
{
  CHECK(from_json_error(json::parse(R"({"hosts": [{"match": "a", "speed": 1e-320}]})")) ==
        "p.json (hosts[0]): speed 1e-320 flop/s; expected a finite positive number that is not denormal");
  CHECK(from_json_error(json::parse(R"({"links": [{"match": "l"}]})")) ==
        "p.json (links[0]): expected {\"match\": regex, \"bandwidth\": \"10GBps\"} and/or \"latency\": \"1us\"");
  const std::string bw = "p.json (simgrid_config.network/loopback-bw): SimGrid configuration 'network/loopback-bw' = ";
  const std::string lat = "p.json (simgrid_config.network/loopback-lat): SimGrid configuration 'network/loopback-lat' = ";
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/loopback-bw": "0"}})")) ==
        bw + "'0'; expected a bandwidth from 1 to 1e18 B/s, in B/s");
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/loopback-lat": "-1"}})")) ==
        lat + "'-1'; expected a latency from 0 to 1e6 s, in s");
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/loopback-bw": "0x10"}})")) ==
        bw + "'0x10'; expected a bandwidth from 1 to 1e18 B/s, in B/s");
  // Positive or finite but beyond what SimGrid can time: it aborted, or the clock reached inf.
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/loopback-lat": "1e308"}})")) ==
        lat + "'1e308'; expected a latency from 0 to 1e6 s, in s");
  CHECK(from_json_error(json::parse(R"({"links": [{"match": "l", "bandwidth": 1e-310}]})")) ==
        "p.json (links[0]): bandwidth 1e-310 B/s; expected a bandwidth from 1 B/s to 1e18 B/s");
  CHECK(from_json_error(json::parse(R"({"links": [{"match": "l", "latency": 1e308}]})")) ==
        "p.json (links[0]): latency 1e+308 s; expected a latency from 0 to 1e6 s");
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"intra-node": {"latency": "0:1e308"}}})")),
             Catch::EndsWith("the factor from 1e-12 to 1e12"));
  CHECK_THAT(from_json_error(json::parse(R"({"network_factors": {"intra-node": {"bandwidth": "0:4.9e-324"}}})")),
             Catch::EndsWith("the factor from 1e-12 to 1e12"));
  // Gaps whose time overflows at some size: a sleep of inf aborted SimGrid.
  for (const char* law : {"0:1e308:0", "0:0:1e306", "0:2:0", "0:-2:0", "0:0:2"})
    CHECK_THAT(from_json_error(json::parse(std::string(R"({"message_gaps": {"intra-node": ")") + law + "\"}}")),
               Catch::EndsWith("seconds from -1 to 1, seconds per byte from 0 to 1"));
  // A model SimGrid does not have: it aborted once it built the platform.
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/model": "Foo"}})")) ==
        "p.json (simgrid_config.network/model): SimGrid configuration 'network/model' = 'Foo'; expected one of LV08, "
        "Constant, SMPI, IB, CM02");
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"host/model": "null"}})")) ==
        "p.json (simgrid_config.host/model): SimGrid configuration 'host/model' = 'null'; expected one of default, "
        "compound, ptask_L07");
  CHECK(from_json_error(json::parse(R"({"simgrid_config": {"network/model": null}})")) ==
        "p.json (simgrid_config.network/model): a null; expected a string, a number or true/false");
  CHECK_NOTHROW(CalibrationProfile::from_json(json::parse(R"({"simgrid_config": {"network/model": "SMPI", "network/optim": "Full"}})"), "p.json"));
  CHECK_NOTHROW(CalibrationProfile::from_json(
      json::parse(R"({"simgrid_config": {"network/loopback-bw": "2.6e10", "network/loopback-lat": 0}})"), "p.json"));
}

TEST_CASE("CalibrationProfile::load: a number beyond a double names the file and line", "[calibration]")
{
  const std::string tmp = (std::filesystem::temp_directory_path() / ("simcore-overflow-" + std::to_string(::getpid()) + ".json")).string();
  // The number also stands in a string before it: the line is the value's.
  std::ofstream(tmp) << "{\n  \"name\": \"a rate of 1e400\",\n  \"rates\": {\"x\": 1e400}\n}\n";
  try {
    CalibrationProfile::load(tmp);
    FAIL("profile with 1e400 accepted");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == tmp + ":3");
    CHECK_THAT(e.detail(), Catch::Contains("number overflow") && Catch::EndsWith("expected numbers a double holds"));
  }
  std::filesystem::remove(tmp);
}

TEST_CASE("CalibrationProfile: values of the wrong type are refused by type, never printed whole", "[calibration]")
{
  // A value nested 200,000 arrays deep crashed the process as it was printed into the message.
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  for (const std::string key : {"name", "schema"}) {
    const json j = json::parse("{\"" + key + "\": " + deep + "}");
    const std::string msg = from_json_error(j);
    CHECK(msg.size() < 200);
    CHECK_THAT(msg, Catch::StartsWith("p.json (" + key + "): ") && Catch::Contains("array"));
  }
  CHECK(from_json_error(json::parse("{\"simgrid_config\": {\"network/model\": " + deep + "}}")) ==
        "p.json (simgrid_config.network/model): a array; expected a string, a number or true/false");
  CHECK_THAT(from_json_error(json::parse("{\"links\": [{\"match\": \"l\", \"latency\": 1, \"scope\": " + deep + "}]}")),
             Catch::StartsWith("p.json (links[0]): scope of type array; expected"));
  CHECK(from_json_error(json::parse(R"({"name": 3})")) == "p.json (name): a number; expected a string");
}

TEST_CASE("CalibrationProfile: an amount of work spelt as SimGrid spells it, with unit flop", "[calibration]")
{
  // "600f" is SimGrid's spelling of a speed and of an amount of work alike: with "unit": "flop"
  // it was refused ("the unit says flop but the value is in flop/s").
  const auto p = CalibrationProfile::from_json(json::parse(R"({"rates": {"w": {"value": "600f", "unit": "flop"}}})"), "p.json");
  CHECK(p.rate("w", Quantity::Flops) == 600);
  CHECK_THAT(from_json_error(json::parse(R"({"rates": {"w": {"value": "600f", "unit": "s"}}})")),
             Catch::EndsWith("\"unit\" says \"s\" but the value is in flop/s; expected the value's own unit, or no \"unit\""));
}

TEST_CASE("name patterns std::regex cannot match safely are refused", "[calibration]")
{
  using simcore::compile_name_pattern;
  auto refusal = [](const std::string& pattern) {
    try {
      compile_name_pattern(pattern, "w", "match");
      return std::string();
    } catch (const simcore::InputError& e) {
      return e.detail();
    }
  };
  // Nested repetition: "(((.*)*)*)*(x)" ran for minutes against a host name.
  for (const char* p : {"(a+)+", "(.*)*", "(((.*)*)*)*(x)", "((ab)*c)+", "(a{2,})*", "([0-9]+-)+x", "(a*){2,5}"})
    CHECK_THAT(refusal(p), Catch::StartsWith(std::string("match '") + p + "' is refused: a repeated group holds a "
                                                                        "repetition itself"));
  // 100,000 nested groups overflowed the stack as libstdc++ compiled them.
  CHECK_THAT(refusal(std::string(100000, '(') + "x" + std::string(100000, ')')),
             Catch::Contains("is refused: it has 200001 characters; expected at most 1000"));
  CHECK_THAT(refusal(std::string(17, '(') + "x" + std::string(17, ')')),
             Catch::EndsWith("is refused: its groups nest more than 16 deep"));
  CHECK(refusal(std::string(16, '(') + "x" + std::string(16, ')')).empty());
  // What host and link patterns look like passes, escapes and bracket expressions included.
  for (const char* p : {".*", "node-[0-9]+", "(ft|node)-[0-9]+", "(ab)*", "(a+)?", "(a*)", "x\\(a+\\)+", "[(]a+[)]+",
                        "(a+){1}", "(a+){0,1}", "ft-.*?", "link_[0-9]+_(UP|DOWN)"})
    CHECK(refusal(p).empty());
  CHECK_THAT(refusal("node-["), Catch::StartsWith("match 'node-[' is not a valid regular expression ("));
  const auto re = compile_name_pattern("(ft|node)-[0-9]+", "w", "match");
  CHECK(std::regex_match("node-12", re));
  CHECK(!std::regex_match("node-", re));
}

TEST_CASE("CalibrationProfile::load: a key given twice in one object is refused", "[calibration]")
{
  const std::string tmp = (std::filesystem::temp_directory_path() / ("simcore-twice-" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(tmp) << R"({"rates": {"x": {"value": 1}, "y": {"value": 1}, "x": {"value": 2}}})";
  try {
    CalibrationProfile::load(tmp);
    FAIL("profile with a key twice accepted");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == tmp + ":1 (rates.x)");
    CHECK(e.detail() == "the key 'x' twice in one object; expected each key once");
  }
  // The same key in different objects is fine.
  std::ofstream(tmp) << R"({"rates": {"x": {"value": 1}, "y": {"value": 1}}, "hosts": [{"match": "a", "rates": {"x": 2}}]})";
  CHECK_NOTHROW(CalibrationProfile::load(tmp));
  std::filesystem::remove(tmp);
}

TEST_CASE("GapLaw::smpi_text leaves out what SMPI cannot read as an int", "[calibration]")
{
  // A protocol switch past 2^31 bytes is no cut; an entry from past it is left out.
  const auto law = simcore::GapLaw::parse("0:1e-07:0;3000000000:2e-07:0", "p");
  CHECK(law.smpi_text(1e300) == "0:1e-07:0");
  CHECK(law.smpi_text(3e9) == "0:1e-07:0");
  CHECK(law.smpi_text(4096) == "0:1e-07:0;4095:0:0");
  CHECK(simcore::GapLaw::parse("0:1e-07:0;2147483648:2e-07:0", "p").smpi_text() == "0:1e-07:0;2147483647:2e-07:0");
  CHECK_NOTHROW(simcore::GapLaw::parse_smpi(law.smpi_text(1e300), "p"));
}
