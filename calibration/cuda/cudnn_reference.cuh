/* cuDNN as the reference of the 3D convolution, loaded at run time (dlopen) as cuBLAS is for
 * the GEMMs (cublas_reference.cuh): where the library is found (SIMCORE_CUDNN names the file,
 * else the loader's search path), the same convolution (stride 1, no padding, the same shape)
 * is run by cuDNN in each layout, with FP32 arithmetic (FMA math) and with TF32 tensor cores
 * allowed, on the algorithm that cuDNN's own search times fastest, as a framework that
 * benchmarks its convolutions would pick. In channels-last the filters go to cuDNN as
 * k x (t r s c), the layout its channels-last kernels take (a framework converts them once);
 * in channels-first as k x (c t r s), ours. */
#pragma once

#include "calibration/conv3d_implicit_gemm.hpp"
#include "library_loader.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace calibration_cuda {

class CudnnReference {
public:
  CudnnReference()
  {
    const LoadedLibrary loaded = load_library("SIMCORE_CUDNN", {"libcudnn.so.9", "libcudnn.so"}, "libcudnn.so.9");
    lib_ = loaded.handle;
    path_ = loaded.path;
    if (!lib_) {
      why_ = loaded.why_not;
      return;
    }
    bool all = true;
    auto bind = [&](auto& f, const char* symbol) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib_, symbol));
      all = all && f != nullptr;
    };
    bind(f_.create, "cudnnCreate");
    bind(f_.destroy, "cudnnDestroy");
    bind(f_.version, "cudnnGetVersion");
    bind(f_.error_string, "cudnnGetErrorString");
    bind(f_.create_tensor, "cudnnCreateTensorDescriptor");
    bind(f_.destroy_tensor, "cudnnDestroyTensorDescriptor");
    bind(f_.set_tensor, "cudnnSetTensorNdDescriptorEx");
    bind(f_.create_filter, "cudnnCreateFilterDescriptor");
    bind(f_.destroy_filter, "cudnnDestroyFilterDescriptor");
    bind(f_.set_filter, "cudnnSetFilterNdDescriptor");
    bind(f_.create_conv, "cudnnCreateConvolutionDescriptor");
    bind(f_.destroy_conv, "cudnnDestroyConvolutionDescriptor");
    bind(f_.set_conv, "cudnnSetConvolutionNdDescriptor");
    bind(f_.set_math, "cudnnSetConvolutionMathType");
    bind(f_.find, "cudnnFindConvolutionForwardAlgorithm");
    bind(f_.forward, "cudnnConvolutionForward");
    if (!all) {
      why_ = path_ + " lacks a function of cuDNN's convolution API (cudnnConvolutionForward and its descriptors)";
      return;
    }
    if (f_.create(&handle_) != CUDNN_STATUS_SUCCESS) {
      why_ = path_ + ": cudnnCreate failed";
      handle_ = nullptr;
      return;
    }
    path_ += " (cuDNN " + std::to_string(f_.version()) + ")";
  }
  ~CudnnReference()
  {
    if (handle_)
      f_.destroy(handle_);
  }
  CudnnReference(const CudnnReference&) = delete;
  CudnnReference& operator=(const CudnnReference&) = delete;

  bool available() const { return handle_ != nullptr; }
  const std::string& why_not() const { return why_; }
  const std::string& path() const { return path_; }

  /** One convolution, described to cuDNN and with its algorithm chosen. */
  class Convolution {
  public:
    Convolution(const CudnnReference& lib, const calibration::ConvShape& q, bool channels_last, bool tf32)
      : lib_(lib), q_(q), channels_last_(channels_last)
    {
      const auto& f = lib.f_;
      const cudnnTensorFormat_t layout = channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
      const int in_dims[5] = {q.n, q.c, q.d, q.h, q.w};
      const int out_dims[5] = {q.n, q.k, q.od(), q.oh(), q.ow()};
      const int filter_dims[5] = {q.k, q.c, q.t, q.r, q.s}; // the format says how they lie in memory
      const int pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
      ok_ = f.create_tensor(&x_) == CUDNN_STATUS_SUCCESS && f.create_tensor(&y_) == CUDNN_STATUS_SUCCESS &&
            f.create_filter(&w_) == CUDNN_STATUS_SUCCESS && f.create_conv(&conv_) == CUDNN_STATUS_SUCCESS;
      if (!ok_)
        why_ = "descriptors not created";
      ok_ = ok_ && step(f.set_tensor(x_, layout, CUDNN_DATA_FLOAT, 5, in_dims), "input descriptor") &&
            step(f.set_tensor(y_, layout, CUDNN_DATA_FLOAT, 5, out_dims), "output descriptor") &&
            step(f.set_filter(w_, CUDNN_DATA_FLOAT, layout, 5, filter_dims), "filter descriptor") &&
            step(f.set_conv(conv_, 3, pad, stride, dilation, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                 "convolution descriptor") &&
            step(f.set_math(conv_, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "math type");
      if (!ok_)
        return;
      // cuDNN's search runs every algorithm that applies and returns them fastest first.
      cudnnConvolutionFwdAlgoPerf_t found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int count = 0;
      if (!step(f.find(lib.handle_, x_, w_, conv_, y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, found),
                "algorithm search")) {
        ok_ = false; // left out with the reason, not run with a default algorithm
        return;
      }
      ok_ = false;
      cudnnMathType_t math = tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
      for (int i = 0; i < count && !ok_; i++)
        if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].memory <= (std::size_t(4) << 30)) {
          algo_ = found[i].algo;
          workspace_bytes_ = found[i].memory;
          math = found[i].mathType;
          math_ = math;
          ok_ = true;
        }
      if (!ok_) {
        why_ = "no algorithm ran";
        return;
      }
      // The variant the search timed: an algorithm may have run with another math type than
      // the one asked (cuDNN reports which), and the forward call takes the one set.
      if (!step(f.set_math(conv_, math), "math type of the algorithm chosen")) {
        ok_ = false;
        return;
      }
      if (workspace_bytes_ > 0 && cudaMalloc(&workspace_, workspace_bytes_) != cudaSuccess) {
        ok_ = false;
        why_ = "workspace of " + std::to_string(workspace_bytes_) + " bytes not allocated";
      }
    }
    ~Convolution()
    {
      const auto& f = lib_.f_;
      cudaFree(workspace_);
      if (conv_)
        f.destroy_conv(conv_);
      if (w_)
        f.destroy_filter(w_);
      if (y_)
        f.destroy_tensor(y_);
      if (x_)
        f.destroy_tensor(x_);
    }
    Convolution(const Convolution&) = delete;
    Convolution& operator=(const Convolution&) = delete;

    bool ok() const { return ok_; }
    const std::string& why_not() const { return why_; }
    int algorithm() const { return static_cast<int>(algo_); }
    std::size_t workspace_bytes() const { return workspace_bytes_; }
    /** The math type of the algorithm chosen: TF32 asked, cuDNN may still pick an FP32 one. */
    const char* math() const
    {
      switch (math_) {
        case CUDNN_TENSOR_OP_MATH: return "CUDNN_TENSOR_OP_MATH";
        case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
        case CUDNN_FMA_MATH: return "CUDNN_FMA_MATH";
        default: return "CUDNN_DEFAULT_MATH";
      }
    }

    /** Filters as cuDNN takes them in this layout, from ours (k x (c t r s)). */
    std::vector<float> filters(const std::vector<float>& ours) const
    {
      if (!channels_last_)
        return ours;
      const calibration::ConvShape& q = q_;
      std::vector<float> out(ours.size());
      for (int k = 0; k < q.k; k++)
        for (int c = 0; c < q.c; c++)
          for (int t = 0; t < q.t; t++)
            for (int r = 0; r < q.r; r++)
              for (int s = 0; s < q.s; s++)
                out[(((static_cast<std::size_t>(k) * q.t + t) * q.r + r) * q.s + s) * q.c + c] =
                    ours[(((static_cast<std::size_t>(k) * q.c + c) * q.t + t) * q.r + r) * q.s + s];
      return out;
    }
    /** out = the convolution of `in` with `filters` (as filters() gives them). */
    bool run(const float* in, const float* filters, float* out) const
    {
      const float one = 1, zero = 0;
      return lib_.f_.forward(lib_.handle_, &one, x_, in, w_, filters, conv_, algo_, workspace_, workspace_bytes_,
                             &zero, y_, out) == CUDNN_STATUS_SUCCESS;
    }

  private:
    bool step(cudnnStatus_t status, const char* what)
    {
      if (status == CUDNN_STATUS_SUCCESS)
        return true;
      why_ = std::string(what) + ": " + lib_.f_.error_string(status);
      return false;
    }
    const CudnnReference& lib_;
    calibration::ConvShape q_;
    bool channels_last_;
    bool ok_ = false;
    cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
    std::string why_;
    cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
    cudnnFilterDescriptor_t w_ = nullptr;
    cudnnConvolutionDescriptor_t conv_ = nullptr;
    cudnnConvolutionFwdAlgo_t algo_{};
    std::size_t workspace_bytes_ = 0;
    void* workspace_ = nullptr;
  };

private:
  // The library's own declarations, so that the compiler checks the types.
  struct Functions {
    decltype(&cudnnCreate) create = nullptr;
    decltype(&cudnnDestroy) destroy = nullptr;
    decltype(&cudnnGetVersion) version = nullptr;
    decltype(&cudnnGetErrorString) error_string = nullptr;
    decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
    decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
    decltype(&cudnnSetTensorNdDescriptorEx) set_tensor = nullptr;
    decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
    decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
    decltype(&cudnnSetFilterNdDescriptor) set_filter = nullptr;
    decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
    decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
    decltype(&cudnnSetConvolutionNdDescriptor) set_conv = nullptr;
    decltype(&cudnnSetConvolutionMathType) set_math = nullptr;
    decltype(&cudnnFindConvolutionForwardAlgorithm) find = nullptr;
    decltype(&cudnnConvolutionForward) forward = nullptr;
  };
  void* lib_ = nullptr;
  std::string path_, why_;
  cudnnHandle_t handle_ = nullptr;
  Functions f_;
};

} // namespace calibration_cuda
