/* cuBLAS as the reference of the GEMM kernels, loaded at run time (dlopen), so that calib_cuda
 * neither links nor needs it: where the library is found (SIMCORE_CUBLAS names the file, else
 * the loader's search path), its SGEMM (FP32) and GemmEx with TF32 compute are checked and
 * timed beside our kernels; where not, the run says so and goes on without them. */
#pragma once

#include "library_loader.hpp"

#include <cublas_api.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace calibration_cuda {

class CublasReference {
public:
  CublasReference()
  {
    const LoadedLibrary loaded =
        load_library("SIMCORE_CUBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "libcublas.so");
    lib_ = loaded.handle;
    path_ = loaded.path;
    if (!lib_) {
      why_ = loaded.why_not;
      return;
    }
    create_ = reinterpret_cast<Create>(dlsym(lib_, "cublasCreate_v2"));
    destroy_ = reinterpret_cast<Destroy>(dlsym(lib_, "cublasDestroy_v2"));
    sgemm_ = reinterpret_cast<Sgemm>(dlsym(lib_, "cublasSgemm_v2"));
    gemm_ex_ = reinterpret_cast<GemmEx>(dlsym(lib_, "cublasGemmEx"));
    if (!create_ || !destroy_ || !sgemm_ || !gemm_ex_) {
      why_ = path_ + " lacks cublasCreate_v2, cublasDestroy_v2, cublasSgemm_v2 or cublasGemmEx";
      return;
    }
    if (create_(&handle_) != CUBLAS_STATUS_SUCCESS) {
      why_ = path_ + ": cublasCreate failed";
      handle_ = nullptr;
    }
  }
  ~CublasReference()
  {
    if (handle_)
      destroy_(handle_);
    // The library stays loaded: the runtime may still call into it at exit.
  }
  CublasReference(const CublasReference&) = delete;
  CublasReference& operator=(const CublasReference&) = delete;

  bool available() const { return handle_ != nullptr; }
  /** Why it is not available; empty when it is. */
  const std::string& why_not() const { return why_; }
  const std::string& path() const { return path_; }

  /** Row-major C = A B (m x k times k x n) in FP32; cuBLAS is column-major, so it computes
   *  C^T = B^T A^T on the same memory. */
  bool sgemm(int m, int n, int k, const float* a, const float* b, float* c) const
  {
    const float one = 1, zero = 0;
    return sgemm_(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n) == CUBLAS_STATUS_SUCCESS;
  }
  /** The same with the inputs rounded to TF32 on the tensor cores, FP32 accumulation. */
  bool gemm_tf32(int m, int n, int k, const float* a, const float* b, float* c) const
  {
    const float one = 1, zero = 0;
    return gemm_ex_(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_32F, n, a, CUDA_R_32F, k, &zero, c,
                    CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  }

private:
  // The library's own declarations, so that the compiler checks the types.
  using Create = decltype(&cublasCreate_v2);
  using Destroy = decltype(&cublasDestroy_v2);
  using Sgemm = decltype(&cublasSgemm_v2);
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t); // overloaded in C++
  void* lib_ = nullptr;
  std::string path_, why_;
  cublasHandle_t handle_ = nullptr;
  Create create_ = nullptr;
  Destroy destroy_ = nullptr;
  Sgemm sgemm_ = nullptr;
  GemmEx gemm_ex_ = nullptr;
};

} // namespace calibration_cuda
