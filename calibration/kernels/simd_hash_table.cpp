#include "calibration/simd_hash_table.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace calibration {

namespace {

/** Three independent mixers (splitmix64 finalisers with different constants). */
inline std::uint64_t mix(std::uint64_t x, int which)
{
  static constexpr std::uint64_t k1[3] = {0xbf58476d1ce4e5b9ULL, 0xd6e8feb86659fd93ULL, 0x94d049bb133111ebULL};
  static constexpr std::uint64_t k2[3] = {0x94d049bb133111ebULL, 0xbf58476d1ce4e5b9ULL, 0xd6e8feb86659fd93ULL};
  x += 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(which + 1);
  x = (x ^ (x >> 30)) * k1[which];
  x = (x ^ (x >> 27)) * k2[which];
  return x ^ (x >> 31);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) long find_avx512_32(const std::uint32_t* bucket, std::uint32_t bits)
{
  const __m512i keys = _mm512_load_si512(bucket);
  const __mmask16 hit = _mm512_cmpeq_epi32_mask(keys, _mm512_set1_epi32(static_cast<int>(bits)));
  return hit ? __builtin_ctz(hit) : -1;
}
__attribute__((target("avx512f"))) long find_avx512_64(const std::uint64_t* bucket, std::uint64_t bits)
{
  const __m512i keys = _mm512_load_si512(bucket);
  const __mmask8 hit = _mm512_cmpeq_epi64_mask(keys, _mm512_set1_epi64(static_cast<long long>(bits)));
  return hit ? __builtin_ctz(hit) : -1;
}
#endif

} // namespace

template <typename Key> bool SimdHashTable<Key>::simd_available()
{
#if defined(__x86_64__)
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
#else
  return false;
#endif
}

template <typename Key>
SimdHashTable<Key>::SimdHashTable(std::size_t buckets, double secondary_share)
    : buckets_(buckets < 2 ? 2 : buckets), values_(buckets_ * kSlots), simd_(simd_available())
{
  primary_ = static_cast<std::size_t>(static_cast<double>(buckets_) * (1 - secondary_share));
  primary_ = primary_ < 1 ? 1 : (primary_ >= buckets_ ? buckets_ - 1 : primary_);
  keys_ = static_cast<Bits*>(std::aligned_alloc(64, buckets_ * 64));
  if (!keys_)
    throw std::bad_alloc();
  std::memset(static_cast<void*>(keys_), 0xff, buckets_ * 64); // every slot kEmpty
}

template <typename Key> SimdHashTable<Key>::~SimdHashTable() { std::free(keys_); }

template <typename Key> std::size_t SimdHashTable<Key>::bucket_of(Bits bits, int which) const
{
  const std::uint64_t h = mix(bits, which);
  if (which < 2) // primary region: buckets [0, primary_)
    return static_cast<std::size_t>((static_cast<unsigned __int128>(h) * primary_) >> 64);
  return primary_ + static_cast<std::size_t>((static_cast<unsigned __int128>(h) * (buckets_ - primary_)) >> 64);
}

template <typename Key> long SimdHashTable<Key>::find_in(std::size_t bucket, Bits bits) const
{
  const Bits* b = keys_ + bucket * kSlots;
#if defined(__x86_64__)
  if (simd_) {
    if constexpr (sizeof(Key) == 4)
      return find_avx512_32(b, bits);
    else
      return find_avx512_64(b, bits);
  }
#endif
  for (std::size_t i = 0; i < kSlots; i++)
    if (__atomic_load_n(b + i, __ATOMIC_ACQUIRE) == bits)
      return static_cast<long>(i);
  return -1;
}

template <typename Key> bool SimdHashTable<Key>::insert(Key key, std::uint64_t value)
{
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  if (bits == kEmpty)
    return false;
  for (int which = 0; which < 3; which++) {
    const std::size_t bucket = bucket_of(bits, which);
    Bits* b = keys_ + bucket * kSlots;
    for (std::size_t i = 0; i < kSlots; i++) {
      Bits seen = __atomic_load_n(b + i, __ATOMIC_ACQUIRE);
      if (seen == bits)
        return true; // already there
      if (seen != kEmpty)
        continue;
      // Claim the slot, then write the value: concurrent inserts never share a slot.
      Bits expected = kEmpty;
      if (__atomic_compare_exchange_n(b + i, &expected, bits, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&values_[bucket * kSlots + i], value, __ATOMIC_RELEASE);
        return true;
      }
      if (expected == bits)
        return true; // another thread inserted the same key
    }
  }
  return false; // all three buckets full
}

template <typename Key> bool SimdHashTable<Key>::find(Key key, std::uint64_t& value) const
{
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  if (bits == kEmpty)
    return false;
  for (int which = 0; which < 3; which++) {
    const std::size_t bucket = bucket_of(bits, which);
    const long slot = find_in(bucket, bits);
    if (slot >= 0) {
      value = __atomic_load_n(&values_[bucket * kSlots + static_cast<std::size_t>(slot)], __ATOMIC_ACQUIRE);
      return true;
    }
    // Inserts fill a key's buckets in order: a bucket with an empty slot ends the search.
    if (find_in(bucket, kEmpty) >= 0)
      return false;
  }
  return false;
}

template <typename Key>
std::size_t SimdHashTable<Key>::find_many(const Key* keys, std::size_t n, std::uint64_t* values,
                                          unsigned char* found) const
{
  constexpr std::size_t kAhead = 16; // lookups in flight
  auto prefetch = [&](std::size_t i) {
    Bits bits;
    std::memcpy(&bits, &keys[i], sizeof bits);
    for (int which = 0; which < 3; which++)
      __builtin_prefetch(keys_ + bucket_of(bits, which) * kSlots, 0, 0);
  };
  for (std::size_t i = 0; i < n && i < kAhead; i++)
    prefetch(i);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; i++) {
    if (i + kAhead < n)
      prefetch(i + kAhead);
    found[i] = find(keys[i], values[i]) ? 1 : 0;
    hits += found[i];
  }
  return hits;
}

template class SimdHashTable<float>;
template class SimdHashTable<double>;

} // namespace calibration
