#include "runtime_predictor.hpp"

#include <algorithm>

namespace batch {

double RuntimePredictor::predict(const Job& job) const
{
  if (kind_ == RuntimePrediction::Requested)
    return job.requested;
  const auto it = history_.find(job.user);
  if (it == history_.end() || it->second.empty())
    return job.requested;
  double sum = 0;
  for (double r : it->second)
    sum += r;
  return std::min(job.requested, sum / static_cast<double>(it->second.size()));
}

void RuntimePredictor::finished(const Job& job)
{
  auto& h = history_[job.user];
  h.push_back(job.runtime);
  if (h.size() > 2)
    h.pop_front();
}

} // namespace batch
