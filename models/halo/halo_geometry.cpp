#include "halo_geometry.hpp"

#include <simcore/process_grid.hpp>

#include <cstdio>

namespace halo {

namespace {
std::vector<std::int64_t> as_vector(const Ext& e) { return {e[0], e[1], e[2]}; }
} // namespace

Ext Grid::coords(std::int64_t rank) const
{
  const auto c = simcore::grid_coords(rank, as_vector(procs));
  return {c[0], c[1], c[2]};
}

std::int64_t Grid::rank_at(const Ext& c) const { return simcore::grid_rank(as_vector(c), as_vector(procs)); }

Ext Grid::local_extent(std::int64_t rank) const
{
  const Ext c = coords(rank);
  Ext e{};
  for (int d = 0; d < 3; d++)
    e[d] = cells[d] / procs[d] + (c[d] < cells[d] % procs[d] ? 1 : 0);
  return e;
}

std::vector<Neighbour> neighbours(const Grid& grid, const HaloSpec& spec, std::int64_t rank)
{
  const Ext c = grid.coords(rank);
  const Ext ext = grid.local_extent(rank);
  std::vector<Neighbour> out;
  for (int ox = -1; ox <= 1; ox++)
    for (int oy = -1; oy <= 1; oy++)
      for (int oz = -1; oz <= 1; oz++) {
        const std::array<int, 3> o{ox, oy, oz};
        const int moved = (ox != 0) + (oy != 0) + (oz != 0);
        if (moved == 0 || (spec.stencil == Stencil::Point7 && moved > 1))
          continue;
        Ext n{};
        bool exists = true;
        std::int64_t cells = spec.variables * spec.element_size;
        for (int d = 0; d < 3; d++) {
          n[d] = c[d] + o[d];
          if (n[d] < 0 || n[d] >= grid.procs[d]) {
            if (!grid.periodic[d])
              exists = false;
            n[d] = (n[d] + grid.procs[d]) % grid.procs[d];
          }
          cells *= o[d] == 0 ? ext[d] : spec.width;
        }
        if (exists)
          out.push_back(Neighbour{grid.rank_at(n), o, static_cast<Direction>(moved), cells});
      }
  return out;
}

std::string check_decomposition(const Grid& grid, const HaloSpec& spec)
{
  static const char* names[] = {"x", "y", "z"};
  for (int d = 0; d < 3; d++) {
    if (grid.procs[d] > grid.cells[d])
      return std::string("the process grid has ") + std::to_string(grid.procs[d]) + " ranks along " + names[d] +
             " but the grid only " + std::to_string(grid.cells[d]) + " cells; expected at least one cell a rank along " +
             names[d];
    const std::int64_t narrowest = grid.cells[d] / grid.procs[d];
    if ((grid.procs[d] > 1 || grid.periodic[d]) && narrowest < spec.width)
      return std::string("ranks own as few as ") + std::to_string(narrowest) + " cells along " + names[d] +
             ", fewer than the halo width " + std::to_string(spec.width) + "; expected a halo width of at most " +
             std::to_string(narrowest) + ", or more cells a rank along " + names[d];
  }
  // Byte counts are int64 sums over the ranks' faces: a grid of 1e12 x 1e12 x 1e11 cells
  // wrapped them to negative bytes, exit 0. 2^53 bytes (9 PB) also keeps them exact as doubles.
  const double bytes = static_cast<double>(grid.cells[0]) * static_cast<double>(grid.cells[1]) *
                       static_cast<double>(grid.cells[2]) * static_cast<double>(spec.variables) *
                       static_cast<double>(spec.element_size);
  if (bytes > 9007199254740992.0) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", bytes);
    return std::string("the grid holds ") + text + " bytes (cells x variables x element_size); expected at most 2^53 "
                                                   "bytes (9 PB)";
  }
  return "";
}

} // namespace halo
