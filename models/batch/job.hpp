/* A batch job: what the trace says, and what the simulation made of it. */
#pragma once

#include <cstdint>
#include <limits>

namespace batch {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN(); ///< "no value" in outputs

struct Job {
  // From the workload.
  std::int64_t id = 0;
  std::int64_t user = -1, partition = -1, qos = -1;
  std::int64_t cores = 1;   ///< requested
  std::int64_t slots = 1;   ///< what it occupies: cores, or whole nodes
  double submit = 0;
  double requested = 0;     ///< requested time (s); the job is killed when it reaches it
  double trace_run = 0;     ///< run time in the trace
  double runtime = 0;       ///< what it runs here: min(trace run time, requested)
  bool killed = false;      ///< the trace's run time exceeded the request
  // From the simulation.
  double predicted_runtime = 0;   ///< what backfilling uses (EASY++ may raise it)
  double first_prediction = 0;    ///< the run time predicted at submission
  double scheduler_prediction = kNone; ///< start predicted by the first plan that tested it
  double reservation = kNone;     ///< earliest reservation it held (backfilling)
  double start = kNone, end = kNone;
  bool backfilled = false;        ///< started ahead of a waiting job with higher priority
  double priority = 0;
};

} // namespace batch
