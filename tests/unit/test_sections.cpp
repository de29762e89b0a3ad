/* Model-declared scenario elements: validated like parameters, with file:line. */
#include <simcore/error.hpp>
#include <simcore/runner.hpp>
#include <simcore/scenario.hpp>

#include <catch2/catch.hpp>

#include "../support/temp_folder.hpp"

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

std::string write(const std::string& name, const std::string& body)
{
  static const simcore_test::TempFolder dir("sections"); // removed as the test process ends
  const fs::path p = dir.path / name;
  std::ofstream(p) << "<scenario model=\"test_sections\">\n  <platform file=\"" SIMCORE_SOURCE_DIR
                      "/platforms/star.xml\"/>\n"
                   << body << "</scenario>\n";
  return p.string();
}

std::string load_error(const std::string& path)
{
  try {
    simcore::Scenario::load(path);
  } catch (const simcore::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("sections: typed attributes, defaults, nesting and origins", "[sections]")
{
  auto path = write("ok.xml", "  <probe at=\"2ms\">\n    <note text=\"first\"/>\n    <note/>\n  </probe>\n"
                              "  <probe at=\"1s\" weight=\"3\"/>\n");
  auto sc = simcore::Scenario::load(path);
  REQUIRE(sc.sections().size() == 2);
  const auto& a = sc.sections()[0];
  CHECK(a.name() == "probe");
  CHECK(a.where() == path + ":3");
  CHECK(a.attributes().get_double("at") == Approx(2e-3).epsilon(1e-15));
  CHECK(a.attributes().get_int("weight") == 1);
  CHECK(a.attributes().origin("weight") == "default");
  REQUIRE(a.children_named("note").size() == 2);
  CHECK(a.children_named("note")[0]->attributes().get_string("text") == "first");
  CHECK(a.children()[1].where() == path + ":5");
  CHECK(sc.sections()[1].attributes().get_int("weight") == 3);
  CHECK(sc.sections()[1].attributes().origin("weight") == path + ":7");
}

TEST_CASE("sections: bad input names the file, the line and what was expected", "[sections]")
{
  CHECK(load_error(write("e1.xml", "  <probe/>\n")) ==
        write("e1.xml", "  <probe/>\n") + ":3: <probe> lacks required attribute(s): at (time); expected <probe at=\"...\" "
                                           ".../>");
  const auto p2 = write("e2.xml", "  <probe at=\"1s\" colour=\"red\"/>\n");
  CHECK(load_error(p2) == p2 + ":3: <probe> has unknown attribute 'colour'; expected: at, weight");
  const auto p3 = write("e3.xml", "  <probe at=\"1 parsec\"/>\n");
  CHECK_THAT(load_error(p3), Catch::StartsWith(p3 + ":3: '1 parsec' is not valid"));
  const auto p4 = write("e4.xml", "  <probe at=\"1s\" weight=\"11\"/>\n");
  CHECK(load_error(p4) == p4 + ":3: parameter 'weight' = '11' is out of range; expected a value between 1 and 10");
  const auto p5 = write("e5.xml", "  <probe at=\"1s\">\n    <sensor/>\n  </probe>\n");
  CHECK(load_error(p5) == p5 + ":4: unknown element <sensor> in <probe>; expected <note>");
  const auto p6 = write("e6.xml", "  <gauge/>\n");
  CHECK(load_error(p6) == p6 + ":3: unknown element <gauge>; expected <description>, <platform>, <calibration>, "
                              "<param>, <config>, <output>, <probe>");
  const auto p7 = write("e7.xml", "  <probe at=\"1s\">text</probe>\n");
  CHECK(load_error(p7) == p7 + ":3: <probe> holds text; expected only elements and attributes");
}

TEST_CASE("sections: a model reads them and summary.json records them", "[sections]")
{
  auto path = write("run.xml", "  <probe at=\"2s\"><note text=\"a\"/></probe>\n  <probe at=\"3s\"/>\n");
  auto sc = simcore::Scenario::load(path);
  sc.set_output_dir((fs::path(path).parent_path() / "out").string());
  auto summary = simcore::run_scenario(sc);
  CHECK(summary["metrics"]["probes"] == 2);
  CHECK(summary["metrics"]["total_delay"].get<double>() == 5.0);
  CHECK(summary["metrics"]["notes"] == 1);
  REQUIRE(summary["sections"].size() == 2);
  CHECK(summary["sections"][0]["element"] == "probe");
  CHECK(summary["sections"][0]["attributes"]["at"].get<double>() == 2.0);
  CHECK(summary["sections"][0]["children"][0]["attributes"]["text"] == "a");
}
