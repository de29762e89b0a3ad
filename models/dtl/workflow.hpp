/* The in situ workflow a dtl scenario describes: one variable published by a simulation app
 * and read by an analysis app through a stream, with its decompositions and rank placement. */
#pragma once

#include "box.hpp"
#include "redistribution.hpp"
#include "reduction.hpp"

#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Host.hpp>

#include <string>
#include <vector>

namespace dtl {

/** One application (the simulation, or the analysis). */
struct App {
  std::string name;
  std::int64_t ranks = 0;
  double flops_per_element = 0; ///< per step (simulation) or per transaction read (analysis)
  std::vector<simgrid::s4u::Host*> host_of_rank;
};

/** Where the file engine keeps its files. */
struct Storage {
  std::string kind; ///< "local": each publisher's host; "pfs": storage hosts behind the network
  std::vector<simgrid::s4u::Host*> hosts; ///< pfs: the storage hosts
  std::int64_t disks_per_host = 1;
  double read_bandwidth = 0;  ///< B/s per disk
  double write_bandwidth = 0; ///< B/s per disk
  double metadata_time = 0;   ///< s per file open and per file close
};

struct Workflow {
  std::string engine;    ///< "staging" or "file"
  std::string transport; ///< staging: "mailbox" or "ideal"
  Storage storage;       ///< file engine
  bool post_hoc = false; ///< file engine: the analysis starts when the simulation has ended
  Reduction reduction;
  Box shape;             ///< the global array, start 0
  std::int64_t element_size = 8;
  std::int64_t steps = 1;           ///< simulation steps
  std::int64_t publish_every = 1;   ///< the simulation publishes one transaction every k steps
  std::int64_t subscribe_every = 1; ///< the analysis reads every k-th transaction
  std::int64_t subscribe_first = 0; ///< ... from this transaction
  std::int64_t subscribe_last = -1; ///< ... to this one (inclusive); -1: the last
  double memcpy_bandwidth = 0;      ///< B/s, for publisher/subscriber pairs on one host
  App sim;
  App ana;
  std::vector<Box> blocks;     ///< one per simulation rank
  Box selection;               ///< the part of the array the analysis reads
  std::vector<Box> selections; ///< one per analysis rank
  std::vector<Transfer> plan;  ///< who sends what to whom, for every transaction read

  std::int64_t transactions() const { return (steps + publish_every - 1) / publish_every; }
  bool subscribed(std::int64_t transaction) const
  {
    return transaction >= subscribe_first && (subscribe_last < 0 || transaction <= subscribe_last) &&
           (transaction - subscribe_first) % subscribe_every == 0;
  }
};

/** Reads the validated parameters, checks them against each other and the platform (errors
 *  name the parameter and where its value came from), places ranks, plans the redistribution. */
Workflow build_workflow(const simcore::SimContext& ctx);

} // namespace dtl
