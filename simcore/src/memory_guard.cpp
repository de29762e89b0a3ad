#include "simcore/memory_guard.hpp"
#include "simcore/error.hpp"
#include "simcore/units.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace simcore {

namespace {

constexpr const char* kExpectedSmaller =
    "expected a smaller scenario (fewer steps, iterations, ranks, tasks, jobs or hosts) or a higher limit "
    "(simcore run --max-memory SIZE, or max_memory= in Python)";

} // namespace

namespace {

/** The first unsigned integers of a small file, read without allocating. */
bool read_numbers(const char* path, std::uint64_t* values, int count)
{
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char text[256];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0)
    return false;
  text[n] = '\0';
  const char* p = text;
  for (int i = 0; i < count; i++) {
    while (*p == ' ' || *p == '\t' || *p == '\n')
      p++;
    if (*p < '0' || *p > '9')
      return false;
    std::uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
      v = v * 10 + static_cast<std::uint64_t>(*p - '0');
    values[i] = v;
  }
  return true;
}

/** A control group's limit less its usage, where both files hold numbers ("max" holds none). */
bool cgroup_room(const char* limit_path, const char* usage_path, std::uint64_t& room)
{
  std::uint64_t limit = 0, usage = 0;
  if (!read_numbers(limit_path, &limit, 1) || !read_numbers(usage_path, &usage, 1))
    return false;
  if (limit >= (std::uint64_t{1} << 60)) // cgroup v1 writes "no limit" as a huge number
    return false;
  room = limit > usage ? limit - usage : 0;
  return true;
}

/** "12.3 GiB", "512 MiB" into `text`, without allocating. */
void format_memory_into(char* text, std::size_t size, std::uint64_t bytes)
{
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(text, size, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  else
    std::snprintf(text, size, "%.0f MiB", b / (1024.0 * 1024));
}

} // namespace

std::uint64_t resident_memory_bytes()
{
  std::uint64_t pages[2] = {0, 0}; // size, resident
  if (!read_numbers("/proc/self/statm", pages, 2))
    return 0;
  return pages[1] * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t available_memory_bytes()
{
  std::uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      std::uint64_t kib = 0;
      if (in >> kib)
        available = kib * 1024;
    }
  std::uint64_t room = 0;
  if (cgroup_room("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", room) ||
      cgroup_room("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes", room))
    available = available == 0 ? room : std::min(available, room);
  return available;
}

std::uint64_t default_memory_limit(int jobs)
{
  const std::uint64_t available = available_memory_bytes();
  if (available == 0)
    return 0;
  const double share = 0.9 * static_cast<double>(available) / std::max(jobs, 1);
  return resident_memory_bytes() + static_cast<std::uint64_t>(share);
}

std::uint64_t parse_memory_limit(const std::string& text, const std::string& option)
{
  if (text == "none")
    return UINT64_MAX;
  const std::string where = option + (option.back() == '=' ? "" : " ") + text;
  const double bytes = parse_quantity(Quantity::Size, text, where);
  if (!(bytes >= 1024.0 * 1024) || !(bytes < 9.2e18))
    throw InputError(where, "a limit of " + format_quantity(Quantity::Size, bytes) +
                                "; expected a size from 1MiB to 8EiB (e.g. 8GiB, 500MB), or none");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_memory(std::uint64_t bytes)
{
  char text[64];
  format_memory_into(text, sizeof text, bytes);
  return text;
}

MemoryGuard::MemoryGuard(std::uint64_t limit_bytes, const std::string& where, const std::string& how_set, int fd,
                         const std::string& prefix, bool end_line)
    : limit_(limit_bytes), where_(where), how_set_(how_set), fd_(fd)
{
  head_ = prefix + (where.empty() ? "" : where + ": ") + "the run took ";
  tail_ = " of memory, past its limit of " + format_memory(limit_bytes) + " (" + how_set + "); " + kExpectedSmaller;
  if (end_line)
    tail_ += "\n";
  if (limit_ == 0)
    return;
  // Checked here and at stop() too, not only by the thread: a short run may end before the
  // thread is first scheduled on a loaded machine.
  if (const std::uint64_t resident = resident_memory_bytes(); resident > limit_)
    end_process(resident);
  thread_ = std::thread([this] { watch(); });
}

MemoryGuard::~MemoryGuard() { stop(); }

void MemoryGuard::require(std::uint64_t more_bytes, const std::string& what) const
{
  const std::uint64_t resident = resident_memory_bytes();
  if (limit_ == 0 || more_bytes == 0 || more_bytes <= limit_ - std::min(resident, limit_))
    return;
  const std::uint64_t total = more_bytes > UINT64_MAX - resident ? UINT64_MAX : resident + more_bytes;
  throw InputError(where_, "the run needs at least " + format_memory(total) + " of memory: " +
                               format_memory(resident) + " once set up, and " + format_memory(more_bytes) + " for " +
                               what + "; past its limit of " + format_memory(limit_) + " (" + how_set_ + "); " +
                               kExpectedSmaller);
}

void MemoryGuard::stop()
{
  if (thread_.joinable())
    if (const std::uint64_t resident = resident_memory_bytes(); resident > limit_)
      end_process(resident);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void MemoryGuard::watch()
{
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const std::uint64_t resident = resident_memory_bytes();
    if (resident > limit_)
      end_process(resident);
    wake_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

void MemoryGuard::end_process(std::uint64_t resident) const
{
  // The texts were made before; only a number is formatted here, into the stack.
  char amount[64];
  format_memory_into(amount, sizeof amount, resident);
  const auto put = [this](const char* text, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, text, size);
      if (n <= 0)
        return;
      text += n;
      size -= static_cast<std::size_t>(n);
    }
  };
  put(head_.data(), head_.size());
  put(amount, std::strlen(amount));
  put(tail_.data(), tail_.size());
  ::_exit(kExitBadInput);
}

} // namespace simcore
