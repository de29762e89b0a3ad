/* Machine-learned wait-time predictors, trained on jobs that finished before the evaluation
 * period starts: gradient-boosted trees (XGBoost's C API) and ridge regression (Eigen). */
#pragma once

#include "boosted_trees.hpp"
#include "wait_features.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace batch {

struct Dataset {
  std::vector<WaitFeatures> x;
  std::vector<double> y; ///< wait times (s)
};

/** Predicted waits (>= 0) for `eval`. */
std::vector<double> boosted_trees_waits(const Dataset& train, const std::vector<WaitFeatures>& eval,
                                        const BoostedTreesSettings& settings);
std::vector<double> ridge_waits(const Dataset& train, const std::vector<WaitFeatures>& eval, double lambda);

/** Errors of predicted against actual waits. */
struct PredictionErrors {
  std::int64_t jobs = 0;
  double mae = 0, median_abs_error = 0;
  double within_1min = 0;   ///< share with |error| <= 60 s
  double within_10pct = 0;  ///< share with |error| <= 10 % of the actual wait
};
PredictionErrors prediction_errors(const std::vector<double>& predicted, const std::vector<double>& actual);

} // namespace batch
