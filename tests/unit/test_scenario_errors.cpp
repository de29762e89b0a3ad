// Scenario::load on broken files (tests/data/bad/): each error names the file, the line
// and what was expected.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/scenario.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

const std::string kBad = std::string(SIMCORE_TEST_DATA) + "/bad/";

/** Loads tests/data/bad/<name> and returns the InputError it must throw. */
simcore::InputError load_error(const std::string& name)
{
  try {
    simcore::Scenario::load(kBad + name);
  } catch (const simcore::InputError& e) {
    return e;
  }
  FAIL(name << " loaded without error; expected an InputError");
  return simcore::InputError("");
}

/** Checks where() is "<path>:<line>" and the message contains every piece of `expected`. */
void check_error(const std::string& name, int line, std::initializer_list<std::string> expected)
{
  INFO(name);
  const auto e = load_error(name);
  const std::string where = kBad + name + ":" + std::to_string(line);
  CHECK(e.where() == where);
  CHECK_THAT(std::string(e.what()), Catch::StartsWith(where + ": "));
  for (const auto& piece : expected)
    CHECK_THAT(e.detail(), Catch::Contains(piece));
}

} // namespace

TEST_CASE("scenario errors: malformed XML gives the line of the error", "[scenario][errors]")
{
  check_error("malformed.xml", 6, {"malformed XML (", "); expected a <scenario> document"});
}

TEST_CASE("scenario errors: unknown root element", "[scenario][errors]")
{
  check_error("wrong_root.xml", 4, {"root element is <simulation>; expected <scenario>"});
}

TEST_CASE("scenario errors: unknown model lists the known models", "[scenario][errors]")
{
  check_error("unknown_model.xml", 5, {"unknown model 'nbody'; expected one of: ", "master_worker"});
}

TEST_CASE("scenario errors: missing model attribute", "[scenario][errors]")
{
  check_error("missing_model.xml", 3, {"<scenario> needs attribute model=\"...\""});
}

TEST_CASE("scenario errors: unknown element", "[scenario][errors]")
{
  check_error("unknown_element.xml", 6,
              {"unknown element <parameter>; expected <description>, <platform>, <calibration>, <param>, <config>, "
               "<output>"});
}

TEST_CASE("scenario errors: unknown attribute", "[scenario][errors]")
{
  check_error("unknown_attribute.xml", 7, {"<param> has unknown attribute 'unit'; expected: name, value"});
}

TEST_CASE("scenario errors: no platform element", "[scenario][errors]")
{
  check_error("no_platform.xml", 3, {"no <platform file=\"...\"/>; expected exactly one"});
}

TEST_CASE("scenario errors: two platform elements", "[scenario][errors]")
{
  check_error("second_platform.xml", 6, {"second <platform>; expected exactly one"});
}

TEST_CASE("scenario errors: platform file does not exist", "[scenario][errors]")
{
  const std::string missing =
      std::filesystem::path(std::string(SIMCORE_SOURCE_DIR) + "/platforms/no_such_platform.xml").lexically_normal();
  check_error("missing_platform_file.xml", 5,
              {"platform file '" + missing + "' does not exist; expected a path relative to the scenario file"});
}

TEST_CASE("scenario errors: calibration file does not exist", "[scenario][errors]")
{
  check_error("missing_calibration.xml", 6,
              {"calibration file '" + kBad + "no_such_profile.json' does not exist",
               "expected a path relative to the scenario file"});
}

TEST_CASE("scenario errors: unknown parameter lists the model's parameters", "[scenario][errors]")
{
  check_error("unknown_param.xml", 7,
              {"unknown parameter 'taks'; expected one of: tasks, task_flops, task_bytes, workers, master, flops_jitter"});
}

TEST_CASE("scenario errors: value of the wrong type", "[scenario][errors]")
{
  check_error("wrong_type.xml", 6, {"parameter 'tasks' = 'ten' is not an integer; expected a whole number"});
}

TEST_CASE("scenario errors: unknown unit", "[scenario][errors]")
{
  check_error("bad_unit.xml", 7, {"'10MBs' is not valid", "expected a size such as 512B"});
}

TEST_CASE("scenario errors: value out of range", "[scenario][errors]")
{
  check_error("out_of_range.xml", 8,
              {"parameter 'tasks' = '0' is out of range; expected a value between 1 and 100000000"});
}

TEST_CASE("scenario errors: parameter given twice points at the second one", "[scenario][errors]")
{
  check_error("duplicate_param.xml", 8,
              {"parameter 'tasks' is given twice; expected each parameter at most once"});
}

TEST_CASE("scenario errors: negative seed", "[scenario][errors]")
{
  check_error("bad_seed.xml", 4, {"seed '-1' is not valid; expected a non-negative integer below 2^64"});
}

TEST_CASE("scenario errors: output trace must be true or false", "[scenario][errors]")
{
  check_error("bad_output.xml", 6, {"<output trace=\"yes\"> is not valid; expected true or false"});
}

TEST_CASE("scenario errors: a negative seed behind a blank", "[scenario][errors]")
{
  const std::string dir = std::filesystem::temp_directory_path() / ("simcore-seed-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/seed.xml";
  std::ofstream(path) << "<?xml version=\"1.0\"?>\n<scenario model=\"master_worker\" seed=\" -1\">\n  <platform file=\""
                      << SIMCORE_SOURCE_DIR << "/platforms/star.xml\"/>\n</scenario>\n";
  CHECK_THROWS_WITH(simcore::Scenario::load(path), path + ":2: seed ' -1' is not valid; expected a non-negative integer below 2^64");
  std::filesystem::remove_all(dir);
}
