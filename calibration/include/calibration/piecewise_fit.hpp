/* Piecewise-linear fits of a time over a size (a message, an array), with the breakpoints
 * found from the data: t = intercept_k + slope_k x size on segment k. Least squares on
 * relative errors (Eigen), so small and large sizes weigh alike. */
#pragma once

#include <vector>

namespace calibration {

struct Segment {
  double from;      ///< first size of the segment
  double intercept; ///< s
  double slope;     ///< s per size unit
  double to = 0;    ///< last size measured in the segment (0: not known)
  double from_time = 0; ///< the median time measured at `from` (0: not known)
  double at(double x) const { return intercept + slope * x; }
};

struct FitQuality {
  double r2 = 0;             ///< on the samples, 1 - SSres / SStot
  double max_rel_error = 0;  ///< over the samples
  double median_rel_error = 0;
};

struct PiecewiseFit {
  std::vector<Segment> segments; ///< increasing `from`; the first starts at the smallest size
  FitQuality quality;
  double at(double x) const;
  /** Where the time steps the most, relatively, from one segment to the next, if by more than
   *  `jump`: a protocol switch such as eager to rendezvous; the next segment's first size, or
   *  0 when none. A step is where the data shows one: the two laws do not cross between the
   *  last size of the first segment and the first of the next (at both, the later law is the
   *  higher, or at both the lower). Up, it is measured at the last size of the first segment
   *  (a new protocol's start-up); down (a faster protocol taking over late), at the first of
   *  the next. Where the laws cross in between, the data cannot tell a switch from a bend in
   *  bandwidth: none. Without `to` both are evaluated where the next segment begins. With
   *  `from_time`, the time measured at the next segment's first size must lie nearer the later
   *  law than the earlier one: a law that changes at the last size alone drags the last
   *  segment's line, which then steps from sizes that follow the earlier law. */
  double switch_point(double jump = 0.1) const;
};

/** Fits up to `max_segments` segments (each spanning at least `min_sizes` distinct sizes);
 *  the count is chosen by the Bayesian information criterion. */
PiecewiseFit fit_piecewise(const std::vector<double>& x, const std::vector<double>& y, int max_segments = 4,
                           int min_sizes = 3);

/** Sizes whose time strays alone: runs of up to `max_run` consecutive sizes (x increasing,
 *  one time each, e.g. the medians of the repetitions) all slower than (1 + tolerance) x the
 *  slowest of their two neighbours and of what the two sizes on either side predict for them
 *  (a power law through those two, exponent between 0 and 1.5), or all faster than the fastest
 *  of these / (1 + tolerance). A step (a protocol switch, up or down) follows the trend of one
 *  side and stays; so do runs of three or more. Where stray runs overlap or touch in a
 *  stretch longer than `max_run` (strays with good sizes between them, which stray only from
 *  the strays beside them), the most runs that neither overlap nor touch are left out (then the
 *  larger sum of how far they stray, then the fewer sizes): no stretch longer than `max_run` is
 *  left out. Sizes with fewer than two neighbours on a side are never judged. When more than a tenth of the sizes would stray, none is singled out (the
 *  data are ragged throughout). Their indices, increasing; none when tolerance <= 0. */
std::vector<std::size_t> isolated_outliers(const std::vector<double>& x, const std::vector<double>& y, double tolerance,
                                           int max_run = 2);

FitQuality fit_quality(const PiecewiseFit& fit, const std::vector<double>& x, const std::vector<double>& y);

} // namespace calibration
