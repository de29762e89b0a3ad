#include "fit_support.hpp"
#include "gpu_samples.hpp"

#include <simcore/quantile.hpp>

#include <algorithm>

namespace calibration {

namespace {

/** How far each GPU kernel gets: its median rate over the peak of its units measured in the
 *  same run (FP32 kernels over `peak_fp32_fma`, TF32 ones over `peak_tf32_mma_sync`), for our
 *  GEMMs over cuBLAS's (`cublas_sgemm`, `cublas_gemm_tf32`) and for our convolutions over
 *  cuDNN's FP32 one in the same layout (`cudnn_conv3d_<layout>`), where those were measured. */
nlohmann::ordered_json gpu_shares(const std::map<std::string, double>& median)
{
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [kernel, rate] : median) {
    const bool tf32 = kernel.find("tf32") != std::string::npos;
    nlohmann::ordered_json k{{"flops", rate}};
    const auto peak = median.find(tf32 ? "peak_tf32_mma_sync" : "peak_fp32_fma");
    if (peak != median.end() && peak->first != kernel && peak->second > 0)
      k["share_of_peak"] = rate / peak->second;
    const auto lib = median.find(tf32 ? "cublas_gemm_tf32" : "cublas_sgemm");
    if (kernel.rfind("gemm_", 0) == 0 && lib != median.end() && lib->second > 0)
      k["share_of_cublas"] = rate / lib->second;
    const auto dnn = median.find("cudnn_" + kernel);
    if (kernel.rfind("conv3d_", 0) == 0 && dnn != median.end() && dnn->second > 0)
      k["share_of_cudnn"] = rate / dnn->second;
    out[kernel] = std::move(k);
  }
  return out;
}

} // namespace

void GpuSamples::add(const Benchmark& b, const std::string& path)
{
  // GPU kernels: each kernel's repetitions, pooled over the traces of the host type.
  const std::string device = parameter_or(b, "device", "?");
  if (std::find(devices_.begin(), devices_.end(), device) == devices_.end())
    devices_.push_back(device);
  bool any_rate = false;
  for (const auto& [kernel, raw] : b.datasets) {
    // Rates, in any unit of Gflop/s's kind; a dataset in a unit of another kind the fitter
    // knows (a later schema's sizes or times) is not one. Any other unit (a misspelt
    // "GFLOPS", none) is refused by in_unit, naming the dataset: a kernel left out in
    // silence would leave a model without its rate.
    if (!raw.unit.empty() && !is_unit_of(Quantity::kGflops, raw.unit) && known_unit(raw.unit))
      continue;
    const Dataset d = in_unit(raw, Quantity::kGflops, path + " (cuda)", kernel);
    need_positive(d, d.rows(), path + " (cuda)", kernel, "rates in Gflop/s", 1e9);
    kernels_[kernel].insert(kernels_[kernel].end(), d.values.begin(), d.values.end());
    nodes_[kernel].add(simcore::quantile(d.values, 0.5) * 1e9, path);
    any_rate = true;
  }
  if (!any_rate)
    throw simcore::InputError(path + " (cuda)", "no dataset of rates; expected one per kernel timed, in Gflop/s, "
                                                "as calib_cuda writes");
  traces_++;
}

void GpuSamples::write(nlohmann::ordered_json& rates, nlohmann::ordered_json& quality) const
{
  std::string devices;
  for (const auto& d : devices_)
    devices += (devices.empty() ? "" : ", ") + d;
  std::map<std::string, double> gpu_median;
  for (const auto& [kernel, values] : kernels_)
    if (!values.empty()) {
      gpu_median[kernel] = simcore::quantile(values, 0.5) * 1e9;
      rates["gpu_" + kernel + "_flops"] = {{"value", gpu_median[kernel]},
                                           {"unit", "flops"},
                                           {"doc", kernel + " on " + devices + ", median of the repetitions"}};
    }
  if (!gpu_median.empty()) {
    auto g = gpu_shares(gpu_median);
    for (const auto& [kernel, values] : kernels_) // the median rate against each repetition
      if (!values.empty())
        g[kernel].update(rate_fit_quality(std::vector<double>(values.size(), 1.0), values,
                                          simcore::quantile(values, 0.5)));
    if (traces_ > 1) // the nodes of the host type against each other
      for (const auto& [kernel, nodes] : nodes_)
        nodes.describe(g[kernel], "gpu_" + kernel + "_flops");
    quality["gpu"] = g;
  }
}

} // namespace calibration
