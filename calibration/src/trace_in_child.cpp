#include "trace_in_child.hpp"

#include <simcore/error.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <new>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace calibration {

namespace {

using Json = nlohmann::json;

/** What the child sends: a kind, the length of what follows, that; for a trace ('T'), the
 *  header (CBOR: the text as it is, the shapes), then every dataset's values as their bytes, in
 *  the header's order. 'I': an InputError (where, what); 'M': out of memory (the limit);
 *  'E': another error (its text). */
enum Kind : char { kTrace = 'T', kInput = 'I', kMemory = 'M', kOther = 'E' };

std::vector<std::uint8_t> header_of(const Trace& t)
{
  Json benchmarks = Json::object();
  for (const auto& [name, b] : t.benchmarks) {
    Json datasets = Json::object();
    for (const auto& [dname, d] : b.datasets)
      datasets[dname] = {{"unit", d.unit}, {"shape", d.shape}, {"count", d.values.size()}};
    benchmarks[name] = {{"parameters", b.parameters}, {"datasets", std::move(datasets)}};
  }
  return Json::to_cbor(Json{{"attributes", t.attributes}, {"benchmarks", std::move(benchmarks)}});
}

bool write_all(int fd, const void* data, std::size_t n)
{
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool send(int fd, Kind kind, const std::vector<std::uint8_t>& body)
{
  const std::uint64_t n = body.size();
  return write_all(fd, &kind, 1) && write_all(fd, &n, sizeof n) && write_all(fd, body.data(), body.size());
}

/** The address space of this process, in bytes (0 where it cannot be told). */
std::uint64_t address_space()
{
  unsigned long long pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1)
      pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/** Processor seconds the child gets: `wanted`, or less where the caller's limit is lower. */
rlim_t cpu_limit(std::uint64_t wanted)
{
  struct rlimit now {};
  getrlimit(RLIMIT_CPU, &now);
  return std::min<rlim_t>(wanted, now.rlim_cur);
}

/** Sets the soft address-space limit to `bytes`, or to the hard limit where that is lower. */
void limit_memory(std::uint64_t bytes)
{
  struct rlimit now {};
  getrlimit(RLIMIT_AS, &now);
  now.rlim_cur = std::min<rlim_t>(bytes, now.rlim_max);
  setrlimit(RLIMIT_AS, &now);
}

std::uint64_t memory_limit()
{
  struct rlimit now {};
  getrlimit(RLIMIT_AS, &now);
  return now.rlim_cur;
}

[[noreturn]] void child(int fd, const std::string& path, Trace (*read)(const std::string&, const ReserveMemory&),
                        const ChildLimits& limits)
{
  // The caller's descriptors stay open: libhdf5 shares an open file by its inode, and the
  // child, opening a trace that a thread of the caller's has open with h5py, reads through
  // the caller's descriptor (closing them made it fail).
  // The caller's handlers (a test framework's, Python's) would report a crash as theirs, or
  // let it go on; here each of these signals ends the child, which the parent reports. An
  // interrupt the caller ignores stays ignored.
  sigset_t fatal;
  sigemptyset(&fatal);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU, SIGINT, SIGTERM}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (!((sig == SIGINT || sig == SIGTERM) && old.sa_handler == SIG_IGN))
      std::signal(sig, SIG_DFL);
    sigaddset(&fatal, sig);
  }
  sigprocmask(SIG_UNBLOCK, &fatal, nullptr);
  struct rlimit no_core {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct rlimit cpu {};
  getrlimit(RLIMIT_CPU, &cpu);
  cpu.rlim_cur = cpu_limit(limits.cpu_seconds);
  cpu.rlim_max = std::min<rlim_t>(limits.cpu_seconds + 5, cpu.rlim_max);
  setrlimit(RLIMIT_CPU, &cpu);
  const std::uint64_t base = address_space();
  limit_memory(base + limits.memory_bytes);
  const ReserveMemory reserve = [](std::uint64_t bytes) {
    // The values, and room to copy them once more.
    const std::uint64_t now = memory_limit();
    limit_memory(now > std::numeric_limits<std::uint64_t>::max() - 2 * bytes ? now : now + 2 * bytes);
  };
  bool sent = false;
  try {
    const Trace t = read(path, reserve);
    sent = send(fd, kTrace, header_of(t));
    for (const auto& [name, b] : t.benchmarks)
      for (const auto& [dname, d] : b.datasets)
        sent = sent && write_all(fd, d.values.data(), d.values.size() * sizeof(double));
  } catch (const simcore::InputError& e) {
    sent = send(fd, kInput, Json::to_cbor(Json{e.where(), Json::binary({e.detail().begin(), e.detail().end()})}));
  } catch (const std::bad_alloc&) {
    const std::string limit = std::to_string((memory_limit() - std::min(base, memory_limit())) >> 20);
    sent = send(fd, kMemory, {limit.begin(), limit.end()});
  } catch (const std::exception& e) {
    const std::string what = e.what();
    sent = send(fd, kOther, {what.begin(), what.end()});
  }
  _exit(sent ? 0 : 1);
}

/** The parent's end: reads what the child sends, while watching for its end (a process that
 *  another thread forked meanwhile may hold the pipe open: its end of file never comes) and
 *  for the caller's interrupt. */
class ChildPipe {
public:
  ChildPipe(pid_t pid, int fd, const ForkGuard& guard) : pid_(pid), fd_(fd), guard_(guard) {}
  ~ChildPipe()
  {
    ::close(fd_);
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      reap(0);
    }
  }
  ChildPipe(const ChildPipe&) = delete;
  ChildPipe& operator=(const ChildPipe&) = delete;

  /** Reads `n` bytes into `out`; false where the child ended before sending them. */
  bool read(void* out, std::size_t n)
  {
    auto* p = static_cast<std::uint8_t*>(out);
    while (n > 0) {
      struct pollfd pfd {fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, 100);
      if (ready < 0 && errno != EINTR)
        return false;
      if (ready == 0) { // nothing for 100 ms
        if (guard_.interrupted && guard_.interrupted())
          throw simcore::Interrupted("reading a trace was interrupted");
        if (ended_)
          return false; // what it sent was all in the pipe
        if (reap(WNOHANG))
          ended_ = true; // what it sent is in the pipe now, or never will be
        continue;
      }
      if (ready < 0)
        continue;
      const ssize_t r = ::read(fd_, p, n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return false;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }

  /** The child's end: its status (0 where it cannot be told: SIGCHLD ignored). */
  int wait()
  {
    if (!reaped_)
      reap(0);
    return status_;
  }
  /** Processor seconds the child used. */
  long used_seconds() const { return usage_.ru_utime.tv_sec + usage_.ru_stime.tv_sec; }

private:
  /** True where the child has ended (and is reaped, or cannot be: SIGCHLD ignored). */
  bool reap(int options)
  {
    int status = 0;
    pid_t r;
    while ((r = ::wait4(pid_, &status, options, &usage_)) < 0 && errno == EINTR) {
    }
    if (r == 0)
      return false;
    reaped_ = true;
    status_ = r == pid_ ? status : 0;
    return true;
  }

  pid_t pid_;
  int fd_;
  const ForkGuard& guard_;
  bool reaped_ = false, ended_ = false;
  int status_ = 0;
  struct rusage usage_ {};
};

} // namespace

ChildLimits child_limits(const std::string& path)
{
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  return {30 + (ec ? 0 : size >> 20), std::uint64_t{1} << 30};
}

Trace read_trace_in_child(const std::string& path, const ForkGuard& guard,
                          Trace (*read)(const std::string&, const ReserveMemory&), const ChildLimits& limits)
{
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw simcore::InternalError(path + ": cannot make the pipe of the process that reads it (" +
                                 std::strerror(errno) + "); HDF5 traces are read in a child process");
  if (guard.before)
    guard.before();
  const pid_t pid = ::fork();
  const int fork_errno = errno;
  if (pid != 0 && guard.after)
    guard.after();
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], path, read, limits);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw simcore::InternalError(path + ": cannot start the process that reads it (" +
                                 std::strerror(fork_errno) + "); HDF5 traces are read in a child process");
  }
  ChildPipe pipe(pid, fds[0], guard);
  char kind = 0;
  std::uint64_t length = 0;
  std::vector<std::uint8_t> body;
  bool whole = pipe.read(&kind, 1) && pipe.read(&length, sizeof length);
  if (whole && length < (std::uint64_t{1} << 40)) {
    body.resize(length);
    whole = pipe.read(body.data(), body.size());
  }
  Trace t;
  if (whole && kind == kTrace) {
    const Json j = Json::from_cbor(body);
    t.attributes = j.at("attributes").get<std::map<std::string, std::string>>();
    for (const auto& [name, b] : j.at("benchmarks").items()) {
      Benchmark& out = t.benchmarks[name];
      out.name = name;
      out.parameters = b.at("parameters").get<std::map<std::string, std::string>>();
      for (const auto& [dname, d] : b.at("datasets").items()) {
        Dataset& ds = out.datasets[dname];
        ds.unit = d.at("unit").get<std::string>();
        ds.shape = d.at("shape").get<std::vector<std::size_t>>();
        ds.values.resize(d.at("count").get<std::size_t>());
      }
    }
    for (auto& [name, b] : t.benchmarks)
      for (auto& [dname, d] : b.datasets)
        whole = whole && pipe.read(d.values.data(), d.values.size() * sizeof(double));
  }
  const int status = pipe.wait();
  if (whole) {
    switch (kind) {
      case kTrace: return t;
      case kInput: {
        const Json j = Json::from_cbor(body);
        const auto& detail = j.at(1).get_binary();
        throw simcore::InputError(j.at(0).get<std::string>(), std::string(detail.begin(), detail.end()));
      }
      case kMemory:
        throw simcore::InputError(path, "reading it needed more than " + std::string(body.begin(), body.end()) +
                                            " MiB of memory (libhdf5 asks for that much on some corrupt files); "
                                            "expected an intact calibration trace");
      default: throw simcore::InternalError(std::string(body.begin(), body.end()));
    }
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const auto seconds = cpu_limit(limits.cpu_seconds);
    if (sig == SIGINT || sig == SIGTERM)
      throw simcore::Interrupted(path + ": reading it was interrupted");
    if (sig == SIGXCPU || (sig == SIGKILL && pipe.used_seconds() >= static_cast<long>(seconds)))
      throw simcore::InputError(path, "reading it took " + std::to_string(seconds) +
                                          " s of processor time and was stopped (libhdf5 loops on some corrupt "
                                          "files); expected an intact calibration trace");
    throw simcore::InputError(path, std::string("the process reading it ended by a signal (") + strsignal(sig) +
                                        "): libhdf5 crashes on some corrupt files; expected an intact "
                                        "calibration trace");
  }
  throw simcore::InputError(path, "the process reading it ended before it sent the trace (libhdf5 crashes on "
                                  "some corrupt files); expected an intact calibration trace");
}

} // namespace calibration
