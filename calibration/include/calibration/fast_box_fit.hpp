/* The capacity of MPI's fast box (the shared-memory slots a rank keeps for each peer on its
 * node), from exchange windows of every length (calib_pingpong's exchange_window_lengths):
 * at each message size the time per message steps up once the window's messages no longer
 * fit; where it does, size by size, gives how much the box holds and how it counts a message. */
#pragma once

#include <optional>
#include <vector>

namespace calibration {

/** Where one size's exchange windows step up. */
struct FastBoxKnee {
  double size = 0;     ///< B a message
  double messages = 0; ///< the window length past which each further message is slower
  double gap = 0;      ///< s a further message before it
  double queued_gap = 0; ///< s a further message past it
};

/** The time of a window of w messages is a + gap w below the knee K and gains queued_gap - gap
 *  for each message past it (continuous), fitted on relative errors over K in steps of a
 *  quarter message from the third length to the fourth last. A knee where the fit beats one
 *  straight line by a Bayesian information criterion of at least 10, with queued_gap at least
 *  1.5 x gap; none otherwise, with fewer than 7 lengths, or where K falls on either end of
 *  the search (the step may lie beyond the lengths measured). `lengths` increasing, `times`
 *  (s) the window's median at each. */
std::optional<FastBoxKnee> find_fast_box_knee(double size, const std::vector<double>& lengths,
                                              const std::vector<double>& times);

/** What a fast box holds: `capacity` bytes, each message its size and `header`, rounded up to
 *  a multiple of `alignment`. */
struct FastBoxFit {
  double capacity = 0, header = 0, alignment = 1;
  std::vector<FastBoxKnee> knees; ///< those fitted, by size
  double mean_rel_error = 0, max_rel_error = 0; ///< of the knees it predicts (capacity / footprint)
  /** The bytes a message of `size` takes in the box. */
  double footprint(double size) const;
  /** The messages of `size` the box holds (capacity / footprint). */
  double holds(double size) const { return capacity / footprint(size); }
};

/** Knees are placed to a message or so: those of fewer than this many messages are left out
 *  of the fit. */
constexpr double kFastBoxKneeAtLeast = 20;
/** Knees are searched at sizes up to this many bytes (of larger ones a box holds a few). */
constexpr double kFastBoxKneeSizesAtMost = 256;

/** The levels of the knees of kFastBoxKneeAtLeast messages or more: their distinct values,
 *  those within 10 % of the next smaller one counted with it (sizes in the same slots). */
int fast_box_knee_levels(const std::vector<FastBoxKnee>& knees);

/** Fits capacity, header (whole bytes from 1 to 128: every message carries one) and alignment
 *  (1 to 64 B, powers of two) to the knees of kFastBoxKneeAtLeast messages or more: for each
 *  header and alignment, the capacity is the median of knee x footprint, and the pair whose
 *  predicted knees err least (mean absolute log ratio) wins, the smaller alignment, then
 *  header, on a tie. None with fewer than 4 such knees or fewer than 3 levels of them (two
 *  levels cannot tell capacity, header and slots apart). */
std::optional<FastBoxFit> fit_fast_box(const std::vector<FastBoxKnee>& knees);

} // namespace calibration
