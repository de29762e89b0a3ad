/* The machine a batch scheduler hands out: nodes of equal core counts, allocated by cores
 * (jobs share nodes) or by whole nodes. */
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace batch {

class Cluster {
public:
  Cluster(std::int64_t nodes, std::int64_t cores_per_node, bool whole_nodes);

  std::int64_t nodes() const { return static_cast<std::int64_t>(free_.size()); }
  std::int64_t cores_per_node() const { return cores_per_node_; }
  std::int64_t total_cores() const { return nodes() * cores_per_node_; }
  bool whole_nodes() const { return whole_nodes_; }
  /** Slots of the scheduler's accounting: cores, or nodes. */
  std::int64_t total_slots() const { return whole_nodes_ ? nodes() : total_cores(); }
  std::int64_t slots_for(std::int64_t cores) const;
  std::int64_t free_slots() const { return free_slots_; }

  /** (node, cores) pieces, lowest nodes first; the caller checked free_slots(). */
  std::vector<std::pair<std::int64_t, std::int64_t>> allocate(std::int64_t cores);
  void release(const std::vector<std::pair<std::int64_t, std::int64_t>>& pieces);

private:
  std::int64_t cores_per_node_;
  bool whole_nodes_;
  std::vector<std::int64_t> free_; ///< free cores per node
  std::int64_t free_slots_;
  std::int64_t search_from_ = 0;   ///< no node before this one has a free core
};

} // namespace batch
