/* The in situ workflow a dtl scenario describes: a simulation app publishing one or more
 * streams (one variable each), each read by one or more analysis apps, with decompositions,
 * rank placement and the redistribution plans.
 *
 * The scenario gives either the simple form (parameters only: one stream, one reader) or
 * <stream> elements, each with its <reader>s and, optionally, explicit <block>s. */
#pragma once

#include "box.hpp"
#include "redistribution.hpp"
#include "reduction.hpp"

#include <simcore/sim_context.hpp>

#include <simgrid/s4u/Host.hpp>

#include <map>
#include <string>
#include <vector>

namespace dtl {

/** An application: ranks placed on hosts. */
struct App {
  std::string name;
  std::int64_t ranks = 0;
  double flops_per_element = 0; ///< per step per element of its blocks (simulation), per element read (analysis)
  std::vector<simgrid::s4u::Host*> host_of_rank;
};

/** Where the file engine keeps a stream's files. */
struct Storage {
  std::string kind; ///< "local": each publisher's host; "pfs": storage hosts behind the network
  std::vector<simgrid::s4u::Host*> hosts; ///< pfs: the storage hosts
  std::int64_t disks_per_host = 1;
  double read_bandwidth = 0;  ///< B/s per disk
  double write_bandwidth = 0; ///< B/s per disk
  double metadata_time = 0;   ///< s per file open and per file close
};

/** A variable of a stream: a global array and the block each simulation rank publishes. */
struct Variable {
  std::string name;
  Box shape; ///< start 0
  std::int64_t element_size = 8;
  std::vector<Box> blocks; ///< one per simulation rank
};

/** What a reader takes of one variable. */
struct VariableRead {
  Box selection;               ///< the part of the array it reads
  std::vector<Box> selections; ///< one per reader rank
  std::vector<Transfer> plan;  ///< who sends what to whom, bytes after reduction
};

/** An analysis app reading one stream: every variable, each with its selection. */
struct Reader {
  App app;
  std::int64_t every = 1;  ///< reads every k-th transaction ...
  std::int64_t first = 0;  ///< ... from this one
  std::int64_t last = -1;  ///< ... to this one (inclusive); -1: the last
  bool post_hoc = false;   ///< starts when the simulation has ended (file engine)
  std::vector<VariableRead> vars; ///< one per variable of the stream

  bool reads(std::int64_t k) const { return k >= first && (last < 0 || k <= last) && (k - first) % every == 0; }
};

/** A stream: variables published together, one transaction at a time, with an engine and
 *  readers. */
struct Stream {
  std::string name;
  std::string engine;    ///< "staging" or "file"
  std::string transport; ///< staging: "mailbox" or "ideal"
  Storage storage;       ///< file engine
  Reduction reduction;
  std::int64_t publish_every = 1;
  std::vector<Variable> variables;
  std::vector<Reader> readers;

  std::int64_t transactions(std::int64_t steps) const { return (steps + publish_every - 1) / publish_every; }
};

struct Workflow {
  std::int64_t steps = 1;
  double memcpy_bandwidth = 0; ///< B/s, for publisher/subscriber pairs on one host
  /** Per host, where a calibration profile's host type measured its own rate. */
  std::map<const simgrid::s4u::Host*, double> host_memcpy_bandwidth;
  App sim;
  std::vector<Stream> streams;

  double memcpy_bandwidth_on(const simgrid::s4u::Host* h) const
  {
    auto it = host_memcpy_bandwidth.find(h);
    return it == host_memcpy_bandwidth.end() ? memcpy_bandwidth : it->second;
  }
};

/** Reads the validated parameters and elements, checks them against each other and the
 *  platform (errors name the parameter or element and where it came from), places ranks,
 *  plans the redistributions. */
Workflow build_workflow(const simcore::SimContext& ctx);

} // namespace dtl
