/* Declaration of one model parameter: name, type, unit, default, range, doc. */
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace simcore {

enum class ParamType {
  Integer,   ///< whole number
  Real,      ///< dimensionless real number
  Boolean,   ///< true/false (also 1/0, yes/no, on/off)
  String,    ///< free text
  Choice,    ///< one of a fixed list of words
  Time,      ///< seconds ("1us", "2ms", "3s")
  Size,      ///< bytes ("4MiB", "1kB")
  Bandwidth, ///< bytes per second ("10GBps", "1Gbps")
  Speed,     ///< flop per second ("1Gf")
  Flops,     ///< amount of work in flop ("1Gf")
  File,      ///< path to an existing file, relative to the scenario file
  IntegerList ///< whole numbers separated by commas or 'x' ("1024,1024,512", "4x4x2")
};

/** Name of a type as shown to users ("integer", "time", ...). */
const char* to_string(ParamType t);

/** Declares one parameter once; the kernel validates every value against it. */
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Real;
  std::string default_value; ///< text, parsed like a scenario value; empty means required
  std::optional<double> min; ///< inclusive, in base units
  std::optional<double> max; ///< inclusive, in base units
  std::vector<std::string> choices; ///< for Choice
  std::string doc;           ///< one line
  bool optional = false;     ///< a File that may be left empty ("" = none)

  bool required() const
  {
    return default_value.empty() && type != ParamType::String && type != ParamType::IntegerList && !optional;
  }
  /** Base unit ("s", "B", ...) or "" for dimensionless types. */
  std::string unit() const;

  // Builders, so that a model's table of parameters reads as one line per parameter.
  static ParamSpec integer(std::string name, long long def, std::string doc);
  static ParamSpec real(std::string name, double def, std::string doc);
  static ParamSpec boolean(std::string name, bool def, std::string doc);
  /** A list of integers; the range applies to each element. `def` may be "" (an empty list). */
  static ParamSpec integer_list(std::string name, std::string def, std::string doc);
  static ParamSpec string(std::string name, std::string def, std::string doc);
  static ParamSpec choice(std::string name, std::vector<std::string> choices, std::string def, std::string doc);
  static ParamSpec quantity(std::string name, ParamType type, std::string def, std::string doc);
  static ParamSpec file(std::string name, std::string doc);          ///< required
  static ParamSpec optional_file(std::string name, std::string doc); ///< "" when not given

  ParamSpec& at_least(double v) { min = v; return *this; }
  ParamSpec& at_most(double v) { max = v; return *this; }
  ParamSpec& within(double lo, double hi) { min = lo; max = hi; return *this; }
};

} // namespace simcore
