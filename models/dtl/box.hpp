/* A block of a global array of 1 to 3 dimensions: start and count per dimension. */
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace dtl {

constexpr int kMaxDims = 3;

struct Box {
  int dims = 1;
  std::array<std::int64_t, kMaxDims> start{0, 0, 0};
  std::array<std::int64_t, kMaxDims> count{0, 0, 0};

  /** Number of elements (0 for an empty box). */
  std::int64_t volume() const;
  bool empty() const { return volume() == 0; }
  /** True when `inner` lies entirely inside this box. */
  bool contains(const Box& inner) const;
  std::string to_string() const; ///< "[0:4, 2:6)" style: start:end per dimension
};

/** The common part of two boxes of the same dimensionality (empty when they do not meet). */
Box intersect(const Box& a, const Box& b);

} // namespace dtl
