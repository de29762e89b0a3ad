/* Data reduction before transport: decimation (keep every s-th element per dimension) and
 * compression (a fixed ratio, with a compute cost per byte on each side). */
#pragma once

#include "box.hpp"

#include <array>
#include <cstdint>

namespace dtl {

struct Reduction {
  std::array<std::int64_t, kMaxDims> stride{1, 1, 1}; ///< decimation: keep global indices i % stride == 0
  double compression_ratio = 1;                      ///< bytes before / bytes after compression
  double compress_flops_per_byte = 0;                ///< publisher side, per byte before compression
  double decompress_flops_per_byte = 0;              ///< subscriber side, per byte after decompression

  /** Elements of `b` kept by decimation (exact: counts indices that are multiples of the stride). */
  std::int64_t kept_elements(const Box& b) const;
  /** Bytes that travel for `b`: kept elements x element size / compression ratio (rounded up). */
  std::int64_t wire_bytes(const Box& b, std::int64_t element_size) const;
};

} // namespace dtl
