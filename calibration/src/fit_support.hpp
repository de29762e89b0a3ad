/* Small helpers shared by the fitter's parts (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"

#include <nlohmann/json.hpp>
#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace calibration {

/** A trace's cpu_id without what does not tell cores apart: each kind's count ("4 x ") and
 *  its stepping or revision (the last field; POWER's revision runs to the end). */
inline std::string core_of(const std::string& id)
{
  std::string out;
  std::size_t from = 0;
  while (from <= id.size()) {
    const std::size_t to = std::min(id.find("; ", from), id.size());
    std::string part = id.substr(from, to - from);
    if (const auto x = part.find(" x "); x != std::string::npos && x > 0 &&
                                         part.find_first_not_of("0123456789") == x)
      part.erase(0, x + 3);
    for (const char* field : {" stepping ", " revision "})
      if (const auto f = part.rfind(field); f != std::string::npos)
        part.erase(f);
    out += (out.empty() ? "" : "; ") + part;
    from = to + 2;
  }
  return out;
}

/** A value as profiles write it: 6 significant digits. */
inline std::string profile_number(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/** How well one fitted rate predicts what was measured, applied as a simulation applies it:
 *  sample i did `work[i]` (flops, bytes, lookups, cells) at the measured rate `measured[i]`,
 *  and the model gives it the time work[i] / rate. `r2`: 1 - SSres / SStot of those times,
 *  null where every sample did the same work (nothing varies across sizes for a rate to
 *  explain; `r2_note` says so, and the errors are then those of the rate itself);
 *  `max_rel_error`, `median_rel_error`: |predicted - measured| / measured time. */
inline nlohmann::ordered_json rate_fit_quality(const std::vector<double>& work, const std::vector<double>& measured,
                                               double rate)
{
  nlohmann::ordered_json q = nlohmann::ordered_json::object();
  if (work.empty() || work.size() != measured.size() || !(rate > 0))
    return q;
  std::vector<double> times, rel;
  double mean = 0;
  for (std::size_t i = 0; i < work.size(); i++) {
    times.push_back(work[i] / measured[i]);
    mean += times.back();
  }
  mean /= static_cast<double>(times.size());
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < work.size(); i++) {
    const double p = work[i] / rate;
    ss_res += (p - times[i]) * (p - times[i]);
    ss_tot += (times[i] - mean) * (times[i] - mean);
    rel.push_back(std::abs(p - times[i]) / times[i]);
  }
  const bool one_size = std::all_of(work.begin(), work.end(), [&](double w) { return w == work.front(); });
  q["r2"] = one_size || !(ss_tot > 0) ? nlohmann::ordered_json() : nlohmann::ordered_json(1 - ss_res / ss_tot);
  if (one_size)
    q["r2_note"] = "every sample did the same work: R^2 (the variation of times across sizes that the rate "
                   "explains) is undefined; the relative errors are those of each repetition's rate";
  q["max_rel_error"] = *std::max_element(rel.begin(), rel.end());
  q["median_rel_error"] = simcore::quantile(rel, 0.5);
  q["samples"] = rel.size();
  return q;
}

/** The dataset `name` of a benchmark group; simcore::InputError at `where` (file and group)
 *  when it is missing, with `expected` (what the group should hold) when given. */
inline const Dataset& need_dataset(const Benchmark& b, const std::string& name, const std::string& where,
                                   const std::string& expected = "")
{
  const auto it = b.datasets.find(name);
  if (it == b.datasets.end())
    throw simcore::InputError(where, "no dataset '" + name + "'; expected " +
                                         (expected.empty() ? "a '" + b.name + "' group as its benchmark writes it, "
                                                                 "with a dataset '" + name + "'"
                                                           : expected));
  return it->second;
}

/** What a dataset measures, and so the units the fitter takes for it. */
enum class Quantity { kCount, kSeconds, kBytes, kBytesPerSecond, kPerSecond, kGflops };

/** The units a quantity may be written in and the factor to the fitter's own (the first of
 *  each list: what our benchmarks write). */
inline const std::vector<std::pair<std::string, double>>& units_of(Quantity q)
{
  static const std::vector<std::pair<std::string, double>> count{{"", 1}, {"1", 1}},
      seconds{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\u00b5s", 1e-6}, {"ns", 1e-9}},
      bytes{{"B", 1}, {"kB", 1e3}, {"KiB", 1024.0}, {"MB", 1e6}, {"MiB", 1048576.0}, {"GB", 1e9}, {"GiB", 1073741824.0}},
      bandwidth{{"Bps", 1},          {"B/s", 1},       {"kBps", 1e3},        {"kB/s", 1e3},
                {"MBps", 1e6},       {"MB/s", 1e6},    {"GBps", 1e9},        {"GB/s", 1e9},
                {"KiBps", 1024.0},   {"KiB/s", 1024.0}, {"MiBps", 1048576.0}, {"MiB/s", 1048576.0},
                {"GiBps", 1073741824.0}, {"GiB/s", 1073741824.0}},
      per_second{{"1/s", 1}, {"/s", 1}, {"Hz", 1}},
      gflops{{"Gflop/s", 1}, {"flop/s", 1e-9}, {"Mflop/s", 1e-3}, {"Tflop/s", 1e3}};
  switch (q) {
    case Quantity::kCount: return count;
    case Quantity::kSeconds: return seconds;
    case Quantity::kBytes: return bytes;
    case Quantity::kBytesPerSecond: return bandwidth;
    case Quantity::kPerSecond: return per_second;
    case Quantity::kGflops: break;
  }
  return gflops;
}

/** `unit` as units_of spells it: the Greek mu (U+03BC) of "\u03bcs", which looks as the micro
 *  sign (U+00B5) of "\u00b5s" does, taken for it. */
inline std::string spelled_unit(const std::string& unit) { return unit == "\u03bcs" ? "\u00b5s" : unit; }

/** Whether `unit` is one of the units of `q`. */
inline bool is_unit_of(Quantity q, const std::string& unit)
{
  const auto& units = units_of(q);
  const std::string spelled = spelled_unit(unit);
  return std::any_of(units.begin(), units.end(), [&](const auto& u) { return u.first == spelled; });
}

/** Whether `unit` is one of the units of any quantity the fitter knows. */
inline bool known_unit(const std::string& unit)
{
  for (Quantity q : {Quantity::kCount, Quantity::kSeconds, Quantity::kBytes, Quantity::kBytesPerSecond,
                     Quantity::kPerSecond, Quantity::kGflops})
    if (is_unit_of(q, unit))
      return true;
  return false;
}

/** `d` in the fitter's unit for `q` (its "unit" attribute read and the values scaled);
 *  simcore::InputError at `where` naming the dataset when the unit is not one of q's. */
inline Dataset in_unit(const Dataset& d, Quantity q, const std::string& where, const std::string& name)
{
  const auto& units = units_of(q);
  for (const auto& [unit, factor] : units)
    if (spelled_unit(d.unit) == unit) {
      Dataset out = d;
      if (factor != 1)
        for (double& v : out.values) {
          v *= factor;
          // 1.001 kB is 1001 B, not 1000.9999999999999: a whole number of bytes or of anything
          // stays whole where the product misses it by rounding alone.
          const double whole = std::round(v);
          if (whole != v && std::abs(v - whole) <= 1e-9 * std::abs(whole))
            v = whole;
        }
      out.unit = units.front().first;
      return out;
    }
  std::string list;
  for (const auto& [unit, factor] : units)
    list += (list.empty() ? "" : ", ") + (unit.empty() ? std::string("none") : "'" + unit + "'");
  throw simcore::InputError(where, "dataset '" + name + "' has unit '" + d.unit + "'; expected " + list);
}

/** need_dataset, in the fitter's unit for `q`. */
inline Dataset need_in(const Benchmark& b, const std::string& name, Quantity q, const std::string& where,
                       const std::string& expected = "")
{
  return in_unit(need_dataset(b, name, where, expected), q, where, name);
}

/** need_in for a dataset of group `b` of the trace `path` (errors name "path (group)"). */
inline Dataset need_in_group(const Benchmark& b, const std::string& name, Quantity q, const std::string& path)
{
  return need_in(b, name, q, path + " (" + b.name + ")");
}

/** The median of the repetitions in row `r` of `d`. */
inline double median_row(const Dataset& d, std::size_t r)
{
  std::vector<double> v;
  for (std::size_t c = 0; c < d.cols(); c++)
    v.push_back(d.at(r, c));
  return simcore::quantile(v, 0.5);
}

/** Checks that `d` holds `rows` rows of at least one repetition each, every value positive,
 *  normal (no subnormal: its inverse is infinite) and at most `most` (rates past what a
 *  machine does became infinite speeds: "-nanf" in the profile); simcore::InputError at `where`
 *  naming the dataset `name` and `what` it should hold otherwise. */
inline void need_positive(const Dataset& d, std::size_t rows, const std::string& where, const std::string& name,
                          const std::string& what, double most)
{
  if (d.rows() != rows || d.cols() == 0 || d.values.size() != d.rows() * d.cols())
    throw simcore::InputError(where, "dataset '" + name + "' has " + std::to_string(d.rows()) + " rows of " +
                                         std::to_string(d.cols()) + " values; expected " + std::to_string(rows) +
                                         " rows of repetitions");
  for (std::size_t i = 0; i < d.values.size(); i++)
    if (!(d.values[i] > 0) || !std::isnormal(d.values[i]) || !(d.values[i] <= most))
      throw simcore::InputError(where, "dataset '" + name + "' holds " + profile_number(d.values[i]) + " at index " +
                                           std::to_string(i) + "; expected positive " + what + ", up to " +
                                           profile_number(most));
}

/** Checks that every value of `d` is a whole number from 1 to `most` (sizes, orders, counts:
 *  an order of 1e-300 passed as positive, and its work of 0 made fit errors NaN); simcore::InputError
 *  at `where` naming the dataset `name` and `what` it should hold otherwise. */
inline void need_whole(const Dataset& d, const std::string& where, const std::string& name, const std::string& what,
                       double most)
{
  for (std::size_t i = 0; i < d.values.size(); i++)
    if (!(d.values[i] >= 1 && d.values[i] <= most) || d.values[i] != std::floor(d.values[i]))
      throw simcore::InputError(where, "dataset '" + name + "' holds " + profile_number(d.values[i]) + " at index " +
                                           std::to_string(i) + "; expected " + what + ", whole numbers from 1 to " +
                                           profile_number(most));
}

/** A benchmark's parameter `name` read as a number from `least` up to `most` (a whole one
 *  where `whole`), or nullopt where the trace has none; simcore::InputError at `where` naming
 *  the parameter and `what` it should hold otherwise (a strtod that stopped early once took
 *  "abc" for 0 and "nan" into the profile as null). */
inline std::optional<double> number_parameter(const Benchmark& b, const std::string& name, const std::string& where,
                                              const std::string& what, double least, double most, bool whole)
{
  const auto it = b.parameters.find(name);
  if (it == b.parameters.end())
    return std::nullopt;
  const std::string& text = it->second;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front())) || *end != '\0' || !std::isfinite(v) ||
      v < least || v > most || (whole && v != std::floor(v)))
    throw simcore::InputError(where, "parameter '" + name + "' = '" + text + "'; expected " + what);
  return v;
}

/** The value of a benchmark's parameter `name`, or `fallback` where the trace has none. */
inline std::string parameter_or(const Benchmark& b, const std::string& name, const std::string& fallback)
{
  const auto it = b.parameters.find(name);
  return it == b.parameters.end() ? fallback : it->second;
}

} // namespace calibration
