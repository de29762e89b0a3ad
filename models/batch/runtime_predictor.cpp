#include "runtime_predictor.hpp"

#include <algorithm>
#include <cmath>

namespace batch {

RuntimePredictor::RuntimePredictor(RuntimePrediction kind, MlRuntimeSettings ml) : kind_(kind), ml_(std::move(ml))
{
  if (kind_ == RuntimePrediction::Ml)
    trees_ = std::make_unique<BoostedTrees>(ml_.trees);
}

RuntimePredictor::Features RuntimePredictor::features(const Job& job) const
{
  const auto it = history_.find(job.user);
  const History* h = it == history_.end() ? nullptr : &it->second;
  const float nan = std::nanf("");
  float last = nan, last_two = nan, mean = nan;
  if (h && !h->last.empty()) {
    last = static_cast<float>(h->last.back());
    double s = 0;
    for (double r : h->last)
      s += r;
    last_two = static_cast<float>(s / static_cast<double>(h->last.size()));
    mean = static_cast<float>(h->sum / h->jobs);
  }
  return {static_cast<float>(job.cores),
          static_cast<float>(job.requested),
          static_cast<float>(std::log1p(job.requested)),
          last,
          last_two,
          mean,
          static_cast<float>(h ? h->jobs : 0),
          static_cast<float>(last_two / job.requested)};
}

double RuntimePredictor::predict(const Job& job)
{
  const auto it = history_.find(job.user);
  const bool known = it != history_.end() && !it->second.last.empty();
  double p = job.requested;
  if (kind_ == RuntimePrediction::Tsafrir && known) {
    double sum = 0;
    for (double r : it->second.last)
      sum += r;
    p = sum / static_cast<double>(it->second.last.size());
  } else if (kind_ == RuntimePrediction::Ml) {
    const Features f = features(job);
    pending_[job.id] = f;
    if (trees_->fitted())
      p = trees_->predict(std::vector<float>(f.begin(), f.end()), kFeatures).front();
  }
  return std::clamp(p, std::min(1.0, job.requested), job.requested);
}

void RuntimePredictor::finished(const Job& job)
{
  auto& h = history_[job.user];
  h.last.push_back(job.runtime);
  if (h.last.size() > 2)
    h.last.pop_front();
  h.jobs += 1;
  h.sum += job.runtime;
  if (kind_ != RuntimePrediction::Ml)
    return;
  const auto it = pending_.find(job.id);
  if (it == pending_.end())
    return;
  learned_.emplace_back(it->second, static_cast<float>(job.runtime));
  pending_.erase(it);
  if (static_cast<std::int64_t>(learned_.size()) > ml_.window)
    learned_.pop_front();
  if (++since_refit_ < ml_.refit_every)
    return;
  since_refit_ = 0;
  std::vector<float> x, y;
  x.reserve(learned_.size() * kFeatures);
  for (const auto& [f, r] : learned_) {
    x.insert(x.end(), f.begin(), f.end());
    y.push_back(r);
  }
  trees_->fit(x, kFeatures, y);
  refits_++;
}

} // namespace batch
