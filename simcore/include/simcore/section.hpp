/* Structured parts of a scenario that a model declares: XML elements with typed attributes
 * and nested elements (e.g. dtl's <stream> with its <variable>s). Validated by the kernel
 * like parameters: unknown element or attribute, wrong type, bad unit, out of range, missing
 * required attribute, each with file:line and what was expected. */
#pragma once

#include "simcore/param_set.hpp"
#include "simcore/param_spec.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace simcore {

/** Declaration of one element: its attributes (as parameters) and the elements it may hold. */
struct SectionSpec {
  std::string name;
  std::string doc;
  std::vector<ParamSpec> attributes;
  std::vector<SectionSpec> children;
};

/** One element of a scenario, validated against its SectionSpec. */
class Section {
public:
  Section(std::string name, std::string where, ParamSet attributes)
      : name_(std::move(name)), where_(std::move(where)), attributes_(std::move(attributes))
  {
  }
  const std::string& name() const { return name_; }
  /** "file:line" of the element, for errors a model finds later. */
  const std::string& where() const { return where_; }
  /** Attribute values, typed, with defaults applied; origin() gives each one's file:line. */
  const ParamSet& attributes() const { return attributes_; }
  const std::vector<Section>& children() const { return children_; }
  std::vector<const Section*> children_named(const std::string& name) const;
  void add_child(Section child) { children_.push_back(std::move(child)); }
  nlohmann::ordered_json to_json() const;

private:
  std::string name_;
  std::string where_;
  ParamSet attributes_;
  std::vector<Section> children_;
};

} // namespace simcore
