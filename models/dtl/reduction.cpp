#include "reduction.hpp"

#include <cmath>

namespace dtl {

namespace {
/** Multiples of s in [lo, hi). */
std::int64_t multiples(std::int64_t lo, std::int64_t hi, std::int64_t s)
{
  auto ceil_div = [s](std::int64_t x) { return x >= 0 ? (x + s - 1) / s : -((-x) / s); };
  return hi <= lo ? 0 : ceil_div(hi) - ceil_div(lo);
}
} // namespace

std::int64_t Reduction::kept_elements(const Box& b) const
{
  std::int64_t n = 1;
  for (int d = 0; d < b.dims; d++)
    n *= multiples(b.start[d], b.start[d] + b.count[d], stride[d]);
  return n;
}

std::int64_t Reduction::wire_bytes(const Box& b, std::int64_t element_size) const
{
  const double raw = static_cast<double>(kept_elements(b) * element_size);
  return static_cast<std::int64_t>(std::ceil(raw / compression_ratio));
}

} // namespace dtl
