/* An in-memory key-value store for the memory-bound calibration benchmark: open addressing
 * over 64-byte buckets (16 x 32-bit or 8 x 64-bit keys), the slots split into two disjoint
 * regions: two hash functions pick candidate buckets in the primary region, a third one in
 * the secondary region. A lookup compares a whole bucket at once with AVX-512 where the CPU
 * has it (a scalar loop otherwise, same answers). Inserts are lock-free (a compare-and-swap
 * claims a slot, then the value is stored: a lookup racing with the insert of the same key
 * may find the key before its value); keys are float or double, compared bit for bit; one
 * bit pattern (a NaN) is reserved for empty slots. No deletion. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace calibration {

template <typename Key> class SimdHashTable {
  static_assert(std::is_same_v<Key, float> || std::is_same_v<Key, double>, "float or double keys");

public:
  using Bits = std::conditional_t<sizeof(Key) == 4, std::uint32_t, std::uint64_t>;
  static constexpr std::size_t kSlots = 64 / sizeof(Key); ///< keys per bucket
  static constexpr Bits kEmpty = ~Bits{0};                ///< a NaN no key may be

  /** `buckets` buckets, `secondary_share` of them (0..1) in the secondary region. */
  SimdHashTable(std::size_t buckets, double secondary_share = 0.25);

  /** False when the key's three buckets are full (an insertion failure) or the key is the
   *  reserved pattern. A key inserted twice keeps its first value. */
  bool insert(Key key, std::uint64_t value);
  /** The value, or false. */
  bool find(Key key, std::uint64_t& value) const;
  /** Many lookups, the buckets of later keys fetched ahead (software prefetch, so that
   *  memory accesses of different lookups overlap); found[i] = 1 and values[i] set on a hit.
   *  Returns the number of hits. */
  std::size_t find_many(const Key* keys, std::size_t n, std::uint64_t* values, unsigned char* found) const;

  std::size_t capacity() const { return buckets_ * kSlots; }
  std::size_t bytes() const { return buckets_ * 64 + capacity() * sizeof(std::uint64_t); }
  bool simd() const { return simd_; }
  /** Force the scalar path (for comparing both on one CPU). */
  void set_simd(bool on) { simd_ = on && simd_available(); }
  static bool simd_available();

private:
  std::size_t bucket_of(Bits bits, int which) const;
  long find_in(std::size_t bucket, Bits bits) const; ///< slot, or -1

  std::size_t buckets_, primary_;
  Bits* keys_ = nullptr; ///< buckets_ x kSlots, 64-byte aligned; atomics through __atomic builtins
  std::vector<std::uint64_t> values_;
  bool simd_;

public:
  ~SimdHashTable();
  SimdHashTable(const SimdHashTable&) = delete;
  SimdHashTable& operator=(const SimdHashTable&) = delete;
};

extern template class SimdHashTable<float>;
extern template class SimdHashTable<double>;

} // namespace calibration
