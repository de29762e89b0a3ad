/* Reading an HDF5 trace in a child process: libhdf5 1.10 crashes (SIGSEGV in its global heap)
 * or loops on some corrupt files, and the caller's process must outlive that to say which file. */
#pragma once

#include "calibration/trace_file.hpp"

#include <cstdint>
#include <string>

namespace calibration {

/** The HDF5 trace at `path`, read in this process (trace_file.cpp): what the child runs. */
Trace read_trace_h5(const std::string& path);

/** What the child reading a trace may use before it is stopped. */
struct ChildLimits {
  std::uint64_t cpu_seconds;  ///< processor time
  std::uint64_t memory_bytes; ///< address space, beyond what the caller's process had at the fork
};

/** The limits for the trace at `path`: 30 s of processor time and 1 s more per MiB of the file
 *  (our largest trace, 400 kB, reads in 10 ms); 1 GiB of memory and 16 x 1032 bytes more per
 *  byte of the file (a value of one byte, compressed 1032 times, read as a double, then copied). */
ChildLimits child_limits(const std::string& path);

/** `read(path)` run in a forked child within `limits`; its trace (or its InputError) comes back
 *  through a pipe. A child ended by a signal or a limit is an InputError naming `path`. Where
 *  the system will not fork, `read(path)` runs here. `guard` runs around the fork. */
Trace read_trace_in_child(const std::string& path, const ForkGuard& guard, Trace (*read)(const std::string&),
                          const ChildLimits& limits);

} // namespace calibration
