/* Memory-bound lookups: the SIMD hash table (AVX-512 bucket probes; one lookup at a time, and
 * pipelined on the AVX-512 and scalar paths) against std::unordered_map, boost::unordered_map,
 * absl::flat_hash_map (as is, on huge pages, and with its own prefetch) and
 * tbb::concurrent_hash_map on the same workload in the same run: insert N random keys, then
 * look up queries of which --miss-rate are absent. Also the insertion failure rate of the
 * table per memory layout (share of the secondary region), and the memory-latency bound over
 * a buffer of the table's size (latency of one dependent chain; most lines per second with
 * independent chains interleaved), and the pipelined loop on a table the caches hold (its own
 * ceiling). Each round measures every structure, that loop and a short bound within seconds,
 * and the table's ratios to them are reported per round. Exit 1, writing no trace, when the
 * structures disagree: every map must find what std::unordered_map finds, the table that less
 * the queries of the keys it refused (all three buckets full).
 *   calib_hash [--buckets B] [--load 0.7] [--miss-rate 0.9] [--queries Q] [--repetitions R]
 *              [--key float|double] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/simd_hash_table.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <absl/container/flat_hash_map.h>
#include <boost/unordered_map.hpp>
#include <tbb/concurrent_hash_map.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double sorted_median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/** Buckets of the table that measures the lookup loop in the caches: 128 KiB of keys, 392 KiB
 *  with the values (float keys) and the filters, within any L2 of this century. */
constexpr std::size_t kInCacheBuckets = 2048;

/** An allocator that puts large blocks on transparent huge pages, as the SIMD table does its
 *  own: absl::flat_hash_map with it shows what huge pages alone are worth. */
template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(calibration::huge_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { calibration::huge_free(p, n * sizeof(T)); }
  template <typename U> bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U> bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

/** A buffer of `bytes` (huge pages, as the table) holding random cycles of cache-line steps. */
struct ChaseBuffer {
  std::size_t lines, bytes;
  std::size_t* next;
  explicit ChaseBuffer(std::size_t b) : lines(std::max<std::size_t>(b / 64, 64)), bytes(lines * 64)
  {
    next = static_cast<std::size_t*>(calibration::huge_alloc(bytes));
    std::vector<std::size_t> order(lines);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(3);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < lines; i++) // one cycle through every line, 8 words a line
      next[order[i] * 8] = order[(i + 1) % lines] * 8;
  }
  ~ChaseBuffer() { calibration::huge_free(next, bytes); }
  /** Random cache lines read per second by `chains` independent dependent-load chains
   *  interleaved in one thread (chains = 1: the inverse of the memory latency). */
  double lines_per_second(int chains, std::size_t steps) const
  {
    std::size_t p[64];
    for (int c = 0; c < chains; c++)
      p[c] = (static_cast<std::size_t>(c) * (lines / static_cast<std::size_t>(chains))) * 8;
    const std::size_t rounds = steps / static_cast<std::size_t>(chains);
    const auto t0 = Clock::now();
    for (std::size_t r = 0; r < rounds; r++)
      for (int c = 0; c < chains; c++)
        p[c] = next[p[c]];
    const double t = since(t0);
    std::size_t sink = 0;
    for (int c = 0; c < chains; c++)
      sink += p[c];
    if (sink == 1)
      std::printf(" ");
    return static_cast<double>(rounds * static_cast<std::size_t>(chains)) / t;
  }
};

template <typename Key> int run(std::size_t buckets, double load, double miss, std::size_t queries, int reps,
                                const std::string& out)
{
  using Table = calibration::SimdHashTable<Key>;
  using Bits = typename Table::Bits;
  // Distinct keys: random bit patterns of finite numbers, deduplicated (random floats of a
  // range repeat often: a float has 24 bits of mantissa). Present keys are negative, absent
  // ones positive: a query is a miss exactly when meant to be.
  std::mt19937_64 rng(17);
  const std::size_t n = static_cast<std::size_t>(static_cast<double>(buckets * Table::kSlots) * load);
  constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);
  constexpr Bits kExponent = static_cast<Bits>(sizeof(Key) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  auto finite = [&](Bits b) { return (b & kExponent) != kExponent; };
  std::vector<Bits> pool;
  pool.reserve(n + n / 8);
  while (true) {
    while (pool.size() < n + n / 16) {
      const Bits b = static_cast<Bits>(rng()) | kSign;
      if (finite(b))
        pool.push_back(b);
    }
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    if (pool.size() >= n)
      break;
  }
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<Key> keys(n);
  for (std::size_t i = 0; i < n; i++)
    std::memcpy(&keys[i], &pool[i], sizeof(Key));
  std::vector<Bits>().swap(pool);
  std::vector<Key> q(queries);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::bernoulli_distribution absent(miss);
  for (auto& k : q) {
    if (absent(rng)) {
      Bits b;
      do
        b = static_cast<Bits>(rng()) & ~kSign;
      while (!finite(b));
      std::memcpy(&k, &b, sizeof k);
    } else {
      k = keys[pick(rng)];
    }
  }
  auto bits_of = [](Key k) {
    Bits b;
    std::memcpy(&b, &k, sizeof b);
    return b;
  };

  // The lookup loop's own ceiling: the pipelined table (AVX-512 path where the CPU has it) on
  // a table of the same load small enough for the L2, queried with the same share of misses in
  // the same places. Set against the large table's rate it tells what memory costs and what the
  // loop itself does: a table held back by its loop gains nothing from fewer lines per lookup.
  const std::size_t small_buckets = std::min<std::size_t>(buckets, kInCacheBuckets);
  const std::size_t small_n = std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(small_buckets * Table::kSlots) * load));
  Table small(small_buckets);
  std::vector<Key> small_queries(q);
  {
    std::vector<Key> small_keys;
    for (std::size_t i = 0; i < n && small_keys.size() < small_n; i++)
      if (small.insert(keys[i], i))
        small_keys.push_back(keys[i]);
    for (std::size_t i = 0; i < small_queries.size(); i++)
      if (bits_of(small_queries[i]) & kSign) // a hit in the large table: a hit in this one too
        small_queries[i] = small_keys[i % small_keys.size()];
  }
  // The memory-latency bound over a buffer of the table's size (see below), allocated now: each
  // round measures it next to the structures, so that its shares hold the host's state.
  ChaseBuffer chase(Table(buckets).bytes());

  const std::vector<std::string> names{"simd_table",           "simd_table_batched",
                                       "simd_table_batched_scalar", "std_unordered_map",
                                       "boost_unordered_map",  "absl_flat_hash_map",
                                       "absl_flat_hash_map_huge_pages", "absl_flat_hash_map_prefetch",
                                       "tbb_concurrent_hash_map"};
  const std::size_t kStructures = names.size(), R = static_cast<std::size_t>(reps);
  std::vector<double> ins_v(kStructures * R), look_v(kStructures * R), hit_v(kStructures);
  // Hits of each structure in the round, and for the table's three variants the queries of
  // keys it refused: the table must find what std finds less those, exactly (a count off by
  // one is a wrong answer, not noise). The first disagreement, of any round, is kept.
  std::vector<std::size_t> hits(kStructures), refused_hits(3);
  std::string disagreement;
  std::size_t table_bytes = 0;
  bool huge = false;
  double overflowed = 0, lines_per_lookup = 1;
  std::vector<double> huge_share; // of the pipelined table's memory, each repetition
  std::vector<double> in_cache_v(R), round_latency_v(R), round_bound_v(R, 0.0);
  for (std::size_t r = 0; r < R; r++) {
    for (std::size_t s = 0; s < kStructures; s++) {
      std::size_t found = 0;
      double ti = 0, tl = 0;
      auto measure = [&](auto&& insert_all, auto&& lookup_all) {
        auto t0 = Clock::now();
        insert_all();
        ti = since(t0);
        t0 = Clock::now();
        found = lookup_all();
        tl = since(t0);
      };
      if (s < 3) {
        Table t(buckets);
        t.set_simd(s != 2);
        table_bytes = t.bytes();
        huge = t.huge_pages();
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
        overflowed = t.overflowed_share();
        std::sort(refused.begin(), refused.end());
        refused_hits[s] = 0;
        if (!refused.empty())
          for (Key k : q)
            refused_hits[s] += std::binary_search(refused.begin(), refused.end(), bits_of(k));
        if (s == 1)
          huge_share.push_back(t.huge_page_share());
        if (s == 1 && r == 0) { // what the pipelined lookups must read (not timed)
          std::size_t lines = 0;
          for (Key k : q)
            lines += t.lines_read(k);
          lines_per_lookup = static_cast<double>(lines) / static_cast<double>(q.size());
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
      ins_v[s * R + r] = static_cast<double>(n) / ti;
      look_v[s * R + r] = static_cast<double>(queries) / tl;
      hit_v[s] = static_cast<double>(found) / static_cast<double>(queries);
      hits[s] = found;
    }
    for (std::size_t s = 0; s < kStructures && disagreement.empty(); s++) {
      const std::size_t expected = hits[3] - (s < 3 ? refused_hits[s] : 0);
      if (hits[s] != expected)
        disagreement = names[s] + " found " + std::to_string(hits[s]) + " of the " + std::to_string(queries) +
                       " queries in round " + std::to_string(r + 1) + "; expected " + std::to_string(expected) +
                       (s < 3 ? " (std_unordered_map's " + std::to_string(hits[3]) + " less " +
                                    std::to_string(refused_hits[s]) + " queries of keys the table refused)"
                              : " (std_unordered_map's)");
    }
    { // The loop alone, in the caches (warmed by a first pass).
      std::vector<std::uint64_t> vals(small_queries.size());
      std::vector<unsigned char> hit(small_queries.size());
      small.find_many(small_queries.data(), small_queries.size(), vals.data(), hit.data());
      const auto t0 = Clock::now();
      small.find_many(small_queries.data(), small_queries.size(), vals.data(), hit.data());
      in_cache_v[r] = static_cast<double>(small_queries.size()) / since(t0);
    }
    // The bound of this round: one chain, then the chain counts at which the sweep below peaks
    // on this machine (shorter runs than the sweep's).
    round_latency_v[r] = 1.0 / chase.lines_per_second(1, std::size_t{1} << 20);
    for (int chains : {32, 48, 64})
      round_bound_v[r] = std::max(round_bound_v[r], chase.lines_per_second(chains, std::size_t{1} << 22));
  }
  // Insertion failures per memory layout (share of the secondary region), at this load.
  const std::vector<double> shares{0.0, 0.125, 0.25, 0.5};
  std::vector<double> failures;
  for (double share : shares) {
    Table t(buckets, share);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < n; i++)
      failed += !t.insert(keys[i], i);
    failures.push_back(static_cast<double>(failed) / static_cast<double>(n));
  }
  // The memory-latency bound: one dependent chain of loads over a buffer of the table's size
  // gives the latency; independent chains interleaved (as many misses in flight as the core
  // sustains) give the most random cache lines one core reads per second. A lookup reads at
  // least one line, so that rate bounds lookups. The sweep runs three times and each chain
  // count keeps its best rate: a bound must not drop because a neighbour was busy once.
  const std::vector<double> chain_counts{1, 2, 4, 8, 16, 24, 32, 48, 64};
  std::vector<double> line_rates(chain_counts.size(), 0.0);
  for (int sweep = 0; sweep < 3; sweep++)
    for (std::size_t i = 0; i < chain_counts.size(); i++)
      line_rates[i] = std::max(line_rates[i], chase.lines_per_second(static_cast<int>(chain_counts[i]),
                                                                     std::size_t{1} << 24));
  const double latency = 1.0 / line_rates.front();
  const double bound = *std::max_element(line_rates.begin(), line_rates.end());

  auto median = [&](const std::vector<double>& v, std::size_t s) {
    std::vector<double> x(v.begin() + static_cast<long>(s * R), v.begin() + static_cast<long>((s + 1) * R));
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  std::printf("%s keys, %zu buckets (%.0f MiB%s), %zu keys, %zu queries, %.0f %% misses; the table's %s\n",
              sizeof(Key) == 4 ? "float" : "double", buckets, static_cast<double>(table_bytes) / 1048576.0,
              huge ? ", huge pages" : "", n, queries, 100 * miss,
              Table::simd_available() ? "AVX-512 path" : "scalar path (this CPU has no AVX-512F)");
  if (!huge_share.empty() && huge_share.front() >= 0)
    std::printf("huge pages back %.0f to %.0f %% of the table's memory (the repetitions of the pipelined table)\n",
                100 * *std::min_element(huge_share.begin(), huge_share.end()),
                100 * *std::max_element(huge_share.begin(), huge_share.end()));
  std::printf("memory latency %.1f ns (no overlap: %.1f M lookups/s); most random lines/s with misses "
              "overlapped: %.1f M/s (the bound)\n",
              latency * 1e9, 1e-6 / latency, bound / 1e6);
  std::printf("the pipelined table reads %.3f random lines per lookup (buckets and values): its own bound is "
              "%.1f M lookups/s\n",
              lines_per_lookup, bound / lines_per_lookup / 1e6);
  const double absl_rate = median(look_v, 5);
  for (std::size_t s = 0; s < kStructures; s++)
    std::printf("  %-30s insert %7.1f M/s  lookup %7.1f M/s (median, %.2f x absl, %3.0f %% of bound)  hits %.4f\n",
                names[s].c_str(), median(ins_v, s) / 1e6, median(look_v, s) / 1e6, median(look_v, s) / absl_rate,
                100 * median(look_v, s) / bound, hit_v[s]);
  std::printf("  pipelined table: %.0f %% of its own bound (%.3f lines per lookup)\n",
              100 * median(look_v, 1) * lines_per_lookup / bound, lines_per_lookup);
  std::printf("  the lookup loop alone (the same workload on %zu buckets, %.2f MiB, in the caches): %.1f M/s\n",
              small_buckets, static_cast<double>(small.bytes()) / 1048576.0, sorted_median(in_cache_v) / 1e6);
  { // Each round measures every structure, the loop alone and the bound within seconds: its
    // ratios hold the host's state, which the medians above, minutes apart, may not.
    std::vector<double> to_absl, to_bound, to_own, to_loop;
    for (std::size_t r = 0; r < R; r++) {
      const double table = look_v[1 * R + r];
      to_absl.push_back(table / look_v[5 * R + r]);
      to_bound.push_back(100 * table / round_bound_v[r]);
      to_own.push_back(100 * table * lines_per_lookup / round_bound_v[r]);
      to_loop.push_back(100 * table / in_cache_v[r]);
    }
    const auto range = [](const std::vector<double>& v) {
      return std::make_pair(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
    };
    std::printf("  within each round (bound: median %.1f M lines/s, %.1f to %.1f; latency %.1f ns):\n",
                sorted_median(round_bound_v) / 1e6, range(round_bound_v).first / 1e6,
                range(round_bound_v).second / 1e6, 1e9 * sorted_median(round_latency_v));
    std::printf("    pipelined table / absl: median %.2f x (%.2f to %.2f)\n", sorted_median(to_absl),
                range(to_absl).first, range(to_absl).second);
    std::printf("    pipelined table / bound: median %.0f %% (%.0f to %.0f); of its own bound %.0f %% (%.0f to %.0f)\n",
                sorted_median(to_bound), range(to_bound).first, range(to_bound).second, sorted_median(to_own),
                range(to_own).first, range(to_own).second);
    std::printf("    pipelined table / the loop alone: median %.0f %% (%.0f to %.0f)\n", sorted_median(to_loop),
                range(to_loop).first, range(to_loop).second);
  }
  for (std::size_t k = 0; k < shares.size(); k++)
    std::printf("  secondary share %.3f: insertion failures %.4f %%\n", shares[k], 100 * failures[k]);
  std::printf("  buckets whose overflow filter is set: %.1f %%\n", 100 * overflowed);
  std::printf("  queries of keys the table refused: %zu (found by the maps only)\n", refused_hits[1]);
  // A trace of structures that disagree measured something wrong: none is written (write_trace
  // renames a finished temporary file, so returning first leaves no file behind).
  if (!disagreement.empty()) {
    std::fprintf(stderr, "calib_hash: the structures disagree: %s; no trace written\n", disagreement.c_str());
    return 1;
  }

  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  std::string structures;
  for (const auto& nm : names)
    structures += (structures.empty() ? "" : ",") + nm;
  calibration::Benchmark bm{
      "hash_table",
      {{"key", sizeof(Key) == 4 ? "float" : "double"},
       {"buckets", std::to_string(buckets)},
       {"table_bytes", std::to_string(table_bytes)},
       {"huge_pages", huge ? "yes" : "no"},
       {"keys", std::to_string(n)},
       {"queries", std::to_string(queries)},
       {"miss_rate", calibration::parameter_number(miss)},
       {"simd_path", Table::simd_available() ? "avx512" : "scalar"},
       {"structures", structures},
       {"memory_latency_s", calibration::parameter_number(latency)},
       {"memory_bound_lines_per_s", calibration::parameter_number(bound)},
       {"lines_per_lookup", calibration::parameter_number(lines_per_lookup)},
       {"overflowed_bucket_share", calibration::parameter_number(overflowed)},
       {"in_cache_buckets", std::to_string(small_buckets)}},
      {{"insert_rate", {ins_v, {kStructures, R}, "1/s"}},
       {"lookup_rate", {look_v, {kStructures, R}, "1/s"}},
       {"hit_share", {hit_v, {kStructures}, ""}},
       {"refused_key_queries", {std::vector<double>(refused_hits.begin(), refused_hits.end()), {3}, ""}},
       {"huge_page_share", {huge_share, {huge_share.size()}, ""}},
       {"secondary_share", {shares, {shares.size()}, ""}},
       {"insert_failure_rate", {failures, {shares.size()}, ""}},
       {"chains", {chain_counts, {chain_counts.size()}, ""}},
       {"random_line_rate", {line_rates, {line_rates.size()}, "1/s"}},
       {"in_cache_lookup_rate", {in_cache_v, {R}, "1/s"}},
       {"round_memory_latency", {round_latency_v, {R}, "s"}},
       {"round_random_line_rate", {round_bound_v, {R}, "1/s"}}}};
  trace.benchmarks["hash_table"] = bm;
  if (const int rc = calibration::write_trace_or_report(out, trace); rc != 0)
    return rc;
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  std::size_t buckets = std::size_t{1} << 21, queries = 10'000'000;
  double load = 0.7, miss = 0.9;
  int reps = 3;
  std::string key = "float", out;
  const auto usage = [](const std::string& why) {
    return calibration::refuse_command_line("calib_hash", "[--buckets B] [--load L] [--miss-rate M] [--queries Q] "
                                                          "[--repetitions R] [--key float|double] -o TRACE.h5", why);
  };
  const std::string problem = calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--buckets") // bucket indices are 32-bit products
      return read_whole(a, v, 2, (1LL << 32) - 1, "a whole number from 2 to 2^32 - 1", buckets);
    if (a == "--load")
      return read_real(a, v, 1e-12, 1, "a share of the slots in (0, 1]", load);
    if (a == "--miss-rate")
      return read_real(a, v, 0, 1, "a share in [0, 1]", miss);
    if (a == "--queries")
      return read_whole(a, v, 1, 1LL << 34, "a whole number from 1 to 2^34", queries);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000, "a whole number from 1 to 1000", reps);
    if (a == "--key")
      return v == "float" || v == "double" ? (key = v, std::string()) : "--key " + v + ": expected float or double";
    return std::nullopt;
  });
  if (!problem.empty())
    return usage(problem);
  const double slots = static_cast<double>(buckets) * (key == "double" ? 8 : 16);
  if (slots * load < 1)
    return usage("--load " + std::to_string(load) + " of " + std::to_string(static_cast<long long>(slots)) +
                 " slots stores no key; expected at least one");
  return key == "float" ? run<float>(buckets, load, miss, queries, reps, out)
                        : run<double>(buckets, load, miss, queries, reps, out);
}
