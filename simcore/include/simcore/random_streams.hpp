/* Seeded randomness handed out by the kernel: one independent stream per named use. */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

namespace simcore {

/** A stream's seed depends only on the scenario seed and the stream's name, so adding a
 *  stream, or drawing from one, never changes the numbers another stream yields. */
class RandomStreams {
public:
  explicit RandomStreams(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  /** The generator for `name`, created on first use. */
  std::mt19937_64& stream(const std::string& name);
  /** The seed a stream of that name starts from. */
  std::uint64_t stream_seed(const std::string& name) const;

private:
  std::uint64_t seed_;
  std::map<std::string, std::unique_ptr<std::mt19937_64>> streams_;
};

} // namespace simcore
