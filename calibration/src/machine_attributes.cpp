/* The root attributes a trace gets from the machine and the build that measured it. No HDF5
 * here: the GPU benchmark built for a bare machine uses it too. */
#include "calibration/trace_file.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "simcore_git_revision.hpp" // generated at every build (calibration/cmake/git_revision.cmake)

namespace calibration {

namespace {

/** The GPU models the NVIDIA driver lists (/proc/driver/nvidia/gpus/<bus>/information,
 *  "Model:" lines), in bus order, joined by ", "; "nvidia (model not listed)" where the device
 *  is there but not the list, "none" without one. */
std::string gpu_models()
{
  namespace fs = std::filesystem;
  std::vector<std::string> buses;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/driver/nvidia/gpus", ec), end; !ec && it != end; it.increment(ec))
    buses.push_back(it->path().string());
  std::sort(buses.begin(), buses.end());
  std::string models;
  for (const auto& bus : buses) {
    std::ifstream info(bus + "/information");
    for (std::string line; std::getline(info, line);)
      if (line.rfind("Model:", 0) == 0) {
        const auto start = line.find_first_not_of(" \t", 6);
        models += (models.empty() ? "" : ", ") + (start == std::string::npos ? std::string("?") : line.substr(start));
      }
  }
  if (!models.empty())
    return models;
  return fs::exists("/dev/nvidia0") ? "nvidia (model not listed)" : "none";
}

} // namespace

std::map<std::string, std::string> machine_attributes(const std::string& build_flags)
{
  std::map<std::string, std::string> a;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  a["host"] = host;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(cpu, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (model.empty() && (key == "model name" || key == "CPU part"))
      model = value;
    if (flags.empty() && (key == "flags" || key == "Features"))
      flags = value;
  }
  a["cpu_model"] = model;
  std::string isa;
  std::istringstream fl(flags);
  for (std::string f; fl >> f;)
    if (f.rfind("avx", 0) == 0 || f.rfind("sve", 0) == 0 || f == "fma" || f == "asimd" || f.rfind("sse4", 0) == 0)
      isa += (isa.empty() ? "" : " ") + f;
  a["isa"] = isa;
  a["gpu"] = gpu_models();
#if defined(__clang__)
  a["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  a["compiler"] = std::string("gcc ") + __VERSION__;
#else
  a["compiler"] = "unknown";
#endif
  a["flags"] = build_flags;
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  a["date"] = date;
  a["git_revision"] = SIMCORE_GIT_REVISION;
  a["schema"] = kTraceSchema;
  return a;
}

} // namespace calibration
