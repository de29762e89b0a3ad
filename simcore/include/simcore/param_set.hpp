/* Validated parameter values of one scenario. */
#pragma once

#include "simcore/param_spec.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace simcore {

/** A checked value: integers as int64, reals and quantities as double (base units),
 *  booleans as bool, strings/choices/files as string (files as absolute paths), integer
 *  lists as vectors of int64. */
using ParamValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>>;

/** Parses and checks `text` against `spec`. `where` locates the text in error messages
 *  ("scenario.xml:12", "--set"); `base_dir` resolves relative File paths. */
ParamValue parse_param(const ParamSpec& spec, const std::string& text, const std::string& where,
                       const std::string& base_dir);

/** The full set of parameters of a model: every declared one, after defaults and overrides. */
class ParamSet {
public:
  ParamSet() = default;
  explicit ParamSet(std::vector<ParamSpec> specs);

  /** Sets a parameter from text, with all checks. Throws InputError. */
  void set(const std::string& name, const std::string& text, const std::string& where,
           const std::string& base_dir);
  /** Throws InputError listing required parameters that have no value; `element` names the
   *  XML element that should hold them ("" for <param> elements of a scenario). */
  void check_complete(const std::string& where, const std::string& element = "") const;

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /** True when set() gave `name` a value (a scenario's <param>, --set, Python's set()), even
   *  one equal to the default; false while it holds its default or has no value. Lets a
   *  model prefer a calibrated value over a default without overriding the user's choice.
   *  InternalError for a name the model did not declare. */
  bool given(const std::string& name) const;
  std::int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const; ///< reals, quantities, and integers
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const; ///< strings, choices, files
  const std::vector<std::int64_t>& get_int_list(const std::string& name) const;
  /** Where the value came from: "default", "file.xml:12", "--set". */
  const std::string& origin(const std::string& name) const;
  /** The text the value was parsed from (as written by the user, or the default). */
  const std::string& text(const std::string& name) const;

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec& spec(const std::string& name) const;
  /** {name: value} in declaration order, values in base units, for summary.json. */
  nlohmann::ordered_json to_json() const;

private:
  struct Entry {
    ParamValue value;
    std::string text;
    std::string origin;
    bool given = false; // set() gave it; the default otherwise (origin is text, not a flag)
  };
  const Entry& entry(const std::string& name) const;
  std::vector<ParamSpec> specs_;
  std::map<std::string, Entry> values_;
};

} // namespace simcore
