#include "simcore/random_streams.hpp"


namespace simcore {

namespace {
// splitmix64 finaliser: spreads nearby seeds over the whole 64-bit space.
std::uint64_t mix(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// FNV-1a of the stream name: stable across platforms and compilers.
std::uint64_t name_hash(const std::string& s)
{
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}
} // namespace

std::uint64_t RandomStreams::stream_seed(const std::string& name) const
{
  return mix(mix(seed_) ^ name_hash(name));
}

std::mt19937_64& RandomStreams::stream(const std::string& name)
{
  auto it = streams_.find(name);
  if (it == streams_.end())
    it = streams_.emplace(name, std::make_unique<std::mt19937_64>(stream_seed(name))).first;
  return *it->second;
}

} // namespace simcore
