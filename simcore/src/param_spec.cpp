#include "simcore/param_spec.hpp"

#include <sstream>

namespace simcore {

const char* to_string(ParamType t)
{
  switch (t) {
    case ParamType::Integer: return "integer";
    case ParamType::Real: return "real";
    case ParamType::Boolean: return "boolean";
    case ParamType::String: return "string";
    case ParamType::Choice: return "choice";
    case ParamType::Time: return "time";
    case ParamType::Size: return "size";
    case ParamType::Bandwidth: return "bandwidth";
    case ParamType::Speed: return "speed";
    case ParamType::Flops: return "flops";
    case ParamType::File: return "file";
    case ParamType::IntegerList: return "integer list";
  }
  return "?";
}

std::string ParamSpec::unit() const
{
  switch (type) {
    case ParamType::Time: return "s";
    case ParamType::Size: return "B";
    case ParamType::Bandwidth: return "Bps";
    case ParamType::Speed: return "flop/s";
    case ParamType::Flops: return "flop";
    default: return "";
  }
}

namespace {
std::string number_text(double v)
{
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
} // namespace

ParamSpec ParamSpec::integer(std::string name, long long def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::Integer, std::to_string(def), {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::integer_list(std::string name, std::string def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::IntegerList, std::move(def), {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::real(std::string name, double def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::Real, number_text(def), {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::boolean(std::string name, bool def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::Boolean, def ? "true" : "false", {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::string(std::string name, std::string def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::String, std::move(def), {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::choice(std::string name, std::vector<std::string> choices, std::string def, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::Choice, std::move(def), {}, {}, std::move(choices), std::move(doc)};
}
ParamSpec ParamSpec::quantity(std::string name, ParamType type, std::string def, std::string doc)
{
  return ParamSpec{std::move(name), type, std::move(def), {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::file(std::string name, std::string doc)
{
  return ParamSpec{std::move(name), ParamType::File, "", {}, {}, {}, std::move(doc)};
}
ParamSpec ParamSpec::optional_file(std::string name, std::string doc)
{
  ParamSpec s{std::move(name), ParamType::File, "", {}, {}, {}, std::move(doc)};
  s.optional = true;
  return s;
}

} // namespace simcore
