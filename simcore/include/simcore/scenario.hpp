/* A scenario: model, platform, optional calibration profile, parameters, seed, outputs. */
#pragma once

#include "simcore/param_set.hpp"
#include "simcore/section.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace simcore {

struct ModelInfo;

/** Parses a seed: decimal digits only, below 2^64. Throws InputError naming `where`. */
std::uint64_t parse_seed(const std::string& text, const std::string& where);

class Scenario {
public:
  /** Reads and validates a scenario XML file against the model registry.
   *  Every error names the file, the line and what was expected (InputError). */
  static Scenario load(const std::string& path);

  /** Overrides one parameter ("name=value" on the CLI) with the same checks. */
  void set(const std::string& name, const std::string& value, const std::string& where = "--set");
  /** Parses "name=value" and calls set(). */
  void set_assignment(const std::string& assignment);
  void set_seed(std::uint64_t seed) { seed_ = seed; }
  void set_output_dir(const std::string& dir)
  {
    output_dir_ = dir;
    output_origin_.clear();
  }
  /** Attaches (or with "" detaches) a calibration profile; a relative path is taken from the
   *  working directory. The file must exist; its content is checked when the run starts. */
  void set_calibration(const std::string& path, const std::string& where = "--calibration");

  const std::string& path() const { return path_; }        ///< absolute
  const std::string& base_dir() const { return base_dir_; } ///< folder of the scenario file
  const std::string& sha256() const { return sha256_; }    ///< of the file's bytes
  const std::string& model_name() const { return model_; }
  /** Where the model was named: the <scenario> element's "file:line" (where the defaults of its
   *  parameters come from), else "". */
  const std::string& model_origin() const { return model_origin_; }
  const ModelInfo& model() const;
  const std::string& platform_path() const { return platform_; }       ///< absolute
  const std::string& calibration_path() const { return calibration_; } ///< absolute or empty
  std::uint64_t seed() const { return seed_; }
  const ParamSet& params() const { return params_; }
  /** Output folder: --out, else the scenario's <output dir>, else results/<file stem>;
   *  relative to the working directory. */
  const std::string& output_dir() const { return output_dir_; }
  /** Where the output folder was named: the <output dir> element's "file:line", else "". */
  const std::string& output_origin() const { return output_origin_; }
  bool write_trace() const { return write_trace_; }
  /** <output csv="true">: every table also as OUT/<table>.csv. */
  bool write_csv() const { return write_csv_; }
  /** A SimGrid configuration item from a <config name value> element. */
  struct ConfigItem {
    std::string name;
    std::string value;
    std::string where; ///< "file:line"
  };
  /** SimGrid configuration items, in file order. */
  const std::vector<ConfigItem>& simgrid_config() const { return config_; }
  const std::string& description() const { return description_; }
  /** The model's own elements (declared in ModelInfo::sections), in file order. */
  const std::vector<Section>& sections() const { return sections_; }

private:
  std::string path_;
  std::string base_dir_;
  std::string sha256_;
  std::string model_;
  std::string model_origin_;
  std::string platform_;
  std::string calibration_;
  std::uint64_t seed_ = 0;
  ParamSet params_;
  std::string output_dir_;
  std::string output_origin_;
  bool write_trace_ = true;
  bool write_csv_ = false;
  std::vector<ConfigItem> config_;
  std::string description_;
  std::vector<Section> sections_;
};

} // namespace simcore
