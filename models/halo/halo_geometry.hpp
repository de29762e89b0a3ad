/* Geometry of a 3D stencil code's halo exchange: a global grid of cells decomposed over a
 * process grid (MPI_Cart style), each rank's neighbours for a 7- or 27-point stencil, and
 * the size of the halo message to each. */
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace halo {

using Ext = std::array<std::int64_t, 3>;

struct Grid {
  Ext cells{1, 1, 1};  ///< global cells per dimension
  Ext procs{1, 1, 1};  ///< process grid
  std::array<bool, 3> periodic{false, false, false};

  std::int64_t ranks() const { return procs[0] * procs[1] * procs[2]; }
  /** Row-major coordinates of a rank (last dimension fastest, as MPI_Cart_create). */
  Ext coords(std::int64_t rank) const;
  std::int64_t rank_at(const Ext& c) const;
  /** Cells a rank owns per dimension: n / p, and one more for the first n % p. */
  Ext local_extent(std::int64_t rank) const;
};

enum class Stencil { Point7, Point27 };

struct HaloSpec {
  Stencil stencil = Stencil::Point7;
  std::int64_t width = 1;        ///< halo width in cells
  std::int64_t variables = 1;    ///< fields exchanged
  std::int64_t element_size = 8; ///< bytes per cell and variable
};

/** Kind of a neighbour by the number of dimensions it is offset in. */
enum class Direction { Face = 1, Edge = 2, Corner = 3 };

struct Neighbour {
  std::int64_t rank;          ///< may be the rank itself (periodic dimension of one rank)
  std::array<int, 3> offset;  ///< each in {-1, 0, 1}
  Direction kind;
  std::int64_t bytes;         ///< all variables: width^k x transverse extents x variables x element size
};

/** Neighbours of `rank`, in a fixed order (offsets in lexicographic order, -1 before +1).
 *  Non-periodic boundaries have none beyond them; a periodic dimension wraps (with one rank,
 *  to the rank itself; with two, both sides are the same rank: two messages). */
std::vector<Neighbour> neighbours(const Grid& grid, const HaloSpec& spec, std::int64_t rank);

/** "" when the decomposition is usable, else what is wrong: more ranks than cells in a
 *  dimension, or a local extent narrower than the halo width. */
std::string check_decomposition(const Grid& grid, const HaloSpec& spec);

} // namespace halo
