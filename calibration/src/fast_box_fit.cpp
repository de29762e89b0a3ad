#include "calibration/fast_box_fit.hpp"

#include <simcore/quantile.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace calibration {

namespace {

/** Least squares on relative errors of t ~ columns (rows divided by t): the coefficients and
 *  the sum of squared relative residuals. */
double relative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& t, Eigen::VectorXd& coef)
{
  Eigen::MatrixXd w = a;
  for (Eigen::Index i = 0; i < w.rows(); i++)
    w.row(i) /= t(i);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(w.rows());
  coef = w.colPivHouseholderQr().solve(ones);
  return (w * coef - ones).squaredNorm();
}

/** Bayesian information criterion of a least-squares fit of n samples, k parameters. */
double bic(double sse, std::size_t n, int k)
{
  const double nn = static_cast<double>(n);
  return nn * std::log(std::max(sse, 1e-300) / nn) + k * std::log(nn);
}

} // namespace

std::optional<FastBoxKnee> find_fast_box_knee(double size, const std::vector<double>& lengths,
                                              const std::vector<double>& times)
{
  const std::size_t n = lengths.size();
  if (n < 7 || times.size() != n)
    return std::nullopt;
  Eigen::VectorXd t(static_cast<Eigen::Index>(n));
  Eigen::MatrixXd line(static_cast<Eigen::Index>(n), 2);
  for (std::size_t i = 0; i < n; i++) {
    const auto r = static_cast<Eigen::Index>(i);
    t(r) = times[i];
    line(r, 0) = 1;
    line(r, 1) = lengths[i];
  }
  Eigen::VectorXd coef;
  const double straight = relative_least_squares(line, t, coef);
  // The knee lies between the third length and the fourth last: three lengths before it, and
  // three a whole length step or more past it.
  double best = std::numeric_limits<double>::infinity(), knee = 0;
  Eigen::VectorXd best_coef;
  Eigen::MatrixXd hinge(static_cast<Eigen::Index>(n), 3);
  hinge.leftCols(2) = line;
  for (double k = lengths[2]; k <= lengths[n - 4]; k += 0.25) {
    for (std::size_t i = 0; i < n; i++)
      hinge(static_cast<Eigen::Index>(i), 2) = std::max(0.0, lengths[i] - k);
    const double sse = relative_least_squares(hinge, t, coef);
    if (sse < best)
      best = sse, knee = k, best_coef = coef;
  }
  // A knee on either end of the lengths searched may lie beyond them: none.
  if (!std::isfinite(best) || knee <= lengths[2] || knee + 0.25 > lengths[n - 4])
    return std::nullopt;
  const double gap = best_coef(1), queued = best_coef(1) + best_coef(2);
  if (!(gap > 0) || queued < 1.5 * gap || bic(straight, n, 2) - bic(best, n, 4) < 10)
    return std::nullopt;
  return FastBoxKnee{size, knee, gap, queued};
}

double FastBoxFit::footprint(double size) const
{
  return alignment * std::ceil((size + header) / alignment - 1e-9);
}

int fast_box_knee_levels(const std::vector<FastBoxKnee>& knees)
{
  std::vector<double> m;
  for (const auto& k : knees)
    if (k.messages >= kFastBoxKneeAtLeast)
      m.push_back(k.messages);
  std::sort(m.begin(), m.end());
  int levels = m.empty() ? 0 : 1;
  for (std::size_t i = 1; i < m.size(); i++)
    if (m[i] > 1.1 * m[i - 1])
      levels++;
  return levels;
}

std::optional<FastBoxFit> fit_fast_box(const std::vector<FastBoxKnee>& knees)
{
  std::vector<FastBoxKnee> used;
  for (const auto& k : knees)
    if (k.messages >= kFastBoxKneeAtLeast)
      used.push_back(k);
  if (used.size() < 4 || fast_box_knee_levels(used) < 3)
    return std::nullopt;
  std::optional<FastBoxFit> best;
  double best_loss = std::numeric_limits<double>::infinity();
  for (double alignment = 1; alignment <= 64; alignment *= 2)
    for (int header = 1; header <= 128; header++) {
      FastBoxFit f;
      f.alignment = alignment;
      f.header = header;
      std::vector<double> log_capacity;
      for (const auto& k : used)
        log_capacity.push_back(std::log(k.messages * f.footprint(k.size)));
      f.capacity = std::exp(simcore::quantile(log_capacity, 0.5));
      double loss = 0;
      for (const auto& k : used)
        loss += std::abs(std::log(k.messages / f.holds(k.size)));
      loss /= static_cast<double>(used.size());
      if (loss < best_loss - 1e-12)
        best_loss = loss, best = f;
    }
  if (!best)
    return std::nullopt;
  best->knees = used;
  std::vector<double> rel;
  for (const auto& k : used)
    rel.push_back(std::abs(best->holds(k.size) - k.messages) / k.messages);
  best->mean_rel_error = 0;
  for (double r : rel)
    best->mean_rel_error += r / static_cast<double>(rel.size());
  best->max_rel_error = *std::max_element(rel.begin(), rel.end());
  return best;
}

} // namespace calibration
