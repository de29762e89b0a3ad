// parse_param and ParamSet: every parameter type, ranges, unknown/missing parameters, origins.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/param_set.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using simcore::ParamSet;
using simcore::ParamSpec;
using simcore::ParamType;
using simcore::ParamValue;

namespace {

ParamValue parse(const ParamSpec& spec, const std::string& text, const std::string& base = "")
{
  return simcore::parse_param(spec, text, "s.xml:3", base);
}

/** The message of the InputError that parsing `text` throws. */
std::string parse_error(const ParamSpec& spec, const std::string& text, const std::string& base = "")
{
  try {
    simcore::parse_param(spec, text, "s.xml:3", base);
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == "s.xml:3");
    return e.what();
  }
  FAIL("'" << text << "' was accepted for parameter " << spec.name << "; expected an InputError");
  return "";
}

template <class T> T as(const ParamValue& v)
{
  REQUIRE(std::holds_alternative<T>(v));
  return std::get<T>(v);
}

} // namespace

TEST_CASE("integer parameters", "[params]")
{
  auto spec = ParamSpec::integer("n", 5, "doc");
  CHECK(as<std::int64_t>(parse(spec, "42")) == 42);
  CHECK(as<std::int64_t>(parse(spec, " -7 ")) == -7);
  CHECK(as<std::int64_t>(parse(spec, "9007199254740993")) == 9007199254740993LL);
  std::string msg = parse_error(spec, "abc");
  CHECK(msg == "s.xml:3: parameter 'n' = 'abc' is not an integer; expected a whole number such as 42");
  CHECK_THAT(parse_error(spec, "1.5"), Catch::Contains("is not an integer"));
  CHECK_THAT(parse_error(spec, ""), Catch::Contains("is not an integer"));
  CHECK_THAT(parse_error(spec, "99999999999999999999"), Catch::Contains("is out of range"));
}

TEST_CASE("real parameters", "[params]")
{
  auto spec = ParamSpec::real("r", 0.5, "doc");
  CHECK(as<double>(parse(spec, "1e-3")) == 1e-3);
  CHECK(as<double>(parse(spec, "-2.25")) == -2.25);
  CHECK(parse_error(spec, "x") ==
        "s.xml:3: parameter 'r' = 'x' is not a number; expected a real number such as 0.5 or 1e-3");
  CHECK_THAT(parse_error(spec, "inf"), Catch::Contains("is not a number"));
  CHECK_THAT(parse_error(spec, "nan"), Catch::Contains("is not a number"));
  CHECK_THAT(parse_error(spec, "1.0GBps"), Catch::Contains("is not a number"));
}

TEST_CASE("boolean parameters accept true/false, 1/0, yes/no, on/off in any case", "[params]")
{
  auto spec = ParamSpec::boolean("b", false, "doc");
  for (const char* t : {"true", "TRUE", "1", "yes", "Yes", "on", " on "})
    CHECK(as<bool>(parse(spec, t)) == true);
  for (const char* t : {"false", "False", "0", "no", "NO", "off"})
    CHECK(as<bool>(parse(spec, t)) == false);
  CHECK(parse_error(spec, "maybe") == "s.xml:3: parameter 'b' = 'maybe' is not a boolean; expected true or false");
  CHECK_THAT(parse_error(spec, "2"), Catch::Contains("is not a boolean"));
}

TEST_CASE("string and choice parameters", "[params]")
{
  auto s = ParamSpec::string("s", "", "doc");
  CHECK(as<std::string>(parse(s, " as is ")) == " as is "); // strings are not trimmed
  CHECK_FALSE(s.required());

  auto c = ParamSpec::choice("policy", {"fifo", "lifo", "random"}, "fifo", "doc");
  CHECK(as<std::string>(parse(c, "lifo")) == "lifo");
  CHECK(as<std::string>(parse(c, " random ")) == "random");
  CHECK(parse_error(c, "LIFO") == "s.xml:3: parameter 'policy' = 'LIFO' is not allowed; expected one of: fifo, lifo, random");
}

TEST_CASE("quantity parameters are stored in base units", "[params]")
{
  CHECK(as<double>(parse(ParamSpec::quantity("t", ParamType::Time, "1s", ""), "2ms")) == Approx(2e-3).epsilon(1e-15));
  CHECK(as<double>(parse(ParamSpec::quantity("z", ParamType::Size, "1B", ""), "4MiB")) == 4194304.0);
  CHECK(as<double>(parse(ParamSpec::quantity("bw", ParamType::Bandwidth, "1Bps", ""), "1Gbps")) == 1.25e8);
  CHECK(as<double>(parse(ParamSpec::quantity("sp", ParamType::Speed, "1f", ""), "2Gf")) == 2e9);
  CHECK(as<double>(parse(ParamSpec::quantity("w", ParamType::Flops, "1f", ""), "1Gf")) == 1e9);
  CHECK(as<double>(parse(ParamSpec::quantity("w", ParamType::Flops, "1f", ""), "12")) == 12.0);

  std::string msg = parse_error(ParamSpec::quantity("bw", ParamType::Bandwidth, "1Bps", ""), "10GBs");
  CHECK_THAT(msg, Catch::StartsWith("s.xml:3: '10GBs' is not valid"));
  CHECK_THAT(msg, Catch::Contains("expected a bandwidth such as 10GBps"));
}

TEST_CASE("ParamSpec units and type names", "[params]")
{
  CHECK(ParamSpec::quantity("x", ParamType::Time, "1s", "").unit() == "s");
  CHECK(ParamSpec::quantity("x", ParamType::Size, "1B", "").unit() == "B");
  CHECK(ParamSpec::quantity("x", ParamType::Bandwidth, "1Bps", "").unit() == "Bps");
  CHECK(ParamSpec::quantity("x", ParamType::Speed, "1f", "").unit() == "flop/s");
  CHECK(ParamSpec::quantity("x", ParamType::Flops, "1f", "").unit() == "flop");
  CHECK(ParamSpec::integer("x", 1, "").unit().empty());
  CHECK(std::string(simcore::to_string(ParamType::Bandwidth)) == "bandwidth");
  CHECK(std::string(simcore::to_string(ParamType::File)) == "file");
  CHECK(ParamSpec::real("x", 0.1, "").default_value == "0.10000000000000001"); // 17 digits: round-trips
  CHECK(ParamSpec::integer("x", -3, "").default_value == "-3");
  CHECK(ParamSpec::boolean("x", true, "").default_value == "true");
}

TEST_CASE("file parameters resolve relative to the base folder and must exist", "[params]")
{
  auto spec = ParamSpec::file("input", "doc");
  CHECK(spec.required());
  const std::string data = SIMCORE_TEST_DATA;
  const std::string expected = fs::path(data + "/profiles/valid.json").lexically_normal().string();
  CHECK(as<std::string>(parse(spec, "profiles/valid.json", data)) == expected);
  CHECK(as<std::string>(parse(spec, "../data/profiles/./valid.json", data)) == expected);
  CHECK(as<std::string>(parse(spec, expected, "/nonexistent")) == expected); // absolute: base ignored

  std::string msg = parse_error(spec, "profiles/missing.json", data);
  CHECK_THAT(msg, Catch::StartsWith("s.xml:3: parameter 'input': file '"));
  CHECK_THAT(msg, Catch::Contains(fs::path(data + "/profiles/missing.json").lexically_normal().string()));
  CHECK_THAT(msg, Catch::Contains("does not exist; expected a path relative to the scenario file"));
  CHECK_THAT(parse_error(spec, "profiles", data), Catch::Contains("does not exist")); // a folder is not a file
  CHECK(parse_error(spec, "  ", data) == "s.xml:3: parameter 'input' is empty; expected the path of an existing file");
}

TEST_CASE("range checks are inclusive and name the bounds", "[params]")
{
  auto n = ParamSpec::integer("tasks", 10, "").within(1, 100);
  CHECK(as<std::int64_t>(parse(n, "1")) == 1);
  CHECK(as<std::int64_t>(parse(n, "100")) == 100);
  CHECK(parse_error(n, "0") ==
        "s.xml:3: parameter 'tasks' = '0' is out of range; expected a value between 1 and 100");
  CHECK(parse_error(n, "101") ==
        "s.xml:3: parameter 'tasks' = '101' is out of range; expected a value between 1 and 100");

  auto t = ParamSpec::quantity("lat", ParamType::Time, "1us", "").at_least(1e-6);
  CHECK(as<double>(parse(t, "1us")) == Approx(1e-6).epsilon(1e-15));
  CHECK(parse_error(t, "0.5us") == "s.xml:3: parameter 'lat' = '0.5us' is out of range; expected a value at least 1e-06 s");

  auto r = ParamSpec::real("p", 0.5, "").at_most(1);
  CHECK(as<double>(parse(r, "1")) == 1.0);
  CHECK(parse_error(r, "1.5") == "s.xml:3: parameter 'p' = '1.5' is out of range; expected a value at most 1");
}

TEST_CASE("ParamSet fills defaults and records where each value came from", "[params]")
{
  ParamSet ps({ParamSpec::integer("tasks", 100, "n").within(1, 1000), ParamSpec::real("ratio", 0.25, "r"),
               ParamSpec::boolean("verbose", false, "v"),
               ParamSpec::quantity("bw", ParamType::Bandwidth, "10GBps", "b"),
               ParamSpec::choice("mode", {"a", "b"}, "a", "m"), ParamSpec::string("label", "", "l")});
  CHECK(ps.get_int("tasks") == 100);
  CHECK(ps.origin("tasks") == "default");
  CHECK(ps.text("tasks") == "100");
  CHECK(ps.get_double("bw") == 1e10);
  CHECK(ps.text("bw") == "10GBps");
  CHECK(ps.get_double("tasks") == 100.0); // integers read as double too
  CHECK(ps.get_bool("verbose") == false);
  CHECK(ps.get_string("mode") == "a");
  CHECK(ps.get_string("label").empty());
  CHECK_NOTHROW(ps.check_complete("s.xml:1"));

  ps.set("tasks", "7", "s.xml:12", "");
  ps.set("bw", "1Gbps", "--set bw=1Gbps", "");
  CHECK(ps.get_int("tasks") == 7);
  CHECK(ps.origin("tasks") == "s.xml:12");
  CHECK(ps.origin("bw") == "--set bw=1Gbps");
  CHECK(ps.text("bw") == "1Gbps");
  CHECK(ps.get_double("bw") == 1.25e8);

  nlohmann::json j = ps.to_json();
  CHECK(j == nlohmann::json{{"tasks", 7}, {"ratio", 0.25}, {"verbose", false}, {"bw", 1.25e8}, {"mode", "a"}, {"label", ""}});

  // Wrong accessor for the type: a programming error, not bad input.
  CHECK_THROWS_AS(ps.get_bool("tasks"), simcore::InternalError);
  CHECK_THROWS_AS(ps.get_int("ratio"), simcore::InternalError);
  CHECK_THROWS_AS(ps.get_string("tasks"), simcore::InternalError);
  CHECK_THROWS_AS(ps.get_double("mode"), simcore::InternalError);
  CHECK_THROWS_AS(ps.get_int("nope"), simcore::InternalError);
}

TEST_CASE("ParamSet rejects unknown parameters listing the known ones", "[params]")
{
  ParamSet ps({ParamSpec::integer("tasks", 1, ""), ParamSpec::real("ratio", 1, "")});
  try {
    ps.set("taks", "3", "s.xml:9", "");
    FAIL("unknown parameter accepted");
  } catch (const simcore::InputError& e) {
    CHECK(std::string(e.what()) == "s.xml:9: unknown parameter 'taks'; expected one of: tasks, ratio");
    CHECK(e.where() == "s.xml:9");
    CHECK(e.detail() == "unknown parameter 'taks'; expected one of: tasks, ratio");
  }
  ParamSet none;
  CHECK_THROWS_WITH(none.set("x", "1", "w", ""), "w: unknown parameter 'x'; expected one of: (none)");
  CHECK_THROWS_AS(ps.spec("nope"), simcore::InputError);
  CHECK(ps.spec("ratio").type == ParamType::Real);
}

TEST_CASE("ParamSet: a failed set keeps the previous value", "[params]")
{
  ParamSet ps({ParamSpec::integer("tasks", 5, "").within(1, 10)});
  CHECK_THROWS_AS(ps.set("tasks", "11", "w", ""), simcore::InputError);
  CHECK(ps.get_int("tasks") == 5);
  CHECK(ps.origin("tasks") == "default");
}

TEST_CASE("ParamSet::check_complete names every missing required parameter", "[params]")
{
  ParamSet ps({ParamSpec::file("input", "input file"), ParamSpec::integer("n", 1, ""),
               ParamSpec::quantity("lat", ParamType::Time, "", "required time")});
  CHECK_FALSE(ps.has("input"));
  CHECK_FALSE(ps.has("lat"));
  CHECK(ps.has("n"));
  CHECK_THROWS_WITH(ps.check_complete("s.xml:2"),
                    "s.xml:2: missing required parameter(s): input (file), lat (time); "
                    "expected <param name=\"...\" value=\"...\"/>");
  ps.set("lat", "1ms", "s.xml:5", "");
  CHECK_THROWS_WITH(ps.check_complete("s.xml:2"), Catch::Contains("input (file)") && !Catch::Contains("lat"));
  ps.set("input", "profiles/valid.json", "s.xml:6", SIMCORE_TEST_DATA);
  CHECK_NOTHROW(ps.check_complete("s.xml:2"));
  CHECK(ps.origin("input") == "s.xml:6");
}

TEST_CASE("optional file parameters default to none", "[params]")
{
  simcore::ParamSet set({simcore::ParamSpec::optional_file("trace", "optional input trace")});
  CHECK(set.get_string("trace").empty());
  CHECK(set.origin("trace") == "default");
  set.set("trace", "platforms/star.xml", "s.xml:4", SIMCORE_SOURCE_DIR);
  CHECK(set.get_string("trace") == std::string(SIMCORE_SOURCE_DIR) + "/platforms/star.xml");
  CHECK_THROWS_WITH(set.set("trace", "nope.txt", "s.xml:5", SIMCORE_SOURCE_DIR),
                    Catch::Contains("s.xml:5: parameter 'trace': file '") && Catch::Contains("does not exist"));
}

TEST_CASE("integer list parameters", "[params]")
{
  auto spec = simcore::ParamSpec::integer_list("shape", "", "global shape").within(1, 1 << 20);
  simcore::ParamSet set({spec});
  CHECK(set.get_int_list("shape").empty());
  set.set("shape", "1024, 512,3", "s.xml:2", "");
  CHECK(set.get_int_list("shape") == std::vector<std::int64_t>{1024, 512, 3});
  set.set("shape", "4x4X2", "s.xml:3", "");
  CHECK(set.get_int_list("shape") == std::vector<std::int64_t>{4, 4, 2});
  CHECK_THROWS_WITH(set.set("shape", "4,,2", "s.xml:4", ""),
                    "s.xml:4: parameter 'shape' = '4,,2' is not a list of integers; expected e.g. 64,64,32 or 4x4x2");
  CHECK_THROWS_WITH(set.set("shape", "4,0,2", "s.xml:5", ""),
                    "s.xml:5: parameter 'shape' = '4,0,2' is out of range; expected a value between 1 and 1048576");
  CHECK(set.to_json()["shape"].dump() == "[4,4,2]");
}

TEST_CASE("ParamSet::given tells a value that set() gave from a default", "[params]")
{
  ParamSet ps({ParamSpec::real("flops", 50, "f").at_least(0), ParamSpec::integer("n", 5, "").within(1, 10),
               ParamSpec::quantity("lat", ParamType::Time, "", "required time")});
  CHECK_FALSE(ps.given("flops")); // holds its default
  CHECK_FALSE(ps.given("lat"));   // required, no value yet
  ps.set("flops", "50", "s.xml:4", ""); // the default's value, but written by the user
  CHECK(ps.given("flops"));
  CHECK(ps.get_double("flops") == 50);
  CHECK_THROWS_AS(ps.set("n", "11", "--set n=11", ""), simcore::InputError);
  CHECK_FALSE(ps.given("n")); // a refused value leaves the default in place
  ps.set("n", "3", "set(n=3)", "");
  CHECK(ps.given("n"));
  ps.set("lat", "1ms", "s.xml:5", "");
  CHECK(ps.given("lat"));
  const ParamSet copy = ps; // travels with the value (Python's copy())
  CHECK(copy.given("n"));
  CHECK_THROWS_AS(ps.given("nope"), simcore::InternalError);
}
