#include "availability_profile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace batch {

AvailabilityProfile::AvailabilityProfile(double now, std::int64_t free) { steps_.push_back({now, free}); }

std::size_t AvailabilityProfile::split(double t)
{
  auto it = std::lower_bound(steps_.begin(), steps_.end(), t, [](const Step& s, double v) { return s.time < v; });
  if (it != steps_.end() && it->time == t)
    return static_cast<std::size_t>(it - steps_.begin());
  // t falls inside the previous step: copy its level.
  const std::int64_t level = std::prev(it)->free;
  it = steps_.insert(it, {t, level});
  return static_cast<std::size_t>(it - steps_.begin());
}

void AvailabilityProfile::occupy(double from, double to, std::int64_t slots)
{
  from = std::max(from, steps_.front().time);
  if (!(to > from) || slots == 0)
    return;
  const std::size_t first = split(from);
  const std::size_t last = std::isinf(to) ? steps_.size() : split(to);
  for (std::size_t i = first; i < last; i++)
    steps_[i].free -= slots;
}

double AvailabilityProfile::earliest_start(std::int64_t slots, double duration) const
{
  // Candidate starts are step boundaries; from each, the window must stay high enough.
  for (std::size_t i = 0; i < steps_.size(); i++) {
    if (steps_[i].free < slots)
      continue;
    const double t = steps_[i].time;
    const double until = t + duration;
    bool fits = true;
    for (std::size_t j = i + 1; j < steps_.size() && steps_[j].time < until; j++)
      if (steps_[j].free < slots) {
        fits = false;
        i = j; // no start before this step can fit either
        break;
      }
    if (fits)
      return t;
  }
  return std::numeric_limits<double>::infinity();
}

std::int64_t AvailabilityProfile::free_at(double t) const
{
  auto it = std::upper_bound(steps_.begin(), steps_.end(), t, [](double v, const Step& s) { return v < s.time; });
  return it == steps_.begin() ? steps_.front().free : std::prev(it)->free;
}

} // namespace batch
