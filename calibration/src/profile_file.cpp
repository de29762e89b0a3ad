/* Where a fitted profile is written: checked before the fit, written whole after it. */
#include "calibration/profile_fitter.hpp"

#include <simcore/error.hpp>
#include <simcore/result_writer.hpp>

#include <filesystem>

namespace calibration {

void check_profile_path(const std::vector<std::string>& paths, const std::string& out, const std::string& option)
{
  for (const auto& t : paths) {
    std::error_code ec;
    if (t == out || std::filesystem::equivalent(t, out, ec))
      throw simcore::InputError("command line", option + out + " is also a trace to fit (" + t +
                                                    "); expected a new file for the profile, which would replace "
                                                    "the trace");
  }
}

void write_profile(const nlohmann::ordered_json& profile, const std::string& out)
{
  // Text from a trace that is not UTF-8 (a CPU model from an odd /proc, a group's name) is kept
  // with U+FFFD in its place, as the JSON form of a trace keeps it; it stopped the fit before.
  simcore::write_file_atomically(out, profile.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

} // namespace calibration
