/* The structures calib_hash measures on one workload: the SIMD table (one lookup at a time,
 * and pipelined on the AVX-512 and scalar paths), std::unordered_map, boost::unordered_map,
 * absl::flat_hash_map (as is, on huge pages, and with its own prefetch) and
 * tbb::concurrent_hash_map. Private to the benchmark. */
#pragma once

#include "hash_workload.hpp"
#include "huge_page_allocator.hpp"

#include "calibration/simd_hash_table.hpp"

#include <absl/container/flat_hash_map.h>
#include <boost/unordered_map.hpp>
#include <tbb/concurrent_hash_map.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace calibration {

/** The structures, in the order of the trace's rows: the first three are the SIMD table's
 *  variants, the fourth std's (whose hits the others must give), the sixth absl's as is (what
 *  the table's rate is set against). */
inline const std::vector<std::string>& hash_structures()
{
  static const std::vector<std::string> names{"simd_table",           "simd_table_batched",
                                              "simd_table_batched_scalar", "std_unordered_map",
                                              "boost_unordered_map",  "absl_flat_hash_map",
                                              "absl_flat_hash_map_huge_pages", "absl_flat_hash_map_prefetch",
                                              "tbb_concurrent_hash_map"};
  return names;
}
constexpr std::size_t kStdStructure = 3, kAbslStructure = 5, kPipelinedTable = 1;

/** One structure, one round: the time of inserting every key and of looking up every query,
 *  and the queries it found. */
struct StructureRun {
  double insert_seconds = 0, lookup_seconds = 0;
  std::size_t found = 0;
};

/** What the SIMD table's variants (structures 0 to 2) tell besides their times. */
struct TableFacts {
  std::size_t bytes = 0;
  bool huge = false;             ///< whether huge pages were advised
  double overflowed = 0;         ///< share of buckets whose overflow filter is set
  std::size_t refused_queries = 0; ///< queries of the keys the table refused (all three buckets full)
  double huge_page_share = -1;   ///< of its memory, after the lookups (the pipelined table's only)
  double lines_per_lookup = 0;   ///< random lines the lookups read (when asked: not timed)
};

/** Measures structure `s` of hash_structures() on a fresh instance of `buckets` buckets (the
 *  SIMD table's; the maps reserve room for every key); `facts` for the SIMD table's variants,
 *  with the lines per lookup counted when `count_lines`. */
template <typename Key>
StructureRun measure_structure(std::size_t s, std::size_t buckets, const HashWorkload<Key>& w, TableFacts& facts,
                               bool count_lines)
{
  using Table = SimdHashTable<Key>;
  using Bits = typename Table::Bits;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  const auto bits_of = &HashWorkload<Key>::bits_of;
  const std::vector<Key>& keys = w.keys;
  const std::vector<Key>& q = w.queries;
  const std::size_t n = keys.size();
  StructureRun run;
  auto measure = [&](auto&& insert_all, auto&& lookup_all) {
    auto t0 = Clock::now();
    insert_all();
    run.insert_seconds = since(t0);
    t0 = Clock::now();
    run.found = lookup_all();
    run.lookup_seconds = since(t0);
  };
  if (s < 3) {
    Table t(buckets);
    t.set_simd(s != 2);
    facts.bytes = t.bytes();
    facts.huge = t.huge_pages();
    std::vector<std::uint64_t> vals(s == 0 ? 0 : q.size());
    std::vector<unsigned char> hit(vals.size());
    std::vector<Bits> refused; // rare (the failure rate below): a push now and then, a branch always predicted
    measure([&] {
              for (std::size_t i = 0; i < n; i++)
                if (!t.insert(keys[i], i))
                  refused.push_back(bits_of(keys[i]));
            },
            [&] {
              if (s > 0) // pipelined
                return t.find_many(q.data(), q.size(), vals.data(), hit.data());
              std::size_t f = 0;
              std::uint64_t v;
              for (Key k : q)
                f += t.find(k, v);
              return f;
            });
    facts.overflowed = t.overflowed_share();
    std::sort(refused.begin(), refused.end());
    facts.refused_queries = 0;
    if (!refused.empty())
      for (Key k : q)
        facts.refused_queries += std::binary_search(refused.begin(), refused.end(), bits_of(k));
    if (s == kPipelinedTable)
      facts.huge_page_share = t.huge_page_share();
    if (count_lines) { // what the pipelined lookups must read (not timed)
      std::size_t lines = 0;
      for (Key k : q)
        lines += t.lines_read(k);
      facts.lines_per_lookup = static_cast<double>(lines) / static_cast<double>(q.size());
    }
  } else if (s == 3) {
    std::unordered_map<Bits, std::uint64_t> m;
    m.reserve(n);
    measure([&] { for (std::size_t i = 0; i < n; i++) m.emplace(bits_of(keys[i]), i); },
            [&] { std::size_t f = 0; for (Key k : q) f += m.count(bits_of(k)); return f; });
  } else if (s == 4) {
    boost::unordered_map<Bits, std::uint64_t> m;
    m.reserve(n);
    measure([&] { for (std::size_t i = 0; i < n; i++) m.emplace(bits_of(keys[i]), i); },
            [&] { std::size_t f = 0; for (Key k : q) f += m.count(bits_of(k)); return f; });
  } else if (s == 5 || s == 7) {
    absl::flat_hash_map<Bits, std::uint64_t> m;
    m.reserve(n);
    measure([&] { for (std::size_t i = 0; i < n; i++) m.emplace(bits_of(keys[i]), i); },
            [&] {
              std::size_t f = 0;
              if (s == 5) {
                for (Key k : q)
                  f += m.contains(bits_of(k));
              } else { // absl's own prefetch, 16 lookups ahead
                constexpr std::size_t kAhead = 16;
                for (std::size_t i = 0; i < q.size(); i++) {
                  if (i + kAhead < q.size())
                    m.prefetch(bits_of(q[i + kAhead]));
                  f += m.contains(bits_of(q[i]));
                }
              }
              return f;
            });
  } else if (s == 6) {
    absl::flat_hash_map<Bits, std::uint64_t, absl::Hash<Bits>, std::equal_to<Bits>,
                        HugePageAllocator<std::pair<const Bits, std::uint64_t>>>
        m;
    m.reserve(n);
    measure([&] { for (std::size_t i = 0; i < n; i++) m.emplace(bits_of(keys[i]), i); },
            [&] { std::size_t f = 0; for (Key k : q) f += m.contains(bits_of(k)); return f; });
  } else {
    tbb::concurrent_hash_map<Bits, std::uint64_t> m(n);
    measure([&] { for (std::size_t i = 0; i < n; i++) m.emplace(bits_of(keys[i]), i); },
            [&] { std::size_t f = 0; for (Key k : q) f += m.count(bits_of(k)); return f; });
  }
  return run;
}

} // namespace calibration
