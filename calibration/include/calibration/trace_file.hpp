/* Calibration traces in HDF5: one file per benchmark run. Root attributes describe the
 * machine and the build (host, CPU model, ISA flags, GPU, compiler and flags, date, git
 * revision, schema version); one group per benchmark holds its parameters as attributes and
 * every repetition's measurements as datasets, each with a "unit" attribute. Readable with
 * h5py as is. */
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace calibration {

constexpr const char* kTraceSchema = "simcore-calibration-trace/1";

/** A dataset: row-major values, its shape (1 or 2 dimensions) and unit. */
struct Dataset {
  std::vector<double> values;
  std::vector<std::size_t> shape;
  std::string unit;
  std::size_t rows() const { return shape.empty() ? 0 : shape[0]; }
  std::size_t cols() const { return shape.size() > 1 ? shape[1] : 1; }
  double at(std::size_t r, std::size_t c = 0) const { return values[r * cols() + c]; }
};

/** A benchmark's group: parameters (text) and datasets. */
struct Benchmark {
  std::string name;
  std::map<std::string, std::string> parameters;
  std::map<std::string, Dataset> datasets;
};

struct Trace {
  std::map<std::string, std::string> attributes; ///< root: host, cpu_model, isa, gpu, ...
  std::map<std::string, Benchmark> benchmarks;
};

/** Writes `trace` to `path` through a temporary file renamed at the end: HDF5, or the JSON
 *  form (trace_json.hpp) where the path ends in ".json". */
void write_trace(const std::string& path, const Trace& trace);
/** write_trace for a benchmark's main: 0 when written, else the error on stderr and 2. */
int write_trace_or_report(const std::string& path, const Trace& trace);

/** What a caller with threads of its own does around the fork of read_trace: Python holds
 *  h5py's global lock there, since a thread inside libhdf5 at the fork would leave the
 *  library's lock held, by no one, in the child. */
struct ForkGuard {
  std::function<void()> before, after;
  /** Asked every 100 ms while the child reads: true ends it (simcore::Interrupted). */
  std::function<bool()> interrupted;
};

/** Reads a trace (HDF5, or JSON where the path ends in ".json"); throws simcore::InputError
 *  naming the file and what is missing. An HDF5 file is read in a child process (libhdf5 1.10
 *  crashes or loops on some corrupt files), so that such a file is an InputError too. */
Trace read_trace(const std::string& path, const ForkGuard& guard = {});

/** A number as a parameter (a string attribute) keeps it: 9 significant digits, where
 *  std::to_string writes six decimals (1.5e-7 s would read back as 0). */
inline std::string parameter_number(double v)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/** Root attributes of this machine and build: host, cpu_model, cpu_id (cpu_identity()),
 *  caches (cache_sizes()), isa (the AVX-512/SVE/...
 *  flags the CPU reports), gpu (the models the NVIDIA driver lists, else "none"), compiler,
 *  flags (`build_flags`: how the benchmark was compiled, which its build gives it as
 *  SIMCORE_BENCH_FLAGS), date (UTC), git_revision, schema. */
std::map<std::string, std::string> machine_attributes(const std::string& build_flags);

/** The release of the NVIDIA kernel driver (e.g. "550.54.15"): the first number of dotted parts
 *  on the "NVRM version:" line of `version_file` (the driver's /proc/driver/nvidia/version);
 *  "" where the file or the line is missing. Not the CUDA version the driver supports, which
 *  cudaDriverGetVersion gives (a CUDA trace's cuda_driver). */
std::string nvidia_driver_release(const std::string& version_file = "/proc/driver/nvidia/version");

/** Which cores /proc/cpuinfo (`cpuinfo`) names, as the kernel (or a hypervisor) presents them,
 *  where a virtual machine's model name says little ("AMD EPYC"): x86 "AuthenticAMD family 26
 *  model 2 stepping 1" (decimal, as the kernel writes them), Arm "implementer 0x41 variant 0x1
 *  part 0xd40 revision 1", RISC-V its uarch and machine ids, POWER its cpu and revision, s390
 *  its machine type. Processors that differ (big.LITTLE) are listed with their counts, in order
 *  of appearance: "4 x implementer 0x41 ... part 0xd03 ...; 2 x ... part 0xd08 ..." ("" where
 *  no processor is named). P- and E-cores of an Intel hybrid share their family and model. */
std::string cpu_identity(const std::string& cpuinfo = "/proc/cpuinfo");

/** Whether an aarch64 program's /proc/cpuinfo (`cpuinfo`) is an emulator's: "" where it is an
 *  Arm kernel's, "the host's" where it has no Arm keys (qemu-user before 8.2 passes the host's
 *  through), "the emulator's" where it names implementer 0 (reserved for software: qemu-user
 *  writes its own since 8.2, -cpu max) or where the kernel has no `midr_el1` register file in
 *  sysfs (every arm64 kernel since 4.11 has one; under qemu-user sysfs is the host's, and a
 *  named CPU, -cpu neoverse-n1, gets that core's numbers). */
std::string arm_cpuinfo_emulation(const std::string& cpuinfo = "/proc/cpuinfo",
                                  const std::string& midr_el1 =
                                      "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");

/** The sysfs folder of the first CPU this process may run on (sched_getaffinity: a job's
 *  cpuset), else of the first online CPU. */
std::string this_process_cpu();

/** The caches of one CPU from `cache_dir` (sysfs: /sys/devices/system/cpu/cpuN/cache), in
 *  index order, e.g. "L1d 48K, L1i 32K, L2 1024K, L3 32768K"; "" where sysfs says nothing. */
std::string cache_sizes(const std::string& cache_dir = this_process_cpu() + "/cache");

} // namespace calibration
