/* What is known about a job when it is submitted, as features for wait-time prediction: the
 * request, the user's history, the queue and the running jobs, the time of day and week. */
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace batch {

constexpr int kWaitFeatures = 13;
extern const char* const kWaitFeatureNames[kWaitFeatures];

using WaitFeatures = std::array<float, kWaitFeatures>;

/** The scheduler's state at a submission (from Scheduler::state_at_submit). */
struct QueueState {
  double queued_jobs = 0;
  double work_ahead = 0;        ///< core-seconds requested by queued jobs of at least its priority
  double running_jobs = 0;
  double running_remaining = 0; ///< core-seconds the running jobs may still use (requested)
  double free_cores = 0;
};

/** Per-user history, only from what has happened by the submission. */
class UserHistory {
public:
  void started(std::int64_t user, double wait);
  void finished(std::int64_t user, double runtime);
  double jobs(std::int64_t user) const;
  double mean_runtime(std::int64_t user) const; ///< -1 when none finished yet
  double mean_wait(std::int64_t user) const;    ///< -1 when none started yet

private:
  struct Sums {
    double started = 0, wait = 0, finished = 0, runtime = 0;
  };
  std::map<std::int64_t, Sums> users_;
};

/** `unix_start` and `timezone` (s) place trace time 0 in local time (for hour and weekday). */
WaitFeatures wait_features(double cores, double requested, double submit, const QueueState& q,
                           const UserHistory& h, std::int64_t user, double unix_start, double timezone);

} // namespace batch
