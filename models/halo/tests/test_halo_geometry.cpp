/* halo geometry: neighbour sets and message sizes, hand computed. */
#include "../halo_geometry.hpp"

#include <simcore/random_draws.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <random>
#include <tuple>

using halo::Direction;
using halo::Grid;
using halo::HaloSpec;
using halo::Stencil;

namespace {

/** (rank, offset) -> bytes, for readable comparisons. */
std::map<std::tuple<std::int64_t, int, int, int>, std::int64_t> table(const std::vector<halo::Neighbour>& ns)
{
  std::map<std::tuple<std::int64_t, int, int, int>, std::int64_t> m;
  for (const auto& n : ns)
    m[{n.rank, n.offset[0], n.offset[1], n.offset[2]}] = n.bytes;
  return m;
}

} // namespace

TEST_CASE("halo: 7-point, non-periodic, 2 x 2 x 1 ranks", "[halo][geometry]")
{
  Grid g{{8, 6, 4}, {2, 2, 1}, {false, false, false}};
  HaloSpec s{Stencil::Point7, 1, 1, 8};
  CHECK(g.local_extent(0) == halo::Ext{4, 3, 4});
  // Rank 0 at (0,0,0): +x is rank 2 (a 1 x 3 x 4 face), +y is rank 1 (4 x 1 x 4); z has one rank.
  auto t = table(halo::neighbours(g, s, 0));
  CHECK(t == decltype(t){{{1, 0, 1, 0}, 128}, {{2, 1, 0, 0}, 96}});
  // Rank 3 at (1,1,0): -x is rank 1, -y is rank 2.
  auto t3 = table(halo::neighbours(g, s, 3));
  CHECK(t3 == decltype(t3){{{1, -1, 0, 0}, 96}, {{2, 0, -1, 0}, 128}});
}

TEST_CASE("halo: periodic dimensions of one and two ranks", "[halo][geometry]")
{
  Grid g{{8, 6, 4}, {2, 2, 1}, {true, true, true}};
  HaloSpec s{Stencil::Point7, 1, 1, 8};
  auto ns = halo::neighbours(g, s, 0);
  REQUIRE(ns.size() == 6);
  // Two ranks along x and y: both sides are the same neighbour, two messages each;
  // one rank along z: the rank exchanges with itself.
  std::multiset<std::int64_t> ranks;
  for (const auto& n : ns)
    ranks.insert(n.rank);
  CHECK(ranks == std::multiset<std::int64_t>{0, 0, 1, 1, 2, 2});
  for (const auto& n : ns) {
    if (n.offset[0] != 0)
      CHECK(n.bytes == 1 * 3 * 4 * 8);
    if (n.offset[1] != 0)
      CHECK(n.bytes == 4 * 1 * 4 * 8);
    if (n.offset[2] != 0)
      CHECK(n.bytes == 4 * 3 * 1 * 8);
  }
}

TEST_CASE("halo: 27-point faces, edges and corners", "[halo][geometry]")
{
  Grid g{{9, 9, 9}, {3, 3, 3}, {false, false, false}};
  HaloSpec s{Stencil::Point27, 2, 5, 8};
  auto centre = halo::neighbours(g, s, 13);
  REQUIRE(centre.size() == 26);
  std::map<Direction, int> count;
  for (const auto& n : centre) {
    count[n.kind]++;
    const std::int64_t expected = n.kind == Direction::Face ? 2 * 3 * 3 * 40
                                  : n.kind == Direction::Edge ? 2 * 2 * 3 * 40
                                                              : 2 * 2 * 2 * 40;
    CHECK(n.bytes == expected);
  }
  CHECK(count == std::map<Direction, int>{{Direction::Face, 6}, {Direction::Edge, 12}, {Direction::Corner, 8}});
  CHECK(halo::neighbours(g, s, 0).size() == 7);  // a corner rank: 3 faces, 3 edges, 1 corner
  CHECK(halo::neighbours(g, s, 9).size() == 11); // (1,0,0): an edge rank of the process grid
  CHECK(halo::neighbours(g, s, 4).size() == 17); // (0,1,1): a face rank
  s.stencil = Stencil::Point7;
  CHECK(halo::neighbours(g, s, 13).size() == 6);
}

TEST_CASE("halo: uneven blocks send their own transverse extents", "[halo][geometry]")
{
  Grid g{{10, 7, 1}, {3, 2, 1}, {false, false, false}};
  HaloSpec s{Stencil::Point7, 1, 2, 4};
  CHECK(g.local_extent(0) == halo::Ext{4, 4, 1});
  CHECK(g.local_extent(5) == halo::Ext{3, 3, 1});
  // Rank 0 (0,0): +y to rank 1 carries its 4 x 1 x 1 face; +x to rank 2 its 1 x 4 x 1 face.
  auto t = table(halo::neighbours(g, s, 0));
  CHECK(t == decltype(t){{{1, 0, 1, 0}, 4 * 2 * 4}, {{2, 1, 0, 0}, 4 * 2 * 4}});
  auto t5 = table(halo::neighbours(g, s, 5)); // (2,1): extents 3 x 3
  CHECK(t5 == decltype(t5){{{3, -1, 0, 0}, 3 * 2 * 4}, {{4, 0, -1, 0}, 3 * 2 * 4}});
}

TEST_CASE("halo: every message has its mirror of the same size", "[halo][geometry]")
{
  std::mt19937_64 gen(2026);
  for (int trial = 0; trial < 100; trial++) {
    Grid g;
    for (int d = 0; d < 3; d++) {
      g.procs[d] = simcore::uniform_int(gen, 1, 4);
      g.cells[d] = g.procs[d] * simcore::uniform_int(gen, 1, 5) + simcore::uniform_int(gen, 0, g.procs[d] - 1);
      g.periodic[d] = simcore::bernoulli(gen, 0.5);
    }
    HaloSpec s{simcore::bernoulli(gen, 0.5) ? Stencil::Point7 : Stencil::Point27, 1, 3, 8};
    std::multiset<std::tuple<std::int64_t, std::int64_t, int, int, int, std::int64_t>> sent, mirrored;
    for (std::int64_t r = 0; r < g.ranks(); r++)
      for (const auto& n : halo::neighbours(g, s, r)) {
        sent.insert({r, n.rank, n.offset[0], n.offset[1], n.offset[2], n.bytes});
        mirrored.insert({n.rank, r, -n.offset[0], -n.offset[1], -n.offset[2], n.bytes});
      }
    REQUIRE(sent == mirrored);
  }
}

TEST_CASE("halo: decompositions that cannot hold the halo are refused", "[halo][geometry]")
{
  HaloSpec s{Stencil::Point7, 2, 1, 8};
  CHECK(halo::check_decomposition(Grid{{8, 8, 8}, {2, 2, 2}, {false, false, false}}, s).empty());
  CHECK(halo::check_decomposition(Grid{{3, 8, 8}, {4, 1, 1}, {false, false, false}}, s) ==
        "the process grid has 4 ranks along x but the grid only 3 cells; expected at least one cell a rank along x");
  CHECK(halo::check_decomposition(Grid{{8, 3, 8}, {1, 2, 1}, {false, false, false}}, s) ==
        "ranks own as few as 1 cells along y, fewer than the halo width 2; expected a halo width of at most 1, or "
        "more cells a rank along y");
  CHECK(halo::check_decomposition(Grid{{8, 8, 1}, {1, 1, 1}, {false, false, true}}, s) ==
        "ranks own as few as 1 cells along z, fewer than the halo width 2; expected a halo width of at most 1, or "
        "more cells a rank along z");
  // Byte counts are int64 sums: 1e12 x 1e12 x 1e11 cells gave negative bytes (exit 0). The
  // bound is 2^53 bytes: 2^50 cells of 8 bytes pass, one more z plane does not.
  CHECK(halo::check_decomposition(Grid{{1 << 20, 1 << 20, 1 << 10}, {1, 1, 1}, {false, false, false}}, s).empty());
  CHECK(halo::check_decomposition(Grid{{1 << 20, 1 << 20, (1 << 10) + 1}, {1, 1, 1}, {false, false, false}}, s) ==
        "the grid holds 9.02e+15 bytes (cells x variables x element_size); expected at most 2^53 bytes (9 PB)");
  CHECK(halo::check_decomposition(Grid{{1000000000000, 1000000000000, 100000000000}, {2, 1, 1}, {false, false, false}},
                                  s) == "the grid holds 8e+35 bytes (cells x variables x element_size); expected at "
                                        "most 2^53 bytes (9 PB)");
}
