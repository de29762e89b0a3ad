/* The parts of the SIMD hash table that both of its object files compile: the hash functions
 * and the pipelined lookup loop, a template over the bucket probe so that the AVX-512 file
 * (built with -mavx512f) gets the whole loop with the probe inlined, and the portable file
 * the same loop with a scalar probe. Everything here has internal linkage: the two files
 * never share a copy compiled for the other's instruction set. Private to the kernels. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace calibration {

/** What the lookup loop needs of a table. */
template <typename Bits> struct HashTableView {
  const Bits* keys;              ///< buckets x slots
  const std::uint64_t* values;   ///< one per slot
  const std::uint16_t* overflow; ///< one 16-bit filter per bucket
  std::size_t buckets, primary;
};

namespace {

/** Three independent mixers (splitmix64 finalisers with different constants). */
inline std::uint64_t hash_mix(std::uint64_t x, int which)
{
  static constexpr std::uint64_t k1[3] = {0xbf58476d1ce4e5b9ULL, 0xd6e8feb86659fd93ULL, 0x94d049bb133111ebULL};
  static constexpr std::uint64_t k2[3] = {0x94d049bb133111ebULL, 0xbf58476d1ce4e5b9ULL, 0xd6e8feb86659fd93ULL};
  x += 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(which + 1);
  x = (x ^ (x >> 30)) * k1[which];
  x = (x ^ (x >> 27)) * k2[which];
  return x ^ (x >> 31);
}

/** The key's bit in a bucket's overflow filter (low bits of the first hash; the bucket index
 *  comes from its high bits). */
inline std::uint16_t filter_bit(std::uint64_t h0) { return static_cast<std::uint16_t>(1u << (h0 & 15)); }

/** [0, range) from the high 32 bits of a hash (multiply-shift, no division; range < 2^32,
 *  which the table checks): one 32 x 32-bit product, which AVX-512 does eight at a time. */
inline std::size_t scale_hash(std::uint64_t h, std::size_t range) { return ((h >> 32) * range) >> 32; }

/** Candidate bucket `which` (0, 1: primary region; 2: secondary). */
template <typename Bits> inline std::size_t candidate(const HashTableView<Bits>& t, Bits bits, int which)
{
  const std::uint64_t h = hash_mix(bits, which);
  return which < 2 ? scale_hash(h, t.primary) : t.primary + scale_hash(h, t.buckets - t.primary);
}

/** A bucket compared slot by slot (atomic loads: inserts may run meanwhile): the first
 *  matching slot or -1 (probe), or one bit per matching slot (mask, without a branch). */
template <typename Bits> struct ScalarProbe {
  static long probe(const Bits* bucket, Bits bits)
  {
    for (std::size_t i = 0; i < 64 / sizeof(Bits); i++)
      if (__atomic_load_n(bucket + i, __ATOMIC_ACQUIRE) == bits)
        return static_cast<long>(i);
    return -1;
  }
  static unsigned mask(const Bits* bucket, Bits bits)
  {
    unsigned m = 0;
    for (std::size_t i = 0; i < 64 / sizeof(Bits); i++)
      m |= static_cast<unsigned>(__atomic_load_n(bucket + i, __ATOMIC_ACQUIRE) == bits) << i;
    return m;
  }
};

/** Key i's bits (the keys are floats or doubles: read without aliasing them). */
template <typename Bits> inline Bits key_bits(const void* keys, std::size_t i)
{
  Bits b;
  std::memcpy(&b, static_cast<const unsigned char*>(keys) + i * sizeof(Bits), sizeof b);
  return b;
}

/** What starts a lookup: the first hash and first candidate bucket of `count` (1..8)
 *  consecutive keys from key `i` on, stored in h0[0..count) and bucket[0..count), and the
 *  prefetch of those buckets and of their overflow filters: the filters of a large table
 *  outgrow the L2 (4 MiB for 2^21 buckets), and stage two would wait on them. This one goes
 *  key by key; the AVX-512 hasher does eight keys at once and prefetches from its registers
 *  (loading the buckets back from the ring right after a 512-bit store would stall on store
 *  forwarding). */
template <typename Bits> struct ScalarHasher {
  static void first_buckets(const HashTableView<Bits>& t, const void* keys, std::size_t i, std::size_t count,
                            std::uint64_t* h0, std::uint64_t* bucket)
  {
    for (std::size_t k = 0; k < count; k++) {
      h0[k] = hash_mix(key_bits<Bits>(keys, i + k), 0);
      bucket[k] = scale_hash(h0[k], t.primary);
      __builtin_prefetch(t.keys + bucket[k] * (64 / sizeof(Bits)), 0, 0);
      __builtin_prefetch(t.overflow + bucket[k], 0, 3);
    }
  }
};

/** The search from candidate `first` on, following the overflow filters. */
template <typename Bits, typename Probe>
inline bool search_from(const HashTableView<Bits>& t, Bits bits, std::uint64_t h0, int first, std::uint64_t& value)
{
  constexpr std::size_t kSlots = 64 / sizeof(Bits);
  const std::uint16_t bit = filter_bit(h0);
  for (int which = first; which < 3; which++) {
    const std::size_t bucket = which == 0 ? scale_hash(h0, t.primary) : candidate(t, bits, which);
    const long slot = Probe::probe(t.keys + bucket * kSlots, bits);
    if (slot >= 0) {
      value = __atomic_load_n(&t.values[bucket * kSlots + static_cast<std::size_t>(slot)], __ATOMIC_ACQUIRE);
      return true;
    }
    // No key of this filter bit went past this bucket: the search ends here.
    if (which == 2 || !(__atomic_load_n(&t.overflow[bucket], __ATOMIC_ACQUIRE) & bit))
      return false;
  }
  return false;
}

/** Pipelined lookups, a group of `group` lookups (a multiple of eight) per stage, each stage
 *  one group behind the one before:
 *   group g:     hash its keys (Hasher: eight at a time on the AVX-512 path), prefetch their
 *                first buckets and those buckets' overflow filters;
 *   group g - 1: compare each key with its (now cached) bucket, without a branch, and list the
 *                lookups that need more: a hit (its value) or a miss whose filter bit is set
 *                (the other two buckets); then prefetch what those need;
 *   group g - 2: clear the group's answers, then finish the listed lookups (their lines now
 *                cached).
 *  Each stage is a loop of its own over a whole group. At 90 % misses most lookups end in
 *  stage two, and a branch on each probe's outcome (hit, filter) mispredicts at random: the
 *  branch-free compare and the short list ran 1.4 x as fast as a loop that branched on every
 *  probe, on a table far larger than the caches. The list grows by a count that depends on
 *  the filter's load: prefetching the filters with the buckets keeps that count from waiting
 *  on the last-level cache. */
template <typename Bits, typename Probe, typename Hasher, std::size_t kMaxGroup>
std::size_t pipelined_lookups(const HashTableView<Bits>& t, const void* keys, std::size_t n, std::uint64_t* values,
                              unsigned char* found, std::size_t group)
{
  constexpr std::size_t kSlots = 64 / sizeof(Bits), kRing = 4 * kMaxGroup; // >= 3 groups, a power of two
  static_assert((kRing & (kRing - 1)) == 0 && kMaxGroup % 8 == 0 && kMaxGroup <= 256, "a ring of whole blocks of eight");
  constexpr Bits kEmpty = ~Bits{0};
  group = group < 8 ? 8 : (group > kMaxGroup ? kMaxGroup : (group + 7) / 8 * 8);
  // The ring, one array per field: the hasher stores eight hashes and buckets at once (a block
  // starts at a multiple of eight, and so does its place in the ring).
  alignas(64) std::uint64_t h0[kRing];
  alignas(64) std::uint64_t bucket[kRing];
  unsigned char slot[kRing]; // the hit's slot in the first bucket; kSlots: none
  // Per group in flight (g mod 3): the lookups that stage three finishes, as offsets in the group.
  unsigned char listed[3][kMaxGroup];
  std::size_t listed_n[3] = {0, 0, 0};
  std::size_t hits = 0;
  const std::size_t groups = (n + group - 1) / group;
  for (std::size_t g = 0; g < groups + 2; g++) {
    if (g < groups) { // stage one
      const std::size_t end = (g + 1) * group < n ? (g + 1) * group : n;
      for (std::size_t i = g * group; i < end; i += 8)
        Hasher::first_buckets(t, keys, i, end - i < 8 ? end - i : 8, h0 + (i & (kRing - 1)), bucket + (i & (kRing - 1)));
    }
    if (g >= 1 && g <= groups) { // stage two
      const std::size_t begin = (g - 1) * group, end = g * group < n ? g * group : n;
      unsigned char* list = listed[(g - 1) % 3];
      std::size_t count = 0;
      for (std::size_t j = begin; j < end; j++) {
        const std::size_t r = j & (kRing - 1);
        const Bits bits = key_bits<Bits>(keys, j);
        // The reserved pattern matches the empty slots: never a hit, never followed.
        const unsigned real = bits == kEmpty ? 0u : ~0u;
        const unsigned match = Probe::mask(t.keys + bucket[r] * kSlots, bits) & real;
        slot[r] = static_cast<unsigned char>(__builtin_ctz(match | (1u << kSlots)));
        const unsigned filter = __atomic_load_n(&t.overflow[bucket[r]], __ATOMIC_RELAXED) & filter_bit(h0[r]) & real;
        list[count] = static_cast<unsigned char>(j - begin);
        count += (match | filter) != 0;
      }
      listed_n[(g - 1) % 3] = count;
      for (std::size_t k = 0; k < count; k++) {
        const std::size_t j = begin + list[k], r = j & (kRing - 1);
        if (slot[r] < kSlots) {
          __builtin_prefetch(t.values + bucket[r] * kSlots + slot[r], 0, 0);
        } else {
          const Bits bits = key_bits<Bits>(keys, j);
          __builtin_prefetch(t.keys + candidate(t, bits, 1) * kSlots, 0, 0);
          __builtin_prefetch(t.keys + candidate(t, bits, 2) * kSlots, 0, 0);
        }
      }
    }
    if (g >= 2) { // stage three: the answers
      const std::size_t begin = (g - 2) * group, end = (g - 1) * group < n ? (g - 1) * group : n;
      std::memset(found + begin, 0, end - begin);
      const unsigned char* list = listed[(g - 2) % 3];
      for (std::size_t k = 0; k < listed_n[(g - 2) % 3]; k++) {
        const std::size_t j = begin + list[k], r = j & (kRing - 1);
        bool hit = true;
        if (slot[r] < kSlots)
          values[j] = __atomic_load_n(&t.values[bucket[r] * kSlots + slot[r]], __ATOMIC_ACQUIRE);
        else
          hit = search_from<Bits, Probe>(t, key_bits<Bits>(keys, j), h0[r], 1, values[j]);
        found[j] = hit ? 1 : 0;
        hits += hit;
      }
    }
  }
  return hits;
}

} // namespace

/** The AVX-512 loop (simd_hash_table_avx512.cpp; call only where the CPU has AVX-512F). */
std::size_t pipelined_lookups_avx512(const HashTableView<std::uint32_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t group);
std::size_t pipelined_lookups_avx512(const HashTableView<std::uint64_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t group);
/** One bucket compared with one AVX-512 instruction: the slot, or -1. */
long probe_avx512(const std::uint32_t* bucket, std::uint32_t bits);
long probe_avx512(const std::uint64_t* bucket, std::uint64_t bits);

} // namespace calibration
