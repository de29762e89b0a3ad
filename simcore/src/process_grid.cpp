#include "simcore/process_grid.hpp"

#include <algorithm>

namespace simcore {

std::vector<std::int64_t> balanced_grid(std::int64_t ranks, int dims)
{
  // Prime factors, largest first, each given to the dimension with the smallest product so far.
  std::vector<std::int64_t> primes;
  std::int64_t n = ranks;
  for (std::int64_t f = 2; f * f <= n; f++)
    while (n % f == 0) {
      primes.push_back(f);
      n /= f;
    }
  if (n > 1)
    primes.push_back(n);
  std::sort(primes.rbegin(), primes.rend());
  std::vector<std::int64_t> grid(static_cast<std::size_t>(dims), 1);
  for (auto p : primes)
    *std::min_element(grid.begin(), grid.end()) *= p;
  std::sort(grid.rbegin(), grid.rend());
  return grid;
}

std::vector<std::int64_t> grid_coords(std::int64_t rank, const std::vector<std::int64_t>& grid)
{
  std::vector<std::int64_t> c(grid.size());
  for (std::size_t d = grid.size(); d-- > 0;) {
    c[d] = rank % grid[d];
    rank /= grid[d];
  }
  return c;
}

std::int64_t grid_rank(const std::vector<std::int64_t>& coords, const std::vector<std::int64_t>& grid)
{
  std::int64_t r = 0;
  for (std::size_t d = 0; d < grid.size(); d++)
    r = r * grid[d] + coords[d];
  return r;
}

} // namespace simcore
