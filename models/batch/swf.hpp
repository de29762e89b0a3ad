/* Standard Workload Format 2.2 (Feitelson's Parallel Workloads Archive): the 18 fields of a
 * job, header comments, and the options that select and scale a workload. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace batch {

/** One SWF line: the 18 fields, -1 where unknown. */
struct SwfRecord {
  std::int64_t id = -1;
  double submit = -1, wait = -1, run = -1;
  std::int64_t allocated_procs = -1;
  double avg_cpu = -1, used_memory = -1;
  std::int64_t requested_procs = -1;
  double requested_time = -1, requested_memory = -1;
  std::int64_t status = -1; ///< 1 completed, 0 failed, 5 cancelled, -1 unknown
  std::int64_t user = -1, group = -1, application = -1, queue = -1, partition = -1, preceding_job = -1;
  double think_time = -1;
  std::int64_t line = 0; ///< in the file
};

struct SwfHeader {
  std::int64_t max_procs = -1, max_nodes = -1;
  double unix_start_time = -1;
  double timezone = 0; ///< s east of UTC ("TimeZone")
};

struct SwfOptions {
  std::int64_t first_jobs = 0;   ///< keep the first N jobs (0: all)
  double window_start = 0;       ///< keep jobs submitted in [start, end) (s, trace time)
  double window_end = -1;        ///< -1: no end
  double load_factor = 1;        ///< > 1 compresses inter-arrival times (more load)
  bool keep_cancelled = true;    ///< cancelled (5) and failed (0) jobs
};

struct SwfTrace {
  SwfHeader header;
  std::vector<SwfRecord> records;
  std::int64_t extra_field_lines = 0; ///< lines with more than 18 fields (accepted)
  std::int64_t dropped_status = 0;    ///< cancelled or failed jobs left out
};

/** Reads `path`. Malformed lines raise simcore::InputError naming path:line and the field;
 *  lines with extra trailing fields are accepted and counted. */
SwfTrace read_swf(const std::string& path, const SwfOptions& options);

} // namespace batch
