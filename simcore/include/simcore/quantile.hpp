/* Quantiles of a sample, as numpy.quantile computes them by default (linear interpolation
 * between the order statistics). */
#pragma once

#include <vector>

namespace simcore {

/** The q-quantile (0 <= q <= 1) of `values` (taken by value: it is sorted); 0 when empty. */
double quantile(std::vector<double> values, double q);

} // namespace simcore
