#include "calibration/simd_hash_table.hpp"
#include "hash_table_pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include <sys/mman.h>


namespace calibration {

namespace {

/** The AVX-512 bucket compare, out of line (its file alone is built for AVX-512). */
template <typename Bits> struct Avx512Probe {
  static long probe(const Bits* bucket, Bits bits) { return probe_avx512(bucket, bits); }
};

} // namespace

void* huge_alloc(std::size_t bytes, bool* huge)
{
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (huge)
    *huge = false;
  if (bytes == 0)
    bytes = 1;
  if (bytes < kHuge) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    return p;
  }
  // Aligned to 2 MiB, so that every 2 MiB of the range can be one huge page (an unaligned
  // 4 MiB range holds one): map 2 MiB more, then unmap the ends.
  const std::size_t length = (bytes + kHuge - 1) / kHuge * kHuge;
  void* raw = mmap(nullptr, length + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
  if (aligned > start)
    munmap(raw, aligned - start);
  if (aligned + length < start + length + kHuge)
    munmap(reinterpret_cast<void*>(aligned + length), start + length + kHuge - aligned - length);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  // Transparent huge pages in "madvise" mode back only the ranges that ask for them; the
  // pages come when first touched.
  if (madvise(p, length, MADV_HUGEPAGE) == 0 && huge)
    *huge = true;
#endif
  return p;
}

void huge_free(void* p, std::size_t bytes)
{
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (p)
    munmap(p, bytes < kHuge ? (bytes == 0 ? 1 : bytes) : (bytes + kHuge - 1) / kHuge * kHuge);
}


double huge_page_share(const void* p, std::size_t bytes)
{
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (!f)
    return -1;
  const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
  double huge_bytes = 0;
  std::uintptr_t start = 0, end = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long a = 0, b = 0, kb = 0;
    if (std::sscanf(line, "%lx-%lx ", &a, &b) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      start = a, end = b; // a mapping's header line
    } else if (std::sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 && end > start) {
      const std::uintptr_t from = std::max(start, lo), to = std::min(end, hi);
      if (to > from)
        huge_bytes += static_cast<double>(kb) * 1024.0 * static_cast<double>(to - from) / static_cast<double>(end - start);
    }
  }
  std::fclose(f);
  return bytes ? huge_bytes / static_cast<double>(bytes) : 0.0;
}

template <typename Key> double SimdHashTable<Key>::huge_page_share() const
{
  const double k = calibration::huge_page_share(keys_, keys_bytes_),
               v = calibration::huge_page_share(values_, values_bytes_),
               f = calibration::huge_page_share(overflow_, buckets_ * sizeof *overflow_);
  if (k < 0 || v < 0 || f < 0)
    return -1;
  const double kb = static_cast<double>(keys_bytes_), vb = static_cast<double>(values_bytes_),
               fb = static_cast<double>(buckets_ * sizeof *overflow_);
  return (k * kb + v * vb + f * fb) / (kb + vb + fb);
}

template <typename Key> bool SimdHashTable<Key>::simd_available()
{
#if defined(__x86_64__)
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return yes;
#else
  return false;
#endif
}

template <typename Key>
SimdHashTable<Key>::SimdHashTable(std::size_t buckets, double secondary_share)
    : buckets_(buckets < 2 ? 2 : buckets), simd_(simd_available())
{
  if (!(secondary_share >= 0 && secondary_share < 1))
    throw std::invalid_argument("SimdHashTable: secondary share " + std::to_string(secondary_share) +
                                "; expected a value in [0, 1)");
  if (buckets_ > std::size_t{0xffffffff})
    throw std::invalid_argument("SimdHashTable: " + std::to_string(buckets_) +
                                " buckets; expected at most 2^32 - 1 (256 GiB of keys)");
  primary_ = static_cast<std::size_t>(static_cast<double>(buckets_) * (1 - secondary_share));
  primary_ = primary_ < 1 ? 1 : (primary_ >= buckets_ ? buckets_ - 1 : primary_);
  keys_bytes_ = buckets_ * 64;
  values_bytes_ = capacity() * sizeof(std::uint64_t);
  // mmap returns page-aligned memory: every bucket is 64-byte aligned.
  keys_ = static_cast<Bits*>(huge_alloc(keys_bytes_, &huge_));
  try {
    values_ = static_cast<std::uint64_t*>(huge_alloc(values_bytes_));
  } catch (...) {
    huge_free(keys_, keys_bytes_);
    throw;
  }
  // The filters on huge pages too: every lookup reads one at random (8 MiB for 2^22 buckets,
  // 2048 small pages, a page walk per lookup where the TLB misses).
  try {
    overflow_ = static_cast<std::uint16_t*>(huge_alloc(buckets_ * sizeof *overflow_)); // zeroed by mmap
  } catch (...) {
    huge_free(keys_, keys_bytes_);
    huge_free(values_, values_bytes_);
    throw;
  }
  std::memset(static_cast<void*>(keys_), 0xff, keys_bytes_); // every slot kEmpty
}

template <typename Key> SimdHashTable<Key>::~SimdHashTable()
{
  huge_free(keys_, keys_bytes_);
  huge_free(values_, values_bytes_);
  huge_free(overflow_, buckets_ * sizeof *overflow_);
}

template <typename Key> std::size_t SimdHashTable<Key>::bucket_of(Bits bits, int which) const
{
  const std::uint64_t h = hash_mix(bits, which);
  if (which < 2) // primary region: buckets [0, primary_)
    return scale_hash(h, primary_);
  return primary_ + scale_hash(h, buckets_ - primary_);
}

template <typename Key> long SimdHashTable<Key>::find_in(std::size_t bucket, Bits bits) const
{
  const Bits* b = keys_ + bucket * kSlots;
#if defined(__x86_64__)
  if (simd_) {
    return probe_avx512(b, bits);
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
  std::uint64_t present;
  if (find(key, present)) // erased slots may sit before the key's bucket: look first
    return true;
  const std::uint64_t h0 = hash_mix(bits, 0);
  for (int which = 0; which < 3; which++) {
    const std::size_t bucket = which == 0 ? scale_hash(h0, primary_) : bucket_of(bits, which);
    Bits* b = keys_ + bucket * kSlots;
    for (std::size_t i = 0; i < kSlots; i++) {
      Bits seen = __atomic_load_n(b + i, __ATOMIC_ACQUIRE);
      if (seen == bits)
        return true; // inserted meanwhile
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
    // Full: the key goes on. Mark it before it lands further, so that lookups follow.
    if (which < 2)
      __atomic_fetch_or(&overflow_[bucket], filter_bit(h0), __ATOMIC_ACQ_REL);
  }
  return false; // all three buckets full
}

template <typename Key>
bool SimdHashTable<Key>::find_from(Bits bits, std::uint64_t h0, int first, std::uint64_t& value) const
{
  const HashTableView<Bits> view{keys_, values_, overflow_, buckets_, primary_};
#if defined(__x86_64__)
  if (simd_)
    return search_from<Bits, Avx512Probe<Bits>>(view, bits, h0, first, value);
#endif
  return search_from<Bits, ScalarProbe<Bits>>(view, bits, h0, first, value);
}

template <typename Key> bool SimdHashTable<Key>::find(Key key, std::uint64_t& value) const
{
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  if (bits == kEmpty)
    return false;
  return find_from(bits, hash_mix(bits, 0), 0, value);
}

template <typename Key> bool SimdHashTable<Key>::erase(Key key)
{
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  if (bits == kEmpty)
    return false;
  const std::uint64_t h0 = hash_mix(bits, 0);
  const std::uint16_t bit = filter_bit(h0);
  for (int which = 0; which < 3; which++) {
    const std::size_t bucket = which == 0 ? scale_hash(h0, primary_) : bucket_of(bits, which);
    const long slot = find_in(bucket, bits);
    if (slot >= 0) {
      // The filters stay as they are: they may only say "maybe", never miss a key.
      Bits expected = bits;
      return __atomic_compare_exchange_n(keys_ + bucket * kSlots + slot, &expected, kEmpty, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE);
    }
    if (which == 2 || !(__atomic_load_n(&overflow_[bucket], __ATOMIC_ACQUIRE) & bit))
      return false;
  }
  return false;
}

template <typename Key> std::size_t SimdHashTable<Key>::lines_read(Key key) const
{
  Bits bits;
  std::memcpy(&bits, &key, sizeof bits);
  if (bits == kEmpty)
    return 1; // find_many probes the first bucket of every key
  const std::uint64_t h0 = hash_mix(bits, 0);
  const std::size_t first = scale_hash(h0, primary_);
  if (find_in(first, bits) >= 0)
    return 2;
  if (!(__atomic_load_n(&overflow_[first], __ATOMIC_ACQUIRE) & filter_bit(h0)))
    return 1;
  std::uint64_t value;
  return find_from(bits, h0, 1, value) ? 4 : 3;
}

template <typename Key> double SimdHashTable<Key>::overflowed_share() const
{
  std::size_t n = 0;
  for (std::size_t b = 0; b < buckets_; b++)
    n += overflow_[b] != 0;
  return static_cast<double>(n) / static_cast<double>(buckets_);
}

template <typename Key>
std::size_t SimdHashTable<Key>::find_many(const Key* keys, std::size_t n, std::uint64_t* values,
                                          unsigned char* found) const
{
  const HashTableView<Bits> view{keys_, values_, overflow_, buckets_, primary_};
#if defined(__x86_64__)
  if (simd_)
    return pipelined_lookups_avx512(view, keys, n, values, found, depth_);
#endif
  return pipelined_lookups<Bits, ScalarProbe<Bits>, ScalarHasher<Bits>, kMaxDepth>(view, keys, n, values, found, depth_);
}

template class SimdHashTable<float>;
template class SimdHashTable<double>;

} // namespace calibration
