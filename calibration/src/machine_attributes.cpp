/* The root attributes a trace gets from the machine and the build that measured it. No HDF5
 * here: the GPU benchmark built for a bare machine uses it too. */
#include "calibration/trace_file.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sched.h>
#include <unistd.h>
#include <utility>
#include <vector>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

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

#if defined(__aarch64__) && defined(__linux__)
/** The CPU's features as the kernel reports them to the process (AT_HWCAP, AT_HWCAP2), in
 *  the names /proc/cpuinfo's "Features" line gives them: only those the isa attribute keeps
 *  (floating point, Advanced SIMD, SVE and its extensions). Under qemu-user /proc/cpuinfo is the
 *  host's (an x86 one here), while the auxiliary vector is the emulated CPU's. */
std::string aarch64_hwcap_features()
{
  static const std::pair<unsigned long, const char*> hwcap[] = {
      {1UL << 0, "fp"}, {1UL << 1, "asimd"}, {1UL << 22, "sve"}};
  static const std::pair<unsigned long, const char*> hwcap2[] = {
      {1UL << 1, "sve2"},      {1UL << 2, "sveaes"},    {1UL << 3, "svepmull"}, {1UL << 4, "svebitperm"},
      {1UL << 5, "svesha3"},   {1UL << 6, "svesm4"},    {1UL << 9, "svei8mm"},  {1UL << 10, "svef32mm"},
      {1UL << 11, "svef64mm"}, {1UL << 12, "svebf16"}};
  const unsigned long caps = getauxval(AT_HWCAP), caps2 = getauxval(AT_HWCAP2);
  std::string features;
  for (const auto& [bit, name] : hwcap)
    if (caps & bit)
      features += (features.empty() ? "" : " ") + std::string(name);
  for (const auto& [bit, name] : hwcap2)
    if (caps2 & bit)
      features += (features.empty() ? "" : " ") + std::string(name);
  return features;
}
#endif

/** "550.54.15", "535.104.05": digits in two or more parts separated by dots. */
bool dotted_release(const std::string& word)
{
  if (word.empty() || word.front() == '.' || word.back() == '.' || word.find('.') == std::string::npos)
    return false;
  for (std::size_t i = 0; i < word.size(); i++)
    if (!(std::isdigit(static_cast<unsigned char>(word[i])) || (word[i] == '.' && word[i + 1] != '.')))
      return false;
  return true;
}

} // namespace

std::string nvidia_driver_release(const std::string& version_file)
{
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024", or
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (...)".
  std::ifstream in(version_file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NVRM version:", 0) != 0)
      continue;
    std::istringstream words(line.substr(13));
    for (std::string w; words >> w;)
      if (dotted_release(w))
        return w;
    return "";
  }
  return "";
}

namespace {

/** The blocks of a /proc/cpuinfo (separated by blank lines), each its keys and values. */
std::vector<std::map<std::string, std::string>> cpuinfo_blocks(const std::string& cpuinfo)
{
  std::vector<std::map<std::string, std::string>> blocks(1);
  std::ifstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      if (!blocks.back().empty())
        blocks.emplace_back();
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      continue;
    const auto key_end = line.find_last_not_of(" \t", colon - 1);
    if (key_end == std::string::npos)
      continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    const auto end = line.find_last_not_of(" \t\r");
    blocks.back().emplace(line.substr(0, key_end + 1),
                          start != std::string::npos && start <= end ? line.substr(start, end - start + 1) : "");
  }
  if (blocks.back().empty())
    blocks.pop_back();
  return blocks;
}

/** The core one block describes, "" where it names none (see cpu_identity). */
std::string block_identity(const std::map<std::string, std::string>& b)
{
  const auto get = [&b](const char* key) {
    const auto it = b.find(key);
    return it == b.end() ? std::string() : it->second;
  };
  std::string id;
  const auto add = [&id](const std::string& label, const std::string& value) {
    if (!value.empty())
      id += (id.empty() ? "" : " ") + label + value;
  };
  const std::string vendor = get("vendor_id");
  if (vendor == "IBM/S390") { // "processor 0: version = FF,  identification = 0133E8,  machine = 8561"
    for (const auto& [key, value] : b)
      if (key.rfind("processor ", 0) == 0)
        if (const auto m = value.find("machine = "); m != std::string::npos) {
          add("", vendor);
          add("machine ", value.substr(m + 10, value.find_first_of(", ", m + 10) - (m + 10)));
          return id;
        }
    return vendor;
  }
  if (!vendor.empty()) { // x86
    add("", vendor);
    add("family ", get("cpu family"));
    add("model ", get("model"));
    add("stepping ", get("stepping"));
  } else if (b.count("CPU implementer") || b.count("CPU part")) { // Arm
    add("implementer ", get("CPU implementer"));
    add("variant ", get("CPU variant"));
    add("part ", get("CPU part"));
    add("revision ", get("CPU revision"));
  } else if (b.count("mvendorid") || b.count("marchid") || b.count("uarch")) { // RISC-V
    add("uarch ", get("uarch"));
    add("mvendorid ", get("mvendorid"));
    add("marchid ", get("marchid"));
    add("mimpid ", get("mimpid"));
  } else if (b.count("cpu") && b.count("revision")) { // POWER: "POWER9 (architected), altivec supported"
    add("cpu ", get("cpu"));
    add("revision ", get("revision"));
  }
  return id;
}

} // namespace

std::string cpu_identity(const std::string& cpuinfo)
{
  std::vector<std::pair<std::string, int>> ids; // in order of first appearance, with the blocks naming each
  for (const auto& b : cpuinfo_blocks(cpuinfo)) {
    const std::string id = block_identity(b);
    if (id.empty())
      continue;
    const auto it = std::find_if(ids.begin(), ids.end(), [&id](const auto& e) { return e.first == id; });
    if (it == ids.end())
      ids.emplace_back(id, 1);
    else
      it->second++;
  }
  if (ids.size() == 1)
    return ids.front().first;
  std::string out;
  for (const auto& [id, count] : ids)
    out += (out.empty() ? "" : "; ") + std::to_string(count) + " x " + id;
  return out;
}

std::string arm_cpuinfo_emulation(const std::string& cpuinfo, const std::string& midr_el1)
{
  const auto blocks = cpuinfo_blocks(cpuinfo);
  bool arm = false;
  for (const auto& b : blocks) {
    const auto it = b.find("CPU implementer");
    if (it != b.end() && (it->second == "0x00" || it->second == "0x0"))
      return "the emulator's"; // implementer 0 is "reserved for software use": no Arm core has it
    arm = arm || it != b.end() || b.count("Features");
  }
  if (!arm)
    return "the host's";
  std::error_code ec;
  return std::filesystem::exists(midr_el1, ec) ? "" : "the emulator's";
}

std::string this_process_cpu()
{
  // The first CPU the process may run on (a Slurm job's cpuset, a pinned benchmark), else the
  // first online one ("0-1", "2-7,9"; cpu0 may be offline).
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &set))
        return "/sys/devices/system/cpu/cpu" + std::to_string(c);
  std::ifstream online("/sys/devices/system/cpu/online");
  long cpu = 0;
  if (!(online >> cpu) || cpu < 0)
    cpu = 0;
  return "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
}

std::string cache_sizes(const std::string& cache_dir)
{
  namespace fs = std::filesystem;
  const auto first_line = [](const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
      line.pop_back();
    return line;
  };
  std::vector<std::pair<long, fs::path>> indices; // "index<N>" folders, in the order of N
  std::error_code ec;
  for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 5 && name.size() <= 14 && name.rfind("index", 0) == 0 && // up to 9 digits
        name.find_first_not_of("0123456789", 5) == std::string::npos)
      indices.emplace_back(std::atol(name.c_str() + 5), it->path());
  }
  std::sort(indices.begin(), indices.end());
  std::string caches;
  for (const auto& [n, dir] : indices) {
    const std::string level = first_line(dir / "level"), type = first_line(dir / "type"),
                      size = first_line(dir / "size");
    if (level.empty() || size.empty())
      continue;
    const std::string kind = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    caches += (caches.empty() ? "" : ", ") + ("L" + level + kind + " " + size);
  }
  return caches;
}

std::map<std::string, std::string> machine_attributes(const std::string& build_flags)
{
  std::map<std::string, std::string> a;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  a["host"] = host;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model, flags, implementer, part;
#if defined(__aarch64__) && defined(__linux__)
  bool arm_cpuinfo = false; // "Features" and "CPU implementer" are Arm kernels' keys
#endif
  while (std::getline(cpu, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (model.empty() && key == "model name")
      model = value;
    // Arm kernels name no model: the implementer and part codes say which core it is.
    if (implementer.empty() && key == "CPU implementer")
      implementer = value;
    if (part.empty() && key == "CPU part")
      part = value;
    if (flags.empty() && (key == "flags" || key == "Features"))
      flags = value;
#if defined(__aarch64__) && defined(__linux__)
    arm_cpuinfo = arm_cpuinfo || key == "Features" || key == "CPU implementer";
#endif
  }
#if defined(__aarch64__) && defined(__linux__)
  // An Arm program reads the features from the kernel's auxiliary vector, which is what the
  // CPU running it offers, emulated or not; a /proc/cpuinfo of another architecture (qemu-user
  // passes the host's through) names the host, not this CPU.
  flags = aarch64_hwcap_features();
  if (!arm_cpuinfo)
    model = "aarch64, emulated (/proc/cpuinfo is the host's" + (model.empty() ? std::string() : ": " + model) + ")";
  else if (model.empty())
    model = "aarch64" + (implementer.empty() ? std::string() : ", CPU implementer " + implementer) +
            (part.empty() ? std::string() : ", CPU part " + part);
#else
  if (model.empty() && !part.empty()) // another architecture's kernel that names parts only
    model = (implementer.empty() ? std::string() : "CPU implementer " + implementer + ", ") + "CPU part " + part;
#endif
  a["cpu_model"] = model;
  a["cpu_id"] = cpu_identity();
  a["caches"] = cache_sizes();
#if defined(__aarch64__) && defined(__linux__)
  // Under qemu-user /proc/cpuinfo is the host's (QEMU before 8.2) or the emulator's own, and
  // sysfs the host's: the core and the caches are no Arm core's.
  if (const std::string whose = arm_cpuinfo_emulation("/proc/cpuinfo", this_process_cpu() + "/regs/identification/midr_el1");
      !whose.empty()) {
    a["cpu_id"] = "emulated (/proc/cpuinfo is " + whose + (a["cpu_id"].empty() ? "" : ": " + a["cpu_id"]) + ")";
    a["caches"] = "emulated (sysfs is the host's" + (a["caches"].empty() ? "" : ": " + a["caches"]) + ")";
    if (arm_cpuinfo)
      a["cpu_model"] = "aarch64, emulated (/proc/cpuinfo is " + whose + (model.empty() ? "" : ": " + model) + ")";
  }
#endif
  std::string isa;
  std::istringstream fl(flags);
  for (std::string f; fl >> f;)
    if (f.rfind("avx", 0) == 0 || f.rfind("sve", 0) == 0 || f == "fma" || f == "asimd" || f == "fp" ||
        f.rfind("sse4", 0) == 0)
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
