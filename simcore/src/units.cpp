#include "simcore/units.hpp"
#include "simcore/error.hpp"

#include <simgrid/Exception.hpp>
#include <xbt/parse_units.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace simcore {

const char* base_unit(Quantity q)
{
  switch (q) {
    case Quantity::Time: return "s";
    case Quantity::Size: return "B";
    case Quantity::Bandwidth: return "Bps";
    case Quantity::Speed: return "flop/s";
    case Quantity::Flops: return "flop";
  }
  return "";
}

const char* unit_examples(Quantity q)
{
  switch (q) {
    case Quantity::Time: return "a time such as 1us, 2.5ms, 3s, 1h";
    case Quantity::Size: return "a size such as 512B, 4kB, 4KiB, 1GB";
    case Quantity::Bandwidth: return "a bandwidth such as 10GBps, 100Mbps, 1.25GBps";
    case Quantity::Speed: return "a speed such as 1Gf, 2.5Tf (flop/s)";
    case Quantity::Flops: return "an amount of work such as 1Gf, 2.5Tf (flop)";
  }
  return "";
}

namespace {
bool parse_plain_number(const std::string& text, double& out)
{
  if (text.empty())
    return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}
} // namespace

void check_not_subnormal(double v, const std::string& text, const std::string& where)
{
  // A subnormal rate (1e-310 B/s) took the simulated clock to infinity, blamed on the model;
  // such numbers have lost their precision anyway.
  if (std::fpclassify(v) == FP_SUBNORMAL)
    throw InputError(where, "'" + text + "' is below the smallest normal double (2.2e-308); expected 0 or a "
                                         "number of normal size");
}

double parse_quantity(Quantity q, const std::string& text, const std::string& where)
{
  if (text.find_first_of("xX") != std::string::npos)
    throw InputError(where, "'" + text + "' is not valid; expected " + std::string(unit_examples(q)));
  double plain;
  if (parse_plain_number(text, plain)) {
    check_not_subnormal(plain, text, where);
    return plain; // bare numbers are in base units (SimGrid would only warn)
  }
  try {
    // SimGrid formats its errors from (file, line); we put our own location first instead.
    double v = 0;
    switch (q) {
      case Quantity::Time: v = xbt_parse_get_time("", 0, text, ""); break;
      case Quantity::Size: v = xbt_parse_get_size("", 0, text, ""); break;
      case Quantity::Bandwidth: v = xbt_parse_get_bandwidth("", 0, text, ""); break;
      case Quantity::Speed:
      case Quantity::Flops: v = xbt_parse_get_speed("", 0, text, ""); break;
    }
    if (!std::isfinite(v))
      throw InputError(where, "'" + text + "' is not a finite number; expected " + unit_examples(q));
    check_not_subnormal(v, text, where);
    return v;
  } catch (const simgrid::ParseError& e) {
    std::string why = e.what();
    auto pos = why.find(": ");
    if (pos != std::string::npos && why.rfind("Parse error", 0) == 0)
      why = why.substr(pos + 2);
    throw InputError(where, "'" + text + "' is not valid (" + why + "); expected " + unit_examples(q));
  }
}

std::string format_quantity(Quantity q, double value)
{
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  const char* unit = base_unit(q);
  char buf[64];
  if (q == Quantity::Time) {
    if (value != 0 && std::fabs(value) < 1e-3)
      std::snprintf(buf, sizeof buf, "%.4g us", value * 1e6);
    else if (value != 0 && std::fabs(value) < 1)
      std::snprintf(buf, sizeof buf, "%.4g ms", value * 1e3);
    else
      std::snprintf(buf, sizeof buf, "%.6g s", value);
    return buf;
  }
  int p = 0;
  double v = value;
  while (std::fabs(v) >= 1000 && p < 6) {
    v /= 1000;
    p++;
  }
  std::snprintf(buf, sizeof buf, "%.4g %s%s", v, prefixes[p], unit);
  return buf;
}

} // namespace simcore
