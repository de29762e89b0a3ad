#include "wait_features.hpp"

#include <cmath>

namespace batch {

const char* const kWaitFeatureNames[kWaitFeatures] = {
    "cores",         "requested_time", "log_requested_time", "user_jobs",        "user_mean_runtime",
    "user_mean_wait", "queued_jobs",   "work_ahead",         "running_jobs",     "running_remaining",
    "free_cores",    "hour_of_day",    "day_of_week"};

void UserHistory::started(std::int64_t user, double wait)
{
  auto& s = users_[user];
  s.started += 1;
  s.wait += wait;
}

void UserHistory::finished(std::int64_t user, double runtime)
{
  auto& s = users_[user];
  s.finished += 1;
  s.runtime += runtime;
}

double UserHistory::jobs(std::int64_t user) const
{
  const auto it = users_.find(user);
  return it == users_.end() ? 0 : it->second.started;
}

double UserHistory::mean_runtime(std::int64_t user) const
{
  const auto it = users_.find(user);
  return it == users_.end() || it->second.finished == 0 ? -1 : it->second.runtime / it->second.finished;
}

double UserHistory::mean_wait(std::int64_t user) const
{
  const auto it = users_.find(user);
  return it == users_.end() || it->second.started == 0 ? -1 : it->second.wait / it->second.started;
}

WaitFeatures wait_features(double cores, double requested, double submit, const QueueState& q,
                           const UserHistory& h, std::int64_t user, double unix_start, double timezone)
{
  const double local = (unix_start > 0 ? unix_start : 0) + timezone + submit;
  const double hour = std::fmod(local, 86400.0) / 3600.0;
  const double day = std::fmod(std::floor(local / 86400.0) + 4, 7.0); // 1970-01-01 was a Thursday: 0 = Sunday
  return {static_cast<float>(cores),
          static_cast<float>(requested),
          static_cast<float>(std::log1p(requested)),
          static_cast<float>(h.jobs(user)),
          static_cast<float>(h.mean_runtime(user)),
          static_cast<float>(h.mean_wait(user)),
          static_cast<float>(q.queued_jobs),
          static_cast<float>(q.work_ahead),
          static_cast<float>(q.running_jobs),
          static_cast<float>(q.running_remaining),
          static_cast<float>(q.free_cores),
          static_cast<float>(hour),
          static_cast<float>(day)};
}

} // namespace batch
