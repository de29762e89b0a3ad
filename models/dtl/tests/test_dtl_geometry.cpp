/* dtl geometry: boxes, block decompositions and M x N redistribution plans, against hand
 * computed values and a brute-force plan. */
#include "../box.hpp"
#include "../decomposition.hpp"
#include "../redistribution.hpp"

#include <simcore/random_draws.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <random>

using dtl::Box;

namespace {

Box box1(std::int64_t s, std::int64_t c) { return Box{1, {s, 0, 0}, {c, 0, 0}}; }
Box box2(std::int64_t s0, std::int64_t s1, std::int64_t c0, std::int64_t c1) { return Box{2, {s0, s1, 0}, {c0, c1, 0}}; }
Box box3(std::int64_t s0, std::int64_t s1, std::int64_t s2, std::int64_t c0, std::int64_t c1, std::int64_t c2)
{
  return Box{3, {s0, s1, s2}, {c0, c1, c2}};
}

/** (publisher, subscriber) -> bytes */
std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> by_pair(const std::vector<dtl::Transfer>& plan)
{
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> m;
  for (const auto& t : plan)
    m[{t.publisher, t.subscriber}] = t.bytes;
  return m;
}

} // namespace

TEST_CASE("dtl: block decomposition gives the remainder to the first parts", "[dtl][geometry]")
{
  auto b = dtl::block_decomposition(box1(0, 10), 3);
  REQUIRE(b.size() == 3);
  CHECK(b[0].to_string() == "[0:4)");
  CHECK(b[1].to_string() == "[4:7)");
  CHECK(b[2].to_string() == "[7:10)");
  auto e = dtl::block_decomposition(box1(0, 3), 4); // more parts than elements
  CHECK(e[3].empty());
  auto g = dtl::block_decomposition(box2(0, 0, 4, 6), 4); // grid 2 x 2, last dimension fastest
  CHECK(g[0].to_string() == "[0:2, 0:3)");
  CHECK(g[1].to_string() == "[0:2, 3:6)");
  CHECK(g[2].to_string() == "[2:4, 0:3)");
  CHECK(g[3].to_string() == "[2:4, 3:6)");
  auto o = dtl::block_decomposition(box2(10, 20, 5, 5), 2); // an offset region
  CHECK(o[0].to_string() == "[10:13, 20:25)");
  CHECK(o[1].to_string() == "[13:15, 20:25)");
}

TEST_CASE("dtl: 1D redistribution, 3 publishers to 2 subscribers", "[dtl][geometry]")
{
  auto blocks = dtl::block_decomposition(box1(0, 10), 3);    // [0:4) [4:7) [7:10)
  auto selections = dtl::block_decomposition(box1(0, 10), 2); // [0:5) [5:10)
  auto plan = dtl::plan_redistribution(blocks, selections, 8);
  using P = std::pair<std::int64_t, std::int64_t>;
  CHECK(by_pair(plan) == std::map<P, std::int64_t>{{{0, 0}, 32}, {{1, 0}, 8}, {{1, 1}, 16}, {{2, 1}, 24}});
  CHECK(plan[1].piece.to_string() == "[4:5)");
}

TEST_CASE("dtl: 2D redistribution into an off-grid selection", "[dtl][geometry]")
{
  auto blocks = dtl::block_decomposition(box2(0, 0, 4, 6), 4);
  auto plan = dtl::plan_redistribution(blocks, {box2(1, 2, 2, 3)}, 4);
  using P = std::pair<std::int64_t, std::int64_t>;
  CHECK(by_pair(plan) == std::map<P, std::int64_t>{{{0, 0}, 4}, {{1, 0}, 8}, {{2, 0}, 4}, {{3, 0}, 8}});
}

TEST_CASE("dtl: 3D redistribution, whole array and a centred cube", "[dtl][geometry]")
{
  auto blocks = dtl::block_decomposition(box3(0, 0, 0, 4, 4, 4), 8); // 2 x 2 x 2 blocks of 8
  auto whole = dtl::plan_redistribution(blocks, {box3(0, 0, 0, 4, 4, 4)}, 8);
  REQUIRE(whole.size() == 8);
  for (const auto& t : whole)
    CHECK(t.bytes == 64);
  auto centre = dtl::plan_redistribution(blocks, {box3(1, 1, 1, 2, 2, 2)}, 8);
  REQUIRE(centre.size() == 8);
  for (const auto& t : centre)
    CHECK(t.bytes == 8);
}

TEST_CASE("dtl: empty selections and empty blocks exchange nothing", "[dtl][geometry]")
{
  auto blocks = dtl::block_decomposition(box1(0, 3), 4); // the 4th block is empty
  auto plan = dtl::plan_redistribution(blocks, {box1(0, 0), box1(0, 3), box1(2, 0)}, 1);
  REQUIRE(plan.size() == 3);
  for (const auto& t : plan) {
    CHECK(t.subscriber == 1);
    CHECK(t.publisher != 3);
  }
}

TEST_CASE("dtl: random decompositions conserve bytes and match the brute-force plan", "[dtl][geometry]")
{
  std::mt19937_64 g(31337);
  for (int trial = 0; trial < 200; trial++) {
    const int dims = static_cast<int>(simcore::uniform_int(g, 1, 3));
    Box shape{dims, {0, 0, 0}, {1, 1, 1}};
    for (int d = 0; d < dims; d++)
      shape.count[d] = simcore::uniform_int(g, 1, 40);
    const auto blocks = dtl::block_decomposition(shape, simcore::uniform_int(g, 1, 60));
    std::vector<Box> selections;
    const auto nsel = simcore::uniform_int(g, 1, 12);
    for (std::int64_t s = 0; s < nsel; s++) {
      Box sel{dims, {0, 0, 0}, {1, 1, 1}};
      for (int d = 0; d < dims; d++) {
        sel.start[d] = simcore::uniform_int(g, 0, shape.count[d] - 1);
        sel.count[d] = simcore::uniform_int(g, 0, shape.count[d] - sel.start[d]);
      }
      selections.push_back(sel);
    }
    const std::int64_t esize = simcore::uniform_int(g, 1, 16);
    const auto plan = dtl::plan_redistribution(blocks, selections, esize);
    // Conservation: each subscriber receives exactly its selection.
    std::vector<std::int64_t> received(selections.size(), 0);
    for (const auto& t : plan)
      received[static_cast<std::size_t>(t.subscriber)] += t.bytes;
    for (std::size_t s = 0; s < selections.size(); s++)
      REQUIRE(received[s] == selections[s].volume() * esize);
    // Same pairs as intersecting every block with every selection.
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> brute;
    for (std::size_t s = 0; s < selections.size(); s++)
      for (std::size_t p = 0; p < blocks.size(); p++) {
        auto piece = dtl::intersect(blocks[p], selections[s]);
        if (!piece.empty())
          brute[{static_cast<std::int64_t>(p), static_cast<std::int64_t>(s)}] = piece.volume() * esize;
      }
    REQUIRE(by_pair(plan) == brute);
  }
}

#include "../reduction.hpp"

TEST_CASE("dtl: decimation keeps exactly the multiples of the stride", "[dtl][reduction]")
{
  dtl::Reduction r;
  r.stride = {3, 1, 1};
  auto blocks = dtl::block_decomposition(box1(0, 10), 3); // [0:4) [4:7) [7:10)
  CHECK(r.kept_elements(blocks[0]) == 2);                 // 0, 3
  CHECK(r.kept_elements(blocks[1]) == 1);                 // 6
  CHECK(r.kept_elements(blocks[2]) == 1);                 // 9
  r.stride = {2, 5, 1};
  CHECK(r.kept_elements(box2(0, 0, 1000, 250)) == 500 * 50);
  CHECK(r.kept_elements(box2(1, 1, 1, 4)) == 0);
  r.compression_ratio = 3;
  CHECK(r.wire_bytes(box2(0, 0, 1000, 250), 8) == 66667); // 200000 / 3, rounded up
}

TEST_CASE("dtl: decimated pieces add up to the decimated selection", "[dtl][reduction]")
{
  std::mt19937_64 g(7);
  for (int trial = 0; trial < 100; trial++) {
    dtl::Reduction r;
    Box shape{3, {0, 0, 0}, {simcore::uniform_int(g, 1, 30), simcore::uniform_int(g, 1, 30), simcore::uniform_int(g, 1, 30)}};
    for (int d = 0; d < 3; d++)
      r.stride[d] = simcore::uniform_int(g, 1, 4);
    auto blocks = dtl::block_decomposition(shape, simcore::uniform_int(g, 1, 40));
    auto sels = dtl::block_decomposition(shape, simcore::uniform_int(g, 1, 10));
    std::int64_t sum = 0;
    for (const auto& t : dtl::plan_redistribution(blocks, sels, 1))
      sum += r.kept_elements(t.piece);
    REQUIRE(sum == r.kept_elements(shape));
  }
}
