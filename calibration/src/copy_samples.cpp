#include "copy_samples.hpp"
#include "fit_support.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace calibration {

CachedCopyFit fit_cached_copy(const Benchmark& b, const std::string& path)
{
  const std::string where = path + " (cached_copy)";
  const Dataset bytes = need_in_group(b, "bytes", Quantity::kBytes, path);
  const Dataset all = need_in_group(b, "all_seconds", Quantity::kSeconds, path);
  const Dataset alone = need_in_group(b, "alone_seconds", Quantity::kSeconds, path);
  CachedCopyFit f;
  const std::string copiers = parameter_or(b, "copiers", "");
  char* end = nullptr;
  const long c = std::strtol(copiers.c_str(), &end, 10);
  if (copiers.empty() || *end != '\0' || c < 2)
    throw simcore::InputError(where, "parameter 'copiers' is '" + copiers +
                                         "'; expected the number of cores that copied at once (2 or more)");
  f.copiers = static_cast<int>(c);
  const std::size_t rows = bytes.rows();
  if (rows == 0 || bytes.values.size() != rows)
    throw simcore::InputError(where, "dataset 'bytes' has " + std::to_string(bytes.values.size()) + " values in " +
                                         std::to_string(rows) + " rows; expected one size per row");
  for (std::size_t r = 0; r < rows; r++)
    if (!(bytes.at(r) >= 1) || !std::isfinite(bytes.at(r)) || (r > 0 && !(bytes.at(r) > bytes.at(r - 1))))
      throw simcore::InputError(where, "dataset 'bytes' holds " + profile_number(bytes.at(r)) + " at row " +
                                           std::to_string(r) + "; expected sizes of at least 1 B, increasing");
  // Three sizes a segment: a cache level and what lies beyond need six at least.
  if (rows < 6)
    throw simcore::InputError(where, std::to_string(rows) + " sizes; expected at least 6 (calib_copy measures powers "
                                                            "of two from --min-bytes to --max-bytes)");
  need_positive(all, rows, where, "all_seconds", "copy times in seconds", 1e6);
  need_positive(alone, rows, where, "alone_seconds", "copy times in seconds", 1e6);
  for (std::size_t r = 0; r < rows; r++) {
    f.bytes.push_back(bytes.at(r));
    f.all_seconds.push_back(median_row(all, r));
    f.alone_seconds.push_back(median_row(alone, r));
  }
  f.fit = fit_piecewise(f.bytes, f.all_seconds, 3, 3);
  // The cached copies: the segment whose bytes go fastest. Its start-up (a fraction of a
  // microsecond) is left out: the detailed mode charges a copy its bytes at the rate.
  const auto& segs = f.fit.segments;
  for (std::size_t k = 0; k < segs.size(); k++)
    if (segs[k].slope > 0 && (segs[f.cached_segment].slope <= 0 || segs[k].slope < segs[f.cached_segment].slope))
      f.cached_segment = k;
  const Segment& cached = segs[f.cached_segment];
  if (!(cached.slope > 0))
    throw simcore::InputError(where, "the copy times do not grow with the size; expected longer copies of more bytes");
  f.node_rate = f.copiers / cached.slope;
  f.left_caches = f.cached_segment + 1 < segs.size();
  const double to = f.left_caches ? segs[f.cached_segment + 1].from : std::numeric_limits<double>::infinity();
  std::vector<double> x, t;
  for (std::size_t r = 0; r < rows; r++)
    if (f.bytes[r] >= cached.from && f.bytes[r] < to) {
      x.push_back(f.bytes[r]);
      t.push_back(f.alone_seconds[r]);
      f.limit = f.bytes[r];
    }
  // The same law as the segment's (a line, least squares on relative errors) through the
  // alone times of its sizes.
  const double one_slope = x.size() >= 2 ? fit_piecewise(x, t, 1, 2).segments.front().slope : 0;
  // A single copy cannot go slower than its share of all of them: where the alone times give
  // no positive slope (noise), the share stands for them.
  f.one_rate = one_slope > 0 ? std::max(1.0 / one_slope, f.node_rate / f.copiers) : f.node_rate / f.copiers;
  return f;
}

void CachedCopySamples::add(const Benchmark& b, const std::string& path)
{
  fits_.push_back(fit_cached_copy(b, path));
  node_.add(fits_.back().node_rate, path);
  one_.add(fits_.back().one_rate, path);
  limit_.add(fits_.back().limit, path);
}

void CachedCopySamples::write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const
{
  const CachedCopyFit& first = fits_.front();
  const std::string copiers = std::to_string(first.copiers);
  rates["cached_copy_bandwidth"] = {
      {"value", node_.median()}, {"unit", "Bps"},
      {"doc", "bytes copied per second by " + copiers +
                  " cores at once, all together, each copying a buffer another core has just written "
                  "(calib_copy; the fastest segment of the fitted copy times)"}};
  rates["cached_copy_bandwidth_one_core"] = {
      {"value", one_.median()}, {"unit", "Bps"},
      {"doc", "the same copies, one alone (calib_copy), over the sizes of that segment"}};
  rates["cached_copy_limit"] = {{"value", limit_.median()}, {"unit", "B"},
                                {"doc", "the largest copy measured at the cached rates; larger copies go at "
                                        "memcpy_bandwidth (STREAM)"}};
  nlohmann::ordered_json q = nlohmann::ordered_json::object();
  q["copiers"] = first.copiers;
  nlohmann::ordered_json segments = nlohmann::ordered_json::array();
  for (const auto& s : first.fit.segments)
    segments.push_back({{"from", s.from}, {"to", s.to}, {"intercept_s", s.intercept},
                        {"bandwidth", s.slope > 0 ? first.copiers / s.slope : 0.0}});
  q["segments"] = segments; // of the first trace: bandwidth of all copiers together
  q["cached_segment"] = first.cached_segment;
  q["r2"] = first.fit.quality.r2;
  q["max_rel_error"] = first.fit.quality.max_rel_error;
  q["median_rel_error"] = first.fit.quality.median_rel_error;
  // How well the one rate the model charges (no start-up) predicts each cached size.
  std::vector<double> work, measured;
  for (std::size_t r = 0; r < first.bytes.size(); r++)
    if (first.bytes[r] >= first.fit.segments[first.cached_segment].from && first.bytes[r] <= first.limit) {
      work.push_back(first.copiers * first.bytes[r]);
      measured.push_back(first.copiers * first.bytes[r] / first.all_seconds[r]);
    }
  q["as_charged"] = rate_fit_quality(work, measured, first.node_rate);
  node_.describe(q, "cached_copy_bandwidth");
  if (std::any_of(fits_.begin(), fits_.end(), [](const CachedCopyFit& f) { return !f.left_caches; }))
    q["note"] = "in some trace the fit found no slower segment after the fastest one (cached_copy_limit is the "
                "largest size measured): a larger --max-bytes would find where the copies leave the caches";
  quality["cached_copy"] = q;
}

} // namespace calibration
