/* The network traces of a fit, pooled by placement (intra-node, inter-node) and fitted once
 * per placement (private to calibration/src; the public helpers it uses are in
 * calibration/network_fit.hpp). */
#pragma once

#include "calibration/fast_box_fit.hpp"
#include "calibration/profile_fitter.hpp"
#include "calibration/trace_file.hpp"
#include "profile_parts.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace calibration {

class NetworkSamples {
public:
  /** Adds the samples of trace `t` (read from `path`): its `pingpong` group, and `pingping`,
   *  `one_way`, `exchange_window` and `self_window` where the trace has them. simcore::InputError naming the trace when a
   *  group is malformed, the placement or buffers are unknown, or the buffers differ from
   *  those of the placement's first trace. A bad `one_way` group (only compared) costs a note. */
  void add(const Trace& t, const std::string& path, const FitOptions& options);

  /** Fits each placement measured and writes its SMPI factors (network_factors), its route
   *  (the loopback within a node, the links between nodes), the network rates and the
   *  quality section; where every trace of a placement has ping-ping and exchange windows,
   *  its message gaps (message_gaps) below the protocol switch; where every trace has self
   *  windows, the gaps of messages to itself below the intra-node switch. simcore::InputError when a placement has fewer than 2 sizes. */
  void write(const FitOptions& options, ProfileParts& out) const;

private:
  /** The gaps of messages to itself (message_gaps "self"), from every trace's self_window. */
  void write_self_gaps(const FitOptions& options, ProfileParts& out) const;
  /** Ping-pong (and ping-ping) samples of every trace of one placement. */
  struct Placement {
    std::vector<double> pingpong_sizes, pingpong_times, pingping_sizes, pingping_times;
    std::vector<double> one_way_sizes, one_way_times; // per message of a stream (calib_pingpong's one_way)
    // calib_pingpong's exchange_window: w messages each way at once (the message gaps)
    std::vector<double> window_sizes, window_times, window_messages;
    // calib_pingpong's exchange_window_long, per trace and size: its two lengths and their
    // median times (the longer less the shorter, over the messages between them, is the
    // queued gap where both pass the fast box)
    struct LongWindows {
      double size, shorter, shorter_time, longer, longer_time; // lengths and median times
    };
    std::vector<LongWindows> long_windows;
    // calib_pingpong's exchange_window_lengths (the fast box's sweep): per trace, its times by
    // size, then by length
    std::vector<std::map<double, std::map<double, std::vector<double>>>> sweeps;
    // calib_pingpong's matching_window (exchanges): per trace and length, the time of one
    // posted receive passed over (the reversed window less the one in order, over w (w-1) / 2)
    std::vector<double> match_lengths, match_seconds;
    std::vector<double> match_per_trace; // each trace's least-squares time of a receive passed over
    bool all_have_pingping = true, all_have_one_way = true, all_have_window = true, all_have_long = true,
         all_have_sweep = true, all_have_matching = true;
    std::string one_way_problem; // why a trace's one_way group was left out (it is only compared)
    int traces = 0;
    std::vector<std::string> paths; // of its traces, for the errors of the pooled fit
    std::string buffers, buffers_trace; // of the first trace: the others must match
  };
  /** The queued gaps within a node (message_gaps "intra-node-queued"), from the two lengths of
   *  every intra-node trace's exchange_window_long, below the protocol switch `below`, where the
   *  shorter window overflows the fast box `box` (fitted from the sweep, else Open MPI's
   *  default: 4 KiB, 24 B a message). */
  static void write_queued_gaps(const Placement& n, double below, const std::optional<FastBoxFit>& box,
                                const FitOptions& options, ProfileParts& out, nlohmann::ordered_json& q);
  /** The fast box's capacity within a node (rates fast_box_bytes, fast_box_header,
   *  fast_box_alignment) from every intra-node trace's exchange_window_lengths; the fit, if any.
   *  With a box, `in_box_gaps` gets (size, gap) at every sweep size whose box holds 3 messages
   *  or more: the slope of the windows it holds. */
  static std::optional<FastBoxFit> write_fast_box(const Placement& n, ProfileParts& out, nlohmann::ordered_json& q,
                                                  std::vector<std::pair<double, double>>& in_box_gaps);
  std::map<std::string, Placement> placements_;
  // calib_pingpong's self_window (a rank's messages to itself), of every trace, whatever its
  // placement: MPI's self transport is the node's.
  std::vector<double> self_sizes_, self_times_, self_messages_;
  bool all_have_self_ = true;
  // calib_pingpong's matching_window to itself, of every trace: as match_seconds
  std::vector<double> self_match_lengths_, self_match_seconds_, self_match_per_trace_;
  bool all_have_self_matching_ = true;
  /** The time of one posted receive passed over while matching (rate match_scan_seconds +
   *  `suffix`): the median of the traces' fits `per_trace`, with its quality `q` (which also
   *  keeps the per-length values). */
  static void write_matching(const std::vector<double>& lengths, const std::vector<double>& seconds,
                             const std::vector<double>& per_trace, const std::string& suffix, const std::string& what,
                             ProfileParts& out, nlohmann::ordered_json& q);
};

} // namespace calibration
