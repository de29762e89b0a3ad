#include "priority.hpp"

#include <algorithm>
#include <cmath>

namespace batch {

double FairShare::decayed(double value, double since, double now) const
{
  if (half_life_ <= 0 || now <= since)
    return value;
  return value * std::exp2(-(now - since) / half_life_);
}

void FairShare::add_user(std::int64_t user) { usage_.emplace(user, std::make_pair(0.0, 0.0)); }

void FairShare::charge(std::int64_t user, double core_seconds, double now)
{
  auto& [u, at] = usage_[user];
  u = decayed(u, at, now) + core_seconds;
  at = now;
  total_ = decayed(total_, total_at_, now) + core_seconds;
  total_at_ = now;
}

double FairShare::factor(std::int64_t user, double now) const
{
  const double total = decayed(total_, total_at_, now);
  const auto it = usage_.find(user);
  if (total <= 0 || it == usage_.end())
    return 1;
  const double share_of_usage = decayed(it->second.first, it->second.second, now) / total;
  const double shares = 1.0 / static_cast<double>(std::max<std::size_t>(usage_.size(), 1));
  return std::exp2(-share_of_usage / shares);
}

double Priority::table_factor(const std::vector<std::int64_t>& table, std::int64_t index)
{
  if (table.empty())
    return 1;
  const auto top = *std::max_element(table.begin(), table.end());
  if (index < 1 || index > static_cast<std::int64_t>(table.size()) || top <= 0)
    return 0;
  return static_cast<double>(table[static_cast<std::size_t>(index - 1)]) / static_cast<double>(top);
}

double Priority::of(const Job& job, double now) const
{
  if (!multifactor_)
    return -job.submit;
  const double age = w_.max_age > 0 ? std::min(1.0, std::max(0.0, now - job.submit) / w_.max_age) : 0;
  double size = static_cast<double>(job.cores) / static_cast<double>(total_cores_);
  if (w_.favor_small)
    size = 1 - size;
  return w_.age * age + w_.size * size + w_.fairshare * fairshare_.factor(job.user, now) +
         w_.partition * table_factor(w_.partition_priority, job.partition) + w_.qos * table_factor(w_.qos_priority, job.qos);
}

} // namespace batch
