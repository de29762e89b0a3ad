/* An allocator that puts large blocks on transparent huge pages, as the SIMD table does its
 * own: absl::flat_hash_map with it shows what huge pages alone are worth (calib_hash).
 * Private to the benchmark. */
#pragma once

#include "calibration/simd_hash_table.hpp"

#include <cstddef>

namespace calibration {

template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(calibration::huge_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { calibration::huge_free(p, n * sizeof(T)); }
  template <typename U> bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U> bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

} // namespace calibration
