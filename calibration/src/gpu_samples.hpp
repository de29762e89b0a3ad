/* The cuda traces of one host type (calib_cuda): each kernel's rate, the median of every
 * repetition of every node, and its share of the peak, cuBLAS or cuDNN measured in the same
 * run (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace calibration {

class GpuSamples {
public:
  /** Adds every rate dataset (Gflop/s or another unit of its kind) of the `cuda` group `b`
   *  of the trace `path`. simcore::InputError naming the trace and kernel when a rate is not
   *  positive. */
  void add(const Benchmark& b, const std::string& path);

  /** `gpu_<kernel>_flops` for each kernel, and quality["gpu"]. */
  void write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const;

private:
  std::map<std::string, std::vector<double>> kernels_; // every repetition of each kernel
  std::vector<std::string> devices_;
};

} // namespace calibration
