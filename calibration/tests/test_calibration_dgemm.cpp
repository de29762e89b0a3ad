/* Calibration kernels: the blocked DGEMM against the plain reference on both of its paths (the
 * AVX-512 micro-kernel where the CPU has it, and the portable one, forced), on sizes that are
 * not multiples of its 6 x 16 tile or of its cache blocks; and the path switch, which keeps a
 * CPU without AVX-512 on the portable kernel. */
#include <calibration/dgemm.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

/** Sets the path for one scope and restores the default after it, so that a check that fails
 *  half-way leaves the next test on the path the CPU takes. */
struct ForcedPath {
  explicit ForcedPath(bool simd) { calibration::dgemm_set_simd(simd); }
  ~ForcedPath() { calibration::dgemm_set_simd(true); }
  ForcedPath(const ForcedPath&) = delete;
  ForcedPath& operator=(const ForcedPath&) = delete;
};

std::string expected_path(bool simd)
{
  return simd && calibration::dgemm_avx512_available() ? "avx512" : "portable";
}

/** The largest difference between dgemm_fast and the reference on random m x n x k operands
 *  (C starting non-zero: C += A B keeps what it held); -1 when dgemm_fast wrote outside C. */
double worst_error(std::size_t m, std::size_t n, std::size_t k, std::mt19937_64& rng)
{
  std::uniform_real_distribution<double> u(-1, 1);
  constexpr std::size_t kGuard = 64; // values on each side of C that must stay as they were
  constexpr double kSentinel = 12345.0;
  std::vector<double> a(m * k), b(k * n), guarded(m * n + 2 * kGuard, kSentinel), r(m * n);
  double* c = guarded.data() + kGuard;
  for (auto& x : a)
    x = u(rng);
  for (auto& x : b)
    x = u(rng);
  for (std::size_t i = 0; i < m * n; i++)
    c[i] = r[i] = u(rng);
  calibration::dgemm_reference(m, n, k, a.data(), b.data(), r.data());
  calibration::dgemm_fast(m, n, k, a.data(), b.data(), c);
  for (std::size_t i = 0; i < kGuard; i++)
    if (guarded[i] != kSentinel || guarded[kGuard + m * n + i] != kSentinel)
      return -1;
  double worst = 0;
  for (std::size_t i = 0; i < m * n; i++)
    worst = std::max(worst, std::abs(c[i] - r[i]));
  return worst;
}

} // namespace

TEST_CASE("blocked DGEMM matches the reference on ragged sizes, on both paths", "[calibration][dgemm]")
{
  // m, n, k. Rows left over after whole 6-row tiles: 1 to 5 all occur; columns left over after
  // 16-column tiles: 1, 12, 13 and 15; k = 1, and k across the 256 of a k block (257, 300);
  // m across the 96 of an m block (97, 130); and one shape of whole tiles and blocks only.
  const std::size_t shapes[][3] = {{1, 1, 1},     {5, 15, 3},    {7, 17, 5},    {8, 31, 1},
                                   {9, 1, 40},    {10, 33, 64},  {11, 47, 13},  {67, 45, 71},
                                   {96, 16, 256}, {97, 63, 300}, {130, 300, 257}};
  for (const bool simd : {true, false}) {
    const ForcedPath forced(simd);
    REQUIRE(calibration::dgemm_fast_path() == expected_path(simd));
    std::mt19937_64 rng(7);
    for (const auto& s : shapes) {
      const std::size_t m = s[0], n = s[1], k = s[2];
      INFO(m << "x" << n << "x" << k << " on " << calibration::dgemm_fast_path() << " (AVX-512F on this CPU: "
             << calibration::dgemm_avx512_available() << ")");
      const double worst = worst_error(m, n, k, rng);
      CHECK(worst >= 0); // nothing written outside C
      CHECK(worst < 1e-12 * static_cast<double>(k));
    }
  }
}

TEST_CASE("DGEMM's blocking period: the tiles' and blocks' least common multiple", "[calibration][dgemm]")
{
  // 6 x 16 tiles, 96-row and 256-deep blocks: calib_dgemm checks a large size at the order of
  // its remainders modulo this, which the shapes above show every kind of.
  const std::size_t p = calibration::dgemm_fast_period();
  CHECK(p == 768);
  for (std::size_t block : {6, 16, 96, 256})
    CHECK(p % block == 0);
}

TEST_CASE("DGEMM path switch: portable on request, AVX-512 only where the CPU has it", "[calibration][dgemm]")
{
  INFO("AVX-512F on this CPU: " << calibration::dgemm_avx512_available());
  CHECK(calibration::dgemm_fast_path() == expected_path(true)); // the default: what the CPU has
  {
    const ForcedPath forced(false);
    CHECK(std::string(calibration::dgemm_fast_path()) == "portable");
  }
  CHECK(calibration::dgemm_fast_path() == expected_path(true)); // back to the default
  // Asking for AVX-512 is no promise of it: a CPU without AVX-512F stays portable (and runs,
  // where the AVX-512 kernel would stop on an illegal instruction).
  const ForcedPath forced(true);
  CHECK(calibration::dgemm_fast_path() == expected_path(true));
  std::mt19937_64 rng(11);
  const double worst = worst_error(13, 37, 19, rng);
  CHECK(worst >= 0);
  CHECK(worst < 1e-12 * 19);
}

// Hidden (not among the unit tests): tests/CMakeLists.txt runs it, with the two above, under
// qemu-x86_64 on a CPU model without AVX-512, so that the fallback is exercised on an AVX-512
// host too. It fails where the CPU has AVX-512F, which would leave the fallback untested.
TEST_CASE("DGEMM on a CPU without AVX-512 falls back to the portable kernel", "[.dgemm_no_avx512]")
{
  REQUIRE_FALSE(calibration::dgemm_avx512_available());
  const ForcedPath forced(true);
  CHECK(std::string(calibration::dgemm_fast_path()) == "portable");
  std::mt19937_64 rng(13);
  const double worst = worst_error(97, 63, 300, rng);
  CHECK(worst >= 0);
  CHECK(worst < 1e-12 * 300);
}
