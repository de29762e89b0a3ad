/* A real MPI halo exchange with the decomposition and message sizes of the halo model: plain
 * MPI_Isend/MPI_Irecv/MPI_Waitall per iteration. Builds with smpicxx (runs under smpirun on
 * a SimGrid platform, the model's ground truth) and with Open MPI's mpicxx (native runs).
 *
 *   halo_mpi [--cells X,Y,Z | --local X,Y,Z] [--procs X,Y,Z] [--stencil 7|27] [--width W]
 *            [--variables V] [--element-size B] [--bundled 0|1] [--periodic 0|1]
 *            [--iterations N] [--warmup N] [--barrier 0|1]
 *            [--flops-per-cell F] [--overlap 0|1]     (the last two under SMPI only)
 *
 * Prints one JSON object on rank 0: per-iteration communication time (max over ranks of the
 * time from the first Isend to the end of Waitall), mean and max over iterations. With
 * --barrier 0 the ranks start without MPI_Barrier: under SMPI all at time 0, as the model's.
 * Under SMPI, --flops-per-cell adds each iteration's computation (smpi_execute_flops): all of
 * it before the exchange, or with --overlap 1 the interior cells during the exchange and the
 * cells within the halo width of a face after it, as the model does. The JSON then has the
 * time per iteration too (max over ranks of the loop's time, over iterations). */
#include "../halo_geometry.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Under SMPI all ranks live in one process: every message of every rank uses one shared
// buffer of the largest size (SMPI then skips the copies; the contents do not matter), so
// thousands of ranks fit in memory. Natively, each message has its own buffers.
#ifdef SMPI_SHARED_MALLOC
constexpr bool kSharedBuffers = true;
char* alloc_buffer(std::size_t n) { return static_cast<char*>(SMPI_SHARED_MALLOC(n > 0 ? n : 1)); }
void free_buffer(char* p) { SMPI_SHARED_FREE(p); }
#else
constexpr bool kSharedBuffers = false;
char* alloc_buffer(std::size_t n) { return static_cast<char*>(std::calloc(n > 0 ? n : 1, 1)); }
void free_buffer(char* p) { std::free(p); }
#endif

[[noreturn]] void usage(const std::string& what)
{
  // Every rank parses the same arguments and stops the same way (under SMPI, exit ends the
  // whole simulation with this status; MPI_Abort would end only the calling rank).
  std::fprintf(stderr, "halo_mpi: %s\n", what.c_str());
  std::exit(2);
}

halo::Ext parse_triple(const std::string& flag, const char* text)
{
  halo::Ext e{0, 0, 0};
  if (std::sscanf(text, "%ld,%ld,%ld", &e[0], &e[1], &e[2]) != 3 || e[0] < 1 || e[1] < 1 || e[2] < 1)
    usage(flag + " expects three positive integers X,Y,Z, got '" + text + "'");
  return e;
}

long parse_int(const std::string& flag, const char* text, long lo)
{
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo)
    usage(flag + " expects an integer >= " + std::to_string(lo) + ", got '" + text + "'");
  return v;
}

double parse_flops(const std::string& flag, const char* text)
{
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 0) || v > 1e30)
    usage(flag + " expects a number of flops >= 0, got '" + text + "'");
  return v;
}

/* The iteration's computation, simulated: SMPI charges the flops at the rank's host speed. */
void compute(double flops)
{
#ifdef SMPI_SHARED_MALLOC
  if (flops > 0)
    smpi_execute_flops(flops);
#else
  (void)flops;
#endif
}

int direction_index(const std::array<int, 3>& o) { return (o[0] + 1) * 9 + (o[1] + 1) * 3 + (o[2] + 1); }

} // namespace

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  halo::Grid grid;
  halo::HaloSpec spec;
  spec.variables = 5;
  halo::Ext local{16, 16, 16}, cells{0, 0, 0}, procs{0, 0, 0};
  bool bundled = true, periodic = true, barrier = true, overlap = false;
  double flops_per_cell = 0;
  long iterations = 10, warmup = 1;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      usage("missing value after " + a);
    const char* v = argv[++i];
    if (a == "--cells") cells = parse_triple(a, v);
    else if (a == "--local") local = parse_triple(a, v);
    else if (a == "--procs") procs = parse_triple(a, v);
    else if (a == "--stencil") spec.stencil = parse_int(a, v, 7) == 27 ? halo::Stencil::Point27 : halo::Stencil::Point7;
    else if (a == "--width") spec.width = parse_int(a, v, 1);
    else if (a == "--variables") spec.variables = parse_int(a, v, 1);
    else if (a == "--element-size") spec.element_size = parse_int(a, v, 1);
    else if (a == "--bundled") bundled = parse_int(a, v, 0) != 0;
    else if (a == "--periodic") periodic = parse_int(a, v, 0) != 0;
    else if (a == "--iterations") iterations = parse_int(a, v, 1);
    else if (a == "--warmup") warmup = parse_int(a, v, 0);
    else if (a == "--barrier") barrier = parse_int(a, v, 0) != 0;
    else if (a == "--flops-per-cell") flops_per_cell = parse_flops(a, v);
    else if (a == "--overlap") overlap = parse_int(a, v, 0) != 0;
    else usage("unknown option " + a);
  }
  if (procs[0] == 0) {
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(size, 3, dims);
    procs = {dims[0], dims[1], dims[2]};
  }
  grid.procs = procs;
  if (grid.ranks() != size)
    usage("the process grid holds " + std::to_string(grid.ranks()) + " ranks, not " + std::to_string(size));
  for (int d = 0; d < 3; d++)
    grid.cells[d] = cells[0] != 0 ? cells[d] : local[d] * procs[d];
  grid.periodic = {periodic, periodic, periodic};
  const std::string problem = halo::check_decomposition(grid, spec);
  if (!problem.empty())
    usage(problem);
#ifndef SMPI_SHARED_MALLOC
  if (flops_per_cell > 0 || overlap)
    usage("--flops-per-cell and --overlap simulate the computation: they need the smpicxx build under smpirun");
#endif
  // This rank's computation: all its cells, and those at least the halo width from every face.
  const halo::Ext ext = grid.local_extent(rank);
  double own = 1, inner = 1;
  for (int d = 0; d < 3; d++) {
    own *= static_cast<double>(ext[d]);
    inner *= static_cast<double>(std::max<std::int64_t>(ext[d] - 2 * spec.width, 0));
  }
  // With overlap, a rank with interior cells computes them during the exchange; one without
  // computes all before it (as the model's ranks do).
  const double flops = own * flops_per_cell, interior_flops = overlap ? inner * flops_per_cell : 0;
  const bool overlapped = interior_flops > 0;

  // One send and one receive buffer per message; the contents do not matter to the timing.
  const auto nb = halo::neighbours(grid, spec, rank);
  const long parts = bundled ? 1 : spec.variables;
  // A message's tag is its direction (0 to 26) x 1000 + its variable: unique, and within the
  // 32767 every MPI allows, up to 1000 variables a message.
  if (parts > 1000) {
    if (rank == 0)
      std::fprintf(stderr, "halo_mpi: --variables %ld unbundled: expected at most 1000 (the tags of its messages)\n",
                   parts);
    MPI_Finalize();
    return 2;
  }
  struct Msg {
    int peer, send_tag, recv_tag;
    std::size_t out_bytes, in_bytes;
    char *out, *in;
  };
  std::vector<Msg> msgs;
  for (const auto& n : nb) {
    // What this rank receives from that neighbour: the neighbour's face towards us, whose size
    // comes from the neighbour's extent; the geometry gives it as the neighbour's message.
    const std::array<int, 3> back{-n.offset[0], -n.offset[1], -n.offset[2]};
    std::int64_t in_bytes = 0;
    for (const auto& m : halo::neighbours(grid, spec, n.rank))
      if (m.offset == back)
        in_bytes = m.bytes;
    for (long p = 0; p < parts; p++)
      msgs.push_back({static_cast<int>(n.rank), direction_index(n.offset) * 1000 + static_cast<int>(p),
                      direction_index(back) * 1000 + static_cast<int>(p),
                      static_cast<std::size_t>(n.bytes / parts), static_cast<std::size_t>(in_bytes / parts),
                      nullptr, nullptr});
  }
  std::size_t largest = 1;
  for (const auto& m : msgs)
    largest = std::max({largest, m.out_bytes, m.in_bytes});
  char* shared = kSharedBuffers ? alloc_buffer(largest) : nullptr;
  for (auto& m : msgs) {
    m.out = kSharedBuffers ? shared : alloc_buffer(m.out_bytes);
    m.in = kSharedBuffers ? shared : alloc_buffer(m.in_bytes);
    // Natively, write what is sent (as a solver writes its faces): a calloc'ed buffer never
    // written is backed by the kernel's one zero page, which a copy reads from the cache.
    if (!kSharedBuffers)
      std::memset(m.out, static_cast<int>(1 + rank % 255), m.out_bytes);
  }
  std::vector<MPI_Request> reqs(2 * msgs.size());
  std::vector<double> comm(static_cast<std::size_t>(iterations), 0);
  if (barrier)
    MPI_Barrier(MPI_COMM_WORLD);
  double first = 0;
  for (long it = -warmup; it < iterations; it++) {
    if (it == 0)
      first = MPI_Wtime();
    if (!overlapped)
      compute(flops);
    const double t0 = MPI_Wtime();
    for (std::size_t i = 0; i < msgs.size(); i++)
      MPI_Irecv(msgs[i].in, static_cast<int>(msgs[i].in_bytes), MPI_BYTE, msgs[i].peer,
                msgs[i].recv_tag, MPI_COMM_WORLD, &reqs[i]);
    for (std::size_t i = 0; i < msgs.size(); i++)
      MPI_Isend(msgs[i].out, static_cast<int>(msgs[i].out_bytes), MPI_BYTE, msgs[i].peer,
                msgs[i].send_tag, MPI_COMM_WORLD, &reqs[msgs.size() + i]);
    compute(interior_flops); // overlap: the interior, while the messages move
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    if (it >= 0)
      comm[static_cast<std::size_t>(it)] = MPI_Wtime() - t0;
    if (overlapped)
      compute(flops - interior_flops); // the cells within the halo width of a face, once it is in
  }
  const double loop = (MPI_Wtime() - first) / static_cast<double>(iterations);
  double loop_max = 0;
  MPI_Reduce(&loop, &loop_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<double> max_comm(comm.size()), sum_comm(comm.size());
  MPI_Reduce(comm.data(), max_comm.data(), static_cast<int>(comm.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(comm.data(), sum_comm.data(), static_cast<int>(comm.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double mean_of_max = 0, mean_of_mean = 0;
    for (std::size_t i = 0; i < comm.size(); i++) {
      mean_of_max += max_comm[i];
      mean_of_mean += sum_comm[i] / size;
    }
    std::printf("{\"ranks\": %d, \"procs\": [%ld, %ld, %ld], \"iterations\": %ld, "
                "\"iteration_time_max\": %.12g, \"communication_time_max\": %.12g, \"communication_time_mean\": %.12g, "
                "\"per_iteration_max\": [",
                size, procs[0], procs[1], procs[2], iterations, loop_max, mean_of_max / static_cast<double>(iterations),
                mean_of_mean / static_cast<double>(iterations));
    for (std::size_t i = 0; i < comm.size(); i++)
      std::printf("%s%.12g", i ? ", " : "", max_comm[i]);
    std::printf("]}\n");
  }
  if (kSharedBuffers)
    free_buffer(shared);
  else
    for (auto& m : msgs) {
      free_buffer(m.out);
      free_buffer(m.in);
    }
  MPI_Finalize();
  return 0;
}
