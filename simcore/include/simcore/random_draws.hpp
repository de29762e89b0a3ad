/* Random draws with fixed algorithms. The std:: distributions are implemented differently by
 * each standard library; these give the same numbers wherever the same seed runs. */
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace simcore {

/** Uniform in [0, 1), 53 random bits. */
double uniform01(std::mt19937_64& g);
/** Uniform in [lo, hi). */
double uniform(std::mt19937_64& g, double lo, double hi);
/** Uniform integer in [lo, hi] (inclusive), without modulo bias (rejection sampling). */
std::int64_t uniform_int(std::mt19937_64& g, std::int64_t lo, std::int64_t hi);
/** true with probability p. */
bool bernoulli(std::mt19937_64& g, double p);
/** Exponential with the given mean (> 0), by inversion. */
double exponential(std::mt19937_64& g, double mean);
/** Normal (Gaussian) by the Box-Muller transform; one draw consumes two uniforms. */
double normal(std::mt19937_64& g, double mean, double stddev);
/** exp(normal(mu, sigma)): mu and sigma are those of the logarithm. */
double lognormal(std::mt19937_64& g, double mu, double sigma);
/** Fisher-Yates shuffle, drawing with uniform_int. */
template <typename T> void shuffle(std::mt19937_64& g, std::vector<T>& v)
{
  for (std::size_t i = v.size(); i > 1; i--) {
    auto j = static_cast<std::size_t>(uniform_int(g, 0, static_cast<std::int64_t>(i - 1)));
    std::swap(v[i - 1], v[j]);
  }
}

} // namespace simcore
