/* Count, minimum, maximum, sum and mean of a stream of values, for the min/mean/max columns
 * and metrics models report. */
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace simcore {

class RunningStats {
public:
  void add(double x)
  {
    n_++;
    sum_ += x;
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  std::int64_t count() const { return n_; }
  double sum() const { return sum_; }
  /** 0 when nothing was added (so are min and max). */
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0.0; }
  double min() const { return n_ ? min_ : 0.0; }
  double max() const { return n_ ? max_ : 0.0; }

private:
  std::int64_t n_ = 0;
  double sum_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

/** RunningStats of every value of a range. */
template <typename Range> RunningStats stats_of(const Range& values)
{
  RunningStats s;
  for (double x : values)
    s.add(x);
  return s;
}

} // namespace simcore
