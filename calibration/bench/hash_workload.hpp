/* The workload of calib_hash: distinct random keys to insert and the queries to look up, of
 * which a given share is absent. Private to the benchmark. */
#pragma once

#include "calibration/simd_hash_table.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace calibration {

template <typename Key> struct HashWorkload {
  using Bits = typename SimdHashTable<Key>::Bits;
  /** Present keys are negative, absent ones positive: a query is a miss exactly when meant to be. */
  static constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);

  std::vector<Key> keys;    ///< distinct, finite, negative
  std::vector<Key> queries; ///< keys drawn at random, or (the miss share) positive numbers no key is

  static Bits bits_of(Key k)
  {
    Bits b;
    std::memcpy(&b, &k, sizeof b);
    return b;
  }
  /** Whether the query `k` was drawn from the keys (a hit wherever every key was stored). */
  static bool drawn_from_keys(Key k) { return (bits_of(k) & kSign) != 0; }
};

/** `n` distinct keys, then `queries` queries of which `miss` (a share) are absent; seeded, so
 *  that every run and every structure sees the same workload. */
template <typename Key> HashWorkload<Key> make_hash_workload(std::size_t n, double miss, std::size_t queries)
{
  using W = HashWorkload<Key>;
  using Bits = typename W::Bits;
  // Distinct keys: random bit patterns of finite numbers, deduplicated (random floats of a
  // range repeat often: a float has 24 bits of mantissa).
  std::mt19937_64 rng(17);
  constexpr Bits kExponent = static_cast<Bits>(sizeof(Key) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  auto finite = [&](Bits b) { return (b & kExponent) != kExponent; };
  std::vector<Bits> pool;
  pool.reserve(n + n / 8);
  while (true) {
    while (pool.size() < n + n / 16) {
      const Bits b = static_cast<Bits>(rng()) | W::kSign;
      if (finite(b))
        pool.push_back(b);
    }
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    if (pool.size() >= n)
      break;
  }
  std::shuffle(pool.begin(), pool.end(), rng);
  W w;
  w.keys.resize(n);
  for (std::size_t i = 0; i < n; i++)
    std::memcpy(&w.keys[i], &pool[i], sizeof(Key));
  std::vector<Bits>().swap(pool);
  w.queries.resize(queries);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::bernoulli_distribution absent(miss);
  for (auto& k : w.queries) {
    if (absent(rng)) {
      Bits b;
      do
        b = static_cast<Bits>(rng()) & ~W::kSign;
      while (!finite(b));
      std::memcpy(&k, &b, sizeof k);
    } else {
      k = w.keys[pick(rng)];
    }
  }
  return w;
}

} // namespace calibration
