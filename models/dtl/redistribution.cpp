#include "redistribution.hpp"

#include <algorithm>
#include <numeric>

namespace dtl {

std::vector<Transfer> plan_redistribution(const std::vector<Box>& blocks, const std::vector<Box>& selections,
                                          std::int64_t element_size)
{
  // Index the non-empty blocks by their start along dimension 0.
  std::vector<std::size_t> order;
  std::int64_t widest = 0;
  for (std::size_t i = 0; i < blocks.size(); i++)
    if (!blocks[i].empty()) {
      order.push_back(i);
      widest = std::max(widest, blocks[i].count[0]);
    }
  std::sort(order.begin(), order.end(), [&blocks](std::size_t a, std::size_t b) {
    return blocks[a].start[0] != blocks[b].start[0] ? blocks[a].start[0] < blocks[b].start[0] : a < b;
  });
  std::vector<std::int64_t> starts(order.size());
  for (std::size_t k = 0; k < order.size(); k++)
    starts[k] = blocks[order[k]].start[0];

  std::vector<Transfer> out;
  std::vector<std::size_t> hits;
  for (std::size_t s = 0; s < selections.size(); s++) {
    const Box& sel = selections[s];
    if (sel.empty())
      continue;
    // Only blocks starting in (sel.start - widest, sel.end) can meet the selection along dim 0.
    auto lo = std::upper_bound(starts.begin(), starts.end(), sel.start[0] - widest);
    auto hi = std::lower_bound(starts.begin(), starts.end(), sel.start[0] + sel.count[0]);
    hits.clear();
    for (auto it = lo; it != hi; ++it)
      hits.push_back(order[static_cast<std::size_t>(it - starts.begin())]);
    std::sort(hits.begin(), hits.end());
    for (std::size_t p : hits) {
      Box piece = intersect(blocks[p], sel);
      if (!piece.empty())
        out.push_back(Transfer{static_cast<std::int64_t>(p), static_cast<std::int64_t>(s), piece,
                               piece.volume() * element_size});
    }
  }
  return out;
}

} // namespace dtl
