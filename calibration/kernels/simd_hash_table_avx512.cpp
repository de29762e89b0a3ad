/* The SIMD hash table's AVX-512 code: this file alone is compiled with -mavx512f -mavx512dq,
 * and is called only where the CPU has both (checked at run time by the table). */
#include "hash_table_pipeline.hpp"

#include "calibration/simd_hash_table.hpp"

#include <immintrin.h>

// GCC 12's shift intrinsics start from _mm512_undefined_epi32(), which -Wmaybe-uninitialized
// reports at every inlined use; the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace calibration {

namespace {

// The probes read a bucket that concurrent inserts may be writing with one 512-bit load: not
// an atomic read in C++'s terms (ThreadSanitizer reports it), but on x86 every aligned lane
// is read whole, so each slot is seen as a key or as empty, which is all a probe needs.
struct Avx512Probe32 {
  static long probe(const std::uint32_t* bucket, std::uint32_t bits)
  {
    const __mmask16 hit =
        _mm512_cmpeq_epi32_mask(_mm512_load_si512(bucket), _mm512_set1_epi32(static_cast<int>(bits)));
    return hit ? __builtin_ctz(hit) : -1;
  }
  static unsigned mask(const std::uint32_t* bucket, std::uint32_t bits)
  {
    return _mm512_cmpeq_epi32_mask(_mm512_load_si512(bucket), _mm512_set1_epi32(static_cast<int>(bits)));
  }
};

struct Avx512Probe64 {
  static long probe(const std::uint64_t* bucket, std::uint64_t bits)
  {
    const __mmask8 hit =
        _mm512_cmpeq_epi64_mask(_mm512_load_si512(bucket), _mm512_set1_epi64(static_cast<long long>(bits)));
    return hit ? __builtin_ctz(hit) : -1;
  }
  static unsigned mask(const std::uint64_t* bucket, std::uint64_t bits)
  {
    return _mm512_cmpeq_epi64_mask(_mm512_load_si512(bucket), _mm512_set1_epi64(static_cast<long long>(bits)));
  }
};

/** Eight addresses of a register prefetched, lane by lane (`locality` as __builtin_prefetch). */
template <int kLocality> inline void prefetch_lanes(__m512i a)
{
  const __m128i q[4] = {_mm512_extracti64x2_epi64(a, 0), _mm512_extracti64x2_epi64(a, 1),
                        _mm512_extracti64x2_epi64(a, 2), _mm512_extracti64x2_epi64(a, 3)};
  for (const __m128i& pair : q) {
    __builtin_prefetch(reinterpret_cast<const void*>(_mm_cvtsi128_si64(pair)), 0, kLocality);
    __builtin_prefetch(reinterpret_cast<const void*>(_mm_extract_epi64(pair, 1)), 0, kLocality);
  }
}

/** hash_mix(x, 0) of eight 64-bit lanes (vpmullq: AVX-512DQ). */
inline __m512i hash_mix0_x8(__m512i x)
{
  x = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<long long>(0x9e3779b97f4a7c15ULL)));
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)),
                         _mm512_set1_epi64(static_cast<long long>(0xbf58476d1ce4e5b9ULL)));
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)),
                         _mm512_set1_epi64(static_cast<long long>(0x94d049bb133111ebULL)));
  return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

/** Eight hashes and first buckets at once, as ScalarHasher computes them one by one; the
 *  buckets are prefetched from the register (see ScalarHasher). */
template <typename Bits> struct Avx512Hasher {
  static void first_buckets(const HashTableView<Bits>& t, const void* keys, std::size_t i, std::size_t count,
                            std::uint64_t* h0, std::uint64_t* bucket)
  {
    __m512i x;
    if constexpr (sizeof(Bits) == 4) { // eight 32-bit keys, zero-extended
      const std::uint32_t* k = static_cast<const std::uint32_t*>(keys) + i;
      x = _mm512_cvtepu32_epi64(count == 8 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k))
                                           : _mm512_castsi512_si256(_mm512_maskz_loadu_epi32(
                                                 static_cast<__mmask16>((1u << count) - 1), k)));
    } else {
      const std::uint64_t* k = static_cast<const std::uint64_t*>(keys) + i;
      x = count == 8 ? _mm512_loadu_si512(k) : _mm512_maskz_loadu_epi64(static_cast<__mmask8>((1u << count) - 1), k);
    }
    const __m512i h = hash_mix0_x8(x);
    // scale_hash: (h >> 32) * primary >> 32, a 32 x 32-bit product per lane.
    const __m512i b = _mm512_srli_epi64(
        _mm512_mul_epu32(_mm512_srli_epi64(h, 32), _mm512_set1_epi64(static_cast<long long>(t.primary))), 32);
    _mm512_store_si512(h0, h);
    _mm512_store_si512(bucket, b);
    // The buckets' addresses (lanes past `count` point into the table too), then their
    // filters' (two bytes a bucket; kept in the caches, the filters are read again soon).
    prefetch_lanes<0>(_mm512_add_epi64(_mm512_set1_epi64(reinterpret_cast<long long>(t.keys)), _mm512_slli_epi64(b, 6)));
    prefetch_lanes<3>(_mm512_add_epi64(_mm512_set1_epi64(reinterpret_cast<long long>(t.overflow)), _mm512_slli_epi64(b, 1)));
  }
};

constexpr std::size_t kMaxGroup = SimdHashTable<float>::kMaxDepth;

} // namespace

long probe_avx512(const std::uint32_t* bucket, std::uint32_t bits) { return Avx512Probe32::probe(bucket, bits); }
long probe_avx512(const std::uint64_t* bucket, std::uint64_t bits) { return Avx512Probe64::probe(bucket, bits); }

std::size_t pipelined_lookups_avx512(const HashTableView<std::uint32_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t group)
{
  return pipelined_lookups<std::uint32_t, Avx512Probe32, Avx512Hasher<std::uint32_t>, kMaxGroup>(t, keys, n, values, found, group);
}

std::size_t pipelined_lookups_avx512(const HashTableView<std::uint64_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t group)
{
  return pipelined_lookups<std::uint64_t, Avx512Probe64, Avx512Hasher<std::uint64_t>, kMaxGroup>(t, keys, n, values, found, group);
}

} // namespace calibration
