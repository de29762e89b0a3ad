#include "simcore/param_set.hpp"
#include "simcore/error.hpp"
#include "simcore/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace simcore {

namespace {

std::string trim(const std::string& s)
{
  auto b = s.find_first_not_of(" \t\r\n");
  auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string fmt(double v)
{
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

std::string range_text(const ParamSpec& spec)
{
  std::string u = spec.unit().empty() ? "" : " " + spec.unit();
  if (spec.min && spec.max)
    return "between " + fmt(*spec.min) + u + " and " + fmt(*spec.max) + u;
  if (spec.min)
    return "at least " + fmt(*spec.min) + u;
  return "at most " + fmt(*spec.max) + u;
}

void check_range(const ParamSpec& spec, double v, const std::string& text, const std::string& where)
{
  if (std::isnan(v) || (spec.min && v < *spec.min) || (spec.max && v > *spec.max))
    throw InputError(where, "parameter '" + spec.name + "' = '" + text + "' is out of range; expected a value " +
                                range_text(spec));
}

/** Whatever a model declares, a quantity past these took the simulated clock to infinity (a
 *  gap of 1e308 s aborted SimGrid; 1e308 flop a cell, or 2.2e-308 B/s, "deadlocked at t=inf,
 *  a bug of the model"): times up to 1e9 s (32 years), sizes up to 2^60 B, work up to 1e24
 *  flop; bandwidths and speeds 0 (where a model allows it) or from 1 to 1e18 B/s, 1e21 flop/s. */
void check_physical(const ParamSpec& spec, double v, const std::string& raw, const std::string& where)
{
  struct Bound {
    double least, most;
    const char* what;
  };
  Bound b{0, 0, ""};
  switch (spec.type) {
    case ParamType::Time: b = {0, 1e9, "a time up to 1e9 s"}; break;
    case ParamType::Size: b = {0, 1152921504606846976.0, "a size up to 2^60 B"}; break;
    case ParamType::Flops: b = {0, 1e24, "an amount of work up to 1e24 flop"}; break;
    case ParamType::Bandwidth: b = {1, 1e18, "a bandwidth of 0 or from 1 B/s to 1e18 B/s"}; break;
    case ParamType::Speed: b = {1, 1e21, "a speed of 0 or from 1 flop/s to 1e21 flop/s"}; break;
    default: return;
  }
  const double magnitude = std::abs(v);
  if (magnitude > b.most || (magnitude > 0 && magnitude < b.least))
    throw InputError(where, "parameter '" + spec.name + "' = '" + raw + "' is beyond what a simulation can use; expected " +
                                b.what);
}

Quantity quantity_of(ParamType t)
{
  switch (t) {
    case ParamType::Time: return Quantity::Time;
    case ParamType::Size: return Quantity::Size;
    case ParamType::Bandwidth: return Quantity::Bandwidth;
    case ParamType::Speed: return Quantity::Speed;
    default: return Quantity::Flops;
  }
}

} // namespace

namespace {

std::int64_t parse_integer(const ParamSpec& spec, const std::string& text, const std::string& raw,
                           const std::string& where)
{
  const std::string what = "parameter '" + spec.name + "'";
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size())
    throw InputError(where, what + " = '" + raw + "' is not " +
                                (spec.type == ParamType::IntegerList ? "a list of integers; expected e.g. 64,64,32 or 4x4x2"
                                                                     : "an integer; expected a whole number such as 42"));
  if (errno == ERANGE)
    throw InputError(where, what + " = '" + raw + "' is out of range; expected a value " +
                                (spec.min || spec.max ? range_text(spec) : "that fits in 64 bits"));
  check_range(spec, static_cast<double>(v), raw, where);
  return v;
}

} // namespace

ParamValue parse_param(const ParamSpec& spec, const std::string& raw, const std::string& where,
                       const std::string& base_dir)
{
  const std::string text = trim(raw);
  const std::string what = "parameter '" + spec.name + "'";
  switch (spec.type) {
    case ParamType::Integer:
      return parse_integer(spec, text, raw, where);
    case ParamType::IntegerList: {
      std::vector<std::int64_t> out;
      if (text.empty())
        return out;
      std::size_t start = 0;
      while (true) {
        const std::size_t sep = text.find_first_of(",xX", start);
        const std::string item = trim(text.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
        out.push_back(parse_integer(spec, item, raw, where));
        if (sep == std::string::npos)
          break;
        start = sep + 1;
      }
      return out;
    }
    case ParamType::Real: {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) ||
          text.find_first_of("xX") != std::string::npos)
        throw InputError(where, what + " = '" + raw + "' is not a number; expected a real number such as 0.5 or 1e-3");
      check_not_subnormal(v, raw, where);
      check_range(spec, v, text, where);
      return v;
    }
    case ParamType::Boolean: {
      std::string t = text;
      std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
      if (t == "true" || t == "1" || t == "yes" || t == "on")
        return true;
      if (t == "false" || t == "0" || t == "no" || t == "off")
        return false;
      throw InputError(where, what + " = '" + raw + "' is not a boolean; expected true or false");
    }
    case ParamType::String:
      return raw;
    case ParamType::Choice: {
      if (std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end())
        return text;
      std::string list;
      for (const auto& c : spec.choices)
        list += (list.empty() ? "" : ", ") + c;
      throw InputError(where, what + " = '" + raw + "' is not allowed; expected one of: " + list);
    }
    case ParamType::File: {
      if (text.empty() && spec.optional)
        return std::string();
      if (text.empty())
        throw InputError(where, what + " is empty; expected the path of an existing file");
      fs::path p(text);
      if (p.is_relative() && !base_dir.empty())
        p = fs::path(base_dir) / p;
      std::error_code ec;
      if (!fs::is_regular_file(p, ec))
        throw InputError(where, what + ": file '" + p.lexically_normal().string() +
                                    "' does not exist; expected a path relative to the scenario file");
      return fs::absolute(p).lexically_normal().string();
    }
    default: {
      double v = parse_quantity(quantity_of(spec.type), text, where);
      check_range(spec, v, text, where);
      check_physical(spec, v, raw, where);
      return v;
    }
  }
}

ParamSet::ParamSet(std::vector<ParamSpec> specs) : specs_(std::move(specs))
{
  for (const auto& s : specs_)
    if (!s.required())
      values_[s.name] = Entry{parse_param(s, s.default_value, "default of " + s.name, ""), s.default_value, "default"};
  // (an optional File defaults to "", meaning none)
}

const ParamSpec& ParamSet::spec(const std::string& name) const
{
  for (const auto& s : specs_)
    if (s.name == name)
      return s;
  throw InputError("unknown parameter '" + name + "'");
}

void ParamSet::set(const std::string& name, const std::string& text, const std::string& where,
                   const std::string& base_dir)
{
  const ParamSpec* found = nullptr;
  for (const auto& s : specs_)
    if (s.name == name)
      found = &s;
  if (!found) {
    std::string list;
    for (const auto& s : specs_)
      list += (list.empty() ? "" : ", ") + s.name;
    throw InputError(where, "unknown parameter '" + name + "'; expected one of: " + (list.empty() ? "(none)" : list));
  }
  values_[name] = Entry{parse_param(*found, text, where, base_dir), text, where, true};
}

void ParamSet::check_complete(const std::string& where, const std::string& element) const
{
  std::string missing, example;
  for (const auto& s : specs_)
    if (!values_.count(s.name)) {
      missing += (missing.empty() ? "" : ", ") + s.name + " (" + to_string(s.type) + ")";
      example += " " + s.name + "=\"...\"";
    }
  if (missing.empty())
    return;
  if (element.empty())
    throw InputError(where, "missing required parameter(s): " + missing + "; expected <param name=\"...\" value=\"...\"/>");
  throw InputError(where, "<" + element + "> lacks required attribute(s): " + missing + "; expected <" + element +
                              example + " .../>");
}

const ParamSet::Entry& ParamSet::entry(const std::string& name) const
{
  auto it = values_.find(name);
  if (it == values_.end())
    throw InternalError("parameter '" + name + "' was not declared by the model or has no value");
  return it->second;
}

std::int64_t ParamSet::get_int(const std::string& name) const
{
  const auto& v = entry(name).value;
  if (auto p = std::get_if<std::int64_t>(&v))
    return *p;
  throw InternalError("parameter '" + name + "' is not an integer");
}

double ParamSet::get_double(const std::string& name) const
{
  const auto& v = entry(name).value;
  if (auto p = std::get_if<double>(&v))
    return *p;
  if (auto p = std::get_if<std::int64_t>(&v))
    return static_cast<double>(*p);
  throw InternalError("parameter '" + name + "' is not numeric");
}

bool ParamSet::get_bool(const std::string& name) const
{
  const auto& v = entry(name).value;
  if (auto p = std::get_if<bool>(&v))
    return *p;
  throw InternalError("parameter '" + name + "' is not a boolean");
}

const std::string& ParamSet::get_string(const std::string& name) const
{
  const auto& v = entry(name).value;
  if (auto p = std::get_if<std::string>(&v))
    return *p;
  throw InternalError("parameter '" + name + "' is not a string");
}

const std::vector<std::int64_t>& ParamSet::get_int_list(const std::string& name) const
{
  const auto& v = entry(name).value;
  if (auto p = std::get_if<std::vector<std::int64_t>>(&v))
    return *p;
  throw InternalError("parameter '" + name + "' is not an integer list");
}

bool ParamSet::given(const std::string& name) const
{
  const auto it = values_.find(name);
  if (it != values_.end())
    return it->second.given;
  // A required parameter not set yet has no entry; a name the model never declared is a typo
  // in the model's code, which a silent false would hide.
  if (std::none_of(specs_.begin(), specs_.end(), [&name](const ParamSpec& s) { return s.name == name; }))
    throw InternalError("parameter '" + name + "' was not declared by the model");
  return false;
}

const std::string& ParamSet::origin(const std::string& name) const { return entry(name).origin; }
const std::string& ParamSet::text(const std::string& name) const { return entry(name).text; }

nlohmann::ordered_json ParamSet::to_json() const
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& spec : specs_) {
    auto it = values_.find(spec.name);
    if (it != values_.end())
      std::visit([&j, &n = spec.name](const auto& v) { j[n] = v; }, it->second.value);
  }
  return j;
}

} // namespace simcore
