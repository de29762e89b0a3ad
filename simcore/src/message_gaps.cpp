#include "simcore/message_gaps.hpp"
#include "simcore/error.hpp"
#include "size_law_items.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace simcore {

namespace {

/** The largest coefficients a law may have: a gap of a second a message, a second a byte. A
 *  gap is sleeps of the sender's; beyond these its time, at any size a message has, would
 *  overflow or stop the simulated clock. */
constexpr double kMostSeconds = 1, kMostPerByte = 1;

/** A coefficient as written: digits first (no blank, sign or hexadecimal; a minus sign only
 *  where `negative` allows it), finite and within `most` either way. */
bool read_coefficient(const std::string& text, double& out, bool negative, double most)
{
  const std::string digits = negative && !text.empty() && text.front() == '-' ? text.substr(1) : text;
  if (digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits.front())) || digits.front() == '.') ||
      text.find_first_of("xX") != std::string::npos)
    return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0' && std::isfinite(out) && std::abs(out) <= most;
}

/** The fewest significant digits that read back as `v`. */
std::string shortest(double v)
{
  char buf[32];
  for (int digits = 6; digits <= 17; digits++) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

} // namespace

GapLaw GapLaw::parse(const std::string& text, const std::string& where)
{
  GapLaw out;
  out.text_ = text;
  const std::vector<std::string> entries = size_law_items(text);
  for (const std::string& item : entries) {
    std::vector<std::string> fields;
    std::stringstream parts(item);
    for (std::string f; std::getline(parts, f, ':');)
      fields.push_back(f);
    const bool whole = fields.size() == 3 && !fields[0].empty() && fields[0].size() <= 15 &&
                       std::all_of(fields[0].begin(), fields[0].end(), [](char c) { return c >= '0' && c <= '9'; });
    double seconds = 0, per_byte = 0;
    if (!whole || item.back() == ':' || !read_coefficient(fields[1], seconds, true, kMostSeconds) ||
        !read_coefficient(fields[2], per_byte, false, kMostPerByte))
      throw InputError(where, "entry '" + item + "' of '" + text +
                                  "'; expected BYTES:SECONDS:SECONDS_PER_BYTE items separated by ';' "
                                  "(\"0:3e-07:1e-10;4096:2e-06:5e-11\"), bytes a whole number of at most 15 "
                                  "digits, seconds from -1 to 1, seconds per byte from 0 to 1");
    out.steps_.emplace_back(std::stod(fields[0]), seconds, per_byte);
  }
  if (out.steps_.empty())
    throw InputError(where, "'" + text + "' holds no entry; expected BYTES:SECONDS:SECONDS_PER_BYTE items");
  std::sort(out.steps_.begin(), out.steps_.end());
  for (std::size_t i = 1; i < out.steps_.size(); i++)
    if (std::get<0>(out.steps_[i]) == std::get<0>(out.steps_[i - 1]))
      throw InputError(where, "'" + text + "' gives the threshold " +
                                  std::to_string(std::llround(std::get<0>(out.steps_[i]))) + " twice; expected each once");
  return out;
}

GapLaw GapLaw::parse_smpi(const std::string& text, const std::string& where)
{
  // SimGrid's cost function (smpi_host.cpp) starts with the first entry and takes entry k
  // once the size passes entry k's X: in this class's reading, the first entry from 0 bytes
  // and every other from X + 1.
  GapLaw out = parse(text, where);
  // SimGrid reads each threshold as an int (smpirun stops on a larger one).
  for (const auto& [bound, seconds, per_byte] : out.steps_)
    if (bound > 2147483647.0)
      throw InputError(where, "'" + text + "' gives the threshold " + std::to_string(std::llround(bound)) +
                                  "; expected thresholds of at most 2147483647 bytes (SMPI reads them as an int)");
  for (std::size_t k = 0; k < out.steps_.size(); k++)
    std::get<0>(out.steps_[k]) = k == 0 ? 0.0 : std::get<0>(out.steps_[k]) + 1;
  return out;
}

std::string GapLaw::smpi_text(std::optional<double> none_from) const
{
  // A law of no entry (default-constructed) is none everywhere; so is one cut at 1 byte or less.
  // SMPI reads each threshold as an int: a cut past that is no cut, and entries from past it
  // are left out (no message of MPI's int count of bytes reaches them).
  constexpr double kIntBound = 2147483648.0; // SMPI's threshold 2147483647, this class's bound + 1
  double cut = none_from && !std::isnan(*none_from) ? std::max(std::ceil(*none_from), 0.0)
                                                    : std::numeric_limits<double>::infinity();
  if (cut > kIntBound)
    cut = std::numeric_limits<double>::infinity();
  if (steps_.empty() || cut <= 1)
    return "0:0:0";
  // SMPI applies an entry X to the sizes above X: this class's entry from X is SMPI's X - 1.
  // Its first entry holds below its own X as well, so a law that starts above 1 byte gets a
  // first entry of none. Entries from 0 and from 1 byte both become SMPI's 0: the one from 1
  // byte is kept (a message of 0 bytes takes it).
  std::vector<std::tuple<double, double, double>> entries;
  auto add = [&](double bound, double seconds, double per_byte) {
    if (!entries.empty() && std::get<0>(entries.back()) == bound)
      entries.pop_back();
    entries.emplace_back(bound, seconds, per_byte);
  };
  if (std::get<0>(steps_.front()) > 1)
    add(0, 0, 0);
  for (const auto& [bound, seconds, per_byte] : steps_)
    if (bound < cut && bound <= kIntBound)
      add(std::max(bound - 1, 0.0), seconds, per_byte);
  if (std::isfinite(cut))
    add(std::max(cut - 1, 0.0), 0, 0);
  std::string out;
  for (const auto& [bound, seconds, per_byte] : entries)
    out += (out.empty() ? "" : ";") + std::to_string(std::llround(bound)) + ":" + shortest(seconds) + ":" +
           shortest(per_byte);
  return out;
}

double GapLaw::at(double size) const
{
  double seconds = 0;
  for (const auto& [bound, base, per_byte] : steps_) {
    if (size < bound)
      break;
    seconds = base + per_byte * size;
  }
  // A fitted segment may start below 0 where it climbs steeply; the coefficients' bounds keep
  // the rest finite at every size below 1e300 bytes.
  return std::max(seconds, 0.0);
}

MessageGaps MessageGaps::from_json(const nlohmann::json& j, const std::string& where)
{
  const std::string w = where + " (message_gaps)";
  if (!j.is_object() || j.empty())
    throw InputError(w, "expected an object {\"intra-node\": \"0:3e-07:1e-10\", \"inter-node\": \"...\"}");
  MessageGaps out;
  for (const auto& [placement, v] : j.items()) {
    const std::string wp = where + " (message_gaps." + placement + ")";
    if (placement != "intra-node" && placement != "inter-node" && placement != "self" &&
        placement != "intra-node-queued")
      throw InputError(wp, "unknown placement; expected intra-node (messages between ranks of a host), inter-node, "
                           "self (a rank's messages to itself) or intra-node-queued (within a host, past the "
                           "peer's fast box)");
    if (!v.is_string())
      throw InputError(wp, "expected a string BYTES:SECONDS:SECONDS_PER_BYTE;... (\"0:3e-07:1e-10\")");
    (placement == "intra-node"   ? out.intra_
     : placement == "inter-node" ? out.inter_
     : placement == "self"       ? out.self_
                                 : out.queued_) = GapLaw::parse(v.get<std::string>(), wp);
  }
  return out;
}

std::optional<double> MessageGaps::gap(double size, Placement p) const
{
  const auto& l = law(p);
  if (!l)
    return std::nullopt;
  return l->at(size);
}

nlohmann::json MessageGaps::to_json() const
{
  nlohmann::json out = nlohmann::json::object();
  if (intra_)
    out["intra-node"] = intra_->text();
  if (inter_)
    out["inter-node"] = inter_->text();
  if (self_)
    out["self"] = self_->text();
  if (queued_)
    out["intra-node-queued"] = queued_->text();
  return out;
}

} // namespace simcore
