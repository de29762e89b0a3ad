#include "calibration/network_fit.hpp"
#include "fit_support.hpp"
#include "network_samples.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace calibration {

namespace {

std::string number(double v) { return profile_number(v); }

nlohmann::ordered_json quality_json(const FitQuality& q)
{
  return {{"r2", q.r2}, {"max_rel_error", q.max_rel_error}, {"median_rel_error", q.median_rel_error}};
}

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
nlohmann::ordered_json drop_isolated_outliers(std::vector<double>& msizes, std::vector<double>& mtimes,
                                              double tolerance)
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

/** A gap fit's quality: R^2, errors, its segments (seconds, seconds per byte), the sizes fitted
 *  and the size they lie below (0: every size). */
nlohmann::ordered_json gap_quality(const PiecewiseFit& fit, std::size_t samples, double below,
                                   const std::vector<double>& spread)
{
  nlohmann::ordered_json g = quality_json(fit.quality);
  g["segments"] = nlohmann::ordered_json::array();
  for (const auto& seg : fit.segments)
    g["segments"].push_back({{"from", seg.from},
                             {"seconds", seg.slope < 0 ? seg.intercept + seg.slope * seg.from : seg.intercept},
                             {"seconds_per_byte", std::max(seg.slope, 0.0)}});
  g["samples"] = samples;
  g["below"] = std::isfinite(below) ? below : 0.0;
  g["median_rel_spread_of_repetitions"] = simcore::quantile(spread, 0.5);
  return g;
}

/** The fitted fast box and the gaps within it at the sweep's sizes (size, gap). */
struct InBox {
  FastBoxFit box;
  std::vector<std::pair<double, double>> gaps;
};

/** The message gaps of one placement: each exchange window less the ping-ping time of one
 *  message of its size (the fitted medians `msizes`, `mtimes`), over its messages less one,
 *  at the sizes below the ping-ping fit's protocol switch (the eager messages, the only ones
 *  whose per-message cost is not a handshake of their own); a piecewise fit of their medians
 *  goes to message_gaps, with its quality. With `in_box` (a fitted fast box), a window whose
 *  messages overflow the box where it holds 3 or more holds queued gaps too: its size's gaps
 *  come from the sweep's windows within the box instead (`in_box.gaps`, at the sweep's sizes
 *  in that range). */
void write_gaps(const std::string& placement, const PiecewiseFit& pingping, const std::vector<double>& msizes,
                const std::vector<double>& mtimes, const std::vector<double>& sizes, const std::vector<double>& times,
                const std::vector<double>& messages, const FitOptions& options, ProfileParts& out,
                nlohmann::ordered_json& q, const std::optional<InBox>& in_box = std::nullopt)
{
  const double below = pingping.switch_point() > 0 ? pingping.switch_point() : std::numeric_limits<double>::infinity();
  // Whether a window of w messages of s bytes overflows a box that holds 3 or more of them.
  const auto overflows = [&](double s, double w) {
    const double held = in_box ? std::floor(in_box->box.holds(s) + 1e-9) : w;
    return held >= 3 && held < w - 1;
  };
  std::vector<double> gs, gt, replaced;
  std::map<double, double> longest; // per size, its longest window (of every trace)
  for (std::size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] >= below)
      continue;
    const auto it = std::find(msizes.begin(), msizes.end(), sizes[i]);
    if (it == msizes.end())
      continue; // a size the ping-ping fit left out
    longest[sizes[i]] = std::max(longest[sizes[i]], messages[i]);
    if (overflows(sizes[i], messages[i])) {
      replaced.push_back(sizes[i]);
      continue;
    }
    const double one = mtimes[static_cast<std::size_t>(it - msizes.begin())];
    gs.push_back(sizes[i]);
    gt.push_back(std::max((times[i] - one) / (messages[i] - 1), 1e-12));
  }
  std::sort(replaced.begin(), replaced.end());
  replaced.erase(std::unique(replaced.begin(), replaced.end()), replaced.end());
  std::vector<double> ms, mt, spread;
  median_per_size(gs, gt, ms, mt, spread); // the windows' spread only: a sweep gap is one value
  // The sweep's gaps within the box, at its sizes whose windows (or, at a size without any, the
  // longest window of any size) overflow it.
  std::vector<double> from_sweep;
  if (in_box) {
    double any = 0;
    for (const auto& [size, w] : longest)
      any = std::max(any, w);
    for (const auto& [size, gap] : in_box->gaps) {
      const auto it = longest.find(size);
      if (size >= below || !overflows(size, it != longest.end() ? it->second : any))
        continue;
      const auto at = std::lower_bound(ms.begin(), ms.end(), size);
      const auto k = at - ms.begin();
      if (at != ms.end() && *at == size)
        mt[static_cast<std::size_t>(k)] = std::max(gap, 1e-12); // (its windows were left out)
      else {
        ms.insert(at, size);
        mt.insert(mt.begin() + k, std::max(gap, 1e-12));
      }
      from_sweep.push_back(size);
    }
  }
  auto& g = q["message_gap"];
  if (ms.size() < 2) {
    g = {{"note", "fewer than 2 sizes below the protocol switch with exchange windows: no message gaps"}};
    return;
  }
  const PiecewiseFit fit = fit_piecewise(ms, mt, options.max_segments);
  out.message_gaps[placement] = gap_law(fit);
  g = gap_quality(fit, ms.size(), below, spread);
  g["what"] = "per further message of an exchange (calib_pingpong's exchange_window less one ping-ping, over its "
              "messages less one)";
  if (in_box)
    g["within_fast_box"] = {{"what", "sizes whose exchange windows overflow the fitted fast box (which holds 3 or more "
                                     "of them): left out, and the sweep's gaps within the box (the slope of its windows "
                                     "the box holds) read instead; a size left out without a sweep size of its own "
                                     "takes what the fit gives between its neighbours"},
                            {"windows_left_out", replaced},
                            {"sweep_sizes_read", from_sweep}};
}

} // namespace

/** calib_pingpong's matching_window: per pattern (0: exchange, 1: to itself) and length w,
 *  the median time of the window whose tags are reversed less the one in order, over
 *  w (w - 1) / 2 (the posted receives MPI passed over in all): `lengths[self]`,
 *  `seconds[self]`; and the trace's time of one receive passed over, `fitted[self]`: the
 *  least-squares line through 0 of those differences over the receives passed over (long
 *  windows weigh most: a short one's difference is mostly noise), NaN where none.
 *  simcore::InputError naming the trace for a malformed group. */
void matching_samples(const Benchmark& b, const std::string& path, std::vector<double> (&lengths)[2],
                      std::vector<double> (&seconds)[2], double (&fitted)[2])
{
  std::vector<double> sizes, times, messages;
  exchange_window_samples(b, sizes, times, messages, path);
  const Dataset self = need_in_group(b, "self", Quantity::kCount, path);
  const Dataset reversed = need_in_group(b, "reversed", Quantity::kCount, path);
  const Dataset count = need_in_group(b, "messages", Quantity::kCount, path);
  if (self.values.size() != count.values.size() || reversed.values.size() != count.values.size())
    throw simcore::InputError(path + " (" + b.name + ")", "datasets 'self' and 'reversed' hold " +
                                                              std::to_string(self.values.size()) + " and " +
                                                              std::to_string(reversed.values.size()) + " values for " +
                                                              std::to_string(count.values.size()) +
                                                              " windows; expected one of each a window");
  for (const auto& d : {self, reversed})
    for (double v : d.values)
      if (v != 0 && v != 1)
        throw simcore::InputError(path + " (" + b.name + ")", "datasets 'self' and 'reversed' hold " +
                                                                  profile_number(v) + "; expected 0 or 1");
  // times: rows of repetitions, each window's in a row (exchange_window_samples keeps them in
  // order; windows of one message are left out there, and have no matching to time).
  std::map<std::tuple<int, double, int>, std::vector<double>> by_window; // (self, w, reversed) -> times
  const std::size_t reps = times.size() / std::max<std::size_t>(1, std::count_if(count.values.begin(), count.values.end(),
                                                                                   [](double w) { return w >= 2; }));
  std::size_t row = 0;
  for (std::size_t i = 0; i < count.values.size(); i++) {
    if (count.values[i] < 2)
      continue;
    auto& v = by_window[{static_cast<int>(self.values[i]), count.values[i], static_cast<int>(reversed.values[i])}];
    v.insert(v.end(), times.begin() + static_cast<long>(row * reps), times.begin() + static_cast<long>((row + 1) * reps));
    row++;
  }
  double dn[2] = {0, 0}, nn[2] = {0, 0};
  for (const auto& [key, t] : by_window) {
    const auto& [s, w, rev] = key;
    const auto in_order = by_window.find({s, w, 0});
    if (rev != 1 || in_order == by_window.end())
      continue;
    const double passed = w * (w - 1) / 2;
    const double difference = simcore::quantile(t, 0.5) - simcore::quantile(in_order->second, 0.5);
    lengths[s].push_back(w);
    seconds[s].push_back(difference / passed);
    dn[s] += difference * passed;
    nn[s] += passed * passed;
  }
  for (int s : {0, 1})
    fitted[s] = nn[s] > 0 ? dn[s] / nn[s] : std::numeric_limits<double>::quiet_NaN();
}

void NetworkSamples::add(const Trace& t, const std::string& path, const FitOptions& options)
{
  // The network's times: of a message alone (ping-pong) or of a message while the other
  // direction is busy too (ping-ping, where the trace has it and the options allow).
  const Benchmark& b = t.benchmarks.at("pingpong");
  const bool has_pingping = t.benchmarks.count("pingping") != 0;
  if (options.network_pattern == "pingping" && !has_pingping)
    throw simcore::InputError(path, "no 'pingping' group for --network-pattern pingping; expected a trace of "
                                    "calib_pingpong (which measures both)");
  const std::string placement = parameter_or(b, "placement", "inter-node");
  if (placement != "intra-node" && placement != "inter-node")
    throw simcore::InputError(path + " (pingpong)", "placement '" + placement +
                                                        "'; expected 'intra-node' or 'inter-node'");
  Placement& n = placements_[placement];
  // Where the messages' memory lay: intra-node here, 10 and 40 kB from the heap took 1 us
  // longer than from one large mapped buffer. A fit of both kinds would be neither's.
  // Traces written before calib_pingpong had --buffers used one large buffer.
  const std::string buffers = parameter_or(b, "buffers", "shared");
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
      one_way_samples(t.benchmarks.at("one_way"), sizes, times, path);
      n.one_way_sizes.insert(n.one_way_sizes.end(), sizes.begin(), sizes.end());
      n.one_way_times.insert(n.one_way_times.end(), times.begin(), times.end());
    } catch (const simcore::InputError& e) {
      has_one_way = false;
      if (n.one_way_problem.empty())
        n.one_way_problem = e.what();
    }
  }
  n.all_have_one_way = n.all_have_one_way && has_one_way;
  const bool has_window = t.benchmarks.count("exchange_window") != 0;
  if (has_window)
    exchange_window_samples(t.benchmarks.at("exchange_window"), n.window_sizes, n.window_times, n.window_messages,
                            path);
  n.all_have_window = n.all_have_window && has_window;
  const bool has_long = t.benchmarks.count("exchange_window_long") != 0;
  if (has_long) {
    // Within this trace (its two lengths timed back to back), per size: the median time of
    // each length; write() takes their difference where both overflow the fast box.
    std::vector<double> sizes, times, messages;
    exchange_window_samples(t.benchmarks.at("exchange_window_long"), sizes, times, messages, path);
    std::map<double, std::map<double, std::vector<double>>> by_size; // size -> messages -> times
    for (std::size_t i = 0; i < sizes.size(); i++)
      by_size[sizes[i]][messages[i]].push_back(times[i]);
    for (const auto& [size, windows] : by_size) {
      if (windows.size() < 2)
        continue;
      const auto& [w1, t1] = *windows.begin();
      const auto& [w2, t2] = *windows.rbegin();
      n.long_windows.push_back({size, w1, simcore::quantile(t1, 0.5), w2, simcore::quantile(t2, 0.5)});
    }
  }
  n.all_have_long = n.all_have_long && has_long;
  const bool has_matching = t.benchmarks.count("matching_window") != 0;
  if (has_matching) {
    std::vector<double> lengths[2], seconds[2];
    double fitted[2];
    matching_samples(t.benchmarks.at("matching_window"), path, lengths, seconds, fitted);
    n.match_lengths.insert(n.match_lengths.end(), lengths[0].begin(), lengths[0].end());
    n.match_seconds.insert(n.match_seconds.end(), seconds[0].begin(), seconds[0].end());
    self_match_lengths_.insert(self_match_lengths_.end(), lengths[1].begin(), lengths[1].end());
    self_match_seconds_.insert(self_match_seconds_.end(), seconds[1].begin(), seconds[1].end());
    if (!std::isnan(fitted[0]))
      n.match_per_trace.push_back(fitted[0]);
    if (!std::isnan(fitted[1]))
      self_match_per_trace_.push_back(fitted[1]);
  }
  n.all_have_matching = n.all_have_matching && has_matching;
  all_have_self_matching_ = all_have_self_matching_ && has_matching;
  const bool has_sweep = t.benchmarks.count("exchange_window_lengths") != 0;
  if (has_sweep) {
    std::vector<double> sizes, times, messages;
    exchange_window_samples(t.benchmarks.at("exchange_window_lengths"), sizes, times, messages, path, 1);
    auto& sweep = n.sweeps.emplace_back();
    for (std::size_t i = 0; i < sizes.size(); i++)
      sweep[sizes[i]][messages[i]].push_back(times[i]);
  }
  n.all_have_sweep = n.all_have_sweep && has_sweep;
  const bool has_self = t.benchmarks.count("self_window") != 0;
  if (has_self)
    exchange_window_samples(t.benchmarks.at("self_window"), self_sizes_, self_times_, self_messages_, path, 1);
  all_have_self_ = all_have_self_ && has_self;
  n.traces++;
  n.paths.push_back(path);
}

void NetworkSamples::write(const FitOptions& options, ProfileParts& out) const
{
  // Each fitted placement's factors go to network_factors, which the kernel applies by
  // placement: the intra-node fit to messages within a host (over the loopback, which it
  // sets), the inter-node one to messages between hosts (over the links its rule sets); a
  // placement not fitted keeps factors of 1. (SimGrid's own smpi/*-factor apply to every
  // message: an intra-node fit once scaled the latency of messages between nodes by 1425.)
  for (const char* placement : {"intra-node", "inter-node"}) {
    const auto it = placements_.find(placement);
    if (it == placements_.end())
      continue;
    const Placement& n = it->second;
    const bool concurrent = n.all_have_pingping && options.network_pattern != "pingpong";
    std::vector<double> msizes, mtimes, spread;
    median_per_size(concurrent ? n.pingping_sizes : n.pingpong_sizes, concurrent ? n.pingping_times : n.pingpong_times,
                    msizes, mtimes, spread);
    if (msizes.size() < 2) {
      std::string traces;
      for (const auto& p : n.paths)
        traces += (traces.empty() ? "" : ", ") + p;
      throw simcore::InputError(traces + (concurrent ? " (pingping)" : " (pingpong)"),
                                std::to_string(msizes.size()) + " distinct message size(s) in the " + placement +
                                    " trace(s); expected at least 2 to tell a latency from a bandwidth");
    }
    const auto excluded = drop_isolated_outliers(msizes, mtimes, options.outlier_tolerance);
    const PiecewiseFit fit = fit_piecewise(msizes, mtimes, options.max_segments);
    // The reference: the first segment's latency, the last segment's bandwidth.
    const double latency = std::max(fit.segments.front().intercept, 1e-9);
    const double bandwidth = fit.segments.back().slope > 0 ? 1.0 / fit.segments.back().slope : 1e12;
    out.config["network/model"] = "SMPI";
    out.network_factors[placement] = {{"latency", latency_factors(fit, latency)},
                                      {"bandwidth", bandwidth_factors(fit, bandwidth)}};
    if (std::string(placement) == "intra-node") { // the route of two ranks on one host: its loopback
      out.config["network/loopback-lat"] = number(latency);
      out.config["network/loopback-bw"] = number(bandwidth);
    } else {
      out.links.push_back(
          {{"match", ".*"}, {"bandwidth", number(bandwidth) + "Bps"}, {"latency", number(latency) + "s"},
           {"scope", "route"}}); // measured end to end: the run warns where a route crosses several links
      // Ping-ping times hold what traffic the other way costs; SimGrid's cross-traffic would
      // charge each message 5 % of the reverse one on top (a simulated exchange 5 % slower
      // than the times fitted). Loopbacks are fat pipes, where it changes nothing.
      if (concurrent)
        out.config["network/crosstraffic"] = "0";
    }
    const std::string pattern = concurrent ? "ping-ping" : "ping-pong";
    // Each placement's own, and the unqualified pair: the inter-node one where both were
    // fitted (what a message between hosts costs), else the only one.
    const std::string suffix = std::string(placement) == "intra-node" ? "_intra_node" : "_inter_node";
    for (const std::string& name : {std::string(), suffix}) {
      const std::string which = name.empty() ? " (" + std::string(placement) + ")" : "";
      out.rates["network_latency" + name] = {
          {"value", latency}, {"unit", "s"}, {"doc", pattern + ", smallest messages" + which}};
      out.rates["network_bandwidth" + name] = {{"value", bandwidth}, {"unit", "Bps"},
                                           {"doc", pattern + ", largest messages" + which}};
    }
    // Where the fit found a protocol switch (eager to rendezvous, a jump in time per
    // message): the size above which messages take the other protocol.
    if (fit.switch_point() > 0)
      out.rates["network_protocol_switch" + suffix] = {
          {"value", fit.switch_point()},
          {"unit", "B"},
          {"doc", pattern + ", " + std::string(placement) +
                      ": the first size measured past the fitted protocol switch (smaller messages: eager)"}};
    // The fixed cost of a message past that switch (the fitted law's time at size 0): the
    // request, the answer and the set-up of a single copy, which the halo model's detailed
    // mode charges as its single-copy start-up where it copies at the bus's rate (at the
    // fit's rate, it takes the fit's latency at each message's size).
    for (const auto& seg : fit.segments)
      if (fit.switch_point() > 0 && seg.from == fit.switch_point() && seg.intercept > 0)
        out.rates["network_latency_past_switch" + suffix] = {
            {"value", seg.intercept},
            {"unit", "s"},
            {"doc", pattern + ", " + std::string(placement) +
                        ": the time at size 0 of the fitted law past the protocol switch"}};
    const bool both = std::string(placement) == "intra-node" && placements_.count("inter-node");
    auto& q = out.quality[both ? "network_intra_node" : "network"];
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
    std::optional<FastBoxFit> box;
    std::vector<std::pair<double, double>> in_box_gaps;
    if (n.all_have_sweep && std::string(placement) == "intra-node")
      box = write_fast_box(n, out, q, in_box_gaps);
    if (concurrent && n.all_have_window)
      write_gaps(placement, fit, msizes, mtimes, n.window_sizes, n.window_times, n.window_messages, options, out, q,
                 box ? std::optional<InBox>(InBox{*box, in_box_gaps}) : std::nullopt);
    if (concurrent && n.all_have_window && n.all_have_long && std::string(placement) == "intra-node") {
      if (out.message_gaps.contains(placement))
        write_queued_gaps(n, fit.switch_point() > 0 ? fit.switch_point() : std::numeric_limits<double>::infinity(),
                          box, options, out, q);
      else
        q["message_gap_queued"] = {{"note", "no message gaps for the placement: no queued gaps either"}};
    }
    if (n.all_have_matching && !n.match_per_trace.empty())
      write_matching(n.match_lengths, n.match_seconds, n.match_per_trace, suffix,
                     std::string("a message from another rank ") + (suffix == "_intra_node" ? "of the host" : "of another host"),
                     out, q["matching"]);
    if (!n.one_way_problem.empty()) {
      const std::string note = "one_way not fitted (it is only compared): " + n.one_way_problem;
      q["note"] = q.contains("note") ? q["note"].get<std::string>() + "; " + note : note;
    }
  }
  if (all_have_self_ && !self_sizes_.empty())
    write_self_gaps(options, out);
  if (all_have_self_matching_ && !self_match_per_trace_.empty())
    write_matching(self_match_lengths_, self_match_seconds_, self_match_per_trace_, "_self",
                   "a rank's message to itself", out,
                   out.quality["matching_self"]);
}

void NetworkSamples::write_matching(const std::vector<double>& lengths, const std::vector<double>& seconds,
                                    const std::vector<double>& per_trace, const std::string& suffix,
                                    const std::string& what, ProfileParts& out, nlohmann::ordered_json& q)
{
  // The median over the traces of each one's fit; none at or below 0 (an MPI that matches by
  // hash passes over nothing: its reversed windows are no slower, and noise may put them below).
  const double median = simcore::quantile(per_trace, 0.5);
  if (median > 0)
    out.rates["match_scan_seconds" + suffix] = {
        {"value", median},
        {"unit", "s"},
        {"doc", "per posted receive MPI passes over while it matches " + what +
                    " (calib_pingpong's matching_window: tags reversed against tags in order)"}};
  q = {{"what", "per length of matching_window (and trace): the window whose sends' tags are the receives' "
                "reversed less the one in order, over messages (messages - 1) / 2 (seconds_per_receive); per "
                "trace, the least-squares line through 0 of those differences over the receives passed over "
                "(per_trace); the median of those"},
       {"lengths", lengths},
       {"seconds_per_receive", seconds},
       {"per_trace", per_trace},
       {"median", median}};
  if (!(median > 0))
    q["note"] = "reversed windows were no slower than windows in order (median " + profile_number(median) +
                " s a receive): no matching cost";
}

void NetworkSamples::write_queued_gaps(const Placement& n, double below, const std::optional<FastBoxFit>& box,
                                       const FitOptions& options, ProfileParts& out, nlohmann::ordered_json& q)
{
  // Each trace's queued gaps (its long windows of two lengths, both past the peer's fast box:
  // their difference is the gap of a queued message, whatever the fast box holds), the median
  // over the traces per size below the protocol switch; a size whose longer window was not
  // the slower is left out, and said. Where the shorter window fits in the fast box (the
  // fitted one, else 4 KiB with 24 B a message), it is not read.
  std::vector<double> ss, gg;
  for (const auto& l : n.long_windows) {
    const double holds = box ? box->holds(l.size) : 4096 / (l.size + 24);
    if (l.size < below && l.shorter > holds) {
      ss.push_back(l.size);
      gg.push_back((l.longer_time - l.shorter_time) / (l.longer - l.shorter));
    }
  }
  std::vector<double> ms, mt, spread, gs, gt;
  median_per_size(ss, gg, ms, mt, spread);
  std::vector<double> not_slower;
  for (std::size_t i = 0; i < ms.size(); i++)
    (mt[i] > 0 ? gs : not_slower).push_back(ms[i]);
  for (std::size_t i = 0; i < ms.size(); i++)
    if (mt[i] > 0)
      gt.push_back(mt[i]);
  auto& g = q["message_gap_queued"];
  if (gs.size() < 2) {
    g = {{"note", "fewer than 2 sizes below the protocol switch with long windows of two lengths past the fast box "
                  "(the longer one the slower): no queued gaps"}};
    return;
  }
  const PiecewiseFit fit = fit_piecewise(gs, gt, options.max_segments);
  out.message_gaps["intra-node-queued"] = gap_law(fit);
  g = gap_quality(fit, gs.size(), below, spread);
  g["what"] = "per message past the peer's fast box (calib_pingpong's exchange_window_long: the longer window less "
              "the shorter, over the messages between them, per trace; the median over the traces)";
  if (!not_slower.empty()) {
    g["sizes_left_out"] = not_slower;
    g["note"] = std::to_string(not_slower.size()) + " size(s) left out: the longer window was not the slower";
  }
}

std::optional<FastBoxFit> NetworkSamples::write_fast_box(const Placement& n, ProfileParts& out,
                                                         nlohmann::ordered_json& q,
                                                         std::vector<std::pair<double, double>>& in_box_gaps)
{
  // The median window of each size and length over every repetition of every trace, at the
  // sizes and lengths every trace has (traces swept to different lengths would otherwise
  // change the traces behind the curve where the shorter sweep ends, a step of its own); then
  // each size's knee.
  std::map<double, std::map<double, std::vector<double>>> by_size; // size -> messages -> times
  for (const auto& [size, windows] : n.sweeps.front())
    for (const auto& [w, unused] : windows) {
      const bool everywhere = std::all_of(n.sweeps.begin(), n.sweeps.end(), [&, size = size, w = w](const auto& t) {
        const auto it = t.find(size);
        return it != t.end() && it->second.count(w) != 0;
      });
      if (everywhere)
        for (const auto& t : n.sweeps)
          by_size[size][w].insert(by_size[size][w].end(), t.at(size).at(w).begin(), t.at(size).at(w).end());
    }
  std::vector<FastBoxKnee> knees;
  nlohmann::ordered_json none = nlohmann::ordered_json::array();
  for (const auto& [size, windows] : by_size) {
    // Past 256 B the box holds a few messages at most: those sizes give gaps within it (below),
    // no knee (one of noise would enter the fit).
    if (size > kFastBoxKneeSizesAtMost)
      continue;
    std::vector<double> lengths, times;
    for (const auto& [w, t] : windows)
      lengths.push_back(w), times.push_back(simcore::quantile(t, 0.5));
    if (const auto k = find_fast_box_knee(size, lengths, times))
      knees.push_back(*k);
    else
      none.push_back(size);
  }
  auto& g = q["fast_box"];
  const auto box = fit_fast_box(knees);
  nlohmann::ordered_json found = nlohmann::ordered_json::array();
  for (const auto& k : knees)
    found.push_back({{"size", k.size},
                     {"messages", k.messages},
                     {"gap", k.gap},
                     {"queued_gap", k.queued_gap},
                     {"fitted", k.messages >= kFastBoxKneeAtLeast},
                     {"predicted", box ? nlohmann::ordered_json(box->holds(k.size)) : nlohmann::ordered_json()}});
  if (!box) {
    const int levels = fast_box_knee_levels(knees);
    g = {{"note", "the exchange windows (exchange_window_lengths) of " +
                      std::to_string(std::count_if(knees.begin(), knees.end(),
                                                   [](const auto& k) { return k.messages >= kFastBoxKneeAtLeast; })) +
                      " size(s) step up past " + profile_number(kFastBoxKneeAtLeast) + " messages or more, in " +
                      std::to_string(levels) + " level(s); expected at least 4 sizes in 3 levels (sizes in the same "
                      "slots step up alike, and two levels cannot tell capacity, header and slots apart; a sweep "
                      "of 512 messages, the default, reaches past the knees of Open MPI's 4 KiB box): no fast-box "
                      "capacity"},
         {"knees", found},
         {"sizes_without_knee", none}};
    return std::nullopt;
  }
  const auto rate = [&](const char* name, double v, const std::string& doc) {
    out.rates[name] = {{"value", v}, {"unit", "B"}, {"doc", doc}};
  };
  rate("fast_box_bytes", box->capacity,
       "exchange windows within a node: what a peer's fast box holds before a further message takes the queued gap");
  rate("fast_box_header", box->header, "exchange windows within a node: the bytes a message takes in the fast box "
                                       "beside its own");
  rate("fast_box_alignment", box->alignment,
       "exchange windows within a node: a message's bytes in the fast box (with its header) are rounded up to a "
       "multiple of this");
  g = {{"what", "where exchange windows of growing lengths (calib_pingpong's exchange_window_lengths, the median "
                "of every repetition of every trace) step up, size by size: the messages the fast box holds; capacity, header and alignment "
                "fitted to them (each knee of " +
                    profile_number(kFastBoxKneeAtLeast) + " messages or more)"},
       {"capacity", box->capacity},
       {"header", box->header},
       {"alignment", box->alignment},
       {"mean_rel_error", box->mean_rel_error},
       {"max_rel_error", box->max_rel_error},
       {"samples", box->knees.size()},
       {"knees", found},
       {"sizes_without_knee", none}};
  // Within the box, each further message costs the gap alone: the slope of the windows that
  // the box holds (a knee is placed to a message or so: the window of one message more may
  // already have passed it).
  nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
  for (const auto& [size, windows] : by_size) {
    const double held = std::floor(box->holds(size) + 1e-9);
    double sw = 0, st = 0, sww = 0, swt = 0, k = 0;
    for (const auto& [w, t] : windows)
      if (w <= held) {
        const double m = simcore::quantile(t, 0.5);
        sw += w, st += m, sww += w * w, swt += w * m, k++;
      }
    if (held < 3 || k < 3)
      continue;
    const double slope = (k * swt - sw * st) / (k * sww - sw * sw);
    in_box_gaps.emplace_back(size, slope);
    gaps.push_back({{"size", size}, {"held", held}, {"windows", k}, {"gap", slope}});
  }
  g["gaps_within"] = gaps;
  return box;
}

void NetworkSamples::write_self_gaps(const FitOptions& options, ProfileParts& out) const
{
  // A message to itself has no latency to leave out: each costs the window's time over its
  // messages. Below the intra-node fit's protocol switch (the eager messages, whose copies
  // the halo model charges beside), else every size.
  double below = std::numeric_limits<double>::infinity();
  if (out.rates.contains("network_protocol_switch_intra_node"))
    below = out.rates["network_protocol_switch_intra_node"]["value"].get<double>();
  std::vector<double> gs, gt;
  for (std::size_t i = 0; i < self_sizes_.size(); i++)
    if (self_sizes_[i] < below) {
      gs.push_back(self_sizes_[i]);
      gt.push_back(self_times_[i] / self_messages_[i]);
    }
  std::vector<double> ms, mt, spread;
  median_per_size(gs, gt, ms, mt, spread);
  auto& g = out.quality["message_gap_self"];
  if (ms.size() < 2) {
    g = {{"note", "fewer than 2 sizes with self windows below the protocol switch: no gaps for messages to itself"}};
    return;
  }
  const PiecewiseFit fit = fit_piecewise(ms, mt, options.max_segments);
  out.message_gaps["self"] = gap_law(fit);
  g = gap_quality(fit, ms.size(), below, spread);
  g["what"] = "per message of a rank to itself (calib_pingpong's self_window over its messages)";
}

} // namespace calibration
