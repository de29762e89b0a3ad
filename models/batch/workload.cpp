#include "workload.hpp"

#include <algorithm>

namespace batch {

Workload make_workload(const SwfTrace& trace, std::int64_t total_cores, std::int64_t repeat)
{
  Workload w;
  double first = 0, last = 0;
  if (!trace.records.empty()) {
    first = trace.records.front().submit;
    last = first;
    for (const auto& r : trace.records)
      last = std::max(last, r.submit);
  }
  const double span = last - first + 1;
  std::int64_t next_id = 0;
  for (std::int64_t k = 0; k < repeat; k++)
    for (const auto& r : trace.records) {
      const std::int64_t cores = r.requested_procs > 0 ? r.requested_procs : r.allocated_procs;
      if (cores <= 0 || r.run < 0) {
        w.unknown += k == 0;
        continue;
      }
      if (cores > total_cores) {
        w.too_large += k == 0;
        continue;
      }
      Job j;
      j.id = repeat == 1 ? r.id : next_id;
      next_id++;
      j.user = r.user;
      j.partition = r.partition;
      j.qos = r.queue;
      j.cores = cores;
      j.submit = r.submit - first + static_cast<double>(k) * span;
      j.trace_run = r.run;
      j.requested = r.requested_time > 0 ? r.requested_time : r.run;
      j.killed = r.run > j.requested;
      j.runtime = std::min(r.run, j.requested);
      w.killed += j.killed && k == 0;
      w.jobs.push_back(j);
    }
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const Job& a, const Job& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  return w;
}

} // namespace batch
