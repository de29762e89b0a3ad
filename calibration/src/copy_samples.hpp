/* The cached-copy traces of one host type (calib_copy): the rate of intra-node copies of data
 * in another core's cache, the median of the nodes (private to calibration/src). */
#pragma once

#include "calibration/piecewise_fit.hpp"
#include "calibration/trace_file.hpp"
#include "node_samples.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace calibration {

/** What one trace says: the copy times per size fitted piecewise (breakpoints from the data),
 *  and the segment with the fastest bytes (the data in the caches). */
struct CachedCopyFit {
  int copiers = 0;
  std::vector<double> bytes, all_seconds, alone_seconds; ///< medians of the repetitions, per size
  PiecewiseFit fit;                                      ///< of all_seconds over bytes
  std::size_t cached_segment = 0;
  double node_rate = 0;  ///< B/s, every copier at once, all copies together
  double one_rate = 0;   ///< B/s, one copy alone, over the same sizes
  double limit = 0;      ///< B, the largest size of the cached segment
  bool left_caches = true; ///< whether a later segment (larger sizes) copies slower
};

/** Fits one `cached_copy` group; simcore::InputError naming the trace when a dataset is
 *  missing or misshapen, holds a size or time out of range, or the sizes are too few. */
CachedCopyFit fit_cached_copy(const Benchmark& b, const std::string& path);

class CachedCopySamples {
public:
  void add(const Benchmark& b, const std::string& path);
  bool empty() const { return node_.empty(); }
  /** `cached_copy_bandwidth` (all cores copying, together), `cached_copy_bandwidth_one_core`,
   *  `cached_copy_limit`, and quality["cached_copy"]. */
  void write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const;

private:
  NodeSamples node_, one_, limit_;
  std::vector<CachedCopyFit> fits_;
};

} // namespace calibration
