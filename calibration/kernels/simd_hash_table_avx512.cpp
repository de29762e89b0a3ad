/* The SIMD hash table's AVX-512 code: this file alone is compiled with -mavx512f, and is
 * called only where the CPU has AVX-512F (checked at run time by the table). */
#include "hash_table_pipeline.hpp"

#include "calibration/simd_hash_table.hpp"

#include <immintrin.h>

namespace calibration {

namespace {

struct Avx512Probe32 {
  static long probe(const std::uint32_t* bucket, std::uint32_t bits)
  {
    const __mmask16 hit =
        _mm512_cmpeq_epi32_mask(_mm512_load_si512(bucket), _mm512_set1_epi32(static_cast<int>(bits)));
    return hit ? __builtin_ctz(hit) : -1;
  }
};

struct Avx512Probe64 {
  static long probe(const std::uint64_t* bucket, std::uint64_t bits)
  {
    const __mmask8 hit =
        _mm512_cmpeq_epi64_mask(_mm512_load_si512(bucket), _mm512_set1_epi64(static_cast<long long>(bits)));
    return hit ? __builtin_ctz(hit) : -1;
  }
};

constexpr std::size_t kMaxDepth = SimdHashTable<float>::kMaxDepth;

} // namespace

long probe_avx512(const std::uint32_t* bucket, std::uint32_t bits) { return Avx512Probe32::probe(bucket, bits); }
long probe_avx512(const std::uint64_t* bucket, std::uint64_t bits) { return Avx512Probe64::probe(bucket, bits); }

std::size_t pipelined_lookups_avx512(const HashTableView<std::uint32_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t depth)
{
  return pipelined_lookups<std::uint32_t, Avx512Probe32, kMaxDepth>(t, keys, n, values, found, depth);
}

std::size_t pipelined_lookups_avx512(const HashTableView<std::uint64_t>& t, const void* keys, std::size_t n,
                                     std::uint64_t* values, unsigned char* found, std::size_t depth)
{
  return pipelined_lookups<std::uint64_t, Avx512Probe64, kMaxDepth>(t, keys, n, values, found, depth);
}

} // namespace calibration
