/* The cuda traces of one host type (calib_cuda): each kernel's rate, the median of every
 * repetition of every node, and its share of the peak, cuBLAS or cuDNN measured in the same
 * run (private to calibration/src). */
#pragma once

#include "calibration/trace_file.hpp"
#include "node_samples.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace calibration {

class GpuSamples {
public:
  /** Adds every rate dataset (Gflop/s or another unit of its kind) of the `cuda` group `b`
   *  of the trace `path`; a dataset in a unit of another quantity the fitter knows (a later
   *  schema's sizes or times) is not a rate and is passed over. simcore::InputError naming
   *  the trace and kernel when a dataset has no unit or one the fitter does not know, or a
   *  rate is not positive; naming the trace when the group holds no rate at all. */
  void add(const Benchmark& b, const std::string& path);

  /** `gpu_<kernel>_flops` for each kernel, and quality["gpu"]; with several traces, each
   *  kernel's entry gives the nodes' medians and their spread (NodeSamples::describe), with
   *  a note where they differ by more than 15 %. */
  void write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const;

private:
  std::map<std::string, std::vector<double>> kernels_; // every repetition of each kernel
  std::map<std::string, NodeSamples> nodes_;           // the median of each trace, of each kernel
  int traces_ = 0;
  std::vector<std::string> devices_;
};

} // namespace calibration
