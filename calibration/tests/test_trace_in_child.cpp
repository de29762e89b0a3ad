/* HDF5 traces read in a child process: what comes back (bit for bit), and how a child that
 * crashes, loops or asks for memory without end is reported. */
#include "../src/trace_in_child.hpp"

#include <simcore/error.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sys/wait.h>
#include <string>
#include <unistd.h>

namespace {

std::uint64_t bits(double v)
{
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

double from_bits(std::uint64_t b)
{
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

std::string error_of(calibration::Trace (*read)(const std::string&, const calibration::ReserveMemory&),
                     const calibration::ChildLimits& limits)
{
  try {
    calibration::read_trace_in_child("t.h5", {}, read, limits);
  } catch (const simcore::InputError& e) {
    return e.what();
  }
  return "";
}

const calibration::ChildLimits kOneSecond{1, std::uint64_t{1} << 30};

} // namespace

TEST_CASE("an HDF5 trace read in a child comes back bit for bit", "[calibration]")
{
  calibration::Trace t;
  t.attributes = {{"schema", calibration::kTraceSchema}, {"cpu_model", "Intel\xae Xeon"}}; // not UTF-8, kept
  calibration::Benchmark& b = t.benchmarks["bench\xff"];
  b.name = "bench\xff";
  b.parameters = {{"threads", "2"}, {"note\xfe", "\xff"}};
  const std::vector<double> values{-0.0, from_bits(0x7ff8dead00000001ULL), from_bits(0xfff0000000000000ULL),
                                   std::numeric_limits<double>::denorm_min(), 1.0 / 3, 6.02e23};
  b.datasets["times"] = {values, {2, 3}, "s"};
  b.datasets["empty"] = {{}, {0}, "B"};
  const std::string path = "trace_in_child_" + std::to_string(getpid()) + ".h5";
  calibration::write_trace(path, t);
  int children = 0;
  calibration::ForkGuard guard{[&children] { children++; }, [&children] { children += 10; }, {}};
  const auto back = calibration::read_trace(path, guard);
  std::remove(path.c_str());
  CHECK(children == 11); // before and after the one fork
  CHECK(back.attributes == t.attributes);
  REQUIRE(back.benchmarks.size() == 1);
  const auto& bb = back.benchmarks.at("bench\xff");
  CHECK(bb.name == "bench\xff");
  CHECK(bb.parameters == b.parameters);
  const auto& d = bb.datasets.at("times");
  CHECK(d.shape == std::vector<std::size_t>{2, 3});
  CHECK(d.unit == "s");
  REQUIRE(d.values.size() == values.size());
  for (std::size_t i = 0; i < values.size(); i++)
    CHECK(bits(d.values[i]) == bits(values[i])); // a NaN's payload, -0 and the smallest subnormal too
  CHECK(bb.datasets.at("empty").shape == std::vector<std::size_t>{0});
}

TEST_CASE("a child reading a trace that crashes, loops or runs out of memory is bad input", "[calibration]")
{
  const auto crash = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    std::raise(SIGSEGV);
    return {};
  };
  CHECK(error_of(crash, kOneSecond) == "t.h5: the process reading it ended by a signal (Segmentation fault): "
                                       "libhdf5 crashes on some corrupt files; expected an intact calibration trace");
  const auto loop = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    for (volatile std::uint64_t i = 0;; i = i + 1) {
    }
  };
  CHECK(error_of(loop, kOneSecond) == "t.h5: reading it took 1 s of processor time and was stopped (libhdf5 loops "
                                      "on some corrupt files); expected an intact calibration trace");
  const auto greedy = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    calibration::Trace t;
    t.benchmarks["b"].datasets["d"].values.resize(std::size_t{1} << 28); // 2 GiB
    return t;
  };
  CHECK(error_of(greedy, kOneSecond) == "t.h5: reading it needed more than 1024 MiB of memory (libhdf5 asks for "
                                        "that much on some corrupt files); expected an intact calibration trace");
}

TEST_CASE("a child's refusal arrives whole, where and what", "[calibration]")
{
  const auto refuse = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    throw simcore::InputError("t.h5 (stream\xff)", "dataset 'x\xfe' is odd; expected another");
  };
  try {
    calibration::read_trace_in_child("t.h5", {}, refuse, kOneSecond);
    FAIL("no error");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == "t.h5 (stream\xff)");
    CHECK(e.detail() == "dataset 'x\xfe' is odd; expected another");
  }
}

TEST_CASE("a corrupt trace libhdf5 loops on is stopped at the child's time limit", "[calibration]")
{
  // corrupt/README.md: libhdf5 1.10.8 loops in H5C_protect on it, forever. A newer one may
  // refuse it itself: only a refusal naming the file is asked for.
  const std::string path = SIMCORE_SOURCE_DIR "/calibration/tests/corrupt/heap-loop.h5";
  try {
    calibration::read_trace_in_child(path, {}, calibration::read_trace_h5, kOneSecond);
    FAIL("read");
  } catch (const simcore::InputError& e) {
    CHECK(std::string(e.what()).rfind(path, 0) == 0);
  }
}

TEST_CASE("the child's end is seen though another process holds its pipe", "[calibration]")
{
  // A process forked meanwhile (by another thread of the caller's: a multiprocessing pool)
  // holds the pipe's end: its end of file never came, and the read waited for that process.
  pid_t holder = 0;
  calibration::ForkGuard guard{{}, [&holder] {
                                 holder = ::fork();
                                 if (holder == 0) {
                                   ::sleep(30);
                                   _exit(0);
                                 }
                               },
                               {}};
  const auto crash = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    std::raise(SIGSEGV);
    return {};
  };
  CHECK_THROWS_WITH(calibration::read_trace_in_child("t.h5", guard, crash, kOneSecond),
                    Catch::Contains("ended by a signal (Segmentation fault)"));
  int status = 0;
  CHECK(::waitpid(holder, &status, WNOHANG) == 0); // the holder lives on: the read did not wait for it
  ::kill(holder, SIGKILL);
  ::waitpid(holder, &status, 0);
}

TEST_CASE("a child that crashes is bad input though the caller ignores SIGCHLD", "[calibration]")
{
  // Its status is then unknown (wait4: ECHILD); it ended before sending the trace.
  std::signal(SIGCHLD, SIG_IGN);
  const auto crash = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    std::raise(SIGSEGV);
    return {};
  };
  CHECK(error_of(crash, kOneSecond) == "t.h5: the process reading it ended before it sent the trace (libhdf5 "
                                       "crashes on some corrupt files); expected an intact calibration trace");
  std::signal(SIGCHLD, SIG_DFL);
}

TEST_CASE("memory reserved for a dataset's values is the child's besides its limit", "[calibration]")
{
  // 128 MiB of values under a limit of 64 MiB: refused unreserved, read once reserved.
  const calibration::ChildLimits limits{10, std::uint64_t{64} << 20};
  const auto unreserved = +[](const std::string&, const calibration::ReserveMemory&) -> calibration::Trace {
    calibration::Trace t;
    t.benchmarks["b"].datasets["d"] = {std::vector<double>(std::size_t{16} << 20, 1.0), {std::size_t{16} << 20}, "s"};
    return t;
  };
  CHECK(error_of(unreserved, limits) == "t.h5: reading it needed more than 64 MiB of memory (libhdf5 asks for "
                                        "that much on some corrupt files); expected an intact calibration trace");
  const auto reserved = +[](const std::string&, const calibration::ReserveMemory& reserve) -> calibration::Trace {
    reserve(std::uint64_t{128} << 20);
    calibration::Trace t;
    t.benchmarks["b"].datasets["d"] = {std::vector<double>(std::size_t{16} << 20, 1.0), {std::size_t{16} << 20}, "s"};
    return t;
  };
  const auto t = calibration::read_trace_in_child("t.h5", {}, reserved, limits);
  const auto& d = t.benchmarks.at("b").datasets.at("d");
  CHECK(d.values.size() == std::size_t{16} << 20);
  CHECK(d.values.back() == 1.0);
}
