/* Small helpers shared by the fitter's parts (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <cstdio>
#include <string>

namespace calibration {

/** A value as profiles write it: 6 significant digits. */
inline std::string profile_number(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/** The dataset `name` of a benchmark group; simcore::InputError at `where` (file and group)
 *  when it is missing, with `expected` (what the group should hold) when given. */
inline const Dataset& need_dataset(const Benchmark& b, const std::string& name, const std::string& where,
                                   const std::string& expected = "")
{
  const auto it = b.datasets.find(name);
  if (it == b.datasets.end())
    throw simcore::InputError(where, "no dataset '" + name + "'" + (expected.empty() ? "" : "; expected " + expected));
  return it->second;
}

} // namespace calibration
