/* From calibration traces to a calibration profile (simcore-profile/1): network latency and
 * bandwidth as piecewise segments over message size (SimGrid's SMPI factor syntax), host
 * speeds, memory, hash, stencil and GPU rates, fit quality for each part. */
#pragma once

#include "calibration/trace_file.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace calibration {

struct FitOptions {
  /** Which network times the SMPI factors and links come from: "pingping" (a message while
   *  the other direction is busy too: exchanges, halos), "pingpong" (a message alone), or
   *  "auto" (ping-ping where the trace has it). The other fit goes to the quality section. */
  std::string network_pattern = "auto";
  /** Most segments of a network fit (the count itself is chosen by BIC). */
  int max_segments = 8;
  /** Network sizes whose median time strays alone from both neighbours by more than this
   *  share (isolated_outliers) are left out of the fit and listed in the quality section;
   *  0 keeps every size. */
  double outlier_tolerance = 0.25;
  /** Per trace (empty, or one entry per path): the regular expression over the platform's
   *  host names that the trace's host type stands for; empty entries mean every host. One
   *  host rule is written per pattern (the median of its DGEMM traces), specific ones first. */
  std::vector<std::string> host_match;
  /** Run around each fork that reads an HDF5 trace (read_trace). */
  ForkGuard fork_guard;
};

/** Fits every benchmark it knows in `traces` (read from `paths`). Throws
 *  simcore::InputError when no trace holds a benchmark it can fit. */
nlohmann::ordered_json fit_profile(const std::vector<std::string>& paths, const FitOptions& options = {});

/** simcore::InputError when `out` names one of `paths` (by name or as the same file): the
 *  profile would replace that trace's measurements. `option`: how the caller's user gave
 *  `out` ("-o", "out="), for the message. Called before the fit. */
void check_profile_path(const std::vector<std::string>& paths, const std::string& out, const std::string& option);

/** Writes `profile` to `out` as `simcore calibrate` and simcore.calibrate() do: indented
 *  JSON and a newline, through a temporary file and a rename (nothing partial left behind).
 *  simcore::InputError naming `out` when it cannot be written. */
void write_profile(const nlohmann::ordered_json& profile, const std::string& out);

} // namespace calibration
