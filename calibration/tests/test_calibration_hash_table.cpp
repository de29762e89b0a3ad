/* The SIMD hash table gives std::unordered_map's answers on random workloads (hits and
 * misses, float and double keys), on the AVX-512 path and the scalar one. */
#include <calibration/simd_hash_table.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <unordered_map>

namespace {

template <typename Key> void compare_with_std(bool simd)
{
  using Bits = typename calibration::SimdHashTable<Key>::Bits;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<Key> u(-1e6, 1e6);
  calibration::SimdHashTable<Key> table(1 << 12); // 64k (float) or 32k (double) slots
  table.set_simd(simd);
  std::unordered_map<Bits, std::uint64_t> ref;
  std::size_t failures = 0;
  const std::size_t n = table.capacity() * 7 / 10; // 70 % load
  for (std::size_t i = 0; i < n; i++) {
    const Key k = u(rng);
    Bits bits;
    std::memcpy(&bits, &k, sizeof bits);
    if (table.insert(k, i)) {
      ref.emplace(bits, i); // a repeated key keeps its first value, in both
    } else {
      failures++;
    }
  }
  CHECK(failures < n / 100); // three candidate buckets keep failures rare at 70 % load
  // Lookups: every inserted key, and as many random ones (almost all misses).
  for (const auto& [bits, v] : ref) {
    Key k;
    std::memcpy(&k, &bits, sizeof k);
    std::uint64_t got = 0;
    REQUIRE(table.find(k, got));
    REQUIRE(got == v);
  }
  for (std::size_t i = 0; i < n; i++) {
    const Key k = u(rng);
    Bits bits;
    std::memcpy(&bits, &k, sizeof bits);
    std::uint64_t got = 0;
    REQUIRE(table.find(k, got) == (ref.count(bits) == 1));
  }
  Key reserved;
  const Bits empty = calibration::SimdHashTable<Key>::kEmpty;
  std::memcpy(&reserved, &empty, sizeof reserved);
  CHECK_FALSE(table.insert(reserved, 1));
}

} // namespace

TEST_CASE("SIMD hash table answers as std::unordered_map", "[calibration]")
{
  for (bool simd : {false, true}) {
    INFO("simd " << simd << " (available: " << calibration::SimdHashTable<float>::simd_available() << ")");
    compare_with_std<float>(simd);
    compare_with_std<double>(simd);
  }
}
