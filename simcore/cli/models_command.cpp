/* simcore models: every registered model with its parameters and elements. */
#include "commands.hpp"

#include "simcore/error.hpp"
#include "simcore/model_registry.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace simcore::cli {
namespace {

const char* kModelsHelp = R"(simcore models [--json]

Lists every registered model with its parameters: type, unit, default, range, doc.
)";

std::string range_of(const ParamSpec& p)
{
  std::string s;
  char buf[64];
  if (p.min) {
    std::snprintf(buf, sizeof buf, ">= %g", *p.min);
    s += buf;
  }
  if (p.max) {
    std::snprintf(buf, sizeof buf, "%s<= %g", s.empty() ? "" : ", ", *p.max);
    s += buf;
  }
  for (const auto& c : p.choices)
    s += (s.empty() ? "" : "|") + c;
  return s;
}

nlohmann::ordered_json param_json(const ParamSpec& p)
{
  return {{"name", p.name},       {"type", to_string(p.type)}, {"unit", p.unit()},
          {"default", p.default_value}, {"required", p.required()}, {"doc", p.doc}};
}

nlohmann::ordered_json section_json(const SectionSpec& s)
{
  nlohmann::ordered_json sj{{"element", s.name}, {"doc", s.doc}};
  sj["attributes"] = nlohmann::ordered_json::array();
  for (const auto& p : s.attributes)
    sj["attributes"].push_back(param_json(p));
  sj["children"] = nlohmann::ordered_json::array();
  for (const auto& c : s.children)
    sj["children"].push_back(section_json(c));
  return sj;
}

nlohmann::ordered_json model_json(const ModelInfo& m)
{
  nlohmann::ordered_json mj{{"name", m.name}, {"summary", m.summary}};
  mj["parameters"] = nlohmann::ordered_json::array();
  for (const auto& p : m.params) {
    nlohmann::ordered_json pj = param_json(p);
    if (p.min)
      pj["min"] = *p.min;
    if (p.max)
      pj["max"] = *p.max;
    if (!p.choices.empty())
      pj["choices"] = p.choices;
    mj["parameters"].push_back(pj);
  }
  mj["elements"] = nlohmann::ordered_json::array();
  for (const auto& s : m.sections)
    mj["elements"].push_back(section_json(s));
  return mj;
}

void print_section(const SectionSpec& s, int depth)
{
  std::printf("  %*s<%s>: %s\n", 2 * depth, "", s.name.c_str(), s.doc.c_str());
  for (const auto& p : s.attributes)
    std::printf("  %*s  %-18s %-10s %-7s %-14s %-16s %s\n", 2 * depth, "", p.name.c_str(), to_string(p.type),
                p.unit().c_str(), p.required() ? "(required)" : p.default_value.c_str(), range_of(p).c_str(),
                p.doc.c_str());
  for (const auto& c : s.children)
    print_section(c, depth + 1);
}

void print_model(const ModelInfo& m)
{
  std::printf("%s: %s\n", m.name.c_str(), m.summary.c_str());
  std::printf("  %-20s %-10s %-7s %-14s %-16s %s\n", "parameter", "type", "unit", "default", "range", "doc");
  for (const auto& p : m.params)
    std::printf("  %-20s %-10s %-7s %-14s %-16s %s\n", p.name.c_str(), to_string(p.type), p.unit().c_str(),
                p.required() ? "(required)" : p.default_value.c_str(), range_of(p).c_str(), p.doc.c_str());
  if (!m.sections.empty())
    std::printf("  elements:\n");
  for (const auto& s : m.sections)
    print_section(s, 1);
  std::printf("\n");
}

int models(const Args& args)
{
  bool json = false;
  for (const auto& a : args)
    if (a == "--json")
      json = true;
    else
      throw InputError("command line", "unexpected argument '" + a + "'; see simcore models --help");
  const auto all = ModelRegistry::instance().all();
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto* m : all)
      j.push_back(model_json(*m));
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto* m : all)
    print_model(*m);
  return 0;
}

} // namespace

Command models_command() { return {"models", kModelsHelp, &models}; }

} // namespace simcore::cli
