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
 * Exchange windows of --window messages each way give the message gaps; long ones of
 * --long-window messages and twice as many (up to 4 KiB messages) the gaps past the peer's
 * fast box; windows of growing lengths, 1 to --fast-box-sweep messages (small sizes), where
 * the gap steps up, which gives the fast box's capacity; matching windows (--matching-window
 * messages and fewer, each its own tag, sent in the order of the receives and in the reverse
 * order) the time MPI takes to pass over a posted receive as it matches a message.
 *   mpirun -np 2 calib_pingpong [--max B] [--repetitions R] [--window W] [--long-window W]
 *                               [--fast-box-sweep W] [--matching-window W] [--per-octave N]
 *                               [--buffers per-size|shared]
 *                               -o TRACE.h5 */
#include "message_buffer.hpp"

#include "calibration/bench_options.hpp"
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using calibration::MessageBuffer;

/** Exchanges timed together for one ping-ping sample (even: see time_ping_ping). */
constexpr int kPingPingExchanges = 8;
/** The most bytes of messages a one-way window holds (one message when larger). */
constexpr std::size_t kWindowBytes = std::size_t{256} << 20;
/** Long exchange windows (past the peer's fast box) are timed up to this message size. */
constexpr std::size_t kLongWindowSizeAtMost = 4096;
/** The message sizes of the fast-box sweep: small ones, dense enough (up to 8 B apart below
 *  64 B) to show how the fast box rounds a message up, whose windows fill it within a few
 *  hundred messages; and larger ones up to 4 KiB, of which the box holds a few, whose short
 *  windows give the gap of a message within it. */
constexpr int kFastBoxSweepSizes[] = {1,   2,   4,   8,   12,  16,  20,  24,   28,   32,   40,   48,   56,  64,  80,  96,
                                      112, 128, 160, 192, 256, 320, 384, 448, 512, 640, 768, 1024, 1536, 2048, 3072, 4096};
/** A window of the fast-box sweep holds at most this many bytes (and 16 messages or more). */
constexpr int kFastBoxSweepBytes = 256 * 1024;
/** The size of the matching windows' messages (small: their time is the matching's). */
constexpr int kMatchingSize = 8;
/** Windows of a tag a message take tags from here (the other patterns use 0 to 9). */
constexpr int kTagsFrom = 100;
/** The fast-box sweep's lengths grow by this factor (rounded; each at least one more). */
constexpr double kFastBoxSweepStep = 1.1;

struct PingPongOptions {
  std::string out;
  std::size_t max_bytes = std::size_t{64} << 20;
  int reps = 20;
  int window = 16;
  /** Long exchange windows of this many messages and twice as many (0: none), between two
   *  ranks of one node only (the fast box is shared memory's). Not by default under SMPI,
   *  which has no fast box and whose matching of long windows takes minutes. */
#ifdef SMPI_H
  int long_window = 0;
#else
  int long_window = 256;
#endif
  /** Exchange windows of every sweep length up to this many messages at each of
   *  kFastBoxSweepSizes (0: none), between two ranks of one node only; not by default under
   *  SMPI (no fast box there). */
#ifdef SMPI_H
  int fast_box_sweep = 0;
#else
  int fast_box_sweep = 512;
#endif
  /** Matching windows of --matching-window / 4, / 2 and as many messages of
   *  kMatchingSize bytes, exchanged and to itself, their tags in the order of the receives
   *  and reversed (0: none). Not by default under SMPI, which charges no matching. */
#ifdef SMPI_H
  int matching_window = 0;
#else
  int matching_window = 256;
#endif
  int per_octave = 4;
  std::string buffers = "per-size";

  /** Messages of `bytes` in one one-way window. */
  int window_of(std::size_t bytes) const
  {
    return bytes * static_cast<std::size_t>(window) > kWindowBytes ? 1 : window;
  }
  /** Whether messages of `bytes` get long exchange windows. */
  bool long_windows_at(std::size_t bytes) const { return long_window > 0 && bytes <= kLongWindowSizeAtMost; }
  /** The bytes of the longest window of `bytes` (0 where none). */
  std::size_t long_window_bytes(std::size_t bytes) const
  {
    return long_windows_at(bytes) ? 2 * static_cast<std::size_t>(long_window) * bytes : 0;
  }
  /** The sizes of the fast-box sweep (those up to max_bytes; none without the sweep). */
  std::vector<int> fast_box_sizes() const
  {
    std::vector<int> v;
    for (int s : kFastBoxSweepSizes)
      if (fast_box_sweep > 0 && static_cast<std::size_t>(s) <= max_bytes)
        v.push_back(s);
    return v;
  }
  /** The longest window of the fast-box sweep at `size`: fast_box_sweep, or fewer where they
   *  would hold more than kFastBoxSweepBytes (at least 16). */
  int fast_box_longest(int size) const
  {
    return std::min(fast_box_sweep, std::max(16, kFastBoxSweepBytes / size));
  }
  /** The window lengths of the fast-box sweep at `size`: 1, then each kFastBoxSweepStep times
   *  the last (rounded half up, at least one more: every length up to 15), up to
   *  fast_box_longest(size), which ends it. */
  std::vector<int> fast_box_lengths(int size) const
  {
    std::vector<int> v;
    const int longest = fast_box_longest(size);
    if (fast_box_sweep > 0)
      v.push_back(1);
    while (!v.empty() && v.back() < longest)
      v.push_back(std::min(longest, std::max(v.back() + 1, static_cast<int>(v.back() * kFastBoxSweepStep + 0.5))));
    return v;
  }
  /** The matching windows' lengths: a quarter, a half and all of matching_window (at least 2). */
  std::vector<int> matching_lengths() const
  {
    std::vector<int> v;
    for (int d : {4, 2, 1})
      if (matching_window_bytes() > 0 && (v.empty() || std::max(2, matching_window / d) > v.back()))
        v.push_back(std::max(2, matching_window / d));
    return v;
  }
  /** The bytes of the longest matching window (0 where none: none either where --max is
   *  below their messages' size). */
  std::size_t matching_window_bytes() const
  {
    return matching_window > 0 && max_bytes >= static_cast<std::size_t>(kMatchingSize)
               ? static_cast<std::size_t>(std::max(2, matching_window)) * kMatchingSize
               : 0;
  }
  /** The bytes of the fast-box sweep's longest window (0 where none). */
  std::size_t fast_box_window_bytes() const
  {
    std::size_t most = 0;
    for (int size : fast_box_sizes())
      most = std::max(most, static_cast<std::size_t>(fast_box_longest(size)) * static_cast<std::size_t>(size));
    return most;
  }
};

/** The options, read alike by every rank; what is wrong with them, empty when nothing. */
/** The options; the -o path is checked only where `writes` (rank 0, which writes the trace). */
std::string read_pingpong_options(int argc, char** argv, PingPongOptions& o, bool writes)
{
  return calibration::read_options(argc, argv, o.out, [&](const std::string& a, const std::string& v) -> std::optional<std::string> {
    using namespace calibration;
    if (a == "--max")
      return read_whole(a, v, 1, std::numeric_limits<int>::max(),
                        "a whole number of bytes from 1 to 2147483647 (an MPI count)", o.max_bytes);
    if (a == "--repetitions")
      return read_whole(a, v, 1, 1000000, "a whole number from 1 to 1000000", o.reps);
    if (a == "--window")
      return read_whole(a, v, 1, 4096, "a whole number from 1 to 4096", o.window);
    if (a == "--long-window")
      return read_whole(a, v, 0, 2048, "a whole number from 0 (none) to 2048", o.long_window);
    if (a == "--matching-window")
      return read_whole(a, v, 0, 4096, "a whole number from 0 (none) to 4096", o.matching_window);
    if (a == "--fast-box-sweep")
      return read_whole(a, v, 0, 4096, "a whole number from 0 (none) to 4096", o.fast_box_sweep);
    if (a == "--per-octave")
      return read_whole(a, v, 1, 8, "a whole number from 1 to 8", o.per_octave);
    if (a == "--buffers") {
      if (v != "per-size" && v != "shared")
        return "--buffers " + v + ": expected per-size or shared";
      o.buffers = v;
      return std::string();
    }
    return std::nullopt;
  }, true, writes);
}

/** Powers of two up to max_bytes and, with per_octave N > 1, N - 1 sizes evenly spread
 *  between each two (denser samples let the fit place its breakpoints between powers of two). */
std::vector<double> message_sizes(std::size_t max_bytes, int per_octave)
{
  std::vector<double> sizes;
  for (std::size_t s = 1; s <= max_bytes; s *= 2)
    for (int k = 0; k < per_octave; k++) {
      const auto v = static_cast<std::size_t>(static_cast<double>(s) * (1 + static_cast<double>(k) / per_octave));
      if (v <= max_bytes && (sizes.empty() || static_cast<double>(v) > sizes.back()))
        sizes.push_back(static_cast<double>(v));
    }
  return sizes;
}

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

/** Separate send and receive buffers, as the OSU benchmarks and halo exchanges have them: a
 *  send buffer that no receive overwrites stays clean in the caches. Shared: one large buffer
 *  of each kind for every size, allocated here. Per size: buffers of that size, allocated
 *  afresh for each (where a message's memory lies changes its time: intra-node here, a
 *  message of 10 or 40 kB from the heap took 1 us longer than from a large mapped buffer);
 *  here only the sweep's largest, once, before minutes of measuring: the largest send buffer
 *  and, held with it, the largest window (of a smaller size, up to kWindowBytes). */
bool allocate_up_front(const PingPongOptions& o, const std::vector<double>& sizes, int rank, MessageBuffer& buf,
                       MessageBuffer& sbuf)
{
  if (o.buffers == "per-size") {
    std::size_t largest_window = 0;
    for (double v : sizes)
      largest_window = std::max({largest_window,
                                 static_cast<std::size_t>(v) * static_cast<std::size_t>(o.window_of(static_cast<std::size_t>(v))),
                                 o.long_window_bytes(static_cast<std::size_t>(v))});
    largest_window = std::max({largest_window, o.fast_box_window_bytes(), o.matching_window_bytes()});
    MessageBuffer probe_send, probe_window;
    return allocated_everywhere(probe_send, o.max_bytes, 2, rank, "the largest send buffer") &&
           allocated_everywhere(probe_window, largest_window, 1, rank, "the largest one-way window");
  }
  const std::size_t window_bytes = std::max({std::min(o.max_bytes * static_cast<std::size_t>(o.window), kWindowBytes),
                                             o.long_window_bytes(std::min(o.max_bytes, kLongWindowSizeAtMost)),
                                             o.fast_box_window_bytes(), o.matching_window_bytes()});
  return allocated_everywhere(buf, std::max(o.max_bytes, window_bytes) + 1, 1, rank, "the shared receive buffer") &&
         allocated_everywhere(sbuf, o.max_bytes + 1, 2, rank, "the shared send buffer");
}

/** Messages up to this size may be sent eagerly (Open MPI's TCP and shared-memory transports
 *  send up to 4 to 64 KiB so): a window of them that arrives before its receives is held in
 *  MPI's own buffers at the receiver, beside the window itself. */
constexpr double kEagerBytesAtMost = 64 * 1024;

/** The most bytes of buffers one rank holds at once: the largest send buffer with the largest
 *  window (per size: the probes, and the sweep's send buffer with a window), or the two
 *  shared buffers; and MPI's copies of the largest window of eager messages. */
double bytes_per_rank(const PingPongOptions& o, const std::vector<double>& sizes)
{
  double largest_window = 0, eager_window = 0;
  for (double v : sizes) {
    const double window = std::max(v * o.window_of(static_cast<std::size_t>(v)),
                                   static_cast<double>(o.long_window_bytes(static_cast<std::size_t>(v))));
    largest_window = std::max(largest_window, window);
    if (v <= kEagerBytesAtMost)
      eager_window = std::max(eager_window, window);
  }
  const double small_windows = static_cast<double>(std::max(o.fast_box_window_bytes(), o.matching_window_bytes()));
  largest_window = std::max(largest_window, small_windows);
  eager_window = std::max(eager_window, small_windows);
  if (o.buffers == "per-size")
    return static_cast<double>(o.max_bytes) + largest_window + eager_window;
  const std::size_t window_bytes = std::max({std::min(o.max_bytes * static_cast<std::size_t>(o.window), kWindowBytes),
                                             o.long_window_bytes(std::min(o.max_bytes, kLongWindowSizeAtMost)),
                                             o.fast_box_window_bytes(), o.matching_window_bytes()});
  return static_cast<double>(std::max(o.max_bytes, window_bytes) + 1 + o.max_bytes + 1) + eager_window;
}

/** Whether every node's ranks' buffers fit in its memory available, before any is allocated
 *  (a collective; under Linux's overcommit a mapping that does not fit is granted and the rank
 *  killed while writing it). The ranks of a node share its memory: their sum is compared.
 *  Under SMPI every rank, whatever its simulated host, lives in this one process. */
bool fits_everywhere(const PingPongOptions& o, const std::vector<double>& sizes, int rank)
{
  int here = 1, node_rank = 0;
#ifdef SMPI_H
  MPI_Comm_size(MPI_COMM_WORLD, &here);
  node_rank = rank;
#else
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &here);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
#endif
  const double per_rank = bytes_per_rank(o, sizes);
  int ok = 1;
  if (node_rank == 0) { // one rank a node says it
    std::ostringstream what;
    what.precision(3);
#ifdef SMPI_H
    what << "the buffers of " << here << (here == 1 ? " rank" : " ranks") << " in this SMPI process ("
#else
    what << "the buffers of " << here << (here == 1 ? " rank" : " ranks") << " on the node of rank " << rank << " ("
#endif
         << per_rank / (1 << 30) << " GiB a rank for --max " << o.max_bytes << ", --buffers " << o.buffers << ")";
    ok = calibration::refuse_beyond_available_memory("calib_pingpong", per_rank * here, what.str()) == 0;
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

/** Round trips of s bytes, two untimed first; rank 0 keeps each one's time. */
void time_round_trips(int rank, int s, int reps, const MessageBuffer& sbuf, const MessageBuffer& buf,
                      std::vector<double>& times)
{
  for (int r = -2; r < reps; r++) {
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
      times.push_back(MPI_Wtime() - t0);
  }
}

/** Ping-ping: both ranks send and receive at once, as an exchange does it (receive posted
 *  first, then the send, then both waited for). The ranks leave a barrier up to one latency
 *  apart (a cluster's barrier releases one rank by a message): a single timed exchange would
 *  count that skew. So one untimed exchange first, then kPingPingExchanges back to back, each
 *  rank's mean per exchange (the messages pace the ranks to one exchange time each, skew or
 *  not; an even count ends on the same phase); the slower rank's mean counts. */
void time_ping_ping(int rank, int s, int reps, const MessageBuffer& sbuf, const MessageBuffer& buf,
                    std::vector<double>& times)
{
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
      times.push_back(slowest);
  }
}

/** One way: a window of w messages of s bytes in flight (from and into `window`), then one
 *  acknowledgement, one untimed first; rank 0 keeps the time per message. */
void time_one_way(int rank, int s, int w, int reps, const MessageBuffer& window, std::vector<MPI_Request>& reqs,
                  std::vector<double>& times)
{
  for (int r = -1; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 0) {
      for (int k = 0; k < w; k++)
        MPI_Isend(window.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 1, 1,
                  MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
      MPI_Waitall(w, reqs.data(), MPI_STATUSES_IGNORE);
      MPI_Recv(window.data(), 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int k = 0; k < w; k++)
        MPI_Recv(window.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 0, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(window.data(), 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    if (rank == 0 && r >= 0)
      times.push_back((MPI_Wtime() - t0) / w);
  }
}

/** The tags of a window's messages: one for all of them, or each its own, the sends in the
 *  order of the receives or in the reverse order (MPI then passes over every receive still
 *  posted before the one a message matches: w (w - 1) / 2 in all, which the matching windows
 *  time). */
enum class Tags { Same, InOrder, Reversed };

/** The tag of receive k (of w) and of send k. */
int receive_tag(Tags t, int base, int k) { return t == Tags::Same ? base : kTagsFrom + k; }
int send_tag(Tags t, int base, int k, int w) { return t == Tags::Same ? base : kTagsFrom + (t == Tags::Reversed ? w - 1 - k : k); }

/** An exchange window: both ranks post w receives (into `window`), then w sends of s bytes
 *  (all from `sbuf`: concurrent sends may share a buffer), then wait for all of them, as a
 *  halo exchange of w messages each way does. One untimed window, then one timed right after
 *  it (the messages pace the ranks: no barrier's skew); the slower rank's time per window.
 *  Less the ping-ping time of one message, over w - 1, it is the gap of each further message. */
void time_exchange_window(int rank, int s, int w, int reps, const MessageBuffer& sbuf, const MessageBuffer& window,
                          std::vector<MPI_Request>& reqs, std::vector<double>& times, Tags tags = Tags::Same)
{
  for (int r = -1; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    if (rank < 2) {
      auto exchange = [&] {
        for (int k = 0; k < w; k++)
          MPI_Irecv(window.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 1 - rank,
                    receive_tag(tags, 4, k), MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
        for (int k = 0; k < w; k++)
          MPI_Isend(sbuf.data(), s, MPI_BYTE, 1 - rank, send_tag(tags, 4, k, w), MPI_COMM_WORLD,
                    &reqs[static_cast<std::size_t>(w + k)]);
        MPI_Waitall(2 * w, reqs.data(), MPI_STATUSES_IGNORE);
      };
      exchange();
      const double t0 = MPI_Wtime();
      exchange();
      t = MPI_Wtime() - t0;
    }
    double slowest = 0;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && r >= 0)
      times.push_back(slowest);
  }
}

/** A self window: rank 0 posts w receives from itself, then w sends of s bytes to itself, then
 *  waits for all of them (a halo exchange's messages to itself, through MPI's self transport);
 *  one untimed window, then one timed right after it; rank 0's time per window. */
void time_self_window(int rank, int s, int w, int reps, const MessageBuffer& sbuf, const MessageBuffer& window,
                      std::vector<MPI_Request>& reqs, std::vector<double>& times, Tags tags = Tags::Same)
{
  for (int r = -1; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
      continue;
    auto exchange = [&] {
      for (int k = 0; k < w; k++)
        MPI_Irecv(window.data() + static_cast<std::size_t>(k) * static_cast<std::size_t>(s), s, MPI_BYTE, 0,
                  receive_tag(tags, 5, k), MPI_COMM_WORLD, &reqs[static_cast<std::size_t>(k)]);
      for (int k = 0; k < w; k++)
        MPI_Isend(sbuf.data(), s, MPI_BYTE, 0, send_tag(tags, 5, k, w), MPI_COMM_WORLD,
                  &reqs[static_cast<std::size_t>(w + k)]);
      MPI_Waitall(2 * w, reqs.data(), MPI_STATUSES_IGNORE);
    };
    exchange();
    const double t0 = MPI_Wtime();
    exchange();
    if (r >= 0)
      times.push_back(MPI_Wtime() - t0);
  }
}

/** The patterns timed at every size; rank 0's times (repetitions of each size in a row). */
struct SweepTimes {
  calibration::Dataset round_trip, ping_ping, one_way, exchange_window, self_window;
  /** Long exchange windows: per size that has them, a row for each length (long_window, then
   *  twice as many), its size and messages in long_sizes and long_messages. */
  calibration::Dataset exchange_window_long;
  std::vector<double> long_sizes, long_messages;
  /** The fast-box sweep: a row for each size and length, as the long windows. */
  calibration::Dataset exchange_window_lengths;
  std::vector<double> sweep_sizes, sweep_messages;
  /** The matching windows: a row for each pattern (exchange, then to itself), length and order
   *  of tags (in order, then reversed). */
  calibration::Dataset matching_window;
  std::vector<double> matching_self, matching_messages, matching_reversed;
};

/** Times every size, allocating per-size buffers as it goes; false (said on stderr) when a
 *  rank runs out of memory. */
bool sweep(const PingPongOptions& o, const std::vector<double>& sizes, int rank, MessageBuffer& buf,
           MessageBuffer& sbuf, SweepTimes& times)
{
  const bool per_size = o.buffers == "per-size";
  const auto matching = o.matching_lengths();
  std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(std::max(
                                        {o.window, 2 * o.long_window, o.fast_box_sweep, matching.empty() ? 0 : matching.back()})));
  for (double sd : sizes) {
    const int s = static_cast<int>(sd);
    const int w = o.window_of(static_cast<std::size_t>(s));
    if (per_size && (!allocated_everywhere(sbuf, static_cast<std::size_t>(s), 2, rank, "a send buffer") ||
                     !allocated_everywhere(buf, static_cast<std::size_t>(s), 1, rank, "a receive buffer")))
      return false;
    time_round_trips(rank, s, o.reps, sbuf, buf, times.round_trip.values);
    time_ping_ping(rank, s, o.reps, sbuf, buf, times.ping_ping.values);
    if (per_size && !allocated_everywhere(buf, static_cast<std::size_t>(s) * static_cast<std::size_t>(w), 1, rank,
                                          "a one-way window"))
      return false;
    time_one_way(rank, s, w, o.reps, buf, reqs, times.one_way.values);
    time_exchange_window(rank, s, w, o.reps, sbuf, buf, reqs, times.exchange_window.values);
    time_self_window(rank, s, w, o.reps, sbuf, buf, reqs, times.self_window.values);
    if (o.long_windows_at(static_cast<std::size_t>(s))) {
      if (per_size && !allocated_everywhere(buf, o.long_window_bytes(static_cast<std::size_t>(s)), 1, rank,
                                            "a long exchange window"))
        return false;
      for (int lw : {o.long_window, 2 * o.long_window}) {
        time_exchange_window(rank, s, lw, o.reps, sbuf, buf, reqs, times.exchange_window_long.values);
        times.long_sizes.push_back(s);
        times.long_messages.push_back(lw);
      }
    }
  }
  // The matching windows: messages of kMatchingSize bytes, each its own tag.
  if (o.matching_window_bytes() > 0) {
    if (per_size && (!allocated_everywhere(sbuf, kMatchingSize, 2, rank, "a send buffer") ||
                     !allocated_everywhere(buf, o.matching_window_bytes(), 1, rank, "a matching window")))
      return false;
    for (int self = 0; self < 2; self++)
      for (int w : o.matching_lengths())
        for (Tags t : {Tags::InOrder, Tags::Reversed}) {
          if (self == 1)
            time_self_window(rank, kMatchingSize, w, o.reps, sbuf, buf, reqs, times.matching_window.values, t);
          else
            time_exchange_window(rank, kMatchingSize, w, o.reps, sbuf, buf, reqs, times.matching_window.values, t);
          times.matching_self.push_back(self);
          times.matching_messages.push_back(w);
          times.matching_reversed.push_back(t == Tags::Reversed ? 1 : 0);
        }
  }
  // The fast box's sweep: each size at every length of the sweep (up to its longest), one size
  // after another.
  for (int s : o.fast_box_sizes()) {
    if (per_size && (!allocated_everywhere(sbuf, static_cast<std::size_t>(s), 2, rank, "a send buffer") ||
                     !allocated_everywhere(buf, static_cast<std::size_t>(s) * static_cast<std::size_t>(o.fast_box_longest(s)),
                                           1, rank, "a fast-box sweep window")))
      return false;
    for (int w : o.fast_box_lengths(s)) {
      time_exchange_window(rank, s, w, o.reps, sbuf, buf, reqs, times.exchange_window_lengths.values);
      times.sweep_sizes.push_back(s);
      times.sweep_messages.push_back(w);
    }
  }
  return true;
}

/** A group of exchange windows with a row for each window timed: its size, its messages and
 *  its `reps` times. */
calibration::Benchmark window_rows(const std::string& name, std::map<std::string, std::string> attributes,
                                   const std::vector<double>& sizes, const std::vector<double>& messages,
                                   calibration::Dataset times, int reps)
{
  times.shape = {sizes.size(), static_cast<std::size_t>(reps)};
  return {name,
          std::move(attributes),
          {{"size", calibration::Dataset{sizes, {sizes.size()}, "B"}},
           {"time", std::move(times)},
           {"messages", calibration::Dataset{messages, {messages.size()}, ""}}}};
}

calibration::Trace pingpong_trace(const PingPongOptions& o, const std::vector<double>& sizes, const SweepTimes& times,
                                  const std::string& placement, const std::string& ranks)
{
  calibration::Trace trace;
  trace.attributes = calibration::machine_attributes(SIMCORE_BENCH_FLAGS);
  calibration::Dataset sz{sizes, {sizes.size()}, "B"};
  calibration::Benchmark pp{"pingpong",
                            {{"placement", placement},
                             {"buffers", o.buffers},
                             {"ranks", ranks},
                             {"repetitions", std::to_string(o.reps)},
                             {"sizes_per_octave", std::to_string(o.per_octave)},
                             {"what", "MPI_Send/MPI_Recv round trip between ranks 0 and 1"}},
                            {{"size", sz}, {"round_trip", times.round_trip}}};
  // The window each size was streamed in: --window messages, one where they would hold more
  // than kWindowBytes (from 16 MiB up with the defaults: one message and its acknowledgement).
  calibration::Dataset windows{{}, {sizes.size()}, ""};
  for (double v : sizes)
    windows.values.push_back(o.window_of(static_cast<std::size_t>(v)));
  calibration::Benchmark one{"one_way",
                             {{"placement", placement},
                              {"window", std::to_string(o.window)},
                              {"window_bytes_at_most", std::to_string(kWindowBytes)},
                              {"what", "per message: a window of MPI_Isend, MPI_Recv, one acknowledgement; "
                                       "messages per window by size in 'messages'"}},
                             {{"size", sz}, {"time", times.one_way}, {"messages", windows}}};
  calibration::Benchmark both{"pingping",
                              {{"placement", placement},
                               {"exchanges_per_sample", std::to_string(kPingPingExchanges)},
                               {"what", "both ranks at once: MPI_Irecv, MPI_Isend, MPI_Waitall; after one untimed "
                                        "exchange, the mean of exchanges_per_sample back to back, the slower rank's"}},
                              {{"size", sz}, {"time", times.ping_ping}}};
  calibration::Benchmark window{"exchange_window",
                                {{"placement", placement},
                                 {"window", std::to_string(o.window)},
                                 {"what", "both ranks at once: 'messages' MPI_Irecv, as many MPI_Isend, one "
                                          "MPI_Waitall; after one untimed window, the next, the slower rank's time "
                                          "per window"}},
                                {{"size", sz}, {"time", times.exchange_window}, {"messages", windows}}};
  calibration::Benchmark self{"self_window",
                              {{"window", std::to_string(o.window)},
                               {"what", "rank 0 alone: 'messages' MPI_Irecv from itself, as many MPI_Isend to "
                                        "itself, one MPI_Waitall; after one untimed window, the next; the time per "
                                        "window"}},
                              {{"size", sz}, {"time", times.self_window}, {"messages", windows}}};
  trace.benchmarks = {{"pingpong", pp},
                      {"pingping", both},
                      {"one_way", one},
                      {"exchange_window", window},
                      {"self_window", self}};
  if (!times.long_sizes.empty()) {
    // Windows past the peer's fast box (the shared-memory slots MPI keeps for each peer): of
    // two lengths, whose difference the fitter takes for the gap of a queued message.
    trace.benchmarks["exchange_window_long"] = window_rows(
        "exchange_window_long",
        {{"placement", placement},
         {"window", std::to_string(o.long_window)},
         {"sizes_at_most", std::to_string(kLongWindowSizeAtMost)},
         {"what", "as exchange_window, with 'window' and twice as many messages a window (a row for each), for "
                  "the messages past the peer's fast box"}},
        times.long_sizes, times.long_messages, times.exchange_window_long, o.reps);
  }
  if (!times.matching_messages.empty()) {
    // Windows whose tags make MPI pass over the receives still posted (reversed) or not (in
    // order): the difference over w (w - 1) / 2 is the time of one receive passed over.
    calibration::Benchmark matching = window_rows(
        "matching_window",
        {{"placement", placement},
         {"size", std::to_string(kMatchingSize)},
         {"what", "as exchange_window ('self' 0) and self_window ('self' 1) with 'messages' of 'size' bytes, each "
                  "its own tag, the sends' in the order of the receives ('reversed' 0) or in the reverse order "
                  "('reversed' 1: MPI passes over messages (messages - 1) / 2 posted receives in all)"}},
        std::vector<double>(times.matching_messages.size(), kMatchingSize), times.matching_messages,
        times.matching_window, o.reps);
    matching.datasets["self"] = calibration::Dataset{times.matching_self, {times.matching_self.size()}, ""};
    matching.datasets["reversed"] = calibration::Dataset{times.matching_reversed, {times.matching_reversed.size()}, ""};
    trace.benchmarks["matching_window"] = matching;
  }
  if (!times.sweep_sizes.empty()) {
    // Windows of growing lengths at small sizes: where the time per message steps up, the
    // peer's fast box is full; the fitter finds its capacity from where, size by size.
    trace.benchmarks["exchange_window_lengths"] = window_rows(
        "exchange_window_lengths",
        {{"placement", placement},
         {"window_at_most", std::to_string(o.fast_box_sweep)},
         {"length_step", calibration::parameter_number(kFastBoxSweepStep)},
         {"window_bytes_at_most", std::to_string(kFastBoxSweepBytes)},
         {"what", "as exchange_window, with windows from 1 to window_at_most messages (every length up to 15, "
                  "then each length_step times the last, rounded half up; at most window_bytes_at_most bytes, and "
                  "16 messages or more) at sizes up to 4 KiB (a row for each size and length), for the capacity of "
                  "the peer's fast box and the gap of a message within it"}},
        times.sweep_sizes, times.sweep_messages, times.exchange_window_lengths, o.reps);
  }
  return trace;
}

} // namespace

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  PingPongOptions o;
  // Every rank reads the same options; rank 0 says what is wrong, and all of them stop.
  std::string problem = read_pingpong_options(argc, argv, o, rank == 0);
  if (problem.empty() && calibration::only_checking_options()) { // one rank (mpirun or not) is enough
    MPI_Finalize();
    return 0;
  }
  if (problem.empty() && size < 2)
    problem = "needs 2 ranks (mpirun -np 2)";
  // The ranks agree before any of them goes on: a problem found on one rank only (its node
  // lacks the -o folder, where only rank 0 writes) left the others waiting for it forever.
  int ok = problem.empty() ? 1 : 0, all_ok = 0, ok_at_0 = ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Bcast(&ok_at_0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!all_ok) {
    if (!ok && (rank == 0 || ok_at_0)) // rank 0 speaks for all; another rank where it found none
      std::fprintf(stderr, "calib_pingpong%s: %s\nusage: mpirun -np 2 calib_pingpong [--max B] [--repetitions R] "
                           "[--window W] [--long-window W] [--fast-box-sweep W] [--matching-window W] [--per-octave 1..8] [--buffers per-size|shared] -o TRACE.h5\n",
                   rank == 0 ? "" : (" (rank " + std::to_string(rank) + ")").c_str(), problem.c_str());
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
  // Long windows and the fast-box sweep only between ranks of one node: every rank learns
  // whether 0 and 1 share it.
  int same_node = rank == 0 ? (std::strcmp(name, other) == 0 ? 1 : 0) : 0;
  MPI_Bcast(&same_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (same_node == 0)
    o.long_window = 0, o.fast_box_sweep = 0;

  const std::vector<double> sizes = message_sizes(o.max_bytes, o.per_octave);
  MessageBuffer buf, sbuf;
  const std::vector<std::size_t> shape{sizes.size(), static_cast<std::size_t>(o.reps)};
  SweepTimes times{{{}, shape, "s"}, {{}, shape, "s"}, {{}, shape, "s"}, {{}, shape, "s"}, {{}, shape, "s"},
                   {{}, {}, "s"}, {}, {}, {{}, {}, "s"}, {}, {}, {{}, {}, "s"}, {}, {}, {}};
  if (!fits_everywhere(o, sizes, rank) || !allocate_up_front(o, sizes, rank, buf, sbuf) || !sweep(o, sizes, rank, buf, sbuf, times)) {
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  if (rank == 0) {
    const std::string placement = std::strcmp(name, other) == 0 ? "intra-node" : "inter-node";
    rc = calibration::write_trace_or_report(o.out, pingpong_trace(o, sizes, times, placement,
                                                                  std::string(name) + " " + other));
    if (rc == 0)
      std::printf("%s: %zu sizes x %d repetitions, %s\n", o.out.c_str(), sizes.size(), o.reps, placement.c_str());
  }
  MPI_Finalize();
  return rc;
}
