/* The memory-latency bound of calib_hash: a buffer of a table's size (huge pages, as the
 * table) holding one random cycle through its cache lines; one dependent chain of loads over
 * it gives the memory latency, independent chains interleaved in one thread the most random
 * cache lines one core reads per second. Private to the benchmark. */
#pragma once

#include "calibration/simd_hash_table.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

namespace calibration {

struct ChaseBuffer {
  std::size_t lines, bytes;
  std::size_t* next;
  std::vector<std::size_t> cycle; ///< the lines in the order the cycle visits them
  explicit ChaseBuffer(std::size_t b) : lines(std::max<std::size_t>(b / 64, 64)), bytes(lines * 64), cycle(lines)
  {
    next = static_cast<std::size_t*>(calibration::huge_alloc(bytes));
    std::iota(cycle.begin(), cycle.end(), 0);
    std::mt19937_64 rng(3);
    std::shuffle(cycle.begin(), cycle.end(), rng);
    for (std::size_t i = 0; i < lines; i++) // one cycle through every line, 8 words a line
      next[cycle[i] * 8] = cycle[(i + 1) % lines] * 8;
  }
  ~ChaseBuffer() { calibration::huge_free(next, bytes); }
  ChaseBuffer(const ChaseBuffer&) = delete;
  ChaseBuffer& operator=(const ChaseBuffer&) = delete;
  /** Random cache lines read per second by `chains` (1 to 64) independent dependent-load
   *  chains interleaved in one thread (chains = 1: the inverse of the memory latency). */
  double lines_per_second(int chains, std::size_t steps) const
  {
    using Clock = std::chrono::steady_clock;
    std::size_t p[64];
    // Evenly spaced along the cycle. Started at random points of it (as lines evenly spaced
    // in memory are), two chains can start a few thousand steps apart, and the one behind then
    // reads what the other read moments before, from the cache: a rate of cache hits, not of
    // memory lines. So spaced, a chain reads each line lines / chains rounds after the chain
    // ahead of it did, after every chain has read the whole buffer's worth of other lines.
    for (int c = 0; c < chains; c++)
      p[c] = cycle[static_cast<std::size_t>(c) * (lines / static_cast<std::size_t>(chains))] * 8;
    const std::size_t rounds = steps / static_cast<std::size_t>(chains);
    const auto t0 = Clock::now();
    for (std::size_t r = 0; r < rounds; r++)
      for (int c = 0; c < chains; c++)
        p[c] = next[p[c]];
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    std::size_t sink = 0;
    for (int c = 0; c < chains; c++)
      sink += p[c];
    if (sink == 1)
      std::printf(" ");
    return static_cast<double>(rounds * static_cast<std::size_t>(chains)) / t;
  }
};

} // namespace calibration
