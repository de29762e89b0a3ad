#include "calibration/piecewise_fit.hpp"

#include <simcore/quantile.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace calibration {

namespace {

struct LineFit {
  double intercept = 0, slope = 0, cost = std::numeric_limits<double>::infinity();
};

/** The weighted normal equations of y = a + b x (weights 1/y^2: relative errors) over some
 *  samples: a_ = sum w (1, x)(1, x)^T, b_ = sum w (1, x) y, yy_ = sum w y^2. */
struct Moments {
  Eigen::Matrix2d a_ = Eigen::Matrix2d::Zero();
  Eigen::Vector2d b_ = Eigen::Vector2d::Zero();
  double yy_ = 0;
  void add(double x, double y)
  {
    const double w = 1.0 / (y * y);
    const Eigen::Vector2d row(1.0, x);
    a_ += w * row * row.transpose();
    b_ += w * row * y;
    yy_ += w * y * y;
  }
  void add(const Moments& o)
  {
    a_ += o.a_;
    b_ += o.b_;
    yy_ += o.yy_;
  }
  /** sum w (intercept + slope x - y)^2 from the moments alone. */
  double cost(double intercept, double slope) const
  {
    const double c = a_(0, 0) * intercept * intercept + 2 * a_(0, 1) * intercept * slope +
                     a_(1, 1) * slope * slope - 2 * (b_(0) * intercept + b_(1) * slope) + yy_;
    return std::max(c, 0.0);
  }
};

/** The best line with intercept >= 0 and slope >= 0 for these moments, its cost by cost_of. */
template <class Cost> LineFit best_line(const Moments& m, Cost cost_of)
{
  // A time has no negative start-up and does not fall as messages grow (and SimGrid takes
  // neither): the best line with intercept >= 0 and slope >= 0. The cost is convex, so when
  // the free optimum breaks a bound the best line lies on that bound: try the free line, each
  // bound alone, and both, and keep the cheapest that keeps both.
  const Eigen::Vector2d s = m.a_.ldlt().solve(m.b_);
  std::vector<std::pair<double, double>> candidates{{s(0), s(1)}, {0.0, 0.0}};
  if (m.a_(1, 1) > 0)
    candidates.push_back({0.0, m.b_(1) / m.a_(1, 1)});
  if (m.a_(0, 0) > 0)
    candidates.push_back({m.b_(0) / m.a_(0, 0), 0.0});
  LineFit f;
  for (const auto& [intercept, slope] : candidates) {
    if (!(intercept >= 0) || !(slope >= 0))
      continue;
    const double c = cost_of(intercept, slope);
    if (c < f.cost) {
      f.intercept = intercept;
      f.slope = slope;
      f.cost = c;
    }
  }
  return f;
}

/** Weighted least squares (weights 1/y^2: relative errors) of y = a + b x on samples [lo, hi),
 *  with a >= 0 and b >= 0; the cost summed sample by sample. */
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, std::size_t lo, std::size_t hi)
{
  Moments m;
  for (std::size_t i = lo; i < hi; i++)
    m.add(x[i], y[i]);
  return best_line(m, [&](double intercept, double slope) {
    double c = 0;
    for (std::size_t i = lo; i < hi; i++) {
      const double r = (intercept + slope * x[i] - y[i]) / y[i];
      c += r * r;
    }
    return c;
  });
}

} // namespace

double PiecewiseFit::at(double x) const
{
  const Segment* s = &segments.front();
  for (const auto& seg : segments)
    if (x >= seg.from)
      s = &seg;
  return s->at(x);
}

double PiecewiseFit::switch_point(double jump) const
{
  // A protocol switch (eager to rendezvous) adds a start-up: the time steps up where the new
  // law takes over; a faster protocol that takes over late makes it step down. A bend in
  // bandwidth moves the intercept without a step: the laws cross. Between the last size of
  // one segment and the first of the next, the step is somewhere; where the laws cross in
  // that gap, the data shows no step at all (a continuous bend fits it as well). Other steps
  // (cache levels, DRAM) are smaller relative to the time: the switch is the largest
  // relative step above `jump`.
  double best = 0, step = 1 + jump;
  for (std::size_t k = 1; k < segments.size(); k++) {
    const double last_old = segments[k - 1].to > 0 ? segments[k - 1].to : segments[k].from;
    const double first_new = segments[k].from;
    const double old_at_last = segments[k - 1].at(last_old), new_at_last = segments[k].at(last_old);
    const double old_at_first = segments[k - 1].at(first_new), new_at_first = segments[k].at(first_new);
    if (!(old_at_last > 0 && new_at_last > 0 && old_at_first > 0 && new_at_first > 0))
      continue;
    const double measured = segments[k].from_time;
    if (measured > 0 && !(std::abs(measured - new_at_first) < std::abs(measured - old_at_first)))
      continue; // the first size of the later segment follows the earlier law
    double ratio = 0;
    if (new_at_last > old_at_last && new_at_first >= old_at_first) // up, at the old protocol's last size
      ratio = new_at_last / old_at_last;
    else if (new_at_first < old_at_first && new_at_last <= old_at_last) // down, at the new one's first
      ratio = old_at_first / new_at_first;
    if (ratio > step) {
      step = ratio;
      best = segments[k].from;
    }
  }
  return best;
}

std::vector<std::size_t> isolated_outliers(const std::vector<double>& x, const std::vector<double>& y, double tolerance,
                                           int max_run)
{
  std::vector<std::size_t> out;
  if (!(tolerance > 0) || x.size() != y.size())
    return out;
  // The time at size i as the two sizes before it (or after it) extend it: a power law through
  // them, its exponent held between 0 (a latency floor) and 1.5 (a bend out of a cache).
  auto trend = [&](std::size_t near, std::size_t far, std::size_t i) {
    const double slope = std::clamp(std::log(y[near] / y[far]) / std::log(x[near] / x[far]), 0.0, 1.5);
    return y[near] * std::pow(x[i] / x[near], slope);
  };
  // How far the run [i, i + run) strays from its two neighbours and both sides' trends, all
  // on the same side (the ratio, > 1 + tolerance for a stray; 0 where it does not stray): a
  // step (a protocol switch, up or down) follows one side's trend, a stray follows none.
  auto stray_ratio = [&](std::size_t i, std::size_t run) {
    const std::size_t l = i - 1, r = i + run;
    const auto first = y.begin() + static_cast<long>(i), last = first + static_cast<long>(run);
    const double low = *std::min_element(first, last), high = *std::max_element(first, last);
    const double hi = std::max({y[l], y[r], trend(l, l - 1, i), trend(r, r + 1, i + run - 1)});
    const double lo = std::min({y[l], y[r], trend(l, l - 1, i), trend(r, r + 1, i + run - 1)});
    if (low > (1 + tolerance) * hi)
      return low / hi;
    if (high * (1 + tolerance) < lo)
      return lo / high;
    return 0.0;
  };
  struct Run {
    std::size_t first, last; // sizes [first, last]
    double ratio;
  };
  std::vector<Run> runs; // every stray run, in order of first size
  for (std::size_t i = 2; i + 3 <= y.size(); i++)
    for (std::size_t run = 1; run <= static_cast<std::size_t>(std::max(max_run, 0)) && i + run + 2 <= y.size(); run++)
      if (const double ratio = stray_ratio(i, run); ratio > 0)
        runs.push_back({i, i + run - 1, ratio});
  // Runs that overlap or touch make stretches. A stretch longer than max_run is not one stray
  // but several, or good sizes that stray only from strays beside them (two dips at 4 and 7 B
  // made 5 and 6 B, between them, a run that strays too): of its runs, the most that neither
  // overlap nor touch are left out (then the larger sum of ratios, then the fewer sizes): the
  // dips, not the good sizes between them.
  std::vector<bool> flagged(y.size(), false);
  for (std::size_t a = 0; a < runs.size();) {
    std::size_t b = a + 1, end = runs[a].last;
    while (b < runs.size() && runs[b].first <= end + 1)
      end = std::max(end, runs[b++].last);
    if (end - runs[a].first + 1 <= static_cast<std::size_t>(max_run)) {
      for (std::size_t k = a; k < b; k++)
        std::fill(flagged.begin() + static_cast<long>(runs[k].first), flagged.begin() + static_cast<long>(runs[k].last) + 1,
                  true);
    } else {
      // Weighted interval scheduling over runs[a, b) sorted by last size: best[k] is the best
      // choice among the first k, a choice weighed by (runs, sum of ratios, -sizes).
      std::vector<Run> stretch(runs.begin() + static_cast<long>(a), runs.begin() + static_cast<long>(b));
      std::stable_sort(stretch.begin(), stretch.end(), [](const Run& p, const Run& q) { return p.last < q.last; });
      struct Choice {
        int count = 0;
        double ratios = 0;
        std::size_t sizes = 0;
        std::vector<std::size_t> picked;
        bool better_than(const Choice& o) const
        {
          if (count != o.count)
            return count > o.count;
          if (ratios != o.ratios)
            return ratios > o.ratios;
          return sizes < o.sizes;
        }
      };
      std::vector<Choice> best(stretch.size() + 1);
      for (std::size_t k = 1; k <= stretch.size(); k++) {
        const Run& r = stretch[k - 1];
        std::size_t p = k - 1; // the runs before r that end two sizes or more before it starts
        while (p > 0 && stretch[p - 1].last + 1 >= r.first)
          p--;
        Choice with = best[p];
        with.count++;
        with.ratios += r.ratio;
        with.sizes += r.last - r.first + 1;
        with.picked.push_back(k - 1);
        best[k] = with.better_than(best[k - 1]) ? with : best[k - 1];
      }
      for (std::size_t k : best.back().picked)
        std::fill(flagged.begin() + static_cast<long>(stretch[k].first),
                  flagged.begin() + static_cast<long>(stretch[k].last) + 1, true);
    }
    a = b;
  }
  for (std::size_t i = 0; i < flagged.size(); i++)
    if (flagged[i])
      out.push_back(i);
  // Many strays are no longer strays: the data are too ragged to single sizes out.
  if (static_cast<double>(out.size()) > 0.1 * static_cast<double>(y.size()))
    out.clear();
  return out;
}

FitQuality fit_quality(const PiecewiseFit& fit, const std::vector<double>& x, const std::vector<double>& y)
{
  FitQuality q;
  if (y.empty())
    return q;
  double mean = 0;
  for (double v : y)
    mean += v;
  mean /= static_cast<double>(y.size());
  double ss_res = 0, ss_tot = 0;
  std::vector<double> rel;
  for (std::size_t i = 0; i < y.size(); i++) {
    const double p = fit.at(x[i]);
    ss_res += (p - y[i]) * (p - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    rel.push_back(std::abs(p - y[i]) / std::abs(y[i]));
  }
  q.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  q.max_rel_error = *std::max_element(rel.begin(), rel.end());
  q.median_rel_error = simcore::quantile(rel, 0.5);
  return q;
}

PiecewiseFit fit_piecewise(const std::vector<double>& xs, const std::vector<double>& ys, int max_segments,
                           int min_sizes)
{
  // Samples sorted by size; segment boundaries fall between distinct sizes.
  std::vector<std::size_t> order(xs.size());
  for (std::size_t i = 0; i < order.size(); i++)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
  std::vector<double> x, y;
  for (std::size_t i : order) {
    x.push_back(xs[i]);
    y.push_back(ys[i]);
  }
  std::vector<std::size_t> starts; // index of the first sample of each distinct size
  for (std::size_t i = 0; i < x.size(); i++)
    if (i == 0 || x[i] != x[i - 1])
      starts.push_back(i);
  const std::size_t m = starts.size();
  starts.push_back(x.size());
  const auto ms = static_cast<std::size_t>(std::max(min_sizes, 2));
  // The moments of each distinct size, so that a line over sizes [i, j) costs O(1) from
  // moments summed as i moves down from j: the search takes O(kmax m^2) steps, not the
  // O(m^3) of fitting each candidate segment sample by sample (10 s at 1,544 sizes). The
  // chosen segments are then fitted and costed sample by sample.
  std::vector<Moments> size_moments(m);
  for (std::size_t d = 0; d < m; d++)
    for (std::size_t i = starts[d]; i < starts[d + 1]; i++)
      size_moments[d].add(x[i], y[i]);
  const double inf = std::numeric_limits<double>::infinity();
  const int kmax = std::max(1, std::min<int>(max_segments, static_cast<int>(m / ms)));
  // best[k][j]: k segments over the first j distinct sizes.
  std::vector<std::vector<double>> best(static_cast<std::size_t>(kmax) + 1, std::vector<double>(m + 1, inf));
  std::vector<std::vector<std::size_t>> from(best.size(), std::vector<std::size_t>(m + 1, 0));
  best[0][0] = 0;
  for (std::size_t j = ms; j <= m; j++) {
    Moments seg; // sizes [i, j)
    for (std::size_t i = j; i-- > 0;) {
      seg.add(size_moments[i]);
      if (i + ms > j)
        continue;
      bool wanted = false;
      for (int k = 1; k <= kmax && !wanted; k++)
        wanted = best[k - 1][i] != inf && j >= ms * static_cast<std::size_t>(k);
      if (!wanted)
        continue;
      const double cost = best_line(seg, [&seg](double a, double b) { return seg.cost(a, b); }).cost;
      for (int k = 1; k <= kmax; k++) {
        if (best[k - 1][i] == inf || j < ms * static_cast<std::size_t>(k))
          continue;
        const double c = best[k - 1][i] + cost;
        // On equal sums the earlier breakpoint (i falls); costs from summed moments may round a
        // tie of exact arithmetic either way, as summing samples in another order would.
        if (c <= best[k][j]) {

          best[k][j] = c;
          from[k][j] = i;
        }
      }
    }
  }
  // Each count's segments, their lines and costs summed sample by sample.
  auto segments_of = [&](int count) {
    std::vector<std::pair<std::size_t, LineFit>> segs; // first distinct size, line; by size
    std::size_t j = m;
    for (int k = count; k >= 1; k--) {
      const std::size_t i = from[k][j];
      segs.insert(segs.begin(), {i, fit_line(x, y, starts[i], starts[j])});
      j = i;
    }
    return segs;
  };
  // The segment count by BIC on the relative residuals (3 parameters per segment).
  const double n = static_cast<double>(x.size());
  int chosen = 1;
  double chosen_bic = inf;
  for (int k = 1; k <= kmax; k++) {
    if (best[k][m] == inf)
      continue;
    double cost = 0;
    for (const auto& seg : segments_of(k))
      cost += seg.second.cost;
    // Relative residuals below 1e-6 are noise of the arithmetic, not of the data.
    const double bic = n * std::log(std::max(cost / n, 1e-12)) + 3.0 * k * std::log(n);
    if (bic < chosen_bic - 1e-9) {
      chosen_bic = bic;
      chosen = k;
    }
  }
  PiecewiseFit fit;
  const auto segs = segments_of(chosen);
  for (std::size_t s = 0; s < segs.size(); s++) {
    const std::size_t i = segs[s].first, j = s + 1 < segs.size() ? segs[s + 1].first : m;
    const LineFit& l = segs[s].second;
    std::vector<double> at_from(y.begin() + static_cast<long>(starts[i]), y.begin() + static_cast<long>(starts[i + 1]));
    fit.segments.push_back({x[starts[i]], l.intercept, l.slope, x[starts[j] - 1], simcore::quantile(at_from, 0.5)});
  }
  fit.quality = fit_quality(fit, x, y);
  return fit;
}

} // namespace calibration
