// parse_quantity / format_quantity: SimGrid's unit tables, bare numbers, and error messages.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/units.hpp"

#include <string>

using simcore::parse_quantity;
using simcore::Quantity;

namespace {
std::string input_error(Quantity q, const std::string& text, const std::string& where)
{
  try {
    parse_quantity(q, text, where);
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == where);
    return e.what();
  }
  FAIL("'" << text << "' was accepted; expected an InputError");
  return "";
}
} // namespace

TEST_CASE("parse_quantity converts SimGrid units to base units", "[units]")
{
  CHECK(parse_quantity(Quantity::Bandwidth, "10GBps", "t") == 1e10);
  CHECK(parse_quantity(Quantity::Bandwidth, "1Gbps", "t") == 1.25e8); // bits: divided by 8
  CHECK(parse_quantity(Quantity::Bandwidth, "1.25GBps", "t") == 1.25e9);
  CHECK(parse_quantity(Quantity::Time, "1us", "t") == Approx(1e-6).epsilon(1e-15));
  CHECK(parse_quantity(Quantity::Time, "2ms", "t") == Approx(2e-3).epsilon(1e-15));
  CHECK(parse_quantity(Quantity::Time, "3s", "t") == 3.0);
  CHECK(parse_quantity(Quantity::Time, "1h", "t") == 3600.0);
  CHECK(parse_quantity(Quantity::Size, "4MiB", "t") == 4194304.0);
  CHECK(parse_quantity(Quantity::Size, "1kB", "t") == 1000.0);
  CHECK(parse_quantity(Quantity::Size, "10MB", "t") == 1e7);
  CHECK(parse_quantity(Quantity::Speed, "1Gf", "t") == 1e9);
  CHECK(parse_quantity(Quantity::Flops, "1Gf", "t") == 1e9);
  CHECK(parse_quantity(Quantity::Flops, "2.5Tf", "t") == 2.5e12);
}

TEST_CASE("parse_quantity takes a bare number in the base unit", "[units]")
{
  CHECK(parse_quantity(Quantity::Size, "12", "t") == 12.0);
  CHECK(parse_quantity(Quantity::Time, "0.5", "t") == 0.5);
  CHECK(parse_quantity(Quantity::Bandwidth, "1e9", "t") == 1e9);
}

TEST_CASE("parse_quantity rejects unknown units naming where and what", "[units]")
{
  std::string msg = input_error(Quantity::Bandwidth, "10GBs", "scenario.xml:7");
  CHECK_THAT(msg, Catch::StartsWith("scenario.xml:7: "));
  CHECK_THAT(msg, Catch::Contains("'10GBs' is not valid"));
  CHECK_THAT(msg, Catch::Contains("expected a bandwidth such as 10GBps"));

  msg = input_error(Quantity::Time, "abc", "--set latency=abc");
  CHECK_THAT(msg, Catch::StartsWith("--set latency=abc: "));
  CHECK_THAT(msg, Catch::Contains("'abc' is not valid"));
  CHECK_THAT(msg, Catch::Contains("expected a time such as 1us"));

  msg = input_error(Quantity::Size, "4MiBs", "here");
  CHECK_THAT(msg, Catch::Contains("'4MiBs'") && Catch::Contains("expected a size such as"));
  msg = input_error(Quantity::Speed, "", "here");
  CHECK_THAT(msg, Catch::Contains("expected a speed such as 1Gf"));
}

TEST_CASE("parse_quantity rejects values that are not finite", "[units]")
{
  CHECK(input_error(Quantity::Size, "nan", "w") == "w: 'nan' is not a finite number; expected a size such as 512B, 4kB, 4KiB, 1GB");
  CHECK(input_error(Quantity::Time, "inf", "w") == "w: 'inf' is not a finite number; expected a time such as 1us, 2.5ms, 3s, 1h");
  CHECK(input_error(Quantity::Size, "1e400B", "w") ==
        "w: '1e400B' is not valid (value out of range: 1e400B); expected a size such as 512B, 4kB, 4KiB, 1GB");
  CHECK_THAT(input_error(Quantity::Bandwidth, "1e400", "w"), Catch::StartsWith("w: '1e400' is not valid"));
}

TEST_CASE("format_quantity picks a readable prefix", "[units]")
{
  CHECK(simcore::format_quantity(Quantity::Bandwidth, 1.25e9) == "1.25 GBps");
  CHECK(simcore::format_quantity(Quantity::Speed, 4e10) == "40 Gflop/s");
  CHECK(simcore::format_quantity(Quantity::Size, 512) == "512 B");
  CHECK(simcore::format_quantity(Quantity::Time, 1e-6) == "1 us");
  CHECK(simcore::format_quantity(Quantity::Time, 0.25) == "250 ms");
  CHECK(simcore::format_quantity(Quantity::Time, 12.5) == "12.5 s");
  CHECK(simcore::format_quantity(Quantity::Time, 0) == "0 s");
}
