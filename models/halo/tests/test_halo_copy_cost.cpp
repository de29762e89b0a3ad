/* halo: what an intra-node copy weighs on the node's bus, cached or not. */
#include "../copy_cost.hpp"

#include <catch2/catch.hpp>

TEST_CASE("halo copy cost: without cached rates a copy weighs its bytes and has no bound of its own", "[halo]")
{
  const auto c = halo::intra_copy_cost(1e6, 20e9, {});
  REQUIRE(c.bus_bytes == 1e6);
  REQUIRE(c.least_seconds == 0);
}

TEST_CASE("halo copy cost: a cached copy weighs its bytes at the cached rate, up to the limit itself", "[halo]")
{
  const halo::CachedCopies cached{50e9, 30e9, 1 << 20};
  // Alone on a 20 GB/s bus it takes bytes / 50 GB/s; at least bytes / 30 GB/s on one core.
  const auto c = halo::intra_copy_cost(1 << 20, 20e9, cached);
  REQUIRE(c.bus_bytes / 20e9 == Approx((1 << 20) / 50e9).epsilon(1e-12));
  REQUIRE(c.least_seconds == Approx((1 << 20) / 30e9).epsilon(1e-12));
  const auto above = halo::intra_copy_cost((1 << 20) + 1, 20e9, cached);
  REQUIRE(above.bus_bytes == (1 << 20) + 1);
  REQUIRE(above.least_seconds == 0);
  // No one-core rate: the bus alone bounds it.
  REQUIRE(halo::intra_copy_cost(4096, 20e9, {50e9, 0, 1 << 20}).least_seconds == 0);
}
