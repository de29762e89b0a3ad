/* Gradient-boosted regression trees through XGBoost's C API: fit on rows of features, predict,
 * deterministically (one thread, fixed seed). */
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace batch {

struct BoostedTreesSettings {
  int rounds = 200;
  int max_depth = 6;
  double eta = 0.1;
  std::string objective = "reg:absoluteerror";
};

class BoostedTrees {
public:
  explicit BoostedTrees(BoostedTreesSettings settings) : s_(std::move(settings)) {}
  ~BoostedTrees();
  BoostedTrees(const BoostedTrees&) = delete;
  BoostedTrees& operator=(const BoostedTrees&) = delete;

  /** `x`: rows x cols, row-major; NaN means missing. Replaces any earlier fit. */
  void fit(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y);
  std::vector<float> predict(const std::vector<float>& x, std::size_t cols) const;
  bool fitted() const { return booster_ != nullptr; }

private:
  BoostedTreesSettings s_;
  void* booster_ = nullptr;
};

} // namespace batch
