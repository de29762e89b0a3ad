/* The network part of the fitter: samples of calib_pingpong's groups, and the SMPI factor
 * syntax of a piecewise fit of time over message size. */
#pragma once

#include "calibration/piecewise_fit.hpp"
#include "calibration/trace_file.hpp"

#include <string>
#include <vector>

namespace calibration {

/** One-way times of a ping-pong benchmark: sizes (B) and half round trips (s), one sample
 *  per repetition. simcore::InputError naming `path` when the shapes disagree or a time is
 *  not positive (same for ping-ping). */
void pingpong_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path);

/** Times of a ping-ping benchmark (both ranks send at once): sizes (B) and the time of one
 *  message (s), one sample per repetition. */
void pingping_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path);

/** Times of calib_pingpong's one_way group (a window of MPI_Isend): sizes (B) and the time
 *  per message of the stream (s), one sample per repetition. */
void one_way_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                     const std::string& path);

/** Samples of calib_pingpong's exchange_window group (w messages each way at once): sizes (B),
 *  the time of each window (s) and its messages, one sample per repetition; sizes streamed in
 *  windows of fewer than `min_messages` are left out (2 for exchanges: one message holds no
 *  gap; 1 for self windows, whose time over their messages is the gap). */
void exchange_window_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                             std::vector<double>& messages, const std::string& path, double min_messages = 2);

/** A gap law in the syntax of SimGrid's smpi/os ("X:seconds:seconds_per_byte;...", from the
 *  smallest size up, the first from 0); a segment whose time falls with size (noise) is written
 *  flat at its value where it starts. */
std::string gap_law(const PiecewiseFit& fit);

/** SMPI's factor syntax for a fit, relative to (latency, bandwidth): "size:factor;..." from
 *  the largest size down. */
std::string latency_factors(const PiecewiseFit& fit, double latency);
std::string bandwidth_factors(const PiecewiseFit& fit, double bandwidth);

} // namespace calibration
