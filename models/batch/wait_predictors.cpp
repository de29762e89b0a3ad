#include "wait_predictors.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <string>

namespace batch {

namespace {

std::vector<float> flatten(const std::vector<WaitFeatures>& rows)
{
  std::vector<float> out;
  out.reserve(rows.size() * kWaitFeatures);
  for (const auto& r : rows)
    out.insert(out.end(), r.begin(), r.end());
  return out;
}

} // namespace

std::vector<double> boosted_trees_waits(const Dataset& train, const std::vector<WaitFeatures>& eval,
                                        const BoostedTreesSettings& s)
{
  BoostedTrees trees(s);
  trees.fit(flatten(train.x), kWaitFeatures, std::vector<float>(train.y.begin(), train.y.end()));
  const auto out = trees.predict(flatten(eval), kWaitFeatures);
  std::vector<double> waits(out.begin(), out.end());
  for (auto& w : waits)
    w = std::max(0.0, w);
  return waits;
}

std::vector<double> ridge_waits(const Dataset& train, const std::vector<WaitFeatures>& eval, double lambda)
{
  if (train.x.empty())
    return std::vector<double>(eval.size(), 0.0);
  const auto n = static_cast<Eigen::Index>(train.x.size());
  Eigen::MatrixXd x(n, kWaitFeatures);
  for (Eigen::Index i = 0; i < n; i++)
    for (int f = 0; f < kWaitFeatures; f++)
      x(i, f) = train.x[static_cast<std::size_t>(i)][static_cast<std::size_t>(f)];
  // Standardised features, an unpenalised intercept.
  const Eigen::RowVectorXd mean = x.colwise().mean();
  Eigen::RowVectorXd sd = ((x.rowwise() - mean).array().square().colwise().sum() / static_cast<double>(n)).sqrt();
  for (int f = 0; f < kWaitFeatures; f++)
    if (sd(f) == 0)
      sd(f) = 1;
  const Eigen::MatrixXd z = (x.rowwise() - mean).array().rowwise() / sd.array();
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(train.y.data(), n);
  const double intercept = y.mean();
  Eigen::MatrixXd a = z.transpose() * z;
  a.diagonal().array() += lambda;
  const Eigen::VectorXd w = a.ldlt().solve(z.transpose() * (y.array() - intercept).matrix());
  std::vector<double> waits;
  waits.reserve(eval.size());
  for (const auto& r : eval) {
    double v = intercept;
    for (int f = 0; f < kWaitFeatures; f++)
      v += w(f) * (r[static_cast<std::size_t>(f)] - mean(f)) / sd(f);
    waits.push_back(std::max(0.0, v));
  }
  return waits;
}

PredictionErrors prediction_errors(const std::vector<double>& predicted, const std::vector<double>& actual)
{
  PredictionErrors e;
  e.jobs = static_cast<std::int64_t>(actual.size());
  if (actual.empty())
    return e;
  std::vector<double> abs_err;
  double within_1min = 0, within_10pct = 0;
  for (std::size_t i = 0; i < actual.size(); i++) {
    const double err = std::abs(predicted[i] - actual[i]);
    abs_err.push_back(err);
    within_1min += err <= 60;
    within_10pct += err <= 0.1 * actual[i];
  }
  double sum = 0;
  for (double v : abs_err)
    sum += v;
  const double n = static_cast<double>(actual.size());
  e.mae = sum / n;
  e.median_abs_error = simcore::quantile(abs_err, 0.5);
  e.within_1min = within_1min / n;
  e.within_10pct = within_10pct / n;
  return e;
}

} // namespace batch
