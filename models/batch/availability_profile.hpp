/* Free slots over time, as a backfilling scheduler plans them: a step function from now on,
 * lowered by running jobs until their predicted ends and by reservations. */
#pragma once

#include <cstdint>
#include <vector>

namespace batch {

class AvailabilityProfile {
public:
  /** `free` slots from `now` on, forever. */
  AvailabilityProfile(double now, std::int64_t free);
  /** `slots` busy over [from, to) (to may be infinite). */
  void occupy(double from, double to, std::int64_t slots);
  /** Earliest t >= now with at least `slots` free over [t, t + duration). */
  double earliest_start(std::int64_t slots, double duration) const;
  std::int64_t free_at(double t) const;

private:
  struct Step {
    double time;
    std::int64_t free;
  };
  std::size_t split(double t); ///< index of the step starting at t (created if needed)
  std::vector<Step> steps_;   ///< increasing times; steps_[i].free holds on [time_i, time_{i+1})
};

} // namespace batch
