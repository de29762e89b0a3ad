/* Strict reading of the benchmarks' option values: a value is taken whole or refused, so that
 * "--queries 1e6" or "--max 64K" never runs a benchmark of 1 query or 64 bytes. */
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <sstream>
#include <set>
#include <system_error>
#include <string>
#include <vector>

#include <unistd.h>

#include <simcore/file_to_replace.hpp>

namespace calibration {

/** Whether `text` is written only with `chars` (strtod and strtoll would also take leading
 *  blanks, and strtod hexadecimal numbers, "0x10" for 16). */
inline bool written_with(const std::string& text, const char* chars)
{
  return text.find_first_not_of(chars) == std::string::npos;
}

/** `text` as a whole number in [lo, hi]; nothing when it is empty, has characters after the
 *  number (or blanks before it), or lies outside the range. */
inline std::optional<long long> whole_number(const std::string& text, long long lo, long long hi)
{
  if (text.empty() || !written_with(text, "0123456789+-"))
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi)
    return std::nullopt;
  return v;
}

/** `text` as a finite decimal number in [lo, hi]; nothing otherwise. */
inline std::optional<double> real_number(const std::string& text, double lo, double hi)
{
  if (text.empty() || !written_with(text, "0123456789+-.eE"))
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    return std::nullopt;
  return v;
}

/** A comma-separated list of whole numbers in [lo, hi]; nothing when the list is empty or any
 *  item is not one. */
inline std::optional<std::vector<long long>> whole_numbers(const std::string& text, long long lo, long long hi)
{
  std::vector<long long> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    const auto v = whole_number(item, lo, hi);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  if (out.empty() || (!text.empty() && text.back() == ','))
    return std::nullopt;
  return out;
}

/** A benchmark's refusal of its command line: "PROGRAM: WHY" and the usage line on stderr;
 *  returns 2, the exit code of bad input (nothing measured, no trace written). */
inline int refuse_command_line(const char* program, const char* usage, const std::string& why)
{
  std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program, why.c_str(), program, usage);
  return 2;
}

/** Reads argv's "option value" pairs from argv[1] on: "-o PATH" into `out`, every other pair
 *  through `take(option, value)`, which returns "" when it took the pair, the problem when the
 *  value is wrong, and nothing when it knows no such option. Returns the first problem (a
 *  value wrong or missing, an unknown option, no -o where `output_required`), or "" when every
 *  pair was taken. */
template <typename Take>
std::string read_options(int argc, char** argv, std::string& out, Take&& take, bool output_required = true,
                         bool check_output = true)
{
  std::set<std::string> seen; // a wrapper's default and a user's own value: neither silently wins
  for (int i = 1; i < argc; i += 2) {
    const std::string option = argv[i];
    if (i + 1 >= argc)
      return "missing value after " + option;
    if (!seen.insert(option).second)
      return option + " given twice; expected each option once";
    const std::string value = argv[i + 1];
    if (option == "-o") {
      out = value;
      continue;
    }
    const std::optional<std::string> problem = take(option, value);
    if (!problem)
      return "unknown option " + option;
    if (!problem->empty())
      return *problem;
  }
  if (out.empty())
    return output_required ? "no output file (-o TRACE.h5)" : "";
  if (!check_output) // an MPI rank that writes nothing: the folder may exist on rank 0's node only
    return "";
  // Before minutes of measuring: a trace that could not be written would lose them.
  if (std::error_code ec; std::filesystem::is_directory(out, ec))
    return "-o " + out + ": a folder; expected a trace file's path";
  std::filesystem::path target;
  try { // a device, a pipe: the trace's rename would replace it
    target = simcore::file_to_replace(out);
  } catch (const simcore::InputError& e) {
    return "-o " + std::string(e.what());
  }
  // The folder the trace lands in: a symbolic link's target's (a link into a missing folder
  // was refused only once measured).
  const std::filesystem::path folder = target.parent_path();
  const std::string where = folder.empty() ? "." : folder.string();
  if (::access(where.c_str(), W_OK) != 0)
    return "-o " + out + ": cannot write in " + where + " (" + std::strerror(errno) +
           "); expected a path in an existing, writable folder";
  return "";
}

/** Whether the run only checks its options (SIMCORE_CHECK_OPTIONS=1 in the environment, as
 *  calibrate.sbatch sets before it measures anything): the benchmark then exits 0 once its
 *  options are read and refuses them as always (exit 2) otherwise, measuring nothing. */
inline bool only_checking_options()
{
  const char* v = std::getenv("SIMCORE_CHECK_OPTIONS");
  return v != nullptr && std::string(v) == "1";
}

/** `into` = the whole number `value` of `option` when it lies in [lo, hi], and ""; else the
 *  problem, "OPTION VALUE: expected EXPECTED". */
template <typename T>
std::string read_whole(const std::string& option, const std::string& value, long long lo, long long hi,
                       const std::string& expected, T& into)
{
  const auto v = whole_number(value, lo, hi);
  if (!v)
    return option + " " + value + ": expected " + expected;
  into = static_cast<T>(*v);
  return "";
}

/** The same for a finite number in [lo, hi]. */
inline std::string read_real(const std::string& option, const std::string& value, double lo, double hi,
                             const std::string& expected, double& into)
{
  const auto v = real_number(value, lo, hi);
  if (!v)
    return option + " " + value + ": expected " + expected;
  into = *v;
  return "";
}

/** The same for a comma-separated list of whole numbers in [lo, hi]. */
template <typename T>
std::string read_whole_list(const std::string& option, const std::string& value, long long lo, long long hi,
                            const std::string& expected, std::vector<T>& into)
{
  const auto v = whole_numbers(value, lo, hi);
  if (!v)
    return option + " " + value + ": expected " + expected;
  into.assign(v->begin(), v->end());
  return "";
}

/** The first number in the file at `path` (bytes); nullopt where there is none ("max"). */
inline std::optional<double> number_in_file(const std::filesystem::path& path)
{
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f)
    return std::nullopt;
  unsigned long long v = 0;
  const bool read = std::fscanf(f, "%llu", &v) == 1;
  std::fclose(f);
  return read ? std::optional<double>(static_cast<double>(v)) : std::nullopt;
}

/** The number after `key` on its line of the file at `path` (a cgroup's memory.stat); nullopt
 *  where there is none. */
inline std::optional<double> keyed_number_in_file(const std::filesystem::path& path, const std::string& key)
{
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f)
    return std::nullopt;
  std::optional<double> out;
  char line[512];
  while (!out && std::fgets(line, sizeof line, f)) {
    unsigned long long v = 0;
    const std::size_t n = key.size();
    if (std::strncmp(line, key.c_str(), n) == 0 && line[n] == ' ' && std::sscanf(line + n, "%llu", &v) == 1)
      out = static_cast<double>(v);
  }
  std::fclose(f);
  return out;
}

/** What the process's memory cgroups (a Slurm job's, a container's) leave it: the smallest
 *  limit less use of its cgroup and those above it, cgroup v2 (memory.max, memory.current) or
 *  v1 (memory.limit_in_bytes, memory.usage_in_bytes); nullopt without a limit. The use counts
 *  the page cache of files the job wrote or read; its inactive part (memory.stat's
 *  inactive_file, v1 total_inactive_file) is reclaimed before anything is killed, so it is
 *  not counted as used (as container runtimes reckon a cgroup's working set). */
inline std::optional<double> cgroup_memory_left(const char* self_cgroup = "/proc/self/cgroup",
                                                const std::filesystem::path& root = "/sys/fs/cgroup")
{
  std::FILE* f = std::fopen(self_cgroup, "r");
  if (!f)
    return std::nullopt;
  std::optional<double> left;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.pop_back();
    const auto c1 = text.find(':'), c2 = c1 == std::string::npos ? c1 : text.find(':', c1 + 1);
    if (c2 == std::string::npos)
      continue;
    const std::string controllers = text.substr(c1 + 1, c2 - c1 - 1), path = text.substr(c2 + 1);
    std::filesystem::path base;
    const char *limit_file = nullptr, *use_file = nullptr, *inactive_key = nullptr;
    if (text.compare(0, c1, "0") == 0 && controllers.empty()) { // v2: "0::/job"
      base = root;
      limit_file = "memory.max", use_file = "memory.current", inactive_key = "inactive_file";
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) { // v1: "4:memory:/job"
      base = root / "memory";
      limit_file = "memory.limit_in_bytes", use_file = "memory.usage_in_bytes", inactive_key = "total_inactive_file";
    } else {
      continue;
    }
    const auto start = path.find_first_not_of('/');
    const std::filesystem::path dir = start == std::string::npos ? base : base / path.substr(start);
    for (std::filesystem::path d = dir;; d = d.parent_path()) {
      const auto limit = number_in_file(d / limit_file);
      if (limit && *limit < 0x1p62) { // v1 writes "no limit" as a number near 2^63
        const double used = std::max(0.0, number_in_file(d / use_file).value_or(0) -
                                              keyed_number_in_file(d / "memory.stat", inactive_key).value_or(0));
        const double here = std::max(0.0, *limit - used);
        left = left ? std::min(*left, here) : here;
      }
      if (d == base || !d.has_relative_path() || d == d.parent_path())
        break;
    }
  }
  std::fclose(f);
  return left;
}

/** The memory a new allocation can take without swapping: the kernel's MemAvailable (from
 *  `meminfo`, in bytes), or less where the process's cgroups leave less (cgroup_memory_left);
 *  nullopt where neither says. */
inline std::optional<double> available_memory(const char* meminfo = "/proc/meminfo",
                                              std::optional<double> cgroup_left = cgroup_memory_left())
{
  std::optional<double> out;
  if (std::FILE* f = std::fopen(meminfo, "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (unsigned long long kib = 0; std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        out = static_cast<double>(kib) * 1024.0;
        break;
      }
    std::fclose(f);
  }
  if (cgroup_left)
    out = out ? std::min(*out, *cgroup_left) : *cgroup_left;
  return out;
}

/** "" where `bytes` fit in the memory available, else why not. Under Linux's default
 *  overcommit a large `new` succeeds and the process is killed while it writes the pages, so
 *  the failed allocation main_of() reports never comes: a benchmark that allocates its whole
 *  working set at once asks here first. */
inline std::string beyond_available_memory(double bytes, const std::string& what,
                                           std::optional<double> available = available_memory())
{
  if (!available || bytes <= *available)
    return "";
  std::ostringstream why;
  why.precision(3);
  why << what << " need " << bytes / (1 << 30) << " GiB, more than the " << *available / (1 << 30)
      << " GiB of memory available; expected smaller sizes that fit (no trace written)";
  return why.str();
}

/** 0 where `bytes` (what `what` names) fit in the memory available; else says why as
 *  `program` and gives 2, the exit code of options this machine cannot hold. A benchmark asks
 *  before allocating its working set, with nothing measured and no trace written. */
inline int refuse_beyond_available_memory(const char* program, double bytes, const std::string& what,
                                          std::optional<double> available = available_memory())
{
  const std::string why = beyond_available_memory(bytes, what, available);
  if (why.empty())
    return 0;
  std::fprintf(stderr, "%s: %s\n", program, why.c_str());
  return 2;
}

/** `run(argc, argv)`, a benchmark's whole work, with a failed allocation turned into exit 2
 *  and a message: options in range that ask for more memory than this machine gives (a
 *  --bytes of 1 TiB) are bad input, not a crash (an uncaught std::bad_alloc, exit 134). */
inline int main_of(const char* program, int (*run)(int, char**), int argc, char** argv)
{
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: cannot allocate the memory these options ask for; expected smaller sizes that fit "
                         "in this machine's memory (no trace written)\n", program);
    return 2;
  } catch (const std::system_error& e) { // threads the machine will not start (--threads 32768)
    std::fprintf(stderr, "%s: cannot start the threads these options ask for (%s); expected fewer threads "
                         "(no trace written)\n", program, e.what());
    return 2;
  }
}

} // namespace calibration
