/* Natural order of host names. */
#include <simcore/natural_order.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

TEST_CASE("natural_less: numbers inside names compare by value", "[kernel]")
{
  std::vector<std::string> names{"ft-10", "ft-2", "ft-1", "ft-0", "ft-100", "c-3", "ft-02", "ft-9", "ft-1a", "ft-"};
  std::sort(names.begin(), names.end(), simcore::natural_less);
  REQUIRE(names == std::vector<std::string>{"c-3", "ft-", "ft-0", "ft-1", "ft-1a", "ft-02", "ft-2", "ft-9", "ft-10",
                                            "ft-100"});
  REQUIRE_FALSE(simcore::natural_less("n-7", "n-7"));
  REQUIRE(simcore::natural_less("rack2-node10", "rack10-node2"));
}
