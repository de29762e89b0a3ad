#include "copy_cost.hpp"

namespace halo {

CopyCost intra_copy_cost(double bytes, double bus_bandwidth, const CachedCopies& c)
{
  if (!(c.bandwidth > 0) || bytes > c.limit || !(bus_bandwidth > 0))
    return {bytes, 0};
  return {bytes * bus_bandwidth / c.bandwidth, c.one_core > 0 ? bytes / c.one_core : 0};
}

} // namespace halo
