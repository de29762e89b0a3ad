/* Memory-bound lookups: the SIMD hash table (AVX-512 bucket probes, one lookup at a time and
 * batched with the buckets of later lookups prefetched) against std::unordered_map, boost::unordered_map, absl::flat_hash_map and
 * tbb::concurrent_hash_map on the same workload in the same run: insert N random keys, then
 * look up queries of which --miss-rate are absent. Also the insertion failure rate of the
 * table per memory layout (share of the secondary region), and the memory-latency bound
 * (one dependent access over a buffer of the table's size per lookup).
 *   calib_hash [--buckets B] [--load 0.7] [--miss-rate 0.9] [--queries Q] [--repetitions R]
 *              [--key float|double] -o TRACE.h5 */
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
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/** Average latency (s) of dependent loads over `bytes` of memory (a random cycle of
 *  cache-line-sized steps). */
double memory_latency(std::size_t bytes, std::size_t steps)
{
  const std::size_t lines = std::max<std::size_t>(bytes / 64, 2);
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(3);
  std::shuffle(order.begin() + 1, order.end(), rng);
  std::vector<std::size_t> next(lines * 8); // one index per cache line (8 words a line)
  for (std::size_t i = 0; i < lines; i++)
    next[order[i] * 8] = order[(i + 1) % lines] * 8;
  std::size_t p = 0;
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < steps; i++)
    p = next[p];
  const double t = since(t0);
  if (p == 1)
    std::printf(" ");
  return t / static_cast<double>(steps);
}

template <typename Key> int run(std::size_t buckets, double load, double miss, std::size_t queries, int reps,
                                const std::string& out)
{
  using Table = calibration::SimdHashTable<Key>;
  using Bits = typename Table::Bits;
  std::mt19937_64 rng(17);
  // Present keys are negative, absent ones positive: a query is a miss exactly when meant to be.
  std::uniform_real_distribution<Key> u(static_cast<Key>(-1e9), static_cast<Key>(-1)),
      other(static_cast<Key>(1), static_cast<Key>(1e9));
  const std::size_t n = static_cast<std::size_t>(static_cast<double>(buckets * Table::kSlots) * load);
  std::vector<Key> keys(n);
  for (auto& k : keys)
    k = u(rng);
  std::vector<Key> q(queries);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::bernoulli_distribution absent(miss);
  for (auto& k : q)
    k = absent(rng) ? other(rng) : keys[pick(rng)];

  const char* names[] = {"simd_table", "simd_table_prefetch", "std_unordered_map", "boost_unordered_map",
                         "absl_flat_hash_map", "tbb_concurrent_hash_map"};
  constexpr int kStructures = 6;
  calibration::Dataset ins{{}, {kStructures, static_cast<std::size_t>(reps)}, "1/s"},
      look{{}, {kStructures, static_cast<std::size_t>(reps)}, "1/s"}, hits{{}, {kStructures}, ""};
  std::vector<double> ins_v(kStructures * static_cast<std::size_t>(reps)), look_v(ins_v.size()), hit_v(kStructures);
  std::size_t table_bytes = 0;
  for (int r = 0; r < reps; r++) {
    for (int s = 0; s < kStructures; s++) {
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
      if (s < 2) {
        Table t(buckets, 0.25);
        table_bytes = t.bytes();
        std::vector<std::uint64_t> vals(s == 1 ? q.size() : 0);
        std::vector<unsigned char> hit(vals.size());
        measure([&] { for (std::size_t i = 0; i < n; i++) t.insert(keys[i], i); },
                [&] {
                  if (s == 1) // batched, the next lookups' buckets prefetched
                    return t.find_many(q.data(), q.size(), vals.data(), hit.data());
                  std::size_t f = 0;
                  std::uint64_t v;
                  for (Key k : q)
                    f += t.find(k, v);
                  return f;
                });
      } else if (s == 2) {
        std::unordered_map<Bits, std::uint64_t> m;
        m.reserve(n);
        measure([&] { for (std::size_t i = 0; i < n; i++) { Bits b; std::memcpy(&b, &keys[i], sizeof b); m.emplace(b, i); } },
                [&] { std::size_t f = 0; for (Key k : q) { Bits b; std::memcpy(&b, &k, sizeof b); f += m.count(b); } return f; });
      } else if (s == 3) {
        boost::unordered_map<Bits, std::uint64_t> m;
        m.reserve(n);
        measure([&] { for (std::size_t i = 0; i < n; i++) { Bits b; std::memcpy(&b, &keys[i], sizeof b); m.emplace(b, i); } },
                [&] { std::size_t f = 0; for (Key k : q) { Bits b; std::memcpy(&b, &k, sizeof b); f += m.count(b); } return f; });
      } else if (s == 4) {
        absl::flat_hash_map<Bits, std::uint64_t> m;
        m.reserve(n);
        measure([&] { for (std::size_t i = 0; i < n; i++) { Bits b; std::memcpy(&b, &keys[i], sizeof b); m.emplace(b, i); } },
                [&] { std::size_t f = 0; for (Key k : q) { Bits b; std::memcpy(&b, &k, sizeof b); f += m.contains(b); } return f; });
      } else {
        tbb::concurrent_hash_map<Bits, std::uint64_t> m(n);
        measure([&] { for (std::size_t i = 0; i < n; i++) { Bits b; std::memcpy(&b, &keys[i], sizeof b); m.emplace(b, i); } },
                [&] { std::size_t f = 0; for (Key k : q) { Bits b; std::memcpy(&b, &k, sizeof b); f += m.count(b); } return f; });
      }
      ins_v[static_cast<std::size_t>(s * reps + r)] = static_cast<double>(n) / ti;
      look_v[static_cast<std::size_t>(s * reps + r)] = static_cast<double>(queries) / tl;
      hit_v[static_cast<std::size_t>(s)] = static_cast<double>(found) / static_cast<double>(queries);
    }
  }
  ins.values = ins_v;
  look.values = look_v;
  hits.values = hit_v;
  // Insertion failures per memory layout (share of the secondary region), at this load.
  const std::vector<double> shares{0.0, 0.125, 0.25, 0.5};
  calibration::Dataset layout{shares, {shares.size()}, ""}, failures{{}, {shares.size()}, ""};
  for (double share : shares) {
    Table t(buckets, share);
    std::size_t failed = 0;
    for (std::size_t i = 0; i < n; i++)
      failed += !t.insert(keys[i], i);
    failures.values.push_back(static_cast<double>(failed) / static_cast<double>(n));
  }
  const double latency = memory_latency(table_bytes, 20'000'000);
  std::printf("%s keys, %zu buckets (%.0f MiB), %zu keys, %zu queries, %.0f %% misses\n", sizeof(Key) == 4 ? "float" : "double",
              buckets, static_cast<double>(table_bytes) / 1048576.0, n, queries, 100 * miss);
  std::printf("memory latency %.1f ns: bound %.1f M lookups/s\n", latency * 1e9, 1e-6 / latency);
  for (int s = 0; s < kStructures; s++) {
    std::vector<double> l(look_v.begin() + s * reps, look_v.begin() + (s + 1) * reps), i(ins_v.begin() + s * reps, ins_v.begin() + (s + 1) * reps);
    std::sort(l.begin(), l.end());
    std::sort(i.begin(), i.end());
    std::printf("  %-24s insert %7.1f M/s  lookup %7.1f M/s (median)  hits %.3f\n", names[s], i[i.size() / 2] / 1e6,
                l[l.size() / 2] / 1e6, hit_v[static_cast<std::size_t>(s)]);
  }
  for (std::size_t k = 0; k < shares.size(); k++)
    std::printf("  secondary share %.3f: insertion failures %.4f %%\n", shares[k], 100 * failures.values[k]);

  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes();
  std::string structures;
  for (const char* nm : names)
    structures += (structures.empty() ? "" : ",") + std::string(nm);
  calibration::Benchmark bm{"hash_table",
                            {{"key", sizeof(Key) == 4 ? "float" : "double"},
                             {"buckets", std::to_string(buckets)},
                             {"table_bytes", std::to_string(table_bytes)},
                             {"keys", std::to_string(n)},
                             {"queries", std::to_string(queries)},
                             {"miss_rate", std::to_string(miss)},
                             {"simd_path", Table::simd_available() ? "avx512" : "scalar"},
                             {"structures", structures},
                             {"memory_latency_s", std::to_string(latency)}},
                            {{"insert_rate", ins}, {"lookup_rate", look}, {"hit_share", hits},
                             {"secondary_share", layout}, {"insert_failure_rate", failures}}};
  trace.benchmarks["hash_table"] = bm;
  try {
    calibration::write_trace(out, trace);
  } catch (const simcore::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  std::size_t buckets = std::size_t{1} << 20, queries = 10'000'000;
  double load = 0.7, miss = 0.9;
  int reps = 3;
  std::string key = "float", out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--buckets") buckets = std::strtoull(v, nullptr, 10);
    else if (a == "--load") load = std::atof(v);
    else if (a == "--miss-rate") miss = std::atof(v);
    else if (a == "--queries") queries = std::strtoull(v, nullptr, 10);
    else if (a == "--repetitions") reps = std::atoi(v);
    else if (a == "--key") key = v;
    else if (a == "-o") out = v;
    else {
      std::fprintf(stderr, "calib_hash: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (out.empty() || buckets < 2 || load <= 0 || load > 1 || miss < 0 || miss > 1 || reps < 1 ||
      (key != "float" && key != "double")) {
    std::fprintf(stderr, "usage: calib_hash [--buckets B] [--load L] [--miss-rate M] [--queries Q] [--repetitions R] "
                         "[--key float|double] -o TRACE.h5\n");
    return 2;
  }
  return key == "float" ? run<float>(buckets, load, miss, queries, reps, out)
                        : run<double>(buckets, load, miss, queries, reps, out);
}
