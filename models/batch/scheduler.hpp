/* The scheduler's decisions, apart from time: the queue in priority order, a main pass that
 * starts jobs in that order until one does not fit, and a backfill pass (EASY: a reservation
 * for the first job that does not fit; conservative: one for every job it tests) with
 * Slurm's bf_window, bf_resolution, bf_max_job_test and bf_continue. */
#pragma once

#include "availability_profile.hpp"
#include "cluster.hpp"
#include "job.hpp"
#include "priority.hpp"
#include "runtime_predictor.hpp"
#include "wait_features.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace batch {

enum class Backfill { None, Easy, Conservative };

struct SchedulerConfig {
  Backfill backfill = Backfill::Easy;
  double bf_window = 86400;      ///< s (Slurm: bf_window = 1440 min)
  double bf_resolution = 60;     ///< s
  std::int64_t bf_max_job_test = 500;
  bool bf_continue = false;
};

class Scheduler {
public:
  using StartFunction = std::function<void(Job&)>;
  Scheduler(Cluster& cluster, SchedulerConfig config, Priority& priority, RuntimePredictor& predictor,
            StartFunction on_start);

  void submit(Job& job);
  void finish(Job& job, double now);
  /** Starts queued jobs in priority order while they fit. */
  void main_pass(double now);
  /** Plans the queue and starts what fits without delaying a reservation. */
  void backfill_pass(double now);

  /** The queue and the running jobs as `job` (just submitted) sees them. */
  QueueState state_at_submit(const Job& job, double now) const;

  bool idle() const { return queue_.empty(); }
  std::size_t queued() const { return queue_.size(); }
  std::int64_t started_by_backfill() const { return backfilled_; }
  /** The last backfill pass stopped at bf_max_job_test with jobs left untested. */
  bool cut_short() const { return cut_short_; }

private:
  void order_queue(double now);
  void start(Job& job, double now);
  double round_up(double time) const; ///< to the next multiple of bf_resolution

  Cluster& cluster_;
  SchedulerConfig c_;
  Priority& priority_;
  RuntimePredictor& predictor_;
  StartFunction on_start_;
  std::vector<Job*> queue_;   ///< waiting
  std::vector<Job*> running_;
  std::size_t resume_at_ = 0; ///< bf_continue: where the last limited pass stopped
  std::int64_t backfilled_ = 0;
  bool cut_short_ = false;
};

} // namespace batch
