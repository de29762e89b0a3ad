#include "calibration/profile_fitter.hpp"
#include "calibration/stencil_fit.hpp"
#include "fit_support.hpp"
#include "node_samples.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>

namespace calibration {

namespace {

std::string number(double v) { return profile_number(v); }

nlohmann::ordered_json quality_json(const FitQuality& q)
{
  return {{"r2", q.r2}, {"max_rel_error", q.max_rel_error}, {"median_rel_error", q.median_rel_error}};
}

Dataset need(const Benchmark& b, const std::string& name, Quantity q, const std::string& path)
{
  return need_in(b, name, q, path + " (" + b.name + ")");
}

double median_row(const Dataset& d, std::size_t r)
{
  std::vector<double> v;
  for (std::size_t c = 0; c < d.cols(); c++)
    v.push_back(d.at(r, c));
  return simcore::quantile(v, 0.5);
}

/** `d` holds `rows` rows of at least one repetition each, every value positive and finite. */
void need_positive(const Dataset& d, std::size_t rows, const std::string& where, const std::string& name,
                   const std::string& what)
{
  if (d.rows() != rows || d.cols() == 0 || d.values.size() != d.rows() * d.cols())
    throw simcore::InputError(where, "dataset '" + name + "' has " + std::to_string(d.rows()) + " rows of " +
                                         std::to_string(d.cols()) + " values; expected " + std::to_string(rows) +
                                         " rows of repetitions");
  for (std::size_t i = 0; i < d.values.size(); i++)
    if (!(d.values[i] > 0) || !std::isfinite(d.values[i]))
      throw simcore::InputError(where, "dataset '" + name + "' holds " + number(d.values[i]) + " at index " +
                                           std::to_string(i) + "; expected positive " + what);
}

/** What the node benchmarks of one host type measured, one value per trace (per node): the
 *  rates are the medians of the nodes, written once every trace is read. */
struct TypeSamples {
  NodeSamples memcpy_all, memcpy_one, triad; // STREAM
  std::vector<double> stream_spread;         // of the repetitions, every trace
  std::vector<double> stream_rates;          // memcpy rate of every repetition at each trace's fitted thread count
  NodeSamples lookups, lines, latency;       // hash_table
  std::vector<double> lookup_rates;          // the pipelined table's every repetition, every trace
  nlohmann::ordered_json failures_by_layout; // insertion failures per secondary share, the first hash trace's
  std::string miss_rate, hash_key, hash_trace; // of the first hash trace: the others must match
  std::map<std::string, std::vector<double>> gpu; // every repetition of each CUDA kernel
  std::vector<std::string> gpu_devices;
  std::vector<StencilFit> stencils;
};

/** Ping-pong (and ping-ping) samples of every trace of one placement. */
struct NetworkSamples {
  std::vector<double> pingpong_sizes, pingpong_times, pingping_sizes, pingping_times;
  std::vector<double> one_way_sizes, one_way_times; // per message of a stream (calib_pingpong's one_way)
  bool all_have_pingping = true, all_have_one_way = true;
  std::string one_way_problem; // why a trace's one_way group was left out (it is only compared)
  int traces = 0;
  std::string buffers, buffers_trace; // of the first trace: the others must match
};

/** A network fit's quality and segments. */
nlohmann::ordered_json network_quality(const PiecewiseFit& fit)
{
  nlohmann::ordered_json q = quality_json(fit.quality);
  nlohmann::ordered_json segs = nlohmann::ordered_json::array();
  for (const auto& s : fit.segments)
    segs.push_back({{"from", s.from}, {"latency", s.intercept}, {"bandwidth", s.slope > 0 ? 1.0 / s.slope : 0.0}});
  q["segments"] = segs;
  q["protocol_switch"] = fit.switch_point();
  return q;
}

/** Leaves out of (msizes, mtimes) the sizes that stray alone from their neighbours
 *  (isolated_outliers); what it left out, for the quality section. */
nlohmann::ordered_json drop_isolated_outliers(std::vector<double>& msizes, std::vector<double>& mtimes, double tolerance)
{
  nlohmann::ordered_json dropped = nlohmann::ordered_json::array();
  const auto out = isolated_outliers(msizes, mtimes, tolerance);
  for (auto it = out.rbegin(); it != out.rend(); ++it) {
    const auto i = static_cast<long>(*it);
    nlohmann::ordered_json entry{{"size", msizes[*it]}, {"time", mtimes[*it]}};
    dropped.insert(dropped.begin(), std::move(entry));
    msizes.erase(msizes.begin() + i);
    mtimes.erase(mtimes.begin() + i);
  }
  return dropped;
}

/** The median time of each size (the fit should not chase a first round trip or a
 *  descheduled process), and every sample's relative distance to its median. */
void median_per_size(std::vector<double> sizes, std::vector<double> times, std::vector<double>& msizes,
                     std::vector<double>& mtimes, std::vector<double>& spread)
{
  // Samples of several traces: grouped by size first.
  std::vector<std::size_t> order(sizes.size());
  for (std::size_t i = 0; i < order.size(); i++)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] < sizes[b]; });
  std::vector<double> s2, t2;
  for (std::size_t i : order)
    s2.push_back(sizes[i]), t2.push_back(times[i]);
  sizes.swap(s2);
  times.swap(t2);
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    std::vector<double> v;
    while (j < sizes.size() && sizes[j] == sizes[i])
      v.push_back(times[j++]);
    const double med = simcore::quantile(v, 0.5);
    msizes.push_back(sizes[i]);
    mtimes.push_back(med);
    for (double x : v)
      spread.push_back(std::abs(x - med) / med);
    i = j;
  }
}

/** One sample per repetition: the size of its row and `scale` x the dataset's value. */
void samples_by_size(const Benchmark& b, const std::string& name, double scale, const std::string& where,
                     std::vector<double>& sizes, std::vector<double>& times)
{
  const Dataset size = need(b, "size", Quantity::kBytes, where);
  const Dataset time = need(b, name, Quantity::kSeconds, where); // `where`: the trace's path
  if (time.rows() == 0 || time.rows() != size.rows() || time.values.size() != time.rows() * time.cols())
    throw simcore::InputError(where + " (" + b.name + ")",
                              "dataset '" + name + "' has " + std::to_string(time.rows()) + " rows for " +
                                  std::to_string(size.rows()) + " sizes; expected one row of repetitions per size");
  for (double v : time.values)
    if (!(v > 0) || !std::isfinite(v))
      throw simcore::InputError(where + " (" + b.name + ")", "dataset '" + name + "' holds " + number(v) +
                                                                 "; expected positive times in seconds");
  if (size.values.size() != size.rows())
    throw simcore::InputError(where + " (" + b.name + ")", "dataset 'size' holds " +
                                                               std::to_string(size.values.size()) + " values in " +
                                                               std::to_string(size.rows()) +
                                                               " rows; expected one size per row");
  // Whole bytes an MPI count can hold: SMPI reads a factor's bound as an int.
  for (std::size_t i = 0; i < size.values.size(); i++) {
    const double v = size.values[i];
    if (!(v >= 0) || v > 2147483647.0 || v != std::floor(v))
      throw simcore::InputError(where + " (" + b.name + ")",
                                "dataset 'size' holds " + number(v) + " at index " + std::to_string(i) +
                                    "; expected whole message sizes in bytes from 0 to 2147483647");
  }
  for (std::size_t r = 0; r < time.rows(); r++)
    for (std::size_t c = 0; c < time.cols(); c++) {
      sizes.push_back(size.at(r));
      times.push_back(time.at(r, c) * scale);
    }
}

/** How far each GPU kernel gets: its median rate over the peak of its units measured in the
 *  same run (FP32 kernels over `peak_fp32_fma`, TF32 ones over `peak_tf32_mma_sync`), for our
 *  GEMMs over cuBLAS's (`cublas_sgemm`, `cublas_gemm_tf32`) and for our convolutions over
 *  cuDNN's FP32 one in the same layout (`cudnn_conv3d_<layout>`), where those were measured. */
nlohmann::ordered_json gpu_shares(const std::map<std::string, double>& median)
{
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [kernel, rate] : median) {
    const bool tf32 = kernel.find("tf32") != std::string::npos;
    nlohmann::ordered_json k{{"flops", rate}};
    const auto peak = median.find(tf32 ? "peak_tf32_mma_sync" : "peak_fp32_fma");
    if (peak != median.end() && peak->first != kernel && peak->second > 0)
      k["share_of_peak"] = rate / peak->second;
    const auto lib = median.find(tf32 ? "cublas_gemm_tf32" : "cublas_sgemm");
    if (kernel.rfind("gemm_", 0) == 0 && lib != median.end() && lib->second > 0)
      k["share_of_cublas"] = rate / lib->second;
    const auto dnn = median.find("cudnn_" + kernel);
    if (kernel.rfind("conv3d_", 0) == 0 && dnn != median.end() && dnn->second > 0)
      k["share_of_cudnn"] = rate / dnn->second;
    out[kernel] = std::move(k);
  }
  return out;
}

} // namespace

void pingping_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path)
{
  samples_by_size(b, "time", 1.0, path, sizes, times);
}

void pingpong_samples(const Benchmark& b, std::vector<double>& sizes, std::vector<double>& times,
                      const std::string& path)
{
  samples_by_size(b, "round_trip", 0.5, path, sizes, times); // one way: half the round trip
}

namespace {

/** SMPI applies an entry "X:factor" to messages larger than X: a segment from size S (whole
 *  bytes) is written as S - 1, the first one as 0; as a whole number, since SMPI reads the
 *  bound as an integer (6 significant digits would turn 20971519 into "2.09715e+07", read 2). */
constexpr double kFlatSegmentBandwidthFactor = 1e6;

std::string bound_of(const Segment& s, bool first)
{
  return std::to_string(first ? 0LL : static_cast<long long>(std::max(std::llround(s.from) - 1, 0LL)));
}

} // namespace

std::string latency_factors(const PiecewiseFit& fit, double latency)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it)
    out += (out.empty() ? "" : ";") + bound_of(*it, it == std::prev(fit.segments.rend())) + ":" +
           number(std::max(it->intercept, 1e-12) / latency);
  return out;
}

std::string bandwidth_factors(const PiecewiseFit& fit, double bandwidth)
{
  std::string out;
  for (auto it = fit.segments.rbegin(); it != fit.segments.rend(); ++it) {
    // A flat segment (no time per byte) gets a bandwidth a million times the reference: its
    // bytes then cost nothing next to its latency, as fitted (the reference itself would add
    // s / bandwidth to every message of the segment).
    const double bw = it->slope > 0 ? 1.0 / it->slope : bandwidth * kFlatSegmentBandwidthFactor;
    out += (out.empty() ? "" : ";") + bound_of(*it, it == std::prev(fit.segments.rend())) + ":" +
           number(bw / bandwidth);
  }
  return out;
}

nlohmann::ordered_json fit_profile(const std::vector<std::string>& paths, const FitOptions& options)
{
  if (!(options.outlier_tolerance >= 0) || !std::isfinite(options.outlier_tolerance))
    throw simcore::InputError("outlier tolerance", number(options.outlier_tolerance) +
                                                       "; expected a share >= 0 (0.25: 25 %; 0 keeps every size)");
  if (!options.host_match.empty() && options.host_match.size() != paths.size())
    throw simcore::InputError("command line", "host patterns for " + std::to_string(options.host_match.size()) +
                                                  " traces, but " + std::to_string(paths.size()) +
                                                  " traces; expected one (possibly empty) per trace");
  for (const auto& m : options.host_match) {
    try {
      if (!m.empty())
        std::regex re(m);
    } catch (const std::regex_error& e) {
      throw simcore::InputError("command line", "host pattern '" + m + "' is not a regular expression (" + e.what() +
                                                    "); expected one over host names");
    }
  }
  if (options.network_pattern != "auto" && options.network_pattern != "pingpong" &&
      options.network_pattern != "pingping")
    throw simcore::InputError("command line", "network pattern '" + options.network_pattern +
                                                  "'; expected auto, pingpong or pingping");
  nlohmann::ordered_json profile{{"schema", "simcore-profile/1"}};
  nlohmann::ordered_json config = nlohmann::ordered_json::object(), quality = nlohmann::ordered_json::object(), links = nlohmann::ordered_json::array(),
                         hosts = nlohmann::ordered_json::array();
  nlohmann::ordered_json meta{{"traces", paths}};
  bool fitted = false;
  std::map<std::string, NetworkSamples> networks; // by placement
  std::map<std::string, TypeSamples> samples; // by host type (its rule's pattern)
  std::string host;
  // Host types: the DGEMM rates of each `match` (the traces' host rule), in order of appearance.
  std::vector<std::pair<std::string, std::vector<double>>> speeds;
  // Every DGEMM trace's flops and rate of each size and repetition, in the order of
  // quality["compute"]: how well its host type's speed predicts them, once that is known.
  struct ComputeSamples {
    std::string match;
    std::vector<double> work, rates;
  };
  std::vector<ComputeSamples> compute_samples;
  // Every host type's own rates and quality (memory, stencil), in order of appearance.
  std::vector<std::string> types;
  std::map<std::string, nlohmann::ordered_json> type_rates, type_quality;
  for (std::size_t pi = 0; pi < paths.size(); pi++) {
    const std::string& path = paths[pi];
    const std::string match =
        pi < options.host_match.size() && !options.host_match[pi].empty() ? options.host_match[pi] : ".*";
    const Trace t = read_trace(path);
    if (std::find(types.begin(), types.end(), match) == types.end() &&
        std::any_of(t.benchmarks.begin(), t.benchmarks.end(), [](const auto& b) { return b.first != "pingpong" && b.first != "pingping"; })) {
      types.push_back(match);
      type_rates[match] = nlohmann::ordered_json::object();
      type_quality[match] = nlohmann::ordered_json::object();
    }
    TypeSamples& ts = samples[match]; // this trace's host type

    if (host.empty() && t.attributes.count("host"))
      host = t.attributes.at("host");
    meta["machines"].push_back(t.attributes);
    for (const auto& [name, b] : t.benchmarks) {
      if (name == "pingpong") {
        // The network's times: of a message alone (ping-pong) or of a message while the other
        // direction is busy too (ping-ping, where the trace has it and the options allow).
        // Samples of every trace of one placement are pooled, then fitted once.
        const bool has_pingping = t.benchmarks.count("pingping") != 0;
        if (options.network_pattern == "pingping" && !has_pingping)
          throw simcore::InputError(path, "no 'pingping' group for --network-pattern pingping; expected a trace of "
                                          "calib_pingpong (which measures both)");
        const auto placement = b.parameters.count("placement") ? b.parameters.at("placement") : "inter-node";
        if (placement != "intra-node" && placement != "inter-node")
          throw simcore::InputError(path + " (pingpong)", "placement '" + placement +
                                                              "'; expected 'intra-node' or 'inter-node'");
        NetworkSamples& n = networks[placement];
        // Where the messages' memory lay: intra-node here, 10 and 40 kB from the heap took 1 us
        // longer than from one large mapped buffer. A fit of both kinds would be neither's.
        // Traces written before calib_pingpong had --buffers used one large buffer.
        const std::string buffers = b.parameters.count("buffers") ? b.parameters.at("buffers") : "shared";
        if (buffers != "per-size" && buffers != "shared")
          throw simcore::InputError(path + " (pingpong)", "buffers '" + buffers + "'; expected 'per-size' or 'shared'");
        if (n.traces == 0)
          n.buffers = buffers, n.buffers_trace = path;
        else if (buffers != n.buffers)
          throw simcore::InputError(path + " (pingpong)", "measured with " + buffers + " buffers, but " +
                                                              n.buffers_trace + " (also " + placement + ") with " +
                                                              n.buffers + " ones; expected traces of one kind "
                                                              "(calib_pingpong --buffers) for one placement");
        pingpong_samples(b, n.pingpong_sizes, n.pingpong_times, path);
        if (has_pingping)
          pingping_samples(t.benchmarks.at("pingping"), n.pingping_sizes, n.pingping_times, path);
        n.all_have_pingping = n.all_have_pingping && has_pingping;
        // The one_way group is fitted for comparison only: a bad one leaves that fit out, with
        // a note, and does not cost the profile.
        bool has_one_way = t.benchmarks.count("one_way") != 0;
        if (has_one_way) {
          std::vector<double> sizes, times;
          try {
            samples_by_size(t.benchmarks.at("one_way"), "time", 1.0, path, sizes, times);
            n.one_way_sizes.insert(n.one_way_sizes.end(), sizes.begin(), sizes.end());
            n.one_way_times.insert(n.one_way_times.end(), times.begin(), times.end());
          } catch (const simcore::InputError& e) {
            has_one_way = false;
            if (n.one_way_problem.empty())
              n.one_way_problem = e.what();
          }
        }
        n.all_have_one_way = n.all_have_one_way && has_one_way;
        n.traces++;
        fitted = true;
      } else if (name == "pingping" && !t.benchmarks.count("pingpong")) {
        throw simcore::InputError(path + " (pingping)", "a 'pingping' group without 'pingpong' (its sizes and "
                                                        "placement); expected a trace of calib_pingpong, which "
                                                        "writes both");
      } else if (name == "dgemm") {
        // Dense compute rate of one core: the median over repetitions at the largest size.
        const Dataset size = need(b, "size", Quantity::kCount, path);
        const Dataset gflops = need(b, "gflops", Quantity::kGflops, path);
        if (size.rows() == 0 || gflops.rows() != size.rows() || gflops.values.size() != gflops.rows() * gflops.cols())
          throw simcore::InputError(path + " (dgemm)", "dataset 'gflops' has " + std::to_string(gflops.rows()) +
                                                           " rows for " + std::to_string(size.rows()) +
                                                           " sizes; expected one row of repetitions per size");
        // Matrix orders, one a row (the flops of a size, 2 n^3, weigh its repetitions in the
        // quality section), and at least one repetition of each.
        need_positive(size, size.rows(), path + " (dgemm)", "size", "matrix orders, one per row");
        need_positive(gflops, size.rows(), path + " (dgemm)", "gflops", "rates in Gflop/s");
        for (double v : gflops.values)
          if (!(v > 0) || !std::isfinite(v))
            throw simcore::InputError(path + " (dgemm)",
                                      "dataset 'gflops' holds " + number(v) + "; expected positive rates");
        std::size_t largest = 0;
        for (std::size_t r = 0; r < size.rows(); r++)
          if (size.at(r) > size.at(largest))
            largest = r;
        const double rate = median_row(gflops, largest) * 1e9;
        auto it = std::find_if(speeds.begin(), speeds.end(), [&](const auto& e) { return e.first == match; });
        if (it == speeds.end())
          it = speeds.insert(speeds.end(), {match, {}});
        it->second.push_back(rate);
        std::vector<double> spread;
        for (std::size_t k = 0; k < gflops.cols(); k++)
          spread.push_back(std::abs(gflops.at(largest, k) * 1e9 - rate) / rate);
        ComputeSamples cs{match, {}, {}};
        for (std::size_t r = 0; r < size.rows(); r++)
          for (std::size_t k = 0; k < gflops.cols(); k++) {
            cs.work.push_back(2 * size.at(r) * size.at(r) * size.at(r));
            cs.rates.push_back(gflops.at(r, k) * 1e9);
          }
        compute_samples.push_back(std::move(cs));
        nlohmann::ordered_json c{{"match", match},
                                 {"trace", path},
                                 {"cpu_model", t.attributes.count("cpu_model") ? t.attributes.at("cpu_model") : ""},
                                 {"flops", rate},
                                 {"size", size.at(largest)},
                                 {"path", b.parameters.count("path") ? b.parameters.at("path") : "?"},
                                 {"median_rel_spread", simcore::quantile(spread, 0.5)}};
        if (b.parameters.count("measured_peak_gflops")) {
          const double peak = std::atof(b.parameters.at("measured_peak_gflops").c_str()) * 1e9;
          if (peak > 0) {
            c["measured_peak_flops"] = peak;
            c["share_of_measured_peak"] = rate / peak;
          }
        }
        quality["compute"].push_back(c);
        fitted = true;
      } else if (name == "stream") {
        const Dataset threads = need(b, "threads", Quantity::kCount, path);
        const Dataset copy = need(b, "copy_bandwidth", Quantity::kBytesPerSecond, path);
        const Dataset triad = need(b, "triad_bandwidth", Quantity::kBytesPerSecond, path);
        const std::string where = path + " (stream)";
        if (threads.rows() == 0 || threads.values.size() != threads.rows())
          throw simcore::InputError(where, "dataset 'threads' has " + std::to_string(threads.values.size()) +
                                               " values in " + std::to_string(threads.rows()) +
                                               " rows; expected one thread count per row");
        for (double v : threads.values)
          if (!(v >= 1) || !std::isfinite(v))
            throw simcore::InputError(where, "dataset 'threads' holds " + number(v) + "; expected thread counts >= 1");
        need_positive(copy, threads.rows(), where, "copy_bandwidth", "bandwidths in bytes per second");
        need_positive(triad, threads.rows(), where, "triad_bandwidth", "bandwidths in bytes per second");
        // STREAM counts the bytes read and written: a memcpy of S bytes moves 2 S.
        double best_copy = 0, best_triad = 0, one_core = 0;
        std::size_t best_row = 0;
        for (std::size_t r = 0; r < threads.rows(); r++) {
          const double c = median_row(copy, r), tr = median_row(triad, r);
          if (c > best_copy)
            best_row = r;
          best_copy = std::max(best_copy, c);
          best_triad = std::max(best_triad, tr);
          if (threads.at(r) == 1)
            one_core = c;
          for (std::size_t k = 0; k < copy.cols(); k++)
            ts.stream_spread.push_back(std::abs(copy.at(r, k) - c) / c);
        }
        for (std::size_t k = 0; k < copy.cols(); k++)
          ts.stream_rates.push_back(copy.at(best_row, k) / 2);
        ts.memcpy_all.add(best_copy / 2, path);
        if (one_core > 0) // a run on more threads only tells nothing of one core
          ts.memcpy_one.add(one_core / 2, path);
        ts.triad.add(best_triad, path);
        fitted = true;
      } else if (name == "hash_table") {
        // Memory-bound lookups: the pipelined SIMD table's rate (the row named so), and the
        // random cache lines one core reads per second with misses overlapped.
        const Dataset rate = need(b, "lookup_rate", Quantity::kPerSecond, path);
        const auto structures = b.parameters.count("structures") ? b.parameters.at("structures") : "";
        std::size_t row = 0, k = 0;
        bool named = false;
        for (std::size_t from = 0; from <= structures.size(); k++) {
          const std::size_t to = std::min(structures.find(',', from), structures.size());
          if (structures.substr(from, to - from) == "simd_table_batched") {
            row = k, named = true;
            break;
          }
          from = to + 1;
        }
        if (!named || row >= rate.rows())
          throw simcore::InputError(path + " (hash_table)", "no 'simd_table_batched' row among the structures; "
                                                            "expected a trace written by calib_hash");
        need_positive(rate, rate.rows(), path + " (hash_table)", "lookup_rate", "lookups per second");
        const std::string miss_rate = b.parameters.count("miss_rate") ? b.parameters.at("miss_rate") : "?";
        const std::string key = b.parameters.count("key") ? b.parameters.at("key") : "?";
        if (ts.hash_trace.empty()) {
          ts.miss_rate = miss_rate, ts.hash_key = key, ts.hash_trace = path;
        } else if (miss_rate != ts.miss_rate || key != ts.hash_key) {
          throw simcore::InputError(path + " (hash_table)",
                                    key + " keys at miss rate " + miss_rate + ", but " + ts.hash_trace +
                                        " (also for hosts matching '" + match + "') measured " + ts.hash_key +
                                        " keys at " + ts.miss_rate + "; expected the same workload on every node "
                                        "of a host type (--hosts REGEX before each type's traces)");
        }
        ts.lookups.add(median_row(rate, row), path);
        // What the table could not store, per memory layout: for the quality section (the
        // first trace's, as with the stencil's sizes).
        if (ts.failures_by_layout.is_null() && b.datasets.count("secondary_share") &&
            b.datasets.count("insert_failure_rate")) {
          const Dataset& shares = b.datasets.at("secondary_share");
          const Dataset& failures = b.datasets.at("insert_failure_rate");
          if (shares.values.size() == failures.values.size()) {
            ts.failures_by_layout = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < shares.values.size(); i++)
              ts.failures_by_layout.push_back(
                  {{"secondary_share", shares.values[i]}, {"insert_failure_rate", failures.values[i]}});
          }
        }
        for (std::size_t k = 0; k < rate.cols(); k++)
          ts.lookup_rates.push_back(rate.at(row, k));
        if (b.datasets.count("random_line_rate") && !b.datasets.at("random_line_rate").values.empty()) {
          const Dataset lines = need(b, "random_line_rate", Quantity::kPerSecond, path);
          need_positive(lines, lines.rows(), path + " (hash_table)", "random_line_rate", "cache lines per second");
          ts.lines.add(*std::max_element(lines.values.begin(), lines.values.end()), path);
          ts.latency.add(1.0 / lines.values.front(), path);
        }
        fitted = true;
      } else if (name == "cuda") {
        // GPU kernels: each kernel's repetitions, pooled over the traces of the host type.
        const auto device = b.parameters.count("device") ? b.parameters.at("device") : "?";
        if (std::find(ts.gpu_devices.begin(), ts.gpu_devices.end(), device) == ts.gpu_devices.end())
          ts.gpu_devices.push_back(device);
        for (const auto& [kernel, raw] : b.datasets) {
          // Rates, in any unit of Gflop/s's kind; a dataset of another kind (a later schema's
          // sizes or times) is not one.
          const auto& rate_units = units_of(Quantity::kGflops);
          if (std::none_of(rate_units.begin(), rate_units.end(), [&](const auto& u) { return u.first == raw.unit; }))
            continue;
          const Dataset d = in_unit(raw, Quantity::kGflops, path + " (cuda)", kernel);
          need_positive(d, d.rows(), path + " (cuda)", kernel, "rates in Gflop/s");
          ts.gpu[kernel].insert(ts.gpu[kernel].end(), d.values.begin(), d.values.end());
        }
        fitted = true;
      } else if (name == "stencil") {
        StencilFit f = fit_stencil(b, path);
        f.match = match;
        ts.stencils.push_back(std::move(f));
        fitted = true;
      }
    }
  }
  // The node benchmarks of each host type: the median of its nodes (traces).
  for (const auto& match : types) {
    const TypeSamples& ts = samples[match];
    nlohmann::ordered_json& rates = type_rates[match];
    if (!ts.memcpy_all.empty()) {
      rates["memcpy_bandwidth"] = {{"value", ts.memcpy_all.median()}, {"unit", "Bps"},
                                   {"doc", "bytes copied per second, all threads (STREAM copy / 2)"}};
      if (!ts.memcpy_one.empty())
        rates["memcpy_bandwidth_one_core"] = {{"value", ts.memcpy_one.median()}, {"unit", "Bps"},
                                              {"doc", "bytes copied per second by one thread"}};
      rates["stream_triad_bandwidth"] = {{"value", ts.triad.median()}, {"unit", "Bps"}, {"doc", "STREAM triad"}};
      const auto& sp = ts.stream_spread;
      nlohmann::ordered_json q{{"max_rel_spread", sp.empty() ? 0.0 : *std::max_element(sp.begin(), sp.end())},
                               {"median_rel_spread", sp.empty() ? 0.0 : simcore::quantile(sp, 0.5)}};
      ts.memcpy_all.describe(q, "memcpy_bandwidth");
      q.update(rate_fit_quality(std::vector<double>(ts.stream_rates.size(), 1.0), ts.stream_rates,
                                ts.memcpy_all.median()));
      type_quality[match]["memory"] = q;
    }
    if (!ts.lookups.empty()) {
      rates["hash_lookup_rate"] = {{"value", ts.lookups.median()}, {"unit", "1/s"},
                                   {"doc", "SIMD hash table lookups per second, one core, " + ts.miss_rate +
                                               " misses, pipelined"}};
      if (!ts.lines.empty()) {
        rates["random_line_rate"] = {{"value", ts.lines.median()}, {"unit", "1/s"},
                                     {"doc", "random cache lines read per second, one core, misses overlapped"}};
        rates["memory_latency"] = {{"value", ts.latency.median()}, {"unit", "s"},
                                   {"doc", "one dependent random access over the table's size"}};
      }
      nlohmann::ordered_json q = rate_fit_quality(std::vector<double>(ts.lookup_rates.size(), 1.0), ts.lookup_rates,
                                                  ts.lookups.median());
      ts.lookups.describe(q, "hash_lookup_rate");
      if (!ts.failures_by_layout.is_null())
        q["insert_failure_rate_by_layout"] = ts.failures_by_layout;
      type_quality[match]["hash"] = q;
    }
    std::string devices;
    for (const auto& d : ts.gpu_devices)
      devices += (devices.empty() ? "" : ", ") + d;
    std::map<std::string, double> gpu_median;
    for (const auto& [kernel, values] : ts.gpu)
      if (!values.empty()) {
        gpu_median[kernel] = simcore::quantile(values, 0.5) * 1e9;
        rates["gpu_" + kernel + "_flops"] = {{"value", gpu_median[kernel]},
                                             {"unit", "flops"},
                                             {"doc", kernel + " on " + devices + ", median of the repetitions"}};
      }
    if (!gpu_median.empty()) {
      auto g = gpu_shares(gpu_median);
      for (const auto& [kernel, values] : ts.gpu) // the median rate against each repetition
        if (!values.empty())
          g[kernel].update(rate_fit_quality(std::vector<double>(values.size(), 1.0), values,
                                            simcore::quantile(values, 0.5)));
      type_quality[match]["gpu"] = g;
    }
  }
  // One host rule per host type: the median DGEMM rate of its traces; specific patterns before
  // the catch-all, since a profile's first matching rule wins.
  std::stable_partition(speeds.begin(), speeds.end(), [](const auto& e) { return e.first != ".*"; });
  for (const auto& [match, values] : speeds) {
    const double rate = simcore::quantile(values, 0.5);
    hosts.push_back({{"match", match}, {"speed", number(rate) + "f"}});
    type_rates[match]["dgemm_flops"] = {{"value", rate}, {"unit", "flops"},
                                        {"doc", "DGEMM, one core, hosts matching '" + match + "'"}};
  }
  // Each DGEMM trace against its host type's speed, every size and repetition: a DGEMM of
  // n^3 timed as 2 n^3 / speed, as the simulation would.
  for (std::size_t i = 0; i < compute_samples.size(); i++) {
    const auto& cs = compute_samples[i];
    const auto it = std::find_if(speeds.begin(), speeds.end(), [&](const auto& e) { return e.first == cs.match; });
    quality["compute"][i].update(rate_fit_quality(cs.work, cs.rates, simcore::quantile(it->second, 0.5)));
  }
  for (const auto& match : types)
    if (!samples[match].stencils.empty())
      add_stencil_rates(pool_stencil_fits(samples[match].stencils), hosts, type_rates[match], type_quality[match]);
  // One host type: its rates are the profile's. Several: each host rule carries its type's
  // rates (a rule without a speed where the type had no DGEMM trace), and the profile-wide
  // rates, for hosts no rule matches, are the catch-all type's, else the first type's.
  nlohmann::ordered_json rates = nlohmann::ordered_json::object();
  if (types.size() == 1) {
    rates = type_rates[types.front()];
    for (auto& [k, v] : type_quality[types.front()].items())
      quality[k] = v;
  } else if (types.size() > 1) {
    std::vector<std::string> ordered = types;
    std::stable_partition(ordered.begin(), ordered.end(), [](const std::string& m) { return m != ".*"; });
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (const auto& m : ordered) {
      nlohmann::ordered_json rule{{"match", m}};
      for (const auto& h : hosts)
        if (h["match"] == m)
          rule["speed"] = h["speed"];
      if (!type_rates[m].empty())
        rule["rates"] = type_rates[m];
      rules.push_back(rule);
      for (auto& [k, v] : type_quality[m].items()) {
        v["match"] = m;
        quality[k].push_back(v);
      }
    }
    hosts = rules;
    const std::string wide = std::find(types.begin(), types.end(), ".*") != types.end() ? ".*" : types.front();
    for (auto& [k, v] : type_rates[wide].items()) {
      rates[k] = v;
      rates[k]["doc"] = v.value("doc", "") + " [hosts matching '" + wide + "', for hosts no rule matches]";
    }
  }
  // Networks: each fitted placement's factors go to network_factors, which the kernel applies
  // by placement: the intra-node fit to messages within a host (over the loopback, which it
  // sets), the inter-node one to messages between hosts (over the links its rule sets); a
  // placement not fitted keeps factors of 1. (SimGrid's own smpi/*-factor apply to every
  // message: an intra-node fit once scaled the latency of messages between nodes by 1425.)
  nlohmann::ordered_json network_factors = nlohmann::ordered_json::object();
  for (const char* placement : {"intra-node", "inter-node"}) {
    const auto it = networks.find(placement);
    if (it == networks.end())
      continue;
    const NetworkSamples& n = it->second;
    const bool concurrent = n.all_have_pingping && options.network_pattern != "pingpong";
    std::vector<double> msizes, mtimes, spread;
    median_per_size(concurrent ? n.pingping_sizes : n.pingpong_sizes, concurrent ? n.pingping_times : n.pingpong_times,
                    msizes, mtimes, spread);
    if (msizes.size() < 2)
      throw simcore::InputError(placement + std::string(" network traces"),
                                std::to_string(msizes.size()) + " message size(s); expected at least 2 distinct "
                                "sizes to tell a latency from a bandwidth");
    const auto excluded = drop_isolated_outliers(msizes, mtimes, options.outlier_tolerance);
    const PiecewiseFit fit = fit_piecewise(msizes, mtimes, options.max_segments);
    // The reference: the first segment's latency, the last segment's bandwidth.
    const double latency = std::max(fit.segments.front().intercept, 1e-9);
    const double bandwidth = fit.segments.back().slope > 0 ? 1.0 / fit.segments.back().slope : 1e12;
    config["network/model"] = "SMPI";
    network_factors[placement] = {{"latency", latency_factors(fit, latency)},
                                  {"bandwidth", bandwidth_factors(fit, bandwidth)}};
    if (std::string(placement) == "intra-node") { // the route of two ranks on one host: its loopback
      config["network/loopback-lat"] = number(latency);
      config["network/loopback-bw"] = number(bandwidth);
    } else {
      links.push_back({{"match", ".*"}, {"bandwidth", number(bandwidth) + "Bps"}, {"latency", number(latency) + "s"}});
      // Ping-ping times hold what traffic the other way costs; SimGrid's cross-traffic would
      // charge each message 5 % of the reverse one on top (a simulated exchange 5 % slower
      // than the times fitted). Loopbacks are fat pipes, where it changes nothing.
      if (concurrent)
        config["network/crosstraffic"] = "0";
    }
    const std::string pattern = concurrent ? "ping-ping" : "ping-pong";
    // Each placement's own, and the unqualified pair: the inter-node one where both were
    // fitted (what a message between hosts costs), else the only one.
    const std::string suffix = std::string(placement) == "intra-node" ? "_intra_node" : "_inter_node";
    for (const std::string& name : {std::string(), suffix}) {
      const std::string which = name.empty() ? " (" + std::string(placement) + ")" : "";
      rates["network_latency" + name] = {{"value", latency}, {"unit", "s"}, {"doc", pattern + ", smallest messages" + which}};
      rates["network_bandwidth" + name] = {{"value", bandwidth}, {"unit", "Bps"},
                                           {"doc", pattern + ", largest messages" + which}};
    }
    // Where the fit found a protocol switch (eager to rendezvous, a jump in time per
    // message): the size above which messages take the other protocol.
    if (fit.switch_point() > 0)
      rates["network_protocol_switch" + suffix] = {
          {"value", fit.switch_point()},
          {"unit", "B"},
          {"doc", pattern + ", " + std::string(placement) + ": the first size measured past the fitted protocol "
                                                            "switch (smaller messages: eager)"}};
    auto& q = quality[std::string(placement) == "intra-node" && networks.count("inter-node") ? "network_intra_node"
                                                                                              : "network"];
    q = network_quality(fit);
    q["samples"] = msizes.size(); // the sizes fitted (each the median of its repetitions)
    q["median_rel_spread_of_repetitions"] = simcore::quantile(spread, 0.5);
    q["placement"] = placement;
    q["pattern"] = concurrent ? "pingping" : "pingpong";
    q["traces"] = n.traces;
    q["buffers"] = n.buffers;
    q["excluded_sizes"] = excluded;
    if (!excluded.empty())
      q["note"] = std::to_string(excluded.size()) + " size(s) left out of the " + placement +
                  " fit: their median time strays alone from both neighbours by more than " +
                  number(100 * options.outlier_tolerance) + " % (excluded_sizes; --outlier-tolerance 0 keeps them)";
    if (n.all_have_pingping) { // the other pattern's fit, for comparison
      std::vector<double> ms2, mt2, sp2;
      median_per_size(concurrent ? n.pingpong_sizes : n.pingping_sizes,
                      concurrent ? n.pingpong_times : n.pingping_times, ms2, mt2, sp2);
      const auto excluded2 = drop_isolated_outliers(ms2, mt2, options.outlier_tolerance);
      auto& o = q[concurrent ? "pingpong_fit_not_applied" : "pingping_fit_not_applied"];
      o = network_quality(fit_piecewise(ms2, mt2, options.max_segments));
      o["excluded_sizes"] = excluded2;
    }
    if (n.all_have_one_way) {
      // Messages streamed back to back (a window of MPI_Isend): the time per message is the
      // sender's gap, not a latency; its last segment's bandwidth is what a stream of
      // messages gets. For comparison: a simulated message costs what the fit above says.
      std::vector<double> ms3, mt3, sp3;
      median_per_size(n.one_way_sizes, n.one_way_times, ms3, mt3, sp3);
      if (ms3.size() >= 2) {
        const auto excluded3 = drop_isolated_outliers(ms3, mt3, options.outlier_tolerance);
        auto& o = q["one_way_fit_not_applied"];
        o = network_quality(fit_piecewise(ms3, mt3, options.max_segments));
        o["excluded_sizes"] = excluded3;
      }
    }
    if (!n.one_way_problem.empty()) {
      const std::string note = "one_way not fitted (it is only compared): " + n.one_way_problem;
      q["note"] = q.contains("note") ? q["note"].get<std::string>() + "; " + note : note;
    }
  }
  if (!fitted)
    throw simcore::InputError(paths.empty() ? "calibrate" : paths.front(),
                              "no benchmark this fitter knows (pingpong, stream, dgemm, stencil, hash_table, cuda); "
                              "expected calibration traces");
  profile["name"] = "fitted from " + std::to_string(paths.size()) + " trace(s) of " + host;
  if (!hosts.empty())
    profile["hosts"] = hosts;
  if (!links.empty())
    profile["links"] = links;
  profile["simgrid_config"] = config;
  if (!network_factors.empty())
    profile["network_factors"] = network_factors;
  profile["rates"] = rates;
  profile["meta"] = meta;
  profile["quality"] = quality;
  return profile;
}

} // namespace calibration
