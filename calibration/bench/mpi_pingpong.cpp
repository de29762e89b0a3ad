/* MPI ping-pong (round trips of MPI_Send/MPI_Recv), ping-ping (both ranks send one message
 * to the other at once: MPI_Irecv, MPI_Isend, MPI_Waitall, as an exchange does; the time of
 * a message while the other direction is busy, the mean of 8 exchanges back to back) and one-way streaming (a
 * window of MPI_Isend on rank 0, MPI_Recv on rank 1, then an acknowledgement) over message
 * sizes from 1 B to --max bytes (powers of two and --per-octave - 1 sizes between each two),
 * every repetition kept. Ranks 0 and 1 take part; rank 0
 * writes the calibration trace, noting whether both ran on one node.
 * --buffers per-size (the default) sends each size from buffers allocated for that size where
 * a program's first malloc of it puts them with glibc's defaults: on the heap below 128 KiB,
 * on pages of their own (mmap) from 128 KiB on; --buffers shared sends every size from one
 * large buffer, as the OSU benchmarks do.
 *   mpirun -np 2 calib_pingpong [--max B] [--repetitions R] [--window W] [--per-octave N]
 *                               [--buffers per-size|shared] -o TRACE.h5 */
#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {
/** Exchanges timed together for one ping-ping sample (even: see the ping-ping loop). */
constexpr int kPingPingExchanges = 8;
/** glibc's default mapping threshold: a fresh program's malloc maps a block of at least this
 *  size and puts smaller ones on the heap. */
constexpr std::size_t kMmapThreshold = 128 * 1024;

/** A written message buffer (so that no page is the kernel's shared zero page), on the heap
 *  below kMmapThreshold and on pages of its own from it on. Chosen here rather than left to
 *  malloc: glibc raises its threshold each time a mapped block is freed and serves a request
 *  from free heap space that fits, so after the first sizes a benchmark's buffers would land
 *  where no program's first allocation of that size does. */
class MessageBuffer {
public:
  MessageBuffer() = default;
  MessageBuffer(const MessageBuffer&) = delete;
  MessageBuffer& operator=(const MessageBuffer&) = delete;
  ~MessageBuffer() { release(); }

  /** Replaces the buffer by one of n bytes, each set to `fill`; false when there is no memory. */
  bool allocate(std::size_t n, int fill)
  {
    release(); // freed first, as a program that reallocates would
    if (n >= kMmapThreshold) {
      void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      bytes_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
      mapped_ = true;
    } else {
      bytes_ = static_cast<char*>((std::malloc)(n > 0 ? n : 1)); // (name): not SMPI's macro
      mapped_ = false;
    }
    if (bytes_ == nullptr)
      return false;
    size_ = n;
    std::memset(bytes_, fill, n);
    return true;
  }
  char* data() const { return bytes_; }

private:
  void release()
  {
    if (bytes_ != nullptr && mapped_)
      munmap(bytes_, size_);
    else if (bytes_ != nullptr)
      (std::free)(bytes_);
    bytes_ = nullptr;
    size_ = 0;
  }
  char* bytes_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

/** Allocates on every rank, which all learn whether each did (a collective): false when one
 *  could not, which says so. Every rank then stops together (exit 2, no trace written), under
 *  SMPI too, whose MPI_Abort ends only the calling rank. */
bool allocated_everywhere(MessageBuffer& b, std::size_t n, int fill, int rank, const char* what)
{
  int ok = b.allocate(n, fill) ? 1 : 0;
  if (ok == 0)
    std::fprintf(stderr, "calib_pingpong: rank %d cannot allocate %zu bytes for %s; expected a --max (or --window) "
                         "that fits in memory\n", rank, n, what);
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
} // namespace

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t max_bytes = std::size_t{64} << 20;
  int reps = 20, window = 16, per_octave = 4;
  std::string out, buffers = "per-size";
  // Every rank reads the same options; rank 0 says what is wrong, and all of them stop.
  std::string problem = calibration::read_options(argc, argv, out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--max")
      return read_whole(a, v, 1, std::numeric_limits<int>::max(),
                        "a whole number of bytes from 1 to 2147483647 (an MPI count)", max_bytes);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", reps);
    if (a == "--window")
      return read_whole(a, v, 1, 4096, "a whole number from 1 to 4096", window);
    if (a == "--per-octave")
      return read_whole(a, v, 1, 8, "a whole number from 1 to 8", per_octave);
    if (a == "--buffers") {
      if (v != "per-size" && v != "shared")
        return "--buffers " + v + ": expected per-size or shared";
      buffers = v;
      return std::string();
    }
    return std::nullopt;
  });
  if (problem.empty() && size < 2)
    problem = "needs 2 ranks (mpirun -np 2)";
  if (!problem.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "calib_pingpong: %s\nusage: mpirun -np 2 calib_pingpong [--max B] [--repetitions R] "
                           "[--window W] [--per-octave 1..8] [--buffers per-size|shared] -o TRACE.h5\n", problem.c_str());
    MPI_Finalize();
    return 2;
  }
  char name[MPI_MAX_PROCESSOR_NAME] = {0}, other[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  if (rank == 0)
    MPI_Recv(other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (rank == 1)
    MPI_Send(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 9, MPI_COMM_WORLD);

  std::vector<double> sizes;
  // Powers of two and, with --per-octave N > 1, N - 1 sizes evenly spread between each two
  // (denser samples let the fit place its breakpoints between powers of two).
  for (std::size_t s = 1; s <= max_bytes; s *= 2)
    for (int k = 0; k < per_octave; k++) {
      const auto v = static_cast<std::size_t>(static_cast<double>(s) * (1 + static_cast<double>(k) / per_octave));
      if (v <= max_bytes && (sizes.empty() || static_cast<double>(v) > sizes.back()))
        sizes.push_back(static_cast<double>(v));
    }
  // Separate send and receive buffers, as the OSU benchmarks and halo exchanges have them:
  // a send buffer that no receive overwrites stays clean in the caches.
  // The one-way window holds up to 256 MiB of messages (one message when larger: see below).
  // Shared: one large buffer of each kind for every size. Per size: buffers of that size,
  // allocated afresh. Where a message's memory lies changes its time: intra-node here, a
  // message of 10 or 40 kB from the heap took 1 us longer than from a large mapped buffer.
  constexpr std::size_t kWindowBytes = std::size_t{256} << 20;
  const bool per_size = buffers == "per-size";
  auto window_of = [&](std::size_t bytes) { return bytes * static_cast<std::size_t>(window) > kWindowBytes ? 1 : window; };
  MessageBuffer buf, sbuf;
  bool ok = true;
  if (per_size) {
    // The sweep's largest buffers once, before minutes of measuring: the largest send buffer
    // and, held with it, the largest window (of a smaller size, up to kWindowBytes).
    std::size_t largest_window = 0;
    for (double v : sizes)
      largest_window = std::max(largest_window, static_cast<std::size_t>(v) * static_cast<std::size_t>(window_of(static_cast<std::size_t>(v))));
    MessageBuffer probe_send, probe_window;
    ok = allocated_everywhere(probe_send, max_bytes, 2, rank, "the largest send buffer") &&
         allocated_everywhere(probe_window, largest_window, 1, rank, "the largest one-way window");
  } else {
    const std::size_t window_bytes = std::min(max_bytes * static_cast<std::size_t>(window), kWindowBytes);
    ok = allocated_everywhere(buf, std::max(max_bytes, window_bytes) + 1, 1, rank, "the shared receive buffer") &&
         allocated_everywhere(sbuf, max_bytes + 1, 2, rank, "the shared send buffer");
  }
  if (!ok) {
    MPI_Finalize();
    return 2;
  }
  calibration::Dataset rt{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"},
      ow{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"},
      pp2{{}, {sizes.size(), static_cast<std::size_t>(reps)}, "s"};
  std::vector<MPI_Request> reqs(static_cast<std::size_t>(window));
  for (double sd : sizes) {
    const int s = static_cast<int>(sd);
    const int w = window_of(static_cast<std::size_t>(s));
    if (per_size) {
      if (!allocated_everywhere(sbuf, static_cast<std::size_t>(s), 2, rank, "a send buffer") ||
          !allocated_everywhere(buf, static_cast<std::size_t>(s), 1, rank, "a receive buffer")) { // window: below
        MPI_Finalize();
        return 2;
      }
    }
    for (int r = -2; r < reps; r++) { // two warm-up round trips
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(sbuf.data(), s, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), s, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), s, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf.data(), s, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (rank == 0 && r >= 0)
        rt.values.push_back(MPI_Wtime() - t0);
    }
    // Ping-ping: both ranks send and receive at once, as an exchange does it (receive posted
    // first, then the send, then both waited for). The ranks leave a barrier up to one latency
    // apart (a cluster's barrier releases one rank by a message): a single timed exchange would
    // count that skew. So one untimed exchange first, then kPingPingExchanges back to back, each
    // rank's mean per exchange (the messages pace the ranks to one exchange time each, skew or
    // not; an even count ends on the same phase); the slower rank's mean counts.
    for (int r = -2; r < reps; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = 0;
      if (rank < 2) {
        auto exchange = [&] {
          MPI_Request req[2];
          MPI_Irecv(buf.data(), s, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, &req[0]);
          MPI_Isend(sbuf.data(), s, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, &req[1]);
          MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        };
        exchange();
        const double t0 = MPI_Wtime();
        for (int i = 0; i < kPingPingExchanges; i++)
          exchange();
        t = (MPI_Wtime() - t0) / kPingPingExchanges;
      }
      double slowest = 0;
      MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0 && r >= 0)
        pp2.values.push_back(slowest);
    }
    // One way: a window of messages in flight, then one acknowledgement.
    if (per_size)
      if (!allocated_everywhere(buf, static_cast<std::size_t>(s) * static_cast<std::size_t>(w), 1, rank,
                                "a one-way window")) {
        MPI_Finalize();
        return 2;
      }
    for (int r = -1; r < reps; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        for (int k = 0; k < w; k++)
          MPI_Isend(buf.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 1, 1,
                    MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
        MPI_Waitall(w, reqs.data(), MPI_STATUSES_IGNORE);
        MPI_Recv(buf.data(), 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        for (int k = 0; k < w; k++)
          MPI_Recv(buf.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 0, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
      if (rank == 0 && r >= 0)
        ow.values.push_back((MPI_Wtime() - t0) / w);
    }
  }
  int rc = 0;
  if (rank == 0) {
    calibration::Trace trace;
    trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
    const std::string placement = std::strcmp(name, other) == 0 ? "intra-node" : "inter-node";
    calibration::Dataset sz{sizes, {sizes.size()}, "B"};
    calibration::Benchmark pp{"pingpong",
                              {{"placement", placement},
                               {"buffers", buffers},
                               {"ranks", std::string(name) + " " + other},
                               {"repetitions", std::to_string(reps)},
                               {"sizes_per_octave", std::to_string(per_octave)},
                               {"what", "MPI_Send/MPI_Recv round trip between ranks 0 and 1"}},
                              {{"size", sz}, {"round_trip", rt}}};
    calibration::Benchmark one{"one_way",
                               {{"placement", placement},
                                {"window", std::to_string(window)},
                                {"what", "per message: a window of MPI_Isend, MPI_Recv, one acknowledgement"}},
                               {{"size", sz}, {"time", ow}}};
    calibration::Benchmark both{"pingping",
                                {{"placement", placement},
                                 {"exchanges_per_sample", std::to_string(kPingPingExchanges)},
                                 {"what", "both ranks at once: MPI_Irecv, MPI_Isend, MPI_Waitall; after one untimed "
                                          "exchange, the mean of exchanges_per_sample back to back, the slower rank's"}},
                                {{"size", sz}, {"time", pp2}}};
    trace.benchmarks = {{"pingpong", pp}, {"pingping", both}, {"one_way", one}};
    rc = calibration::write_trace_or_report(out, trace);
    if (rc == 0)
      std::printf("%s: %zu sizes x %d repetitions, %s\n", out.c_str(), sizes.size(), reps, placement.c_str());
  }
  MPI_Finalize();
  return rc;
}
