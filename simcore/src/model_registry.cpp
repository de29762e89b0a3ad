#include "simcore/model_registry.hpp"
#include "simcore/param_set.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

namespace simcore {

ModelRegistry& ModelRegistry::instance()
{
  static ModelRegistry registry;
  return registry;
}

bool ModelRegistry::add(ModelInfo info)
{
  // Declaration errors are programming errors found at start-up, before main().
  auto die = [&info](const std::string& why) {
    std::fprintf(stderr, "simcore: model '%s' cannot be registered: %s\n", info.name.c_str(), why.c_str());
    std::abort();
  };
  if (info.name.empty() || !info.factory)
    die("a model needs a name and a factory");
  if (find(info.name))
    die("a model of that name is already registered");
  std::set<std::string> names;
  for (const auto& p : info.params) {
    if (!names.insert(p.name).second)
      die("parameter '" + p.name + "' declared twice");
    if (p.optional && p.type != ParamType::File)
      die("parameter '" + p.name + "': only File parameters can be optional");
    if (!p.required()) {
      try {
        parse_param(p, p.default_value, "default", "");
      } catch (const std::exception& e) {
        die(std::string("invalid default: ") + e.what());
      }
    }
  }
  std::function<void(const SectionSpec&)> check_section = [&](const SectionSpec& s) {
    std::set<std::string> attrs;
    for (const auto& a : s.attributes) {
      if (!attrs.insert(a.name).second)
        die("element <" + s.name + ">: attribute '" + a.name + "' declared twice");
      if (!a.required()) {
        try {
          parse_param(a, a.default_value, "default", "");
        } catch (const std::exception& e) {
          die("element <" + s.name + ">: invalid default: " + e.what());
        }
      }
    }
    for (const auto& c : s.children)
      check_section(c);
  };
  static const std::set<std::string> reserved{"description", "platform", "calibration", "param", "config", "output"};
  for (const auto& s : info.sections) {
    if (reserved.count(s.name))
      die("element <" + s.name + "> is reserved by the scenario format");
    check_section(s);
  }
  models_.push_back(std::make_unique<ModelInfo>(std::move(info)));
  return true;
}

const ModelInfo* ModelRegistry::find(const std::string& name) const
{
  for (const auto& m : models_)
    if (m->name == name)
      return m.get();
  return nullptr;
}

std::vector<const ModelInfo*> ModelRegistry::all() const
{
  std::vector<const ModelInfo*> out;
  for (const auto& m : models_)
    out.push_back(m.get());
  std::sort(out.begin(), out.end(), [](auto a, auto b) { return a->name < b->name; });
  return out;
}

} // namespace simcore
