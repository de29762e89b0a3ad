/* Calibration kernels: the blocked DGEMM (AVX-512 where the CPU has it) against the plain
 * reference, on sizes that are not multiples of its blocks. */
#include <calibration/dgemm.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

TEST_CASE("blocked DGEMM matches the reference on ragged sizes", "[calibration]")
{
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t shapes[][3] = {{1, 1, 1}, {7, 17, 5}, {67, 45, 71}, {96, 16, 256}, {130, 300, 257}};
  for (const auto& s : shapes) {
    const std::size_t m = s[0], n = s[1], k = s[2];
    std::vector<double> a(m * k), b(k * n), c(m * n), r(m * n);
    for (auto& x : a)
      x = u(rng);
    for (auto& x : b)
      x = u(rng);
    for (std::size_t i = 0; i < m * n; i++)
      c[i] = r[i] = u(rng); // C += A B keeps what C held
    calibration::dgemm_reference(m, n, k, a.data(), b.data(), r.data());
    calibration::dgemm_fast(m, n, k, a.data(), b.data(), c.data());
    double worst = 0;
    for (std::size_t i = 0; i < m * n; i++)
      worst = std::max(worst, std::abs(c[i] - r[i]));
    INFO(m << "x" << n << "x" << k << " on " << calibration::dgemm_fast_path());
    CHECK(worst < 1e-12 * static_cast<double>(k));
  }
  CHECK((std::string(calibration::dgemm_fast_path()) == "avx512" || std::string(calibration::dgemm_fast_path()) == "portable"));
}
