// load_library: how calib_cuda finds cuBLAS and cuDNN at run time, checked with the C library.
#include "../cuda/library_loader.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using calibration_cuda::load_library;

TEST_CASE("load_library takes the file a variable names, else the first usual name that loads", "[calibration][cuda]")
{
  ::unsetenv("SIMCORE_TEST_LIBRARY");
  auto found = load_library("SIMCORE_TEST_LIBRARY", {"libnot-there.so.1", "libm.so.6", "libc.so.6"}, "libm");
  CHECK(found.handle != nullptr);
  CHECK(found.path == "libm.so.6");
  CHECK(found.why_not.empty());

  auto none = load_library("SIMCORE_TEST_LIBRARY", {"libnot-there.so.1", "libnot-there.so"}, "libnot-there");
  CHECK(none.handle == nullptr);
  CHECK(none.why_not == "libnot-there not found (SIMCORE_TEST_LIBRARY=/path/to/libnot-there.so.1 names it)");

  // A named file is the only one tried: when it fails, the message says why, and no usual
  // name stands in for it.
  ::setenv("SIMCORE_TEST_LIBRARY", "/nowhere/libm.so.6", 1);
  auto named = load_library("SIMCORE_TEST_LIBRARY", {"libm.so.6"}, "libm");
  CHECK(named.handle == nullptr);
  CHECK_THAT(named.why_not, Catch::StartsWith("SIMCORE_TEST_LIBRARY=/nowhere/libm.so.6: "));
  ::setenv("SIMCORE_TEST_LIBRARY", "libc.so.6", 1);
  CHECK(load_library("SIMCORE_TEST_LIBRARY", {"libm.so.6"}, "libm").path == "libc.so.6");
  ::setenv("SIMCORE_TEST_LIBRARY", "", 1); // empty: as if unset
  CHECK(load_library("SIMCORE_TEST_LIBRARY", {"libm.so.6"}, "libm").path == "libm.so.6");
  ::unsetenv("SIMCORE_TEST_LIBRARY");
}
