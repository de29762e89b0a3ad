/* CUDA on the CPU, for the tests only: enough of the CUDA language and of WMMA for the kernels of
 * calib_cuda (the .cuh files in calibration/cuda) to compile as host code and run, so that their index
 * arithmetic, tiling, shared-memory staging and fragment use are checked on a machine without a
 * GPU. A block runs as blockDim threads (std::thread) that meet at __syncthreads; blocks run
 * one after another, so `__shared__` becomes `static`. A WMMA fragment holds its whole tile in
 * every thread of the warp (the real one spreads it over the lanes); element-wise loops over
 * `x[]` stay valid since all fragments of a kind share the layout. The WMMA rules that the
 * hardware enforces silently (32-byte aligned tile pointers, a leading dimension that is a
 * multiple of 16 bytes) are checked and reported through violations(). Nothing here says how
 * fast a kernel is. Include this before the kernels. */
#pragma once

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define __CUDA_ARCH__ 800 // the tensor-core paths (sm_80 and later)
#define __global__
#define __host__
#define __device__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

namespace cuda_on_cpu {

inline thread_local dim3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;

/** What a kernel did that the hardware would not take (empty when nothing). */
inline std::vector<std::string>& violations()
{
  static std::vector<std::string> v;
  return v;
}
inline std::mutex& violations_mutex()
{
  static std::mutex m;
  return m;
}
inline void violation(const std::string& what)
{
  std::lock_guard<std::mutex> lock(violations_mutex());
  if (violations().size() < 16)
    violations().push_back(what);
}

/** The threads of a block meeting at __syncthreads. */
class Barrier {
public:
  explicit Barrier(unsigned count) : count_(count) {}
  void wait()
  {
    std::unique_lock<std::mutex> lock(m_);
    const unsigned generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      generation_++;
      cv_.notify_all();
    } else
      cv_.wait(lock, [&] { return generation != generation_; });
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned count_, arrived_ = 0, generation_ = 0;
};
inline Barrier*& block_barrier()
{
  static Barrier* b = nullptr;
  return b;
}

/** kernel<<<grid, block>>>(args...): the blocks in turn, each as block.x * block.y threads. */
template <class... Params, class... Args>
void launch(dim3 grid, dim3 block, void (*kernel)(Params...), Args... args)
{
  grid_dim = grid;
  block_dim = block;
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        Barrier barrier(threads);
        block_barrier() = &barrier;
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; t++)
          pool.emplace_back([&, t] {
            block_idx = dim3(bx, by, bz);
            thread_idx = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
            kernel(args...);
          });
        for (auto& th : pool)
          th.join();
        block_barrier() = nullptr;
      }
}

/** The thread's lane in its warp (threads numbered x fastest, as CUDA does). */
inline unsigned lane()
{
  return (thread_idx.x + block_dim.x * (thread_idx.y + block_dim.y * thread_idx.z)) % 32;
}

} // namespace cuda_on_cpu

/** The kernels' 16-byte accesses (load_float4, store_float4) must be aligned, as on a GPU. */
#define SIMCORE_CUDA_CHECK_ALIGNED(pointer, bytes)                                                            \
  do {                                                                                                         \
    if (reinterpret_cast<std::uintptr_t>(pointer) % (bytes) != 0)                                             \
      cuda_on_cpu::violation(std::string("a ") + #bytes + "-byte access to " + #pointer + " is not aligned"); \
  } while (0)

#define threadIdx (cuda_on_cpu::thread_idx)
#define blockIdx (cuda_on_cpu::block_idx)
#define blockDim (cuda_on_cpu::block_dim)
#define gridDim (cuda_on_cpu::grid_dim)

inline void __syncthreads() { cuda_on_cpu::block_barrier()->wait(); }

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
} // namespace precision
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K> struct Shape;
template <int M, int N, int K> struct Shape<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K> struct Shape<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K> struct Shape<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
  static constexpr int rows = Shape<Use, M, N, K>::rows, cols = Shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  float x[num_elements];
};

/** Round to TF32 (10 bits of mantissa), to nearest, ties away from zero (cvt.rna.tf32.f32). */
inline float __float_to_tf32(float v)
{
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u)
    bits = (bits + 0x1000u) & ~0x1fffu;
  std::memcpy(&v, &bits, sizeof bits);
  return v;
}

/** What the tensor cores read of an FP32 register: its TF32 bits, the rest dropped. */
inline float tf32_bits(float v)
{
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= ~0x1fffu;
  std::memcpy(&v, &bits, sizeof bits);
  return v;
}

inline void check_tile(const void* p, unsigned ldm, const char* what)
{
  if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0)
    cuda_on_cpu::violation(std::string(what) + ": tile pointer not 32-byte aligned");
  if (ldm % 4 != 0)
    cuda_on_cpu::violation(std::string(what) + ": leading dimension " + std::to_string(ldm) +
                           " not a multiple of 4 floats");
}

template <class Use, int M, int N, int K, class T, class L>
void fill_fragment(fragment<Use, M, N, K, T, L>& f, float v)
{
  for (float& e : f.x)
    e = v;
}

template <class Use, int M, int N, int K, class T>
void load_matrix_sync(fragment<Use, M, N, K, T, row_major>& f, const float* p, unsigned ldm)
{
  check_tile(p, ldm, "load_matrix_sync");
  using F = fragment<Use, M, N, K, T, row_major>;
  for (int r = 0; r < F::rows; r++)
    for (int c = 0; c < F::cols; c++)
      f.x[r * F::cols + c] = p[static_cast<long>(r) * ldm + c];
}

template <int M, int N, int K, class T>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout)
{
  check_tile(p, ldm, "store_matrix_sync");
  if (layout != mem_row_major)
    cuda_on_cpu::violation("store_matrix_sync: only row-major is emulated");
  if (cuda_on_cpu::lane() != 0) // every lane holds the tile; one writes it
    return;
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++)
      p[static_cast<long>(r) * ldm + c] = f.x[r * N + c];
}

template <int M, int N, int K, class T, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LA>& a,
              const fragment<matrix_b, M, N, K, T, LB>& b, const fragment<accumulator, M, N, K, float>& c)
{
  float out[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float acc = c.x[i * N + j];
      for (int k = 0; k < K; k++)
        acc += tf32_bits(a.x[i * K + k]) * tf32_bits(b.x[k * N + j]);
      out[i * N + j] = acc;
    }
  std::memcpy(d.x, out, sizeof out);
}

} // namespace wmma
} // namespace nvcuda
