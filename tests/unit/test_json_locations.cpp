#include <simcore/json_locations.hpp>

#include <catch2/catch.hpp>

#include <string>

using simcore::InputError;
using simcore::JsonLocations;

namespace {

const std::string kProfile = R"({
  "schema": "simcore-profile/1",
  "hosts": [
    {"match": "a", "speed": "1Gf"},
    {
      "match": "b",
      "rates": {"memcpy_bandwidth": "2us"}
    }
  ],
  "rates": {
    "x": 1, "y":
      2
  }
})";

} // namespace

TEST_CASE("JsonLocations: members at their key, elements at their value, the root at line 1", "[json]")
{
  const JsonLocations at(kProfile);
  CHECK(at.line_of("") == 1u);
  CHECK(at.line_of("schema") == 2u);
  CHECK(at.line_of("hosts") == 3u);
  CHECK(at.line_of("hosts[0]") == 4u);
  CHECK(at.line_of("hosts[0].speed") == 4u);
  CHECK(at.line_of("hosts[1]") == 5u);
  CHECK(at.line_of("hosts[1].match") == 6u);
  CHECK(at.line_of("hosts[1].rates.memcpy_bandwidth") == 7u);
  CHECK(at.line_of("rates.x") == 11u);
  CHECK(at.line_of("rates.y") == 11u); // the key's line, not its value's
  // A path the text does not hold: its nearest enclosing value.
  CHECK(at.line_of("hosts[1].rates.copy") == 7u);
  CHECK(at.line_of("hosts[7]") == 3u);
  CHECK(at.line_of("nothing") == 1u);
  CHECK(!at.first_duplicate());
}

TEST_CASE("JsonLocations: escaped keys, a byte-order mark, strings holding brackets and commas", "[json]")
{
  const JsonLocations at("\xEF\xBB\xBF{\"a\\\"b\": \"x,]}[{\",\n\"c\\u00e9\": [1,\n 2,\n [3]]}");
  CHECK(at.line_of("a\"b") == 1u);
  CHECK(at.line_of("c\xC3\xA9") == 2u); // the key as nlohmann decodes it
  CHECK(at.line_of("c\xC3\xA9[1]") == 3u);
  CHECK(at.line_of("c\xC3\xA9[2][0]") == 4u);
}

TEST_CASE("JsonLocations: the first key given twice in one object, at its second line", "[json]")
{
  const JsonLocations at("{\"r\": {\"x\": 1,\n \"y\": 2},\n \"s\": {\"x\": 1,\n \"x\": 2,\n \"x\": 3}}");
  REQUIRE(at.first_duplicate());
  CHECK(at.first_duplicate()->first == "s.x");
  CHECK(at.first_duplicate()->second == 4u);
}

TEST_CASE("JsonLocations: nesting as deep as the input likes, in bounded memory", "[json]")
{
  const std::size_t depth = 200000;
  const std::string text = "[\n" + std::string(depth - 1, '[') + "1" + std::string(depth, ']');
  const JsonLocations at(text);
  CHECK(at.line_of("") == 1u);
  CHECK(at.line_of("[0]") == 2u);
  std::string innermost; // deeper than what is recorded: its nearest recorded enclosing value
  for (std::size_t i = 0; i < depth; i++)
    innermost += "[0]";
  CHECK(at.line_of(innermost) == 2u);
}

TEST_CASE("JsonLocations::locate gives a profile's errors their line", "[json]")
{
  const JsonLocations at(kProfile);
  const auto relocated = [&](const std::string& where, const std::string& detail) {
    return std::string(at.locate(InputError(where, detail), "p.json").what());
  };
  CHECK(relocated("p.json (hosts[1])", "bad") == "p.json:5 (hosts[1]): bad");
  CHECK(relocated("p.json (hosts[1].rates.memcpy_bandwidth", "bad") ==
        "p.json:7 (hosts[1].rates.memcpy_bandwidth): bad");
  // An unknown key is placed at the key, not at its object.
  CHECK(relocated("p.json (hosts[1])", "unknown key 'rates'; expected one of: match") ==
        "p.json:7 (hosts[1]): unknown key 'rates'; expected one of: match");
  CHECK(relocated("p.json", "unknown key 'rates'; expected one of: hosts") ==
        "p.json:10: unknown key 'rates'; expected one of: hosts");
  // Locations of other files, and ones with a line already, are left as they are.
  CHECK(relocated("q.json (hosts[1])", "bad") == "q.json (hosts[1]): bad");
  CHECK(relocated("p.json:3", "bad") == "p.json:3: bad");
  CHECK(at.located("p.json (rates.y)", "p.json") == "p.json:11 (rates.y)");
  CHECK(at.located("--set", "p.json") == "--set");
}
