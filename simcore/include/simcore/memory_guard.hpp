/* A limit on the memory a run may take: a run past it ends with a clear message instead of
 * being killed by the system (or swapping the machine to a halt) hours later. */
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace simcore {

/** This process's resident memory (RSS), in bytes; 0 where /proc cannot be read.
 *  Allocates nothing: safe from any thread at any time. */
std::uint64_t resident_memory_bytes();

/** Memory this process could still take, in bytes: the system's MemAvailable, or less where a
 *  control group (v2 memory.max, v1 memory.limit_in_bytes) leaves less. 0 where unknown. */
std::uint64_t available_memory_bytes();

/** The default limit of a run that shares the machine with `jobs - 1` others started with
 *  it: this process's resident memory plus 90 % of available_memory_bytes() / jobs.
 *  0 (no limit) where the available memory is unknown. */
std::uint64_t default_memory_limit(int jobs = 1);

/** A memory limit as written by a user ("8GiB", "500MB", "none"), for RunOptions::max_memory_bytes:
 *  a size from 1 MiB to below 2^63 B, or "none" (UINT64_MAX: no limit). InputError naming
 *  `option` (e.g. "--max-memory") otherwise. */
std::uint64_t parse_memory_limit(const std::string& text, const std::string& option);

/** "12.3 GiB", "512 MiB". */
std::string format_memory(std::uint64_t bytes);

/** While alive, a thread of its own reads the process's resident memory every 50 ms. Past
 *  `limit_bytes` it writes `prefix + message` (and a newline where `end_line`) to `fd`, where
 *  the message names `where` (the scenario), the memory, the limit and how it was set
 *  (`how_set`), and ends the process at once with exit code 2 (kExitBadInput: the scenario is too large for this limit).
 *
 *  It also checks when it is made and when it is stopped, so that a short run past its limit
 *  is ended whatever the thread's scheduling. Ending at once loses nothing: it watches until
 *  stop(), which a run calls before it writes
 *  any result file. The thread allocates nothing, so a fork() of the watched process (a
 *  child that asks routes) never inherits a lock it held. A limit of 0 watches nothing. */
class MemoryGuard {
public:
  MemoryGuard(std::uint64_t limit_bytes, const std::string& where, const std::string& how_set, int fd,
              const std::string& prefix, bool end_line);
  ~MemoryGuard();
  MemoryGuard(const MemoryGuard&) = delete;
  MemoryGuard& operator=(const MemoryGuard&) = delete;
  /** Stops watching; waits for the thread. */
  void stop();
  std::uint64_t limit_bytes() const { return limit_; }
  /** Refuses, before the simulation runs, a run that will need more than its limit: InputError
   *  at the scenario when the resident memory now and `more_bytes` (what the run is sure to
   *  take from here on: `what`, e.g. "12,000,000 operation records of 144 B") pass the limit. */
  void require(std::uint64_t more_bytes, const std::string& what) const;

private:
  void watch();
  [[noreturn]] void end_process(std::uint64_t resident) const;

  std::uint64_t limit_;
  std::string where_;
  std::string how_set_;
  int fd_;
  std::string head_; ///< prefix + "where: the run took "
  std::string tail_; ///< " of memory, past its limit of ...; expected ..."
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace simcore
