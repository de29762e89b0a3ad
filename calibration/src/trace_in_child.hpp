/* Reading an HDF5 trace in a child process: libhdf5 1.10 crashes (SIGSEGV in its global heap)
 * or loops on some corrupt files, and the caller's process must outlive that to say which file. */
#pragma once

#include "calibration/trace_file.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace calibration {

/** Called by a reader before it takes `bytes` of memory for a dataset's values, whose size it
 *  has checked against the file: the child's memory limit grows by what the values need. */
using ReserveMemory = std::function<void(std::uint64_t bytes)>;

/** The HDF5 trace at `path`, read in this process (trace_file.cpp): what the child runs. */
Trace read_trace_h5(const std::string& path, const ReserveMemory& reserve = {});

/** What the child reading a trace may use before it is stopped (never more than the caller's
 *  own limits allow). */
struct ChildLimits {
  std::uint64_t cpu_seconds;  ///< processor time
  std::uint64_t memory_bytes; ///< address space beyond the caller's at the fork, besides what is reserved
};

/** The limits for the trace at `path`: 30 s of processor time and 1 s more per MiB of the file
 *  (our largest trace, 400 kB, reads in 10 ms); 1 GiB of memory, besides twice what the
 *  datasets' values need (checked against the file's bytes before they are reserved). */
ChildLimits child_limits(const std::string& path);

/** `read(path, reserve)` run in a forked child within `limits`; its trace (or its InputError)
 *  comes back through a pipe. A child ended by a signal or a limit is an InputError naming
 *  `path`; `guard.interrupted` returning true ends the child and throws simcore::Interrupted. */
Trace read_trace_in_child(const std::string& path, const ForkGuard& guard,
                          Trace (*read)(const std::string&, const ReserveMemory&), const ChildLimits& limits);

} // namespace calibration
