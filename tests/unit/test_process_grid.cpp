#include "simcore/process_grid.hpp"

#include <catch2/catch.hpp>

using V = std::vector<std::int64_t>;

TEST_CASE("process grids: balanced grids match MPI_Dims_create", "[grid]")
{
  CHECK(simcore::balanced_grid(12, 2) == V{4, 3});
  CHECK(simcore::balanced_grid(8, 3) == V{2, 2, 2});
  CHECK(simcore::balanced_grid(1000, 3) == V{10, 10, 10});
  CHECK(simcore::balanced_grid(250, 2) == V{25, 10});
  CHECK(simcore::balanced_grid(7, 3) == V{7, 1, 1});
  CHECK(simcore::balanced_grid(1, 2) == V{1, 1});
  CHECK(simcore::balanced_grid(10000, 3) == V{25, 20, 20});
  CHECK(simcore::balanced_grid(2304, 3) == V{16, 12, 12});
}

TEST_CASE("process grids: row-major coordinates, last dimension fastest", "[grid]")
{
  const V grid{2, 3, 4};
  CHECK(simcore::grid_coords(0, grid) == V{0, 0, 0});
  CHECK(simcore::grid_coords(1, grid) == V{0, 0, 1});
  CHECK(simcore::grid_coords(4, grid) == V{0, 1, 0});
  CHECK(simcore::grid_coords(23, grid) == V{1, 2, 3});
  for (std::int64_t r = 0; r < 24; r++)
    CHECK(simcore::grid_rank(simcore::grid_coords(r, grid), grid) == r);
}
