#include "trace_in_child.hpp"

#include <simcore/error.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <filesystem>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace calibration {

namespace {

using Json = nlohmann::json;

/** A trace as CBOR: its text as it is (not made UTF-8), its values as their bytes (exact). */
std::vector<std::uint8_t> encode(const Trace& t)
{
  Json benchmarks = Json::object();
  for (const auto& [name, b] : t.benchmarks) {
    Json datasets = Json::object();
    for (const auto& [dname, d] : b.datasets) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(d.values.data());
      datasets[dname] = {{"unit", d.unit},
                         {"shape", d.shape},
                         {"values", Json::binary({bytes, bytes + d.values.size() * sizeof(double)})}};
    }
    benchmarks[name] = {{"parameters", b.parameters}, {"datasets", std::move(datasets)}};
  }
  return Json::to_cbor(Json{{"attributes", t.attributes}, {"benchmarks", std::move(benchmarks)}});
}

Trace decode(const Json& j)
{
  Trace t;
  t.attributes = j.at("attributes").get<std::map<std::string, std::string>>();
  for (const auto& [name, b] : j.at("benchmarks").items()) {
    Benchmark& out = t.benchmarks[name];
    out.name = name;
    out.parameters = b.at("parameters").get<std::map<std::string, std::string>>();
    for (const auto& [dname, d] : b.at("datasets").items()) {
      Dataset& ds = out.datasets[dname];
      ds.unit = d.at("unit").get<std::string>();
      ds.shape = d.at("shape").get<std::vector<std::size_t>>();
      const auto& bytes = d.at("values").get_binary();
      ds.values.resize(bytes.size() / sizeof(double));
      std::memcpy(ds.values.data(), bytes.data(), ds.values.size() * sizeof(double));
    }
  }
  return t;
}

bool write_all(int fd, const std::uint8_t* p, std::size_t n)
{
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

/** The address space of this process, in bytes (0 where it cannot be told). */
std::uint64_t address_space()
{
  unsigned long long pages = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%llu", &pages) != 1)
      pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

[[noreturn]] void child(int fd, const std::string& path, Trace (*read)(const std::string&), const ChildLimits& limits)
{
  // The caller's handlers (a test framework's, Python's) would report a crash as theirs, or
  // let it go on; here each of these signals ends the child, which the parent reports.
  sigset_t fatal;
  sigemptyset(&fatal);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU, SIGINT, SIGTERM}) {
    std::signal(sig, SIG_DFL);
    sigaddset(&fatal, sig);
  }
  sigprocmask(SIG_UNBLOCK, &fatal, nullptr);
  struct rlimit cpu {limits.cpu_seconds, limits.cpu_seconds + 5};
  setrlimit(RLIMIT_CPU, &cpu);
  const std::uint64_t memory = address_space() + limits.memory_bytes;
  struct rlimit as {memory, memory};
  setrlimit(RLIMIT_AS, &as);
  std::vector<std::uint8_t> out;
  try {
    out = encode(read(path));
    out.insert(out.begin(), 'T');
  } catch (const simcore::InputError& e) {
    out = Json::to_cbor(Json{e.where(), Json::binary({e.detail().begin(), e.detail().end()})});
    out.insert(out.begin(), 'I');
  } catch (const std::bad_alloc&) {
    out = {'M'};
  } catch (const std::exception& e) {
    const std::string what = e.what();
    out.assign(what.begin(), what.end());
    out.insert(out.begin(), 'E');
  }
  _exit(write_all(fd, out.data(), out.size()) ? 0 : 1);
}

} // namespace

ChildLimits child_limits(const std::string& path)
{
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  const std::uint64_t bytes = ec ? 0 : size;
  return {30 + (bytes >> 20), (std::uint64_t{1} << 30) + 16 * 1032 * bytes};
}

Trace read_trace_in_child(const std::string& path, const ForkGuard& guard, Trace (*read)(const std::string&),
                          const ChildLimits& limits)
{
  int fds[2];
  if (::pipe(fds) != 0)
    return read(path);
  if (guard.before)
    guard.before();
  const pid_t pid = ::fork();
  if (pid != 0 && guard.after)
    guard.after();
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], path, read, limits);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return read(path);
  }
  std::vector<std::uint8_t> in;
  std::uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    in.insert(in.end(), buf, buf + r);
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGINT || sig == SIGTERM)
      throw simcore::Interrupted(path + ": reading it was interrupted");
    const auto used = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec;
    if (sig == SIGXCPU || (sig == SIGKILL && used >= static_cast<long>(limits.cpu_seconds)))
      throw simcore::InputError(path, "reading it took " + std::to_string(limits.cpu_seconds) +
                                          " s of processor time and was stopped (libhdf5 loops on some corrupt "
                                          "files); expected an intact calibration trace");
    throw simcore::InputError(path, std::string("the process reading it ended by a signal (") + strsignal(sig) +
                                        "): libhdf5 crashes on some corrupt files; expected an intact "
                                        "calibration trace");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.empty())
    throw simcore::InternalError(path + ": the process reading this trace ended without its contents");
  const char kind = static_cast<char>(in.front());
  in.erase(in.begin());
  if (kind == 'M')
    throw simcore::InputError(path, "reading it needed more than " + std::to_string(limits.memory_bytes >> 20) +
                                        " MiB of memory (libhdf5 asks for that much on some corrupt files); "
                                        "expected an intact calibration trace");
  if (kind == 'E')
    throw simcore::InternalError(std::string(in.begin(), in.end()));
  const Json j = Json::from_cbor(in);
  if (kind == 'I') {
    const auto& detail = j.at(1).get_binary();
    throw simcore::InputError(j.at(0).get<std::string>(), std::string(detail.begin(), detail.end()));
  }
  return decode(j);
}

} // namespace calibration
