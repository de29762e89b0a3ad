/* simcore calibrate: calibration traces fitted into a profile (calibration/README.md). */
#include "commands.hpp"

#include "simcore/error.hpp"
#include "simcore/message_gaps.hpp"

#include <calibration/bench_options.hpp>
#include <calibration/profile_fitter.hpp>

#include <cstdio>
#include <limits>
#include <optional>

namespace simcore::cli {
namespace {

const char* kCalibrateHelp = R"(simcore calibrate [--hosts REGEX] TRACE.h5... -o PROFILE.json [--network-pattern auto|pingping|pingpong]
                  [--outlier-tolerance X]

Fits a calibration profile from calibration traces (calibration/README.md): network latency
and bandwidth as piecewise segments over message size (SimGrid's SMPI factor syntax; the
loopback for ranks within one node), host speed from DGEMM, memory rates from STREAM and
hash lookups, flops per stencil cell, GPU kernel rates, and the quality of each fit. Prints
a summary; writes PROFILE.json atomically.

  --hosts REGEX      the host type of the traces that follow: their DGEMM speed (and, with
                     several types, their other rates) go to a host rule for the platform's
                     hosts matching REGEX (default: every host), e.g.
                     --hosts 'cpu-.*' cpu/*.h5 --hosts 'gpu-.*' gpu/*.h5
  --network-pattern  the network times the factors come from: pingping (a message while the
                     other direction is busy too, as in exchanges and halos), pingpong (a
                     message alone), auto (default: pingping where every trace of the
                     placement has it, else pingpong)
  --outlier-tolerance X
                     network sizes whose median time strays alone (one or two sizes) from
                     both neighbours by more than X (default 0.25: 25 %) are left out of the
                     fit and listed in the quality section; 0 keeps every size
)";

struct CalibrateArgs {
  std::vector<std::string> traces;
  std::string out;
  calibration::FitOptions options;
};

CalibrateArgs parse_calibrate_args(const Args& args)
{
  CalibrateArgs c;
  std::string host_pattern; // for the traces that follow; empty: every host
  for (std::size_t i = 0; i < args.size(); i++) {
    if (args[i] == "--hosts") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing pattern after --hosts; expected a regular expression over host names");
      host_pattern = args[++i];
    } else if (args[i] == "--network-pattern") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing value after --network-pattern; expected auto, pingping or pingpong");
      c.options.network_pattern = args[++i];
    } else if (args[i] == "--outlier-tolerance") {
      const std::string what = "expected a share >= 0 (0.25: 25 %; 0 keeps every size)";
      if (i + 1 >= args.size())
        throw InputError("command line", "missing value after --outlier-tolerance; " + what);
      const std::string v = args[++i];
      const auto t = calibration::real_number(v, 0, std::numeric_limits<double>::max());
      if (!t)
        throw InputError("command line", "--outlier-tolerance '" + v + "'; " + what);
      c.options.outlier_tolerance = *t;
    } else if (args[i] == "-o" || args[i] == "--out") {
      if (i + 1 >= args.size())
        throw InputError("command line", "missing file after " + args[i] + "; expected -o PROFILE.json");
      c.out = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      throw InputError("command line", "unknown option '" + args[i] + "'; see simcore calibrate --help");
    } else {
      c.traces.push_back(args[i]);
      c.options.host_match.push_back(host_pattern);
    }
  }
  if (c.traces.empty() || c.out.empty())
    throw InputError("command line", "expected simcore calibrate TRACE.h5... -o PROFILE.json");
  if (!host_pattern.empty() && (c.options.host_match.empty() || c.options.host_match.back() != host_pattern))
    throw InputError("command line", "--hosts '" + host_pattern + "' is followed by no trace; expected --hosts REGEX "
                                     "TRACE.h5... (the pattern applies to the traces after it)");
  calibration::check_profile_path(c.traces, c.out, "-o ");
  return c;
}

void print_network_quality(const nlohmann::ordered_json& n)
{
  std::printf("  network (%s, %s): %zu segments, R^2 %.4f, relative error median %.1f %% max %.1f %%\n",
              n["placement"].get<std::string>().c_str(), n["pattern"].get<std::string>().c_str(), n["segments"].size(),
              n["r2"].get<double>(), 100 * n["median_rel_error"].get<double>(), 100 * n["max_rel_error"].get<double>());
  for (const auto& seg : n["segments"])
    std::printf("    from %10.0f B: latency %8.3f us, bandwidth %8.3f GB/s\n", seg["from"].get<double>(),
                1e6 * seg["latency"].get<double>(), seg["bandwidth"].get<double>() / 1e9);
  if (n["protocol_switch"].get<double>() > 0)
    std::printf("    protocol switch at %.0f B\n", n["protocol_switch"].get<double>());
}

/** Each placement's message gaps as SMPI reads smpi/ois (for smpirun; the halo model's SMPI
 *  mode takes the same with smpi_ois = the placement), none from the placement's protocol
 *  switch on, where the law has no data. */
void print_message_gaps(const nlohmann::ordered_json& profile)
{
  if (!profile.contains("message_gaps"))
    return;
  const auto& rates = profile["rates"];
  for (const auto& [placement, text] : profile["message_gaps"].items()) {
    if (placement == "intra-node-queued") {
      std::printf("  message gaps past the fast box (intra-node-queued): %s\n", text.get<std::string>().c_str());
      continue; // a gap of the detailed mode only: SMPI has no fast box
    }
    const std::string cut = placement == "inter-node" ? "network_protocol_switch_inter_node"
                                                      : "network_protocol_switch_intra_node";
    std::optional<double> none_from;
    if (rates.contains(cut))
      none_from = rates[cut]["value"].get<double>();
    const auto law = GapLaw::parse(text.get<std::string>(), "message_gaps." + placement);
    std::printf("  message gaps (%s), as smpi/ois: --cfg=smpi/ois:'%s'\n", placement.c_str(),
                law.smpi_text(none_from).c_str());
  }
  if (rates.contains("fast_box_bytes") && rates.contains("fast_box_header") && rates.contains("fast_box_alignment"))
    std::printf("  fast box (intra-node): %.0f B, a message its bytes and %.0f B rounded up to %.0f B\n",
                rates["fast_box_bytes"]["value"].get<double>(), rates["fast_box_header"]["value"].get<double>(),
                rates["fast_box_alignment"]["value"].get<double>());
}

void print_rates(const nlohmann::ordered_json& rates)
{
  if (rates.contains("memcpy_bandwidth")) {
    std::printf("  memory: memcpy %.2f GB/s", rates["memcpy_bandwidth"]["value"].get<double>() / 1e9);
    if (rates.contains("memcpy_bandwidth_one_core"))
      std::printf(" (one core %.2f GB/s)", rates["memcpy_bandwidth_one_core"]["value"].get<double>() / 1e9);
    std::printf("\n");
  }
  for (const char* rate : {"dgemm_flops", "flops_per_cell", "hash_lookup_rate", "random_line_rate"})
    if (rates.contains(rate))
      std::printf("  %s: %.4g %s\n", rate, rates[rate]["value"].get<double>(),
                  rates[rate]["unit"].get<std::string>().c_str());
}

/** The notes of a quality entry `e` of `part` (and of the entries it holds, as quality.gpu
 *  holds one a kernel), for hosts matching `match` where that is not empty. */
void print_entry_notes(const std::string& part, const nlohmann::ordered_json& e, const std::string& match)
{
  if (!e.is_object())
    return;
  const std::string type = e.contains("match") ? e["match"].get<std::string>() : match;
  if (e.contains("note"))
    std::fprintf(stderr, "simcore calibrate: note (%s%s): %s\n", part.c_str(),
                 type.empty() ? "" : (", hosts matching '" + type + "'").c_str(), e["note"].get<std::string>().c_str());
  for (const auto& [name, inner] : e.items())
    if (inner.is_object() && name != "note")
      print_entry_notes(part + " " + name, inner, type);
}

/** The fitter's notes (nodes of one type that differ widely, a rate it could not give, a
 *  group it does not read): on stderr, where they are seen, besides the profile's quality
 *  section. */
void print_notes(const nlohmann::ordered_json& quality)
{
  for (const auto& [part, entry] : quality.items()) {
    const auto& entries = entry.is_array() ? entry : nlohmann::ordered_json::array({entry});
    for (const auto& e : entries)
      print_entry_notes(part, e, "");
  }
}

int calibrate(const Args& args)
{
  const CalibrateArgs c = parse_calibrate_args(args);
  const auto profile = calibration::fit_profile(c.traces, c.options);
  calibration::write_profile(profile, c.out);
  std::printf("%s: %s\n", c.out.c_str(), profile["name"].get<std::string>().c_str());
  const auto& q = profile["quality"];
  if (q.contains("network"))
    print_network_quality(q["network"]);
  print_message_gaps(profile);
  print_rates(profile["rates"]);
  print_notes(q);
  return 0;
}

} // namespace

Command calibrate_command() { return {"calibrate", kCalibrateHelp, &calibrate}; }

} // namespace simcore::cli
