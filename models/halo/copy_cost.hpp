/* What an intra-node copy costs a node: data that another core has just written (a packed
 * halo) is copied from cache to cache, faster than STREAM's rate over arrays far larger than
 * the caches, up to the size where the copies leave the caches. */
#pragma once

namespace halo {

/** Measured cached-copy rates of a node (calib_copy through a profile, or the scenario's);
 *  none (bandwidth 0): every copy at the memory bus's rate. */
struct CachedCopies {
  double bandwidth = 0; ///< B/s of all the node's cores copying at once, together
  double one_core = 0;  ///< B/s of one copy alone (0: no bound of its own)
  double limit = 0;     ///< B: larger copies go at the memory bus's rate
};

struct CopyCost {
  double bus_bytes = 0;     ///< what the copy puts on the node's bus (alone: bus_bytes / bus bandwidth)
  double least_seconds = 0; ///< one core copies no faster than this, however idle the bus
};

/** The cost of copying `bytes` on a node whose memory bus (shared by all its copies) has
 *  `bus_bandwidth` B/s: a cached copy weighs on the bus as `bytes` at the cached rate, so
 *  copies sharing the bus together reach `c.bandwidth`; a larger one weighs its bytes. */
CopyCost intra_copy_cost(double bytes, double bus_bandwidth, const CachedCopies& c);

} // namespace halo
