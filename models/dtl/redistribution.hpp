/* M x N redistribution: which publisher sends how many bytes to which subscriber. */
#pragma once

#include "box.hpp"

#include <cstdint>
#include <vector>

namespace dtl {

struct Transfer {
  std::int64_t publisher;
  std::int64_t subscriber;
  Box piece;           ///< intersection of the publisher's block and the subscriber's selection
  std::int64_t bytes;  ///< piece volume x element size
};

/** Every (publisher, subscriber) pair whose block and selection intersect, with the exact
 *  intersection, ordered by subscriber then publisher. Pairs that do not intersect exchange
 *  nothing: no size request to every publisher (DTLMod's M x N control messages), since each
 *  subscriber knows every block from the stream's metadata. Publisher blocks are indexed by
 *  their start along the first dimension, so the cost is about (M + N) log M plus the number
 *  of candidate pairs, not M x N. */
std::vector<Transfer> plan_redistribution(const std::vector<Box>& blocks, const std::vector<Box>& selections,
                                          std::int64_t element_size);

} // namespace dtl
