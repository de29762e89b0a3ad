// Results and Table: metrics, units, column checks.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/results.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

using simcore::Results;
using simcore::Table;

TEST_CASE("Results: metrics keep insertion order, values and units", "[results]")
{
  Results r;
  r.set_metric("makespan", 12.5, "s");
  r.set_metric("tasks", std::int64_t{200});
  r.set_metric("bytes", 1e9, "B");
  CHECK(r.metrics().dump() == R"({"makespan":12.5,"tasks":200,"bytes":1000000000.0})");
  CHECK(r.metric_units().dump() == R"({"makespan":"s","tasks":"","bytes":"B"})");
  CHECK(r.metrics()["tasks"].is_number_integer());
}

TEST_CASE("Results: a metric reported twice is an internal error", "[results]")
{
  Results r;
  r.set_metric("makespan", 1.0, "s");
  CHECK_THROWS_AS(r.set_metric("makespan", 2.0, "s"), simcore::InternalError);
  CHECK_THROWS_WITH(r.set_metric("makespan", std::int64_t{2}), "metric 'makespan' is empty or reported twice");
  CHECK_THROWS_WITH(r.set_metric("", 1.0), "metric '' is empty or reported twice");
  CHECK(r.metrics()["makespan"] == 1.0);
}

TEST_CASE("Results: NaN and infinite metrics become null", "[results]")
{
  Results r;
  r.set_metric("nan", std::nan(""), "s");
  r.set_metric("inf", std::numeric_limits<double>::infinity());
  r.set_metric("minus_inf", -std::numeric_limits<double>::infinity());
  CHECK(r.metrics()["nan"].is_null());
  CHECK(r.metrics()["inf"].is_null());
  CHECK(r.metrics()["minus_inf"].is_null());
  CHECK(r.metric_units()["nan"] == "s");
  CHECK(r.metrics().dump() == R"({"nan":null,"inf":null,"minus_inf":null})");
}

TEST_CASE("Table: columns of equal length, unique names", "[results]")
{
  Results r;
  Table& t = r.add_table("tasks", "one row per task");
  t.add_column("id", "", std::vector<std::int64_t>{0, 1, 2}).add_column("end", "s", std::vector<double>{1, 2, 3});
  CHECK(t.rows() == 3);
  CHECK(t.columns().size() == 2);
  CHECK(t.doc() == "one row per task");
  CHECK(t.columns()[1].unit == "s");
  CHECK(t.columns()[0].size() == 3);
  CHECK_THROWS_WITH(t.add_column("start", "s", std::vector<double>{1, 2}),
                    "table 'tasks': column 'start' has 2 rows, the others 3");
  CHECK_THROWS_WITH(t.add_column("id", "", std::vector<double>{1, 2, 3}), "table 'tasks': duplicate column 'id'");
  CHECK_THROWS_WITH(t.add_column("", "", std::vector<std::int64_t>{1, 2, 3}), "table 'tasks': column name '' must be letters, digits, '_', '.' or '-'");
  CHECK_THROWS_AS(t.add_column("long", "", std::vector<std::int64_t>{1, 2, 3, 4}), simcore::InternalError);
  CHECK(t.columns().size() == 2);
  CHECK(Table("empty", "").rows() == 0);
}

TEST_CASE("Results: table names are unique and usable as HDF5 names", "[results]")
{
  Results r;
  r.add_table("a");
  CHECK_THROWS_WITH(r.add_table("a"), "table 'a' added twice");
  CHECK_THROWS_WITH(r.add_table("x/y"), "invalid table name 'x/y'");
  CHECK_THROWS_WITH(r.add_table(""), "invalid table name ''");
  CHECK(r.tables().size() == 1);
}

TEST_CASE("Results: a table reference stays valid when more tables are added", "[results]")
{
  simcore::Results r;
  auto& first = r.add_table("first");
  for (int i = 0; i < 100; i++)
    r.add_table("t" + std::to_string(i));
  first.add_column("x", "s", std::vector<double>{1.0, 2.0});
  CHECK(r.tables().front().name() == "first");
  CHECK(r.tables().front().rows() == 2);
}

TEST_CASE("Table: columns computed from records take the type of what they compute", "[results]")
{
  struct Op {
    std::int64_t rank;
    double end;
  };
  const std::vector<Op> ops{{2, 0.5}, {0, 1.25}, {1, 3.0}};
  simcore::Table t("ops", "");
  t.add_column("rank", "", ops, [](const Op& o) { return o.rank; })
      .add_column("end", "s", ops, [](const Op& o) { return o.end; })
      .add_column("twice", "", ops, [](const Op& o) { return static_cast<int>(2 * o.rank); });
  REQUIRE(t.columns().size() == 3);
  CHECK(std::get<std::vector<std::int64_t>>(t.columns()[0].values) == std::vector<std::int64_t>{2, 0, 1});
  CHECK(std::get<std::vector<double>>(t.columns()[1].values) == std::vector<double>{0.5, 1.25, 3.0});
  CHECK(std::get<std::vector<std::int64_t>>(t.columns()[2].values) == std::vector<std::int64_t>{4, 0, 2});
  CHECK(t.columns()[1].unit == "s");
  // Rows may come from any range, in its order; a column of another length is refused.
  const std::map<int, double> by_key{{3, 1.5}, {1, 0.5}};
  simcore::Table m("by_key", "");
  m.add_column("value", "", by_key, [](const std::pair<const int, double>& kv) { return kv.second; });
  CHECK(std::get<std::vector<double>>(m.columns()[0].values) == std::vector<double>{0.5, 1.5});
  CHECK_THROWS_AS(t.add_column("short", "", by_key, [](const auto& kv) { return kv.first; }), simcore::InternalError);
}
