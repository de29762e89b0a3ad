/* Runtime predictions backfilling plans with: the user's requested time, or Tsafrir's
 * average of the user's last two run times with the EASY++ correction. */
#pragma once

#include "job.hpp"

#include <cstdint>
#include <deque>
#include <map>

namespace batch {

enum class RuntimePrediction { Requested, Tsafrir };

class RuntimePredictor {
public:
  explicit RuntimePredictor(RuntimePrediction kind) : kind_(kind) {}
  /** At submission. */
  double predict(const Job& job) const;
  /** When a running job outlives its prediction (EASY++): the new prediction. */
  double correct(const Job& job) const { return job.requested; }
  void finished(const Job& job);

private:
  RuntimePrediction kind_;
  std::map<std::int64_t, std::deque<double>> history_; ///< user -> last two run times
};

} // namespace batch
