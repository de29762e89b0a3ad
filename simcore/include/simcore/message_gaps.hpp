/* Message gaps by placement: the time a rank spends on each further message it exchanges
 * back to back with another rank (both sending and receiving, as in a halo exchange), as a
 * law over message size in the syntax of SimGrid's smpi/os: "X:seconds:seconds_per_byte;..."
 * (a message of s bytes takes the entry of the largest X <= s; below the smallest X, none).
 * calib_pingpong's exchange window measures it; `simcore calibrate` fits it. */
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace simcore {

/** One placement's law: piecewise linear over the message size. */
class GapLaw {
public:
  /** Parses and checks `text`: thresholds whole bytes (each once), seconds finite (a fitted
   *  segment may start below 0), seconds per byte finite and >= 0. Throws InputError naming
   *  `where` and the entry. */
  static GapLaw parse(const std::string& text, const std::string& where);
  /** Reads `text` as SimGrid's smpi/os, smpi/ois and smpi/or are read (the same checks as
   *  parse): an entry X applies to the messages larger than X, the first entry to every size
   *  up to the second's X (so also below its own). at() then gives what SMPI sleeps. SimGrid
   *  reads thresholds as an int: larger ones are refused. */
  static GapLaw parse_smpi(const std::string& text, const std::string& where);
  /** Seconds for a message of `size` bytes, at least 0 (0 below the smallest threshold). */
  double at(double size) const;
  const std::string& text() const { return text_; }
  /** This law as SMPI reads its smpi/ois (for --cfg=smpi/ois:...; parse_smpi reads it back):
   *  every size of one byte or more takes what at() gives, and 0 from `none_from` bytes on
   *  where given (the law's last entry would reach past the sizes it was fitted on); a law of
   *  no entry is "0:0:0". */
  std::string smpi_text(std::optional<double> none_from = std::nullopt) const;

private:
  std::vector<std::tuple<double, double, double>> steps_; // (threshold, seconds, seconds per byte), ascending
  std::string text_;
};

/** The profile's "message_gaps": {"intra-node": "0:3e-7:1e-10;...", "inter-node": "..."}, and
 *  "intra-node-queued": within a host, the gap of a message that finds the peer's fast box
 *  (the shared-memory slots MPI keeps for each peer) full and takes the slower queue. */
class MessageGaps {
public:
  /** Throws InputError naming `where` (the profile) for anything but the form above. */
  static MessageGaps from_json(const nlohmann::json& j, const std::string& where);
  enum class Placement { IntraNode, InterNode, Self, IntraNodeQueued };
  bool empty() const { return !intra_ && !inter_ && !self_ && !queued_; }
  bool has(Placement p) const { return static_cast<bool>(law(p)); }
  /** The gap of a message of `size` bytes, none where the placement has no law. */
  std::optional<double> gap(double size, Placement p) const;
  nlohmann::json to_json() const;
  /** The placement's law, if the profile has one. */
  const std::optional<GapLaw>& law(Placement p) const
  {
    return p == Placement::IntraNode ? intra_ : p == Placement::InterNode ? inter_ : p == Placement::Self ? self_ : queued_;
  }

private:
  std::optional<GapLaw> intra_, inter_, self_, queued_;
};

} // namespace simcore
