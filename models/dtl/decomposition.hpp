/* Splitting a global array into one block per rank, as a simulation code (or ADIOS2 user)
 * would: a process grid chosen like MPI_Dims_create, blocks as even as possible. */
#pragma once

#include "box.hpp"

#include <vector>

namespace dtl {

/** Splits `region` over a process grid of `ranks` (simcore::balanced_grid), row-major order (last
 *  dimension fastest). Along a dimension of n elements over p parts, the first n % p parts get
 *  one element more. Parts may be empty when a dimension has fewer elements than parts. */
std::vector<Box> block_decomposition(const Box& region, std::int64_t ranks);

} // namespace dtl
