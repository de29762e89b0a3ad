/* calib_cuda: GEMM in FP32 (CUDA cores) and TF32 (tensor cores through WMMA, sm_80 and later),
 * each as a plain and a blocked kernel, and a 3D convolution as an implicit GEMM in
 * channels-first (NCDHW) and channels-last (NDHWC) layouts; beside them, in the same run, the
 * device's peak as measured by register-only kernels and, where the library is found, cuBLAS.
 * Every kernel is checked against a CPU reference (the peak kernels against the same
 * arithmetic on the CPU, bit for bit), then timed with CUDA events. Without a CUDA device it
 * says so and exits 77 (a skip for the tests), never pretending.
 *   calib_cuda [--check] [--size N] [--repetitions R] [-o TRACE.h5|TRACE.json]
 * Built with -DSIMCORE_CUDA_NO_HDF5 (cuda/build_for_device.sh) it needs no HDF5 library and
 * writes the JSON form of the trace only (calib_trace_convert makes the HDF5 file of it): a
 * binary to carry to a bare GPU machine. */
#include "conv3d_kernel.cuh"
#include "cpu_references.hpp"
#include "gemm_kernels.cuh"
#include "peak_kernels.cuh"
#include "working_set.hpp"
#if __has_include(<cublas_api.h>)
#include "cublas_reference.cuh"
#define SIMCORE_HAVE_CUBLAS_HEADER 1
#endif
#if __has_include(<cudnn.h>)
#include "cudnn_reference.cuh"
#define SIMCORE_HAVE_CUDNN_HEADER 1
#endif

#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"
#include "calibration/trace_json.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using calibration::ConvShape;
using namespace calibration_cuda;

void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess) {
    std::fprintf(stderr, "calib_cuda: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/** Whether this process may open some GPU's device file (/dev/nvidia0, /dev/nvidia1 ...). */
bool gpu_file_openable()
{
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos &&
        ::access(entry.path().c_str(), R_OK | W_OK) == 0)
      return true;
  }
  return false;
}

/** Device memory freed when it goes out of scope. */
struct DeviceBuffer {
  float* p = nullptr;
  std::size_t n = 0;
  explicit DeviceBuffer(std::size_t count) : n(count) { check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc"); }
  explicit DeviceBuffer(const std::vector<float>& v) : DeviceBuffer(v.size())
  {
    check(cudaMemcpy(p, v.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copy to device");
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<float> host() const
  {
    std::vector<float> v(n);
    check(cudaDeviceSynchronize(), "kernel");
    check(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), "copy to host");
    return v;
  }
};

/** Largest |got - ref| over the largest |ref|. */
double max_rel_error(const std::vector<float>& got, const std::vector<float>& ref)
{
  double worst = 0, scale = 0;
  for (float r : ref)
    scale = std::max(scale, static_cast<double>(std::abs(r)));
  for (std::size_t i = 0; i < ref.size(); i++) {
    const double e = std::abs(static_cast<double>(got[i]) - ref[i]);
    worst = std::max(worst, std::isfinite(e) ? e / (scale > 0 ? scale : 1) : INFINITY);
  }
  return worst;
}

dim3 tiles(long rows, long cols, int tile_rows, int tile_cols)
{
  return dim3(static_cast<unsigned>((cols + tile_cols - 1) / tile_cols), static_cast<unsigned>((rows + tile_rows - 1) / tile_rows));
}

// Launchers: C = A B for row-major m x k and k x n.
using Gemm = std::function<void(int, int, int, const float*, const float*, float*)>;

void launch_sgemm_tiled(int m, int n, int k, const float* a, const float* b, float* c)
{
  sgemm_tiled<<<tiles(m, n, kTile, kTile), dim3(kTile, kTile)>>>(m, n, k, a, b, c);
}
void launch_sgemm_blocked(int m, int n, int k, const float* a, const float* b, float* c)
{
  sgemm_blocked<<<tiles(m, n, kBlockedM, kBlockedN), kBlockedThreads>>>(m, n, k, a, b, c);
}
void launch_tf32_wmma(int m, int n, int k, const float* a, const float* b, float* c)
{
  gemm_tf32_wmma<<<tiles(m, n, 16, 16), 32>>>(m, n, k, a, b, c);
}
void launch_tf32_wmma_blocked(int m, int n, int k, const float* a, const float* b, float* c)
{
  gemm_tf32_wmma_blocked<<<tiles(m, n, kWmmaM, kWmmaN), kWmmaThreads>>>(m, n, k, a, b, c);
}

struct GemmKernel {
  const char* name;
  Gemm launch;
  int m_multiple, n_multiple, k_multiple; // sizes the kernel takes
  bool tensor;                            // TF32: inputs rounded, looser tolerance, sm_80+
};

} // namespace

int main(int argc, char** argv)
{
  // "--check" stands alone; every other option is a pair, read whole or refused.
  bool check_only = false;
  std::vector<char*> pairs{argv[0]};
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--check") == 0)
      check_only = true;
    else
      pairs.push_back(argv[i]);
  }
  int size = 4096, repetitions = 5;
  std::string out;
  const std::string problem = calibration::read_options(
      static_cast<int>(pairs.size()), pairs.data(), out,
      [&](const std::string& option, const std::string& value) -> std::optional<std::string> {
        if (option == "--size")
          return calibration::read_whole(option, value, 128, 16384, "a matrix size from 128 to 16384", size);
        if (option == "--repetitions")
          return calibration::read_whole(option, value, 1, 1000, "a whole number of repetitions from 1 to 1000",
                                         repetitions);
        return std::nullopt;
      },
      /*output_required=*/false);
  const std::string wrong = !problem.empty() ? problem
                            : check_only && !out.empty()
                                ? "--check with -o " + out + ": --check checks the kernels and writes no trace; "
                                  "expected one of them"
                                : "";
  if (!wrong.empty()) {
    std::fprintf(stderr, "calib_cuda: %s; usage: calib_cuda [--check] [--size N] [--repetitions R] "
                         "[-o TRACE.h5|TRACE.json]\n", wrong.c_str());
    return 2;
  }
  if (calibration::only_checking_options()) // before looking for a device
    return 0;
#ifdef SIMCORE_CUDA_NO_HDF5
  if (!out.empty() && !calibration::is_json_trace_path(out)) {
    std::fprintf(stderr, "calib_cuda: %s: this build has no HDF5 (for a bare GPU machine); expected a JSON trace "
                         "(-o T.json), which calib_trace_convert turns into HDF5\n", out.c_str());
    return 2;
  }
#endif
  // The timed run's arrays must fit: on the host before anything is allocated (Linux would grant
  // them and kill the process while it wrote them), on the device once it is known. --check
  // works on small problems only.
  const int n = size / 128 * 128;
  const WorkingSet need = timed_working_set(n, kTimedConv);
  if (!check_only) {
    const std::string what = "the timed run's host arrays (GEMMs of order " + std::to_string(n) + " for --size " +
                             std::to_string(size) + ": A, B and two products, 16 n^2 bytes; or the convolution's) "
                             "and the CUDA runtime's 0.5 GiB";
    if (const int rc = calibration::refuse_beyond_available_memory("calib_cuda", need.host_bytes, what))
      return rc;
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  // A machine with an NVIDIA device node whose CUDA fails (a driver older than the runtime, a
  // device in a bad state) has a GPU that cannot be used: a failure, not a skip, or a node
  // of a cluster would pass for one without a GPU. Devices hidden from this process are no
  // such failure: CUDA_VISIBLE_DEVICES set, or a job step given no GPU (Slurm's cgroup leaves
  // the device files but not the right to open them) make CUDA find none, and that is a skip.
  const bool hidden = e == cudaErrorNoDevice && (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr || !gpu_file_openable());
  if (e != cudaSuccess && !hidden &&
      (std::filesystem::exists("/dev/nvidiactl") || std::filesystem::exists("/dev/nvidia0"))) {
    std::fprintf(stderr, "calib_cuda: this machine has an NVIDIA device (/dev/nvidia*), but CUDA cannot use it (%s); "
                         "expected a working driver for CUDA %d.%d\n",
                 cudaGetErrorString(e), CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return 1;
  }
  if (e != cudaSuccess || devices == 0) {
    std::printf("calib_cuda: no CUDA device%s (%s): skipped; the kernels were built, not run\n",
                hidden ? " visible to this process" : "", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device properties");
  // A device older than the architectures built (CMAKE_CUDA_ARCHITECTURES) has no code to run:
  // say so before any launch fails with "no kernel image".
  {
    cudaFuncAttributes attributes{};
    const cudaError_t image = cudaFuncGetAttributes(&attributes, sgemm_tiled);
    if (image != cudaSuccess) {
      std::fprintf(stderr, "calib_cuda: %s (compute capability %d.%d) cannot run this build (%s; built with %s); "
                           "expected a rebuild with CMAKE_CUDA_ARCHITECTURES naming %d%d\n",
                   prop.name, prop.major, prop.minor, cudaGetErrorString(image), SIMCORE_BENCH_FLAGS, prop.major,
                   prop.minor);
      return 1;
    }
  }
  if (!check_only) {
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "device memory");
    if (need.device_bytes > static_cast<double>(free_bytes)) {
      std::fprintf(stderr, "calib_cuda: the timed run's device arrays (GEMMs of order %d for --size %d: A, B and C, "
                           "12 n^2 bytes; or the convolution's) and the libraries' 0.5 GiB need %.3g GiB of device memory, more than the %.3g GiB free on %s (of %.3g GiB); "
                           "expected a smaller --size that fits (no trace written)\n",
                   n, size, need.device_bytes / (1 << 30), free_bytes / 1073741824.0, prop.name,
                   total_bytes / 1073741824.0);
      return 2;
    }
  }
  const bool tensor_tf32 = prop.major >= 8;
  std::printf("device: %s, compute capability %d.%d, %d multiprocessors, %.1f GiB\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
  std::map<std::string, std::string> parameters{
      {"device", prop.name},
      {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
      {"multiprocessors", std::to_string(prop.multiProcessorCount)}};

  std::vector<GemmKernel> gemms{{"gemm_fp32", launch_sgemm_tiled, 1, 1, 1, false},
                                {"gemm_fp32_blocked", launch_sgemm_blocked, kBlockedM, kBlockedN, kBlockedK, false}};
  if (tensor_tf32) {
    gemms.push_back({"gemm_tf32_wmma", launch_tf32_wmma, 16, 16, 8, true});
    gemms.push_back({"gemm_tf32_wmma_blocked", launch_tf32_wmma_blocked, kWmmaM, kWmmaN, kWmmaK, true});
  }
#ifdef SIMCORE_HAVE_CUBLAS_HEADER
  CublasReference cublas;
  if (cublas.available()) {
    std::printf("cuBLAS: %s (the reference)\n", cublas.path().c_str());
    parameters["cublas"] = cublas.path();
    gemms.push_back({"cublas_sgemm", [&](int m, int n, int k, const float* a, const float* b, float* c) {
                       if (!cublas.sgemm(m, n, k, a, b, c))
                         check(cudaErrorUnknown, "cublasSgemm");
                     }, 1, 1, 1, false});
    if (tensor_tf32)
      gemms.push_back({"cublas_gemm_tf32", [&](int m, int n, int k, const float* a, const float* b, float* c) {
                         if (!cublas.gemm_tf32(m, n, k, a, b, c))
                           check(cudaErrorUnknown, "cublasGemmEx");
                       }, 1, 1, 1, true});
  } else {
    std::printf("cuBLAS: not used (%s)\n", cublas.why_not().c_str());
    parameters["cublas"] = "not used: " + cublas.why_not();
  }
#else
  parameters["cublas"] = "not used: built without cuBLAS headers";
#endif
  // cuDNN's convolutions, the reference of ours: FP32 (FMA math) and TF32, in each layout.
  struct CudnnCase {
    std::string name;
    bool channels_last, tf32;
  };
  std::vector<CudnnCase> cudnn_cases;
  for (bool tf32 : {false, true})
    for (bool last : {false, true})
      if (!tf32 || tensor_tf32)
        cudnn_cases.push_back({std::string(last ? "cudnn_conv3d_ndhwc" : "cudnn_conv3d_ncdhw") + (tf32 ? "_tf32" : ""),
                               last, tf32});
#ifdef SIMCORE_HAVE_CUDNN_HEADER
  CudnnReference cudnn;
  if (cudnn.available()) {
    std::printf("cuDNN: %s (the reference)\n", cudnn.path().c_str());
    parameters["cudnn"] = cudnn.path();
  } else {
    std::printf("cuDNN: not used (%s)\n", cudnn.why_not().c_str());
    parameters["cudnn"] = "not used: " + cudnn.why_not();
    cudnn_cases.clear();
  }
#else
  parameters["cudnn"] = "not used: built without cuDNN headers";
  cudnn_cases.clear();
#endif

  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v)
      x = u(rng);
    return v;
  };
  bool ok = true;
  auto report = [&](const std::string& what, double err, double tolerance) {
    std::printf("check %-24s max relative error %.2e (tolerance %.0e)%s\n", what.c_str(), err, tolerance,
                err <= tolerance ? "" : "  FAILED");
    parameters["check_" + what] = calibration::parameter_number(err);
    ok = ok && err <= tolerance;
  };

  // Correctness: each GEMM on a problem of the smallest multiples it takes above ragged sizes.
  for (const auto& g : gemms) {
    auto up = [](int v, int multiple) { return (v + multiple - 1) / multiple * multiple; };
    const int m = up(67, g.m_multiple) + g.m_multiple, n = up(45, g.n_multiple), k = up(70, g.k_multiple) + g.k_multiple;
    auto a = random(static_cast<std::size_t>(m) * k), b = random(static_cast<std::size_t>(k) * n);
    const std::vector<float> ref = gemm_reference(m, n, k, a, b);
    DeviceBuffer da(a), db(b), dc(ref.size());
    g.launch(m, n, k, da.p, db.p, dc.p);
    check(cudaGetLastError(), g.name);
    // TF32 keeps 10 bits of mantissa: products of k terms err by about sqrt(k) 2^-11.
    report(g.name, max_rel_error(dc.host(), ref), g.tensor ? 1e-2 : 1e-5);
  }
  const ConvShape check_shape{2, 3, 6, 7, 5, 4, 3, 2, 3};
  for (bool last : {false, true}) {
    const ConvShape& q = check_shape;
    auto in = random(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w);
    auto wt = random(static_cast<std::size_t>(q.k) * q.gemm_k());
    const std::vector<float> ref = conv3d_reference(q, last, in, wt);
    DeviceBuffer din(in), dw(wt), dout(ref.size());
    conv3d_implicit_gemm<<<tiles(q.gemm_m(), q.k, kConvTile, kConvTile), dim3(kConvTile, kConvTile)>>>(q, last, din.p, dw.p, dout.p);
    check(cudaGetLastError(), "conv3d");
    report(last ? "conv3d_ndhwc" : "conv3d_ncdhw", max_rel_error(dout.host(), ref), 1e-5);
#ifdef SIMCORE_HAVE_CUDNN_HEADER
    // cuDNN on the same problem: FP32 within 1e-4 (its search may pick an FFT algorithm, which
    // rounds differently from a direct sum), TF32 within 1e-2. A convolution that cuDNN cannot
    // set up here is left out of the run and says why; one that gives a wrong answer fails it.
    for (auto it = cudnn_cases.begin(); it != cudnn_cases.end();) {
      if (it->channels_last != last) {
        ++it;
        continue;
      }
      CudnnReference::Convolution conv(cudnn, q, last, it->tf32);
      if (!conv.ok()) {
        std::printf("cuDNN: %s not used (%s)\n", it->name.c_str(), conv.why_not().c_str());
        parameters[it->name] = "not used: " + conv.why_not();
        it = cudnn_cases.erase(it);
        continue;
      }
      DeviceBuffer dcw(conv.filters(wt));
      check(cudaMemset(dout.p, 0xff, dout.n * sizeof(float)), "memset");
      if (!conv.run(din.p, dcw.p, dout.p))
        check(cudaErrorUnknown, "cudnnConvolutionForward");
      report(it->name, max_rel_error(dout.host(), ref), it->tf32 ? 1e-2 : 1e-4);
      ++it;
    }
#endif
  }
  // The peak kernels compute what the CPU computes: fmaf rounds once, as the GPU's FMA does,
  // and the TF32 products of small integers are exact. Their grids are two full waves: as many
  // blocks as fit on every multiprocessor at once, twice.
  auto full_waves = [&](auto kernel) {
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kPeakThreads, 0), "occupancy");
    return std::max(1, per_sm) * prop.multiProcessorCount * 2;
  };
  const int fma_blocks = full_waves(fp32_fma_peak), mma_blocks = full_waves(tf32_mma_peak);
  parameters["peak_blocks"] = std::to_string(fma_blocks) + " (FP32), " + std::to_string(mma_blocks) + " (TF32)";
  const float fma_x = 0.999999f, fma_y = 1e-6f;
  {
    DeviceBuffer dout(static_cast<std::size_t>(fma_blocks) * kPeakThreads);
    fp32_fma_peak<<<fma_blocks, kPeakThreads>>>(fma_x, fma_y, dout.p);
    check(cudaGetLastError(), "fp32_fma_peak");
    const auto got = dout.host();
    double worst = 0;
    for (int t : {0, 1, 77, kPeakThreads - 1}) {
      const float s = fma_peak_reference(t, fma_x, fma_y, kPeakChains, kPeakFmaIterations, fma_start);
      worst = std::max(worst, got[t] == s ? 0.0 : std::abs(got[t] - s) / std::abs(s) + 1e-12);
    }
    report("peak_fp32_fma", worst, 0);
  }
  // The TF32 peak is timed on random fragments (integers would draw less power and let the
  // clocks run higher than a real product does).
  std::unique_ptr<DeviceBuffer> mma_random;
  if (tensor_tf32) {
    std::vector<float> src(256);
    for (auto& v : src)
      v = static_cast<float>(static_cast<int>(rng() % 3) - 1);
    const std::vector<float> ref = mma_peak_reference(src, kPeakMmaChains, kPeakMmaIterations);
    DeviceBuffer dsrc(src), dout(static_cast<std::size_t>(mma_blocks) * (kPeakThreads / 32) * 256);
    tf32_mma_peak<<<mma_blocks, kPeakThreads>>>(dsrc.p, dout.p);
    check(cudaGetLastError(), "tf32_mma_peak");
    const auto got = dout.host();
    const std::vector<float> last_warp(got.end() - 256, got.end());
    report("peak_tf32_mma_sync", std::max(max_rel_error(std::vector<float>(got.begin(), got.begin() + 256), ref),
                                          max_rel_error(last_warp, ref)), 0);
    mma_random = std::make_unique<DeviceBuffer>(random(256));
  }
  if (!ok) {
    std::printf("calib_cuda: a kernel disagrees with the CPU reference\n");
    return 1;
  }
  if (check_only)
    return 0;

  // Timings: every kernel on the same problem. A warm-up of at least 200 ms of launches brings
  // the clocks up from idle and tells how long one launch takes; each repetition then times
  // enough launches back to back for 20 ms at least (a short kernel alone would mostly time the
  // launch). Every launch is checked.
  std::map<std::string, calibration::Dataset> datasets;
  std::map<std::string, double> median;
  std::map<std::string, int> launches_per_repetition;
  auto time_kernel = [&](const std::string& name, double flops, const std::function<void()>& launch) {
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "event");
    check(cudaEventCreate(&t1), "event");
    auto elapsed_ms = [&](int launches) {
      check(cudaEventRecord(t0), "event");
      for (int i = 0; i < launches; i++)
        launch();
      check(cudaGetLastError(), name.c_str());
      check(cudaEventRecord(t1), "event");
      check(cudaEventSynchronize(t1), name.c_str());
      float ms = 0;
      check(cudaEventElapsedTime(&ms, t0, t1), "event");
      return static_cast<double>(ms);
    };
    double warm_ms = 0, one_ms = 0;
    for (int launches = 1, round = 0; warm_ms < 200 && round < 64; launches = std::min(2 * launches, 1024), round++) {
      const double ms = elapsed_ms(launches);
      warm_ms += ms;
      one_ms = ms / launches;
    }
    const int launches = std::max(1, static_cast<int>(std::ceil(20 / std::max(one_ms, 1e-3))));
    launches_per_repetition[name] = launches;
    std::vector<double> rates;
    for (int rep = 0; rep < repetitions; rep++)
      rates.push_back(flops * launches / (elapsed_ms(launches) / 1e3) / 1e9);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    median[name] = sorted[sorted.size() / 2];
    datasets[name] = {rates, {rates.size()}, "Gflop/s"};
  };
  {
    DeviceBuffer sink(static_cast<std::size_t>(fma_blocks) * kPeakThreads);
    time_kernel("peak_fp32_fma", 2.0 * kPeakChains * kPeakFmaIterations * fma_blocks * kPeakThreads,
                [&] { fp32_fma_peak<<<fma_blocks, kPeakThreads>>>(fma_x, fma_y, sink.p); });
  }
  if (tensor_tf32) {
    DeviceBuffer sink(static_cast<std::size_t>(mma_blocks) * (kPeakThreads / 32) * 256);
    time_kernel("peak_tf32_mma_sync", 2.0 * 16 * 16 * 8 * kPeakMmaChains * kPeakMmaIterations * mma_blocks * (kPeakThreads / 32),
                [&] { tf32_mma_peak<<<mma_blocks, kPeakThreads>>>(mma_random->p, sink.p); });
  }
  parameters["gemm_size"] = std::to_string(n);
  {
    const auto a = random(static_cast<std::size_t>(n) * n), b = random(static_cast<std::size_t>(n) * n);
    DeviceBuffer da(a), db(b), dc(a.size());
    std::vector<float> first; // the first kernel's product: the others must agree with it
    for (const auto& g : gemms) {
      check(cudaMemset(dc.p, 0xff, dc.n * sizeof(float)), "memset"); // NaN: what a kernel leaves unwritten fails
      time_kernel(g.name, 2.0 * n * static_cast<double>(n) * n, [&] { g.launch(n, n, n, da.p, db.p, dc.p); });
      const auto c = dc.host();
      if (first.empty()) {
        first = c;
        if (!std::all_of(first.begin(), first.end(), [](float v) { return std::isfinite(v); })) {
          std::printf("calib_cuda: %s at %d left values unwritten or not finite\n", g.name, n);
          return 1;
        }
      }
      else {
        const double err = max_rel_error(c, first);
        parameters["agreement_" + std::string(g.name)] = calibration::parameter_number(err);
        if (err > (g.tensor ? 1e-2 : 1e-4)) {
          std::printf("calib_cuda: %s at %d differs from %s by %.2e\n", g.name, n, gemms.front().name, err);
          return 1;
        }
      }
    }
  }
  const ConvShape q = kTimedConv;
  parameters["conv"] = "N 8, C 32, D 16, H 32, W 32, K 64, 3x3x3 filters";
  {
    DeviceBuffer din(random(static_cast<std::size_t>(q.n) * q.c * q.d * q.h * q.w));
    DeviceBuffer dw(random(static_cast<std::size_t>(q.k) * q.gemm_k()));
    DeviceBuffer dout(static_cast<std::size_t>(q.gemm_m()) * q.k);
    const double conv_flops = 2.0 * static_cast<double>(q.gemm_m()) * q.k * q.gemm_k();
    std::vector<float> ours[2]; // our output in each layout: cuDNN's must agree with it
    for (bool last : {false, true}) {
      time_kernel(last ? "conv3d_ndhwc" : "conv3d_ncdhw", conv_flops, [&] {
        conv3d_implicit_gemm<<<tiles(q.gemm_m(), q.k, kConvTile, kConvTile), dim3(kConvTile, kConvTile)>>>(q, last, din.p, dw.p, dout.p);
      });
      ours[last] = dout.host();
    }
#ifdef SIMCORE_HAVE_CUDNN_HEADER
    const std::vector<float> wt = [&] {
      std::vector<float> v(dw.n);
      check(cudaMemcpy(v.data(), dw.p, dw.n * sizeof(float), cudaMemcpyDeviceToHost), "copy to host");
      return v;
    }();
    for (const auto& cc : cudnn_cases) {
      CudnnReference::Convolution conv(cudnn, q, cc.channels_last, cc.tf32);
      if (!conv.ok()) {
        std::printf("cuDNN: %s not used at the timed size (%s)\n", cc.name.c_str(), conv.why_not().c_str());
        parameters[cc.name] = "not used: " + conv.why_not();
        continue;
      }
      parameters["algorithm_" + cc.name] = std::to_string(conv.algorithm()) + " (cudnnConvolutionFwdAlgo_t), " +
                                          conv.math() + ", workspace " + std::to_string(conv.workspace_bytes()) +
                                          " bytes";
      DeviceBuffer dcw(conv.filters(wt));
      check(cudaMemset(dout.p, 0xff, dout.n * sizeof(float)), "memset");
      time_kernel(cc.name, conv_flops, [&] {
        if (!conv.run(din.p, dcw.p, dout.p))
          check(cudaErrorUnknown, "cudnnConvolutionForward");
      });
      const double err = max_rel_error(dout.host(), ours[cc.channels_last]);
      parameters["agreement_" + cc.name] = calibration::parameter_number(err);
      if (err > (cc.tf32 ? 1e-2 : 1e-4)) {
        std::printf("calib_cuda: %s differs from our convolution by %.2e\n", cc.name.c_str(), err);
        return 1;
      }
    }
#endif
  }

  for (const auto& [name, launches] : launches_per_repetition)
    parameters["launches_per_repetition_" + name] = std::to_string(launches);
  auto share = [&](const std::string& name, const std::string& of) {
    return median.count(of) && median.at(of) > 0 ? median.at(name) / median.at(of) : NAN;
  };
  auto percent = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, std::isfinite(v) ? "%.0f %%" : "-", 100 * v);
    return std::string(buf);
  };
  std::printf("%-24s %10s %10s %10s   (median of %d; GEMM %d^3)\n", "kernel", "Gflop/s", "of peak", "of library",
              repetitions, n);
  for (const auto& [name, rate] : median) {
    const bool tensor = name.find("tf32") != std::string::npos;
    const std::string peak = tensor ? "peak_tf32_mma_sync" : "peak_fp32_fma";
    // Ours against the library's: GEMMs against cuBLAS, convolutions against cuDNN's FP32 one.
    const bool conv = name.rfind("conv3d", 0) == 0;
    const std::string lib = conv ? "cudnn_" + name : tensor ? "cublas_gemm_tf32" : "cublas_sgemm";
    std::printf("%-24s %10.1f %10s %10s\n", name.c_str(), rate, percent(share(name, peak)).c_str(),
                name.rfind("gemm", 0) == 0 || conv ? percent(share(name, lib)).c_str() : "-");
  }
  if (out.empty())
    return 0;
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  trace.attributes["gpu"] = prop.name;
  // The device code's compiler and the CUDA it ran on (the compiler attribute is the host
  // compiler's, which built the rest).
  trace.attributes["cuda_compiler"] = "nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                      std::to_string(__CUDACC_VER_MINOR__) + "." + std::to_string(__CUDACC_VER_BUILD__);
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  trace.attributes["cuda_runtime"] = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  // cudaDriverGetVersion gives the newest CUDA the driver supports (12.4), not its release.
  trace.attributes["cuda_driver"] = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  const std::string release = calibration::nvidia_driver_release();
  trace.attributes["nvidia_driver"] =
      !release.empty()                                       ? release
      : std::ifstream("/proc/driver/nvidia/version").good() ? "unknown (no release in /proc/driver/nvidia/version)"
                                                             : "unknown (no /proc/driver/nvidia/version)";
  trace.benchmarks["cuda"] = calibration::Benchmark{"cuda", parameters, datasets};
  try {
#ifdef SIMCORE_CUDA_NO_HDF5
    calibration::write_trace_json(out, trace);
#else
    calibration::write_trace(out, trace);
#endif
  } catch (const simcore::Error& err) {
    std::fprintf(stderr, "calib_cuda: %s\n", err.what());
    return 2;
  }
  std::printf("trace: %s\n", out.c_str());
  return 0;
}
