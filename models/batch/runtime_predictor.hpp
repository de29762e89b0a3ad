/* Runtime predictions backfilling plans with: the user's requested time; Tsafrir's average of
 * the user's last two run times; or gradient-boosted trees refitted as jobs finish. Each with
 * the EASY++ correction when a job outlives its prediction. */
#pragma once

#include "boosted_trees.hpp"
#include "job.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace batch {

enum class RuntimePrediction { Requested, Tsafrir, Ml };

struct MlRuntimeSettings {
  std::int64_t refit_every = 200; ///< finished jobs between refits
  std::int64_t window = 5000;     ///< the most recent finished jobs it learns from
  BoostedTreesSettings trees{50, 6, 0.1, "reg:absoluteerror"};
};

class RuntimePredictor {
public:
  explicit RuntimePredictor(RuntimePrediction kind, MlRuntimeSettings ml = {});
  /** At submission: a prediction in [1 s, requested]. */
  double predict(const Job& job);
  /** When a running job outlives its prediction (EASY++): the new prediction. */
  double correct(const Job& job) const { return job.requested; }
  void finished(const Job& job);
  std::int64_t refits() const { return refits_; }

private:
  static constexpr int kFeatures = 8;
  using Features = std::array<float, kFeatures>;
  Features features(const Job& job) const;

  RuntimePrediction kind_;
  MlRuntimeSettings ml_;
  struct History {
    std::deque<double> last; ///< last two run times
    double jobs = 0, sum = 0;
  };
  std::map<std::int64_t, History> history_; ///< per user
  std::unordered_map<std::int64_t, Features> pending_; ///< job id -> features at submission
  std::deque<std::pair<Features, float>> learned_;     ///< finished jobs: features, run time
  std::int64_t since_refit_ = 0, refits_ = 0;
  std::unique_ptr<BoostedTrees> trees_;
};

} // namespace batch
