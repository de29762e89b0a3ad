/* Jobs of a simulation from an SWF trace: cores, requested and actual run times, and what
 * is left out (jobs larger than the machine, unknown sizes or run times). */
#pragma once

#include "job.hpp"
#include "swf.hpp"

#include <cstdint>
#include <vector>

namespace batch {

struct Workload {
  std::vector<Job> jobs;        ///< by submit time, then id
  std::int64_t too_large = 0;   ///< asked for more cores than the machine has: skipped
  std::int64_t unknown = 0;     ///< no core count or no run time: skipped
  std::int64_t killed = 0;      ///< ran longer than requested in the trace: cut at the request
};

/** `repeat` > 1 appends the trace again, shifted by its span each time (a long synthetic
 *  workload with the same statistics). */
Workload make_workload(const SwfTrace& trace, std::int64_t total_cores, std::int64_t repeat = 1);

} // namespace batch
