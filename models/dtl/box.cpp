#include "box.hpp"

#include <algorithm>

namespace dtl {

std::int64_t Box::volume() const
{
  std::int64_t v = 1;
  for (int d = 0; d < dims; d++)
    v *= std::max<std::int64_t>(count[d], 0);
  return v;
}

bool Box::contains(const Box& inner) const
{
  for (int d = 0; d < dims; d++)
    if (inner.start[d] < start[d] || inner.start[d] + inner.count[d] > start[d] + count[d])
      return false;
  return true;
}

std::string Box::to_string() const
{
  std::string s = "[";
  for (int d = 0; d < dims; d++)
    s += (d ? ", " : "") + std::to_string(start[d]) + ":" + std::to_string(start[d] + count[d]);
  return s + ")";
}

Box intersect(const Box& a, const Box& b)
{
  Box r;
  r.dims = a.dims;
  for (int d = 0; d < a.dims; d++) {
    const std::int64_t lo = std::max(a.start[d], b.start[d]);
    const std::int64_t hi = std::min(a.start[d] + a.count[d], b.start[d] + b.count[d]);
    r.start[d] = lo;
    r.count[d] = std::max<std::int64_t>(0, hi - lo);
  }
  return r;
}

} // namespace dtl
