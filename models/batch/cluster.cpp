#include "cluster.hpp"

#include <algorithm>

namespace batch {

Cluster::Cluster(std::int64_t nodes, std::int64_t cores_per_node, bool whole_nodes)
    : cores_per_node_(cores_per_node), whole_nodes_(whole_nodes),
      free_(static_cast<std::size_t>(nodes), cores_per_node), free_slots_(whole_nodes ? nodes : nodes * cores_per_node)
{
}

std::int64_t Cluster::slots_for(std::int64_t cores) const
{
  return whole_nodes_ ? (cores + cores_per_node_ - 1) / cores_per_node_ : cores;
}

std::vector<std::pair<std::int64_t, std::int64_t>> Cluster::allocate(std::int64_t cores)
{
  std::vector<std::pair<std::int64_t, std::int64_t>> pieces;
  std::int64_t left = cores;
  for (std::int64_t n = search_from_; n < nodes() && left > 0; n++) {
    auto& f = free_[static_cast<std::size_t>(n)];
    if (whole_nodes_) {
      if (f != cores_per_node_)
        continue;
      const std::int64_t take = std::min(left, cores_per_node_);
      pieces.emplace_back(n, cores_per_node_); // the whole node is the job's
      left -= take;
      f = 0;
    } else if (f > 0) {
      const std::int64_t take = std::min(left, f);
      pieces.emplace_back(n, take);
      left -= take;
      f -= take;
    }
  }
  free_slots_ -= slots_for(cores);
  while (search_from_ < nodes() && free_[static_cast<std::size_t>(search_from_)] == 0)
    search_from_++;
  return pieces;
}

void Cluster::release(const std::vector<std::pair<std::int64_t, std::int64_t>>& pieces)
{
  std::int64_t cores = 0;
  for (const auto& [n, c] : pieces) {
    free_[static_cast<std::size_t>(n)] += c;
    search_from_ = std::min(search_from_, n);
    cores += c;
  }
  free_slots_ += whole_nodes_ ? static_cast<std::int64_t>(pieces.size()) : cores;
}

} // namespace batch
