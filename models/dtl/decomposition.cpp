#include "decomposition.hpp"

#include <simcore/process_grid.hpp>

#include <algorithm>

namespace dtl {

std::vector<Box> block_decomposition(const Box& region, std::int64_t ranks)
{
  const auto grid = simcore::balanced_grid(ranks, region.dims);
  std::vector<Box> out;
  out.reserve(static_cast<std::size_t>(ranks));
  std::array<std::int64_t, kMaxDims> idx{0, 0, 0};
  for (std::int64_t r = 0; r < ranks; r++) {
    std::int64_t rest = r;
    for (int d = region.dims - 1; d >= 0; d--) {
      idx[d] = rest % grid[d];
      rest /= grid[d];
    }
    Box b;
    b.dims = region.dims;
    for (int d = 0; d < region.dims; d++) {
      const std::int64_t n = region.count[d], p = grid[d], i = idx[d];
      const std::int64_t base = n / p, extra = n % p;
      b.start[d] = region.start[d] + i * base + std::min(i, extra);
      b.count[d] = base + (i < extra ? 1 : 0);
    }
    out.push_back(b);
  }
  return out;
}

} // namespace dtl
