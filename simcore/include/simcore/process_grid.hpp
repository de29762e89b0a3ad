/* Process grids, as MPI_Dims_create and MPI_Cart_create lay them out: a rank count factored
 * into a balanced grid, rank <-> coordinates in row-major order (last dimension fastest). */
#pragma once

#include <cstdint>
#include <vector>

namespace simcore {

/** Factors `ranks` into `dims` factors, as balanced as possible, largest first (what
 *  MPI_Dims_create returns for unconstrained dimensions). */
std::vector<std::int64_t> balanced_grid(std::int64_t ranks, int dims);

/** Coordinates of `rank` in `grid` (row-major: the last dimension varies fastest). */
std::vector<std::int64_t> grid_coords(std::int64_t rank, const std::vector<std::int64_t>& grid);

/** Rank at `coords` in `grid` (row-major). */
std::int64_t grid_rank(const std::vector<std::int64_t>& coords, const std::vector<std::int64_t>& grid);

} // namespace simcore
