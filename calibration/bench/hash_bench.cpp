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
#include "chase_buffer.hpp"
#include "hash_structures.hpp"
#include "hash_workload.hpp"

#include "calibration/bench_options.hpp"
#include "calibration/simd_hash_table.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using calibration::kAbslStructure;
using calibration::kPipelinedTable;
using calibration::kStdStructure;

double sorted_median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/** Buckets of the table that measures the lookup loop in the caches: 128 KiB of keys, 392 KiB
 *  with the values (float keys) and the filters, within any L2 of this century. */
constexpr std::size_t kInCacheBuckets = 2048;

/** Everything a run measured: what the report prints and the trace holds. */
struct HashResults {
  std::string key;     ///< float or double
  bool simd = false;   ///< the AVX-512 path
  std::size_t buckets = 0, keys = 0, queries = 0, rounds = 0;
  double load = 0, miss = 0;
  std::vector<std::string> names;     ///< the structures
  std::vector<double> insert_rates;   ///< per structure, then round (structures x rounds)
  std::vector<double> lookup_rates;   ///< per structure, then round
  std::vector<double> hit_shares;     ///< per structure, of the last round
  std::vector<std::size_t> refused_queries = std::vector<std::size_t>(3); ///< the table's variants
  std::string disagreement;           ///< the first structure that found other keys than std's, if any
  std::size_t table_bytes = 0;
  bool huge = false;
  double overflowed = 0, lines_per_lookup = 1;
  std::vector<double> huge_share;     ///< of the pipelined table's memory, each round
  std::size_t in_cache_buckets = 0;
  double in_cache_bytes = 0;
  std::vector<double> in_cache_rates, round_latency, round_bound; ///< each round
  std::vector<double> shares, failures;     ///< insertion failures per secondary share
  std::vector<double> chains, line_rates;   ///< the bound's sweep
  double latency = 0, bound = 0;

  /** The median over the rounds of structure s in `v` (insert_rates or lookup_rates). */
  double median(const std::vector<double>& v, std::size_t s) const
  {
    return sorted_median(std::vector<double>(v.begin() + static_cast<long>(s * rounds),
                                             v.begin() + static_cast<long>((s + 1) * rounds)));
  }
};

/** Rounds of every structure on one workload, each round followed by the lookup loop in the
 *  caches and a short bound, within seconds of each other. */
template <typename Key>
void measure_rounds(const calibration::HashWorkload<Key>& w, const calibration::ChaseBuffer& chase, HashResults& res)
{
  using Table = calibration::SimdHashTable<Key>;
  // The lookup loop's own ceiling: the pipelined table (AVX-512 path where the CPU has it) on
  // a table of the same load small enough for the L2, queried with the same share of misses in
  // the same places. Set against the large table's rate it tells what memory costs and what the
  // loop itself does: a table held back by its loop gains nothing from fewer lines per lookup.
  const std::size_t small_buckets = std::min<std::size_t>(res.buckets, kInCacheBuckets);
  const std::size_t small_n = std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(small_buckets * Table::kSlots) * res.load));
  Table small(small_buckets);
  std::vector<Key> small_queries(w.queries);
  {
    std::vector<Key> small_keys;
    for (std::size_t i = 0; i < w.keys.size() && small_keys.size() < small_n; i++)
      if (small.insert(w.keys[i], i))
        small_keys.push_back(w.keys[i]);
    for (std::size_t i = 0; i < small_queries.size(); i++)
      if (calibration::HashWorkload<Key>::drawn_from_keys(small_queries[i])) // a hit in this one too
        small_queries[i] = small_keys[i % small_keys.size()];
  }
  res.in_cache_buckets = small_buckets;
  res.in_cache_bytes = static_cast<double>(small.bytes());

  const std::size_t S = res.names.size(), R = res.rounds;
  res.insert_rates.assign(S * R, 0.0);
  res.lookup_rates.assign(S * R, 0.0);
  res.hit_shares.assign(S, 0.0);
  res.in_cache_rates.assign(R, 0.0);
  res.round_latency.assign(R, 0.0);
  res.round_bound.assign(R, 0.0);
  // Hits of each structure in the round: the table must find what std finds less the queries
  // of the keys it refused, exactly (a count off by one is a wrong answer, not noise). The
  // first disagreement, of any round, is kept.
  std::vector<std::size_t> hits(S);
  for (std::size_t r = 0; r < R; r++) {
    for (std::size_t s = 0; s < S; s++) {
      calibration::TableFacts facts;
      const auto run = calibration::measure_structure<Key>(s, res.buckets, w, facts, s == kPipelinedTable && r == 0);
      if (s < 3) {
        res.table_bytes = facts.bytes;
        res.huge = facts.huge;
        res.overflowed = facts.overflowed;
        res.refused_queries[s] = facts.refused_queries;
        if (s == kPipelinedTable)
          res.huge_share.push_back(facts.huge_page_share);
        if (s == kPipelinedTable && r == 0)
          res.lines_per_lookup = facts.lines_per_lookup;
      }
      res.insert_rates[s * R + r] = static_cast<double>(w.keys.size()) / run.insert_seconds;
      res.lookup_rates[s * R + r] = static_cast<double>(res.queries) / run.lookup_seconds;
      res.hit_shares[s] = static_cast<double>(run.found) / static_cast<double>(res.queries);
      hits[s] = run.found;
    }
    for (std::size_t s = 0; s < S && res.disagreement.empty(); s++) {
      const std::size_t std_hits = hits[kStdStructure];
      const std::size_t expected = std_hits - (s < 3 ? res.refused_queries[s] : 0);
      if (hits[s] != expected)
        res.disagreement = res.names[s] + " found " + std::to_string(hits[s]) + " of the " +
                           std::to_string(res.queries) + " queries in round " + std::to_string(r + 1) +
                           "; expected " + std::to_string(expected) +
                           (s < 3 ? " (std_unordered_map's " + std::to_string(std_hits) + " less " +
                                        std::to_string(res.refused_queries[s]) + " queries of keys the table refused)"
                                  : " (std_unordered_map's)");
    }
    { // The loop alone, in the caches (warmed by a first pass).
      using Clock = std::chrono::steady_clock;
      std::vector<std::uint64_t> vals(small_queries.size());
      std::vector<unsigned char> hit(small_queries.size());
      small.find_many(small_queries.data(), small_queries.size(), vals.data(), hit.data());
      const auto t0 = Clock::now();
      small.find_many(small_queries.data(), small_queries.size(), vals.data(), hit.data());
      res.in_cache_rates[r] = static_cast<double>(small_queries.size()) /
                              std::chrono::duration<double>(Clock::now() - t0).count();
    }
    // The bound of this round: one chain, then the chain counts at which the sweep below peaks
    // on this machine (shorter runs than the sweep's).
    res.round_latency[r] = 1.0 / chase.lines_per_second(1, std::size_t{1} << 20);
    for (int chains : {32, 48, 64})
      res.round_bound[r] = std::max(res.round_bound[r], chase.lines_per_second(chains, std::size_t{1} << 22));
  }
}

/** Insertion failures per memory layout (share of the secondary region), at the workload's load. */
template <typename Key> void measure_failures(const calibration::HashWorkload<Key>& w, HashResults& res)
{
  res.shares = {0.0, 0.125, 0.25, 0.5};
  for (double share : res.shares) {
    calibration::SimdHashTable<Key> t(res.buckets, share);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < w.keys.size(); i++)
      failed += !t.insert(w.keys[i], i);
    res.failures.push_back(static_cast<double>(failed) / static_cast<double>(w.keys.size()));
  }
}

/** The memory-latency bound: one dependent chain of loads over a buffer of the table's size
 *  gives the latency; independent chains interleaved (as many misses in flight as the core
 *  sustains) give the most random cache lines one core reads per second. A lookup reads at
 *  least one line, so that rate bounds lookups. The sweep runs three times and each chain
 *  count keeps its best rate: a bound must not drop because a neighbour was busy once. */
void measure_bound(const calibration::ChaseBuffer& chase, HashResults& res)
{
  res.chains = {1, 2, 4, 8, 16, 24, 32, 48, 64};
  res.line_rates.assign(res.chains.size(), 0.0);
  for (int sweep = 0; sweep < 3; sweep++)
    for (std::size_t i = 0; i < res.chains.size(); i++)
      res.line_rates[i] = std::max(res.line_rates[i], chase.lines_per_second(static_cast<int>(res.chains[i]),
                                                                             std::size_t{1} << 24));
  res.latency = 1.0 / res.line_rates.front();
  res.bound = *std::max_element(res.line_rates.begin(), res.line_rates.end());
}

void print_report(const HashResults& res)
{
  std::printf("%s keys, %zu buckets (%.0f MiB%s), %zu keys, %zu queries, %.0f %% misses; the table's %s\n",
              res.key.c_str(), res.buckets, static_cast<double>(res.table_bytes) / 1048576.0,
              res.huge ? ", huge pages" : "", res.keys, res.queries, 100 * res.miss,
              res.simd ? "AVX-512 path" : "scalar path (this CPU has no AVX-512F)");
  if (!res.huge_share.empty() && res.huge_share.front() >= 0)
    std::printf("huge pages back %.0f to %.0f %% of the table's memory (the repetitions of the pipelined table)\n",
                100 * *std::min_element(res.huge_share.begin(), res.huge_share.end()),
                100 * *std::max_element(res.huge_share.begin(), res.huge_share.end()));
  std::printf("memory latency %.1f ns (no overlap: %.1f M lookups/s); most random lines/s with misses "
              "overlapped: %.1f M/s (the bound)\n",
              res.latency * 1e9, 1e-6 / res.latency, res.bound / 1e6);
  std::printf("the pipelined table reads %.3f random lines per lookup (buckets and values): its own bound is "
              "%.1f M lookups/s\n",
              res.lines_per_lookup, res.bound / res.lines_per_lookup / 1e6);
  const double absl_rate = res.median(res.lookup_rates, kAbslStructure);
  for (std::size_t s = 0; s < res.names.size(); s++)
    std::printf("  %-30s insert %7.1f M/s  lookup %7.1f M/s (median, %.2f x absl, %3.0f %% of bound)  hits %.4f\n",
                res.names[s].c_str(), res.median(res.insert_rates, s) / 1e6, res.median(res.lookup_rates, s) / 1e6, res.median(res.lookup_rates, s) / absl_rate,
                100 * res.median(res.lookup_rates, s) / res.bound, res.hit_shares[s]);
  std::printf("  pipelined table: %.0f %% of its own bound (%.3f lines per lookup)\n",
              100 * res.median(res.lookup_rates, kPipelinedTable) * res.lines_per_lookup / res.bound, res.lines_per_lookup);
  std::printf("  the lookup loop alone (the same workload on %zu buckets, %.2f MiB, in the caches): %.1f M/s\n",
              res.in_cache_buckets, res.in_cache_bytes / 1048576.0, sorted_median(res.in_cache_rates) / 1e6);
  { // Each round measures every structure, the loop alone and the res.bound within seconds: its
    // ratios hold the host's state, which the medians above, minutes apart, may not.
    std::vector<double> to_absl, to_bound, to_own, to_loop;
    for (std::size_t r = 0; r < res.rounds; r++) {
      const double table = res.lookup_rates[kPipelinedTable * res.rounds + r];
      to_absl.push_back(table / res.lookup_rates[kAbslStructure * res.rounds + r]);
      to_bound.push_back(100 * table / res.round_bound[r]);
      to_own.push_back(100 * table * res.lines_per_lookup / res.round_bound[r]);
      to_loop.push_back(100 * table / res.in_cache_rates[r]);
    }
    const auto range = [](const std::vector<double>& v) {
      return std::make_pair(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
    };
    std::printf("  within each round (bound: median %.1f M lines/s, %.1f to %.1f; latency %.1f ns):\n",
                sorted_median(res.round_bound) / 1e6, range(res.round_bound).first / 1e6,
                range(res.round_bound).second / 1e6, 1e9 * sorted_median(res.round_latency));
    std::printf("    pipelined table / absl: median %.2f x (%.2f to %.2f)\n", sorted_median(to_absl),
                range(to_absl).first, range(to_absl).second);
    std::printf("    pipelined table / bound: median %.0f %% (%.0f to %.0f); of its own bound %.0f %% (%.0f to %.0f)\n",
                sorted_median(to_bound), range(to_bound).first, range(to_bound).second, sorted_median(to_own),
                range(to_own).first, range(to_own).second);
    std::printf("    pipelined table / the loop alone: median %.0f %% (%.0f to %.0f)\n", sorted_median(to_loop),
                range(to_loop).first, range(to_loop).second);
  }
  for (std::size_t k = 0; k < res.shares.size(); k++)
    std::printf("  secondary share %.3f: insertion failures %.4f %%\n", res.shares[k], 100 * res.failures[k]);
  std::printf("  buckets whose overflow filter is set: %.1f %%\n", 100 * res.overflowed);
  std::printf("  queries of keys the table refused: %zu (found by the maps only)\n", res.refused_queries[kPipelinedTable]);
}

calibration::Trace hash_trace(const HashResults& res)
{
  const std::size_t S = res.names.size(), R = res.rounds;
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  std::string structures;
  for (const auto& nm : res.names)
    structures += (structures.empty() ? "" : ",") + nm;
  calibration::Benchmark bm{
      "hash_table",
      {{"key", res.key},
       {"buckets", std::to_string(res.buckets)},
       {"table_bytes", std::to_string(res.table_bytes)},
       {"huge_pages", res.huge ? "yes" : "no"},
       {"keys", std::to_string(res.keys)},
       {"queries", std::to_string(res.queries)},
       {"miss_rate", calibration::parameter_number(res.miss)},
       {"simd_path", res.simd ? "avx512" : "scalar"},
       {"structures", structures},
       {"memory_latency_s", calibration::parameter_number(res.latency)},
       {"memory_bound_lines_per_s", calibration::parameter_number(res.bound)},
       {"lines_per_lookup", calibration::parameter_number(res.lines_per_lookup)},
       {"overflowed_bucket_share", calibration::parameter_number(res.overflowed)},
       {"in_cache_buckets", std::to_string(res.in_cache_buckets)}},
      {{"insert_rate", {res.insert_rates, {S, R}, "1/s"}},
       {"lookup_rate", {res.lookup_rates, {S, R}, "1/s"}},
       {"hit_share", {res.hit_shares, {S}, ""}},
       {"refused_key_queries",
        {std::vector<double>(res.refused_queries.begin(), res.refused_queries.end()), {3}, ""}},
       {"huge_page_share", {res.huge_share, {res.huge_share.size()}, ""}},
       {"secondary_share", {res.shares, {res.shares.size()}, ""}},
       {"insert_failure_rate", {res.failures, {res.shares.size()}, ""}},
       {"chains", {res.chains, {res.chains.size()}, ""}},
       {"random_line_rate", {res.line_rates, {res.line_rates.size()}, "1/s"}},
       {"in_cache_lookup_rate", {res.in_cache_rates, {R}, "1/s"}},
       {"round_memory_latency", {res.round_latency, {R}, "s"}},
       {"round_random_line_rate", {res.round_bound, {R}, "1/s"}}}};
  trace.benchmarks["hash_table"] = bm;
  return trace;
}

/** Bytes per key of the largest map (std, boost, tbb or absl) with what the allocators keep
 *  from the maps before it: measured as the peak resident memory of runs less the rest, 109
 *  to 115 bytes at 1.5 to 23.5 M keys and one repetition, up to 131 just above a power of two
 *  (absl and tbb round their tables up to one) with three; taken from above. */
constexpr double kMapBytesPerKey = 140;
/** The program itself: its code and libraries (Abseil, oneTBB, HDF5), their heaps. */
constexpr double kProgramBytes = 32 << 20;

/** The most float keys make_hash_workload draws: half the distinct finite patterns it draws
 *  from (2^31 - 2^23, the sign bit set), beyond which deduplicating takes ever longer. */
constexpr double kMostFloatKeys = 0x1p30;

/** About the most memory a run holds at once, from above: the program, the workload (keys, queries, the
 *  in-cache table's copy of the queries), the bound's buffer and its cycle (1.125 x the
 *  table), and the larger of one map of every key or the table with the pipelined lookups'
 *  answers (structures are measured one at a time). */
template <typename Key> double peak_memory(std::size_t buckets, std::size_t keys, std::size_t queries)
{
  const double table = static_cast<double>(calibration::SimdHashTable<Key>::bytes_for(buckets));
  const double n = static_cast<double>(keys), q = static_cast<double>(queries), k = sizeof(Key);
  const double answers = q * (sizeof(std::uint64_t) + 1);
  return kProgramBytes + n * k + 2 * q * k + 1.125 * table + std::max(n * kMapBytesPerKey, table + answers);
}

template <typename Key> int run(std::size_t buckets, double load, double miss, std::size_t queries, int reps,
                                const std::string& out)
{
  using Table = calibration::SimdHashTable<Key>;
  HashResults res;
  res.key = sizeof(Key) == 4 ? "float" : "double";
  res.simd = Table::simd_available();
  res.buckets = buckets;
  res.keys = static_cast<std::size_t>(static_cast<double>(buckets * Table::kSlots) * load);
  res.queries = queries;
  res.rounds = static_cast<std::size_t>(reps);
  res.load = load;
  res.miss = miss;
  res.names = calibration::hash_structures();
  if (const int rc = calibration::refuse_beyond_available_memory(
          "calib_hash", peak_memory<Key>(buckets, res.keys, queries),
          "a table of " + std::to_string(buckets) + " buckets, " + std::to_string(res.keys) + " keys in each map and " +
              std::to_string(queries) + " queries"))
    return rc;
  const auto w = calibration::make_hash_workload<Key>(res.keys, miss, queries);
  // The memory-latency bound over a buffer of the table's size, allocated now: each round
  // measures it next to the structures, so that its shares hold the host's state.
  const calibration::ChaseBuffer chase(Table::bytes_for(buckets));
  measure_rounds(w, chase, res);
  measure_failures(w, res);
  measure_bound(chase, res);
  print_report(res);
  // A trace of structures that disagree measured something wrong: none is written (write_trace
  // renames a finished temporary file, so returning first leaves no file behind).
  if (!res.disagreement.empty()) {
    std::fprintf(stderr, "calib_hash: the structures disagree: %s; no trace written\n", res.disagreement.c_str());
    return 1;
  }
  return calibration::write_trace_or_report(out, hash_trace(res));
}

} // namespace

namespace {

int run(int argc, char** argv)
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
  if (calibration::only_checking_options())
    return 0;
  const double slots = static_cast<double>(buckets) * (key == "double" ? 8 : 16);
  if (slots * load < 1)
    return usage("--load " + std::to_string(load) + " of " + std::to_string(static_cast<long long>(slots)) +
                 " slots stores no key; expected at least one");
  if (key == "float" && slots * load > kMostFloatKeys)
    return usage("--buckets " + std::to_string(buckets) + " at --load " + std::to_string(load) + " hold " +
                 std::to_string(static_cast<long long>(slots * load)) +
                 " float keys; expected at most 2^30 (distinct float keys run short beyond)");
  return key == "float" ? run<float>(buckets, load, miss, queries, reps, out)
                        : run<double>(buckets, load, miss, queries, reps, out);
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_hash", run, argc, argv); }
