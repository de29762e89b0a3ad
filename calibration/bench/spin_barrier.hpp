/* A barrier for a few threads pinned to their own cores: spinning, so that a thread leaves it
 * within a cache-line transfer of the last arrival (a futex wake-up would add microseconds to
 * copies that take a fraction of one). C++17 has no std::barrier. */
#pragma once

#include <atomic>

namespace calibration {

class SpinBarrier {
public:
  explicit SpinBarrier(int threads) : threads_(threads) {}
  void wait()
  {
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) {
    }
  }

private:
  const int threads_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<int> generation_{0};
};

} // namespace calibration
