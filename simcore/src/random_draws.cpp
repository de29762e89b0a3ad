#include "simcore/random_draws.hpp"
#include "simcore/error.hpp"

#include <cmath>

namespace simcore {

double uniform01(std::mt19937_64& g)
{
  return static_cast<double>(g() >> 11) * 0x1.0p-53;
}

double uniform(std::mt19937_64& g, double lo, double hi)
{
  return lo + (hi - lo) * uniform01(g);
}

std::int64_t uniform_int(std::mt19937_64& g, std::int64_t lo, std::int64_t hi)
{
  if (hi < lo)
    throw InternalError("uniform_int: empty range");
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == UINT64_MAX)
    return static_cast<std::int64_t>(g());
  const std::uint64_t n = span + 1;
  // Accept only draws below the largest multiple of n: every residue is then equally likely.
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  std::uint64_t x;
  do {
    x = g();
  } while (x > limit);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + x % n);
}

bool bernoulli(std::mt19937_64& g, double p)
{
  return uniform01(g) < p;
}

double exponential(std::mt19937_64& g, double mean)
{
  return -mean * std::log1p(-uniform01(g));
}

double normal(std::mt19937_64& g, double mean, double stddev)
{
  const double u1 = 1.0 - uniform01(g); // in (0, 1]: log is finite
  const double u2 = uniform01(g);
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double lognormal(std::mt19937_64& g, double mu, double sigma)
{
  return std::exp(normal(g, mu, sigma));
}

} // namespace simcore
