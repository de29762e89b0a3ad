#include "simcore/running_stats.hpp"

#include <catch2/catch.hpp>

#include <vector>

TEST_CASE("RunningStats: count, min, max, sum, mean", "[stats]")
{
  simcore::RunningStats s;
  CHECK(s.count() == 0);
  CHECK(s.mean() == 0.0);
  CHECK(s.min() == 0.0);
  CHECK(s.max() == 0.0);
  for (double x : {3.0, -1.5, 4.5, 2.0})
    s.add(x);
  CHECK(s.count() == 4);
  CHECK(s.sum() == 8.0);
  CHECK(s.mean() == 2.0);
  CHECK(s.min() == -1.5);
  CHECK(s.max() == 4.5);
  const auto t = simcore::stats_of(std::vector<double>{7.0});
  CHECK(t.min() == 7.0);
  CHECK(t.max() == 7.0);
  CHECK(t.mean() == 7.0);
}
