/* Strict reading of the benchmarks' option values: a value is taken whole or refused, so that
 * "--queries 1e6" or "--max 64K" never runs a benchmark of 1 query or 64 bytes. */
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace calibration {

/** `text` as a whole number in [lo, hi]; nothing when it is empty, has characters after the
 *  number, or lies outside the range. */
inline std::optional<long long> whole_number(const std::string& text, long long lo, long long hi)
{
  if (text.empty())
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi)
    return std::nullopt;
  return v;
}

/** `text` as a finite number in [lo, hi]; nothing otherwise. */
inline std::optional<double> real_number(const std::string& text, double lo, double hi)
{
  if (text.empty())
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    return std::nullopt;
  return v;
}

/** A comma-separated list of whole numbers in [lo, hi]; nothing when the list is empty or any
 *  item is not one. */
inline std::optional<std::vector<long long>> whole_numbers(const std::string& text, long long lo, long long hi)
{
  std::vector<long long> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    const auto v = whole_number(item, lo, hi);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  if (out.empty() || (!text.empty() && text.back() == ','))
    return std::nullopt;
  return out;
}

} // namespace calibration
