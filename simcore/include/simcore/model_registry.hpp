/* Registry of models. A model registers itself from its own folder; the kernel never
 * includes a model header. */
#pragma once

#include "simcore/param_spec.hpp"
#include "simcore/section.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace simcore {

class Model;

struct ModelInfo {
  std::string name;    ///< as written in <scenario model="...">
  std::string summary; ///< one line
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Model>()> factory;
  /** Elements the model accepts in a scenario besides <param> (may be repeated). */
  std::vector<SectionSpec> sections = {};
};

class ModelRegistry {
public:
  static ModelRegistry& instance();
  /** Adds a model; returns true so it can initialise a static. Aborts on a duplicate name
   *  or an invalid declaration (a programming error, found at start-up). */
  bool add(ModelInfo info);
  /** nullptr when unknown. */
  const ModelInfo* find(const std::string& name) const;
  /** Sorted by name. */
  std::vector<const ModelInfo*> all() const;

private:
  std::vector<std::unique_ptr<ModelInfo>> models_;
};

} // namespace simcore

#define SIMCORE_CONCAT_INNER_(a, b) a##b
#define SIMCORE_CONCAT_(a, b) SIMCORE_CONCAT_INNER_(a, b)
/** In one source file of the model: SIMCORE_REGISTER_MODEL(make_info()); where make_info()
 *  returns a ModelInfo. */
#define SIMCORE_REGISTER_MODEL(info_expr)                                                                         \
  namespace {                                                                                                     \
  [[maybe_unused]] const bool SIMCORE_CONCAT_(simcore_model_registered_, __LINE__) =                              \
      ::simcore::ModelRegistry::instance().add(info_expr);                                                        \
  }
