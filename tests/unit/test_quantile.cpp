/* Quantiles against numpy.quantile's default (linear) method, computed by hand. */
#include <simcore/quantile.hpp>

#include <catch2/catch.hpp>

TEST_CASE("quantile: linear interpolation between order statistics", "[kernel]")
{
  const std::vector<double> v{7, 1, 3, 5}; // sorted 1 3 5 7
  CHECK(simcore::quantile(v, 0) == 1);
  CHECK(simcore::quantile(v, 1) == 7);
  CHECK(simcore::quantile(v, 0.5) == 4);          // between 3 and 5
  CHECK(simcore::quantile(v, 0.95) == Approx(6.7)); // 5 + 0.85 * 2
  CHECK(simcore::quantile({}, 0.5) == 0);
  CHECK(simcore::quantile({2}, 0.9) == 2);
}
