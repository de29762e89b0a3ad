#include "scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace batch {

Scheduler::Scheduler(Cluster& cluster, SchedulerConfig config, Priority& priority, RuntimePredictor& predictor,
                     StartFunction on_start)
    : cluster_(cluster), c_(config), priority_(priority), predictor_(predictor), on_start_(std::move(on_start))
{
}

void Scheduler::submit(Job& job)
{
  job.predicted_runtime = predictor_.predict(job);
  job.first_prediction = job.predicted_runtime;
  if (priority_.multifactor())
    priority_.fairshare().add_user(job.user);
  queue_.push_back(&job);
}

QueueState Scheduler::state_at_submit(const Job& job, double now) const
{
  QueueState q;
  const double mine = priority_.multifactor() ? priority_.of(job, now) : -job.submit;
  for (const Job* j : queue_) {
    if (j == &job)
      continue;
    q.queued_jobs += 1;
    const double p = priority_.multifactor() ? priority_.of(*j, now) : -j->submit;
    if (p >= mine)
      q.work_ahead += static_cast<double>(j->cores) * j->requested;
  }
  double busy = 0;
  for (const Job* r : running_) {
    q.running_jobs += 1;
    q.running_remaining += static_cast<double>(r->cores) * std::max(0.0, r->start + r->requested - now);
    busy += static_cast<double>(r->cores);
  }
  q.free_cores = static_cast<double>(cluster_.total_cores()) - busy;
  return q;
}

void Scheduler::finish(Job& job, double now)
{
  running_.erase(std::find(running_.begin(), running_.end(), &job));
  predictor_.finished(job);
  if (priority_.multifactor())
    priority_.fairshare().charge(job.user, static_cast<double>(job.cores) * job.runtime, now);
}

void Scheduler::order_queue(double now)
{
  if (priority_.multifactor())
    for (Job* j : queue_)
      j->priority = priority_.of(*j, now);
  else
    for (Job* j : queue_)
      j->priority = -j->submit;
  std::stable_sort(queue_.begin(), queue_.end(), [](const Job* a, const Job* b) {
    if (a->priority != b->priority)
      return a->priority > b->priority;
    if (a->submit != b->submit)
      return a->submit < b->submit;
    return a->id < b->id;
  });
}

void Scheduler::start(Job& job, double now)
{
  job.start = now;
  job.end = now + job.runtime;
  running_.push_back(&job);
  on_start_(job);
}

void Scheduler::main_pass(double now)
{
  order_queue(now);
  std::size_t started = 0;
  for (Job* j : queue_) {
    if (j->slots > cluster_.free_slots())
      break; // the highest-priority job that does not fit blocks the ones after it
    start(*j, now);
    started++;
  }
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(started));
}

double Scheduler::round_up(double t) const
{
  if (c_.bf_resolution <= 0)
    return t;
  return std::ceil(t / c_.bf_resolution) * c_.bf_resolution;
}

void Scheduler::backfill_pass(double now)
{
  cut_short_ = false;
  if (c_.backfill == Backfill::None || queue_.empty())
    return;
  order_queue(now);
  const double horizon = now + c_.bf_window;
  AvailabilityProfile profile(now, cluster_.total_slots()); // running jobs lower it below
  for (Job* r : running_) {
    double predicted_end = r->start + r->predicted_runtime;
    if (predicted_end <= now) { // outlived its prediction (EASY++): extend it
      r->predicted_runtime = std::max(r->predicted_runtime, predictor_.correct(*r));
      predicted_end = std::max(r->start + r->predicted_runtime, now + c_.bf_resolution);
    }
    profile.occupy(now, std::min(round_up(predicted_end), horizon), r->slots);
  }
  std::size_t first = c_.bf_continue && resume_at_ < queue_.size() ? resume_at_ : 0;
  std::int64_t tested = 0;
  bool reserved = false, blocked_before = false;
  std::vector<Job*> started;
  std::size_t i = first;
  for (; i < queue_.size(); i++) {
    if (tested >= c_.bf_max_job_test)
      break;
    tested++;
    Job& j = *queue_[i];
    // The plan only looks bf_window ahead: a job fits if it fits until the window's end.
    // Times in the plan are multiples of bf_resolution: a job started now ends at the next one.
    const double need = std::min(round_up(now + j.predicted_runtime) - now, horizon - now);
    const double t = profile.earliest_start(j.slots, need);
    const bool in_window = t < horizon;
    if (std::isnan(j.scheduler_prediction) && in_window)
      j.scheduler_prediction = t;
    if (t == now && j.slots <= cluster_.free_slots()) {
      j.backfilled = blocked_before || first > 0; // ahead of a waiting job with higher priority
      start(j, now);
      started.push_back(&j);
      if (j.backfilled)
        backfilled_++;
      profile.occupy(now, std::min(round_up(now + j.predicted_runtime), horizon), j.slots);
      continue;
    }
    blocked_before = true;
    if (!in_window)
      continue; // no reservation beyond the window
    if (c_.backfill == Backfill::Conservative || !reserved) {
      profile.occupy(t, std::min(round_up(t + j.predicted_runtime), horizon), j.slots);
      if (std::isnan(j.reservation) || t < j.reservation)
        j.reservation = t;
      reserved = true;
    }
  }
  cut_short_ = i < queue_.size();
  resume_at_ = cut_short_ ? i - started.size() : 0;
  if (!started.empty())
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                                [&](Job* j) { return std::find(started.begin(), started.end(), j) != started.end(); }),
                 queue_.end());
}

} // namespace batch
