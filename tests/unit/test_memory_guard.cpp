// MemoryGuard and its helpers: resident memory seen to grow, limits parsed, and a process past
// its limit ended with exit code 2 and the message, one under it left alone.
#include <catch2/catch.hpp>

#include "simcore/error.hpp"
#include "simcore/memory_guard.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using simcore::MemoryGuard;

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

/** `bytes` of memory, every page written (so resident). */
std::vector<char> touched(std::uint64_t bytes)
{
  std::vector<char> v(bytes);
  for (std::size_t i = 0; i < v.size(); i += 4096)
    v[i] = static_cast<char>(i);
  return v;
}

struct ChildEnd {
  int exit_code = -1;
  std::string text;
};

/** Runs `body` in a forked child that writes into a pipe (passed to `body`) and ends with 0
 *  unless something ends it first. */
template <typename Body>
ChildEnd in_child(Body body)
{
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildEnd end;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    end.text.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  end.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return end;
}

} // namespace

TEST_CASE("resident memory grows by what is written, and some memory is available", "[memory]")
{
  const std::uint64_t before = simcore::resident_memory_bytes();
  REQUIRE(before > 0);
  const auto block = touched(200 * kMiB);
  const std::uint64_t after = simcore::resident_memory_bytes();
  CHECK(after >= before + 190 * kMiB);
  CHECK(after <= before + 260 * kMiB);
  REQUIRE(simcore::available_memory_bytes() > 100 * kMiB);
  // Shared by two, each default limit leaves the process its own memory plus half the room.
  const std::uint64_t one = simcore::default_memory_limit(1) - simcore::resident_memory_bytes();
  const std::uint64_t two = simcore::default_memory_limit(2) - simcore::resident_memory_bytes();
  CHECK(static_cast<double>(two) == Approx(static_cast<double>(one) / 2).epsilon(0.1));
}

TEST_CASE("memory limits are sizes from 1 MiB, or none", "[memory]")
{
  CHECK(simcore::parse_memory_limit("8GiB", "--max-memory") == 8 * 1024 * kMiB);
  CHECK(simcore::parse_memory_limit("500MB", "--max-memory") == 500000000u);
  CHECK(simcore::parse_memory_limit("1048576", "--max-memory") == kMiB);
  CHECK(simcore::parse_memory_limit("none", "--max-memory") == UINT64_MAX);
  for (const char* bad : {"0", "-1GB", "1KiB", "1e30", "abc", "8 GiB", "nan", "inf"}) {
    INFO(bad);
    try {
      simcore::parse_memory_limit(bad, "--max-memory");
      FAIL("accepted");
    } catch (const simcore::InputError& e) {
      CHECK(e.where() == std::string("--max-memory ") + bad);
      CHECK(std::string(e.what()).find("expected") != std::string::npos);
    }
  }
  CHECK(simcore::format_memory(512 * kMiB) == "512 MiB");
  CHECK(simcore::format_memory(3 * 1024 * kMiB + 512 * kMiB) == "3.50 GiB");
}

TEST_CASE("a process past its memory limit ends with exit code 2 and says why", "[memory]")
{
  const ChildEnd end = in_child([](int fd) {
    MemoryGuard guard(simcore::resident_memory_bytes() + 100 * kMiB, "big.xml", "set by a test", fd, "", false);
    auto block = touched(300 * kMiB);
    std::this_thread::sleep_for(std::chrono::seconds(5)); // the guard ends the process before
    (void)!::write(fd, "survived", 8);
  });
  CHECK(end.exit_code == simcore::kExitBadInput);
  INFO(end.text);
  CHECK(end.text.rfind("big.xml: the run took ", 0) == 0);
  CHECK(end.text.find(" of memory, past its limit of ") != std::string::npos);
  CHECK(end.text.find("(set by a test); expected a smaller scenario") != std::string::npos);
  CHECK(end.text.find("survived") == std::string::npos);
}

TEST_CASE("a process under its limit, or stopped watching, is left alone", "[memory]")
{
  const ChildEnd under = in_child([](int fd) {
    MemoryGuard guard(simcore::resident_memory_bytes() + 400 * kMiB, "a.xml", "test", fd, "", false);
    auto block = touched(100 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  CHECK(under.exit_code == 0);
  CHECK(under.text.empty());
  const ChildEnd stopped = in_child([](int fd) {
    MemoryGuard guard(simcore::resident_memory_bytes() + 50 * kMiB, "a.xml", "test", fd, "", false);
    guard.stop(); // a run stops it before writing its results
    auto block = touched(200 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  CHECK(stopped.exit_code == 0);
  const ChildEnd unlimited = in_child([](int fd) {
    MemoryGuard guard(0, "a.xml", "test", fd, "", false);
    auto block = touched(200 * kMiB);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  CHECK(unlimited.exit_code == 0);
}

TEST_CASE("a run whose model needs more than its limit is refused before it runs", "[memory]")
{
  const std::uint64_t now = simcore::resident_memory_bytes();
  REQUIRE(now > 0);
  MemoryGuard guard(now + 100 * kMiB, "big.xml", "set by a test", 2, "", false);
  CHECK_NOTHROW(guard.require(50 * kMiB, "half of it"));
  CHECK_NOTHROW(guard.require(0, "nothing"));
  try {
    guard.require(200 * kMiB, "the tasks table (1 task x 200 MiB)");
    FAIL("a need past the limit was accepted");
  } catch (const simcore::InputError& e) {
    CHECK(e.where() == "big.xml");
    CHECK_THAT(e.detail(), Catch::StartsWith("the run needs at least "));
    CHECK_THAT(e.detail(), Catch::Contains(" once set up, and 200 MiB for the tasks table (1 task x 200 MiB); past "
                                           "its limit of "));
    CHECK_THAT(e.detail(), Catch::Contains("(set by a test); expected a smaller scenario"));
  }
  // Counts past 2^64 B (a model saturates them) are refused too, not wrapped around.
  CHECK_THROWS_AS(guard.require(UINT64_MAX, "everything"), simcore::InputError);
  CHECK_THROWS_AS(guard.require(UINT64_MAX - now / 2, "nearly everything"), simcore::InputError);
  guard.stop();
  // Without a limit, nothing is refused.
  MemoryGuard unlimited(0, "a.xml", "none", 2, "", false);
  CHECK_NOTHROW(unlimited.require(UINT64_MAX, "everything"));
}
