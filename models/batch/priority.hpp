/* Job priority: first come first served, or Slurm's multifactor plugin (age, job size,
 * fair share with decayed usage, partition and QOS). */
#pragma once

#include "job.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace batch {

struct PriorityWeights {
  double age = 0, size = 0, fairshare = 0, partition = 0, qos = 0; ///< PriorityWeight*
  double max_age = 7 * 86400.0;          ///< PriorityMaxAge
  double decay_half_life = 7 * 86400.0;  ///< PriorityDecayHalfLife (0: no decay)
  bool favor_small = false;              ///< PriorityFavorSmall
  std::vector<std::int64_t> partition_priority; ///< by partition number (1-based); empty: all equal
  std::vector<std::int64_t> qos_priority;       ///< by queue number (1-based) as QOS; empty: all equal
};

/** Usage per user, decayed with a half-life, and the classic fair-share factor
 *  2^(-usage share / shares share) with equal shares for the users seen so far. */
class FairShare {
public:
  explicit FairShare(double half_life) : half_life_(half_life) {}
  void add_user(std::int64_t user);
  void charge(std::int64_t user, double core_seconds, double now);
  double factor(std::int64_t user, double now) const;

private:
  double decayed(double value, double since, double now) const;
  double half_life_;
  std::map<std::int64_t, std::pair<double, double>> usage_; ///< user -> (usage, as of)
  double total_ = 0, total_at_ = 0;
};

class Priority {
public:
  Priority(bool multifactor, PriorityWeights w, std::int64_t total_cores)
      : multifactor_(multifactor), w_(std::move(w)), total_cores_(total_cores), fairshare_(w_.decay_half_life)
  {
  }
  bool multifactor() const { return multifactor_; }
  FairShare& fairshare() { return fairshare_; }
  /** FCFS: minus the submit time; multifactor: the weighted sum of the factors. */
  double of(const Job& job, double now) const;

private:
  static double table_factor(const std::vector<std::int64_t>& table, std::int64_t index);
  bool multifactor_;
  PriorityWeights w_;
  std::int64_t total_cores_;
  FairShare fairshare_;
};

} // namespace batch
