/* Intra-node copies of data that another core has just written, as MPI's shared-memory
 * transport makes them (a rank packs its halo, a neighbour on the node copies it out): per
 * size, one copy alone (one core writes, another copies) and all cores at once (each writes
 * its own buffer, then copies its neighbour's), every repetition kept. The halo model's
 * detailed mode charges intra-node copies at these rates where the data fits the caches;
 * STREAM's rate (arrays far larger than the caches) holds beyond. Writes a calibration trace.
 *   calib_copy [--min-bytes B] [--max-bytes B] [--copiers N] [--repetitions R] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"
#include "spin_barrier.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

/** The CPUs of a "0-3,8,10-11" list (the kernel's cpulist format); empty when unreadable. */
std::vector<int> cpu_list(const std::string& path)
{
  std::ifstream in(path);
  std::string text;
  std::vector<int> out;
  if (!(in >> text))
    return out;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto dash = item.find('-');
    const int lo = std::atoi(item.substr(0, dash).c_str());
    const int hi = dash == std::string::npos ? lo : std::atoi(item.substr(dash + 1).c_str());
    for (int c = lo; c <= hi; c++)
      out.push_back(c);
  }
  return out;
}

/** The CPUs this process may run on, one per core (the lowest of each core's hardware threads
 *  allowed: two threads of one core share its caches, and a copy between them would never
 *  cross cores), in increasing order. */
std::vector<int> allowed_cpus()
{
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return cpus;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set))
      continue;
    bool first_of_core = true;
    for (int sibling : cpu_list("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/thread_siblings_list"))
      first_of_core = first_of_core && !(sibling < c && sibling >= 0 && sibling < CPU_SETSIZE && CPU_ISSET(sibling, &set));
    if (first_of_core)
      cpus.push_back(c);
  }
  return cpus;
}

void pin_to(int cpu)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct Buffers {
  std::size_t bytes = 0;
  char* data = nullptr;
  /** `b` bytes on a page boundary (aligned_alloc takes a multiple of the alignment). */
  explicit Buffers(std::size_t b) : bytes(b), data(static_cast<char*>(std::aligned_alloc(4096, (b + 4095) / 4096 * 4096)))
  {
    if (data == nullptr)
      throw std::bad_alloc();
  }
  ~Buffers() { std::free(data); }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

/** Times (s) of every copy: [size][repetition] of the lone copier, and of the slowest of all
 *  copiers in each repetition. */
struct CopyTimes {
  std::vector<double> alone, all;
  int wrong = 0; ///< copies whose first or last byte is not what the writer wrote
};

CopyTimes measure(const std::vector<std::size_t>& sizes, const std::vector<int>& cpus, int reps)
{
  const int n = static_cast<int>(cpus.size());
  const std::size_t largest = sizes.back();
  // Allocated here (a failure is bad input, in the main thread), first touched by the thread
  // that owns them: on a node of several memory domains each buffer lies in its owner's
  // domain, as a rank's halo does.
  std::vector<std::unique_ptr<Buffers>> src, dst;
  for (int i = 0; i < n; i++) {
    src.push_back(std::make_unique<Buffers>(largest));
    dst.push_back(std::make_unique<Buffers>(largest));
  }
  std::vector<std::vector<double>> alone(sizes.size()), mine(static_cast<std::size_t>(n));
  calibration::SpinBarrier barrier(n);
  std::vector<int> wrong(static_cast<std::size_t>(n), 0);
  auto body = [&](int i) {
    pin_to(cpus[static_cast<std::size_t>(i)]);
    std::memset(src[static_cast<std::size_t>(i)]->data, 0, largest);
    std::memset(dst[static_cast<std::size_t>(i)]->data, 0, largest);
    barrier.wait();
    char* const own = src[static_cast<std::size_t>(i)]->data;
    char* const out = dst[static_cast<std::size_t>(i)]->data;
    const char* const neighbour = src[static_cast<std::size_t>((i + 1) % n)]->data;
    for (std::size_t k = 0; k < sizes.size(); k++) {
      const std::size_t s = sizes[k];
      for (int all = 0; all < 2; all++)
        for (int r = -1; r < reps; r++) { // one repetition to warm up, not kept
          const char value = static_cast<char>(1 + (r + 2) % 100);
          const bool writes = all || i == 0, copies = all || i == 1;
          if (writes)
            std::memset(own, value, s);
          barrier.wait();
          if (copies) {
            const char* from = all ? neighbour : src[0]->data;
            const auto t0 = std::chrono::steady_clock::now();
            std::memcpy(out, from, s);
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (out[0] != value || out[s - 1] != value)
              wrong[static_cast<std::size_t>(i)]++;
            if (r >= 0)
              (all ? mine[static_cast<std::size_t>(i)] : alone[k]).push_back(t);
          }
          barrier.wait();
        }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < n; i++)
    pool.emplace_back(body, i);
  for (auto& t : pool)
    t.join();
  CopyTimes out;
  for (std::size_t k = 0; k < sizes.size(); k++)
    for (int r = 0; r < reps; r++) {
      out.alone.push_back(alone[k][static_cast<std::size_t>(r)]);
      double slowest = 0;
      for (const auto& m : mine)
        slowest = std::max(slowest, m[k * static_cast<std::size_t>(reps) + static_cast<std::size_t>(r)]);
      out.all.push_back(slowest);
    }
  for (int w : wrong)
    out.wrong += w;
  return out;
}

double median_of(std::vector<double> v)
{
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

int run(int argc, char** argv)
{
  long long min_bytes = 4096, max_bytes = 64LL << 20;
  int reps = 51, copiers = 0;
  std::string out;
  const auto usage = [](const std::string& why) {
    return calibration::refuse_command_line(
        "calib_copy", "[--min-bytes B] [--max-bytes B] [--copiers N] [--repetitions R] -o TRACE.h5", why);
  };
  const std::string problem =
      calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
        using namespace calibration;
        if (a == "--min-bytes")
          return read_whole(a, v, 1, 1LL << 40, "a whole number of bytes from 1 to 2^40", min_bytes);
        if (a == "--max-bytes")
          return read_whole(a, v, 1, 1LL << 40, "a whole number of bytes from 1 to 2^40", max_bytes);
        if (a == "--repetitions")
          return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", reps);
        if (a == "--copiers")
          return read_whole(a, v, 2, 65536, "a whole number of threads from 2 to 65536", copiers);
        return std::nullopt;
      });
  if (!problem.empty())
    return usage(problem);
  if (calibration::only_checking_options())
    return 0;
  if (min_bytes > max_bytes)
    return usage("--min-bytes " + std::to_string(min_bytes) + " is larger than --max-bytes " +
                 std::to_string(max_bytes) + "; expected min <= max");
  std::vector<int> cpus = allowed_cpus();
  // Every thread spins at the barrier: each needs a core of its own, or a copy would wait
  // for a thread that is not running.
  if (cpus.size() < 2) { // nothing to measure here, and nothing wrong: 77, as automake's "skipped"
    std::fprintf(stderr, "calib_copy: this process may run on %zu core; expected at least 2 (a writer and a copier on "
                         "different cores); no trace written\n", cpus.size());
    return 77;
  }
  if (copiers > static_cast<int>(cpus.size()))
    return usage("--copiers " + std::to_string(copiers) + ": this process may run on " + std::to_string(cpus.size()) +
                 " cores; expected at most that many (each copier spins on a core of its own)");
  if (copiers > 0)
    cpus.resize(static_cast<std::size_t>(copiers));
  const int n = static_cast<int>(cpus.size());
  std::vector<std::size_t> sizes; // powers of two from the smallest, and the largest itself
  for (auto s = static_cast<std::size_t>(min_bytes); s < static_cast<std::size_t>(max_bytes); s *= 2)
    sizes.push_back(s);
  sizes.push_back(static_cast<std::size_t>(max_bytes));
  if (const int rc = calibration::refuse_beyond_available_memory(
          "calib_copy", 2.0 * n * static_cast<double>(max_bytes),
          "two buffers of --max-bytes " + std::to_string(max_bytes) + " for each of " + std::to_string(n) + " copiers"))
    return rc;
  const CopyTimes t = measure(sizes, cpus, reps);
  if (t.wrong > 0) {
    std::fprintf(stderr, "calib_copy: %d copies did not hold what was written; no trace written\n", t.wrong);
    return 1;
  }
  const auto rows = sizes.size(), cols = static_cast<std::size_t>(reps);
  calibration::Dataset bytes{{}, {rows}, "B"}, alone{t.alone, {rows, cols}, "s"}, all{t.all, {rows, cols}, "s"};
  for (std::size_t k = 0; k < rows; k++) {
    bytes.values.push_back(static_cast<double>(sizes[k]));
    const std::vector<double> a(t.alone.begin() + static_cast<std::ptrdiff_t>(k * cols),
                                t.alone.begin() + static_cast<std::ptrdiff_t>((k + 1) * cols)),
        b(t.all.begin() + static_cast<std::ptrdiff_t>(k * cols), t.all.begin() + static_cast<std::ptrdiff_t>((k + 1) * cols));
    std::printf("%10zu B: alone %7.2f GB/s, %d at once %7.2f GB/s each (medians)\n", sizes[k],
                static_cast<double>(sizes[k]) / median_of(a) / 1e9, n, static_cast<double>(sizes[k]) / median_of(b) / 1e9);
  }
  std::string pinned;
  for (int c : cpus)
    pinned += (pinned.empty() ? "" : ",") + std::to_string(c);
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  calibration::Benchmark bm;
  bm.name = "cached_copy";
  bm.parameters = {{"copiers", std::to_string(n)},
                   {"cpus", pinned},
                   {"repetitions", std::to_string(reps)},
                   {"what", "memcpy of a buffer another core has just written; alone_seconds: one copier (CPU " +
                                std::to_string(cpus[1]) + ", the writer on " + std::to_string(cpus[0]) +
                                "); all_seconds: every copier at once, each copying its neighbour's buffer, the "
                                "slowest copy of each repetition"}};
  bm.datasets = {{"bytes", bytes}, {"alone_seconds", alone}, {"all_seconds", all}};
  trace.benchmarks["cached_copy"] = bm;
  return calibration::write_trace_or_report(out, trace);
}

} // namespace

int main(int argc, char** argv) { return calibration::main_of("calib_copy", run, argc, argv); }
