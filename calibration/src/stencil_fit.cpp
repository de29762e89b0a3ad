#include "calibration/stencil_fit.hpp"
#include "fit_support.hpp"
#include "node_samples.hpp"

#include <simcore/error.hpp>
#include <simcore/quantile.hpp>
#include <simcore/units.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace calibration {

namespace {

std::string number(double v) { return profile_number(v); }

Dataset need(const Benchmark& b, const std::string& name, Quantity q, const std::string& where)
{
  return need_in(b, name, q, where, "calib_stencil's cells, seconds, cell_rate");
}

std::string parameter(const Benchmark& b, const std::string& name)
{
  const auto it = b.parameters.find(name);
  return it == b.parameters.end() ? "" : it->second;
}

} // namespace

StencilFit fit_stencil(const Benchmark& b, const std::string& path)
{
  const std::string where = path + " (" + b.name + ")";
  const Dataset cells = need(b, "cells", Quantity::kCount, where);
  const Dataset rate = need(b, "cell_rate", Quantity::kPerSecond, where);
  if (cells.rows() == 0)
    throw simcore::InputError(where, "dataset 'cells' is empty; expected the cube sizes measured, one per row");
  if (rate.rows() != cells.rows() || rate.values.size() != rate.rows() * rate.cols())
    throw simcore::InputError(where, "dataset 'cell_rate' has " + std::to_string(rate.rows()) + " rows for " +
                                         std::to_string(cells.rows()) +
                                         " sizes in 'cells'; expected one row of repetitions per size");
  if (rate.cols() == 0)
    throw simcore::InputError(where, "dataset 'cell_rate' has " + std::to_string(rate.rows()) +
                                         " rows of no value; expected at least one repetition per size");
  StencilFit fit;
  fit.path = path;
  fit.stencil = parameter(b, "stencil");
  fit.variables = parameter(b, "variables");
  number_parameter(b, "variables", where, "the number of fields swept, a whole number from 1 to 1e6", 1, 1e6, true);
  fit.nominal_flops = number_parameter(b, "flops_per_cell_nominal", where,
                                       "the flops of one cell update as coded, a number from 0 to 1e9", 0, 1e9, false)
                          .value_or(0);

  std::size_t largest = 0;
  std::vector<double> spread;
  nlohmann::ordered_json by_size = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < cells.rows(); r++) {
    if (!(cells.at(r) >= 1) || !(cells.at(r) <= 1e6) || cells.at(r) != std::floor(cells.at(r)))
      throw simcore::InputError(where, "cells[" + std::to_string(r) + "] = " + number(cells.at(r)) +
                                           "; expected cells per side, a whole number from 1 to 1e6");
    std::vector<double> row;
    for (std::size_t c = 0; c < rate.cols(); c++) {
      const double x = rate.at(r, c);
      // A zero or negative rate is a broken timing (a clock that did not advance), not a
      // slow machine: refuse it rather than fit infinite flops per cell.
      if (!(x > 0) || !std::isfinite(x))
        throw simcore::InputError(where, "cell_rate[" + std::to_string(r) + "][" + std::to_string(c) + "] = " +
                                             number(x) + "; expected cells per second, a positive number");
      row.push_back(x);
      fit.work.push_back(cells.at(r) * cells.at(r) * cells.at(r));
      fit.rates.push_back(x);
    }
    const double med = simcore::quantile(row, 0.5);
    for (double x : row)
      spread.push_back(std::abs(x - med) / med);
    by_size.push_back({{"cells", cells.at(r)}, {"cell_rate", med}});
    if (cells.at(r) > cells.at(largest))
      largest = r;
  }
  fit.cells = cells.at(largest);
  fit.cell_rate = by_size[largest]["cell_rate"].get<double>();
  fit.quality = {{"median_rel_spread", simcore::quantile(spread, 0.5)},
                 {"max_rel_spread", *std::max_element(spread.begin(), spread.end())},
                 {"stencil", fit.stencil},
                 {"variables", fit.variables.empty() ? nlohmann::ordered_json()
                                                     : nlohmann::ordered_json(std::strtod(fit.variables.c_str(), nullptr))},
                 {"cells_used", fit.cells},
                 {"cell_rate_by_size", by_size}};
  return fit;
}

StencilFit pool_stencil_fits(const std::vector<StencilFit>& fits)
{
  StencilFit pooled = fits.at(0);
  NodeSamples rates;
  pooled.work.clear();
  pooled.rates.clear();
  for (const auto& f : fits) {
    if (f.stencil != pooled.stencil || f.variables != pooled.variables || f.cells != pooled.cells)
      throw simcore::InputError(
          f.path + " (stencil)",
          (f.stencil.empty() ? "?" : f.stencil) + ", " + (f.variables.empty() ? "?" : f.variables) +
              " variables, largest size " + number(f.cells) + ", but " + pooled.path + " (also for hosts matching '" +
              pooled.match + "') measured " + (pooled.stencil.empty() ? "?" : pooled.stencil) + ", " +
              (pooled.variables.empty() ? "?" : pooled.variables) + " variables, largest size " +
              number(pooled.cells) + "; expected the same sweep on every node of a host type (--hosts REGEX "
                                     "before each type's traces)");
    rates.add(f.cell_rate, f.path);
    pooled.work.insert(pooled.work.end(), f.work.begin(), f.work.end());
    pooled.rates.insert(pooled.rates.end(), f.rates.begin(), f.rates.end());
  }
  pooled.cell_rate = rates.median();
  if (fits.size() > 1)
    pooled.quality["repetitions_and_sizes_of"] = pooled.path; // spreads and cell_rate_by_size: the first trace's
  rates.describe(pooled.quality, "stencil_cell_rate");
  return pooled;
}

void add_stencil_rates(const StencilFit& fit, const nlohmann::ordered_json& hosts, nlohmann::ordered_json& rates,
                       nlohmann::ordered_json& quality)
{
  const std::string what = (fit.stencil.empty() ? "?-point" : fit.stencil) + ", " +
                           (fit.variables.empty() ? "?" : fit.variables) + " variables, one core, n = " +
                           number(fit.cells) + " (the largest size measured)";
  rates["stencil_cell_rate"] = {{"value", fit.cell_rate}, {"unit", "cells/s"}, {"doc", "stencil sweep, " + what}};
  quality["stencil"] = fit.quality;
  // The one rate applied to every size measured (as the halo model applies flops_per_cell to
  // any cube), and at the largest size alone, where it was taken: cubes the caches hold
  // sweep faster than the rate says.
  quality["stencil"].update(rate_fit_quality(fit.work, fit.rates, fit.cell_rate));
  std::vector<double> w_largest, r_largest;
  for (std::size_t i = 0; i < fit.work.size(); i++)
    if (fit.work[i] == fit.cells * fit.cells * fit.cells)
      w_largest.push_back(fit.work[i]), r_largest.push_back(fit.rates[i]);
  auto at_largest = rate_fit_quality(w_largest, r_largest, fit.cell_rate);
  at_largest.erase("r2");
  at_largest.erase("r2_note");
  quality["stencil"]["at_largest_size"] = at_largest;
  // The host rule of the stencil trace's host type, else the catch-all one, else the only one.
  const nlohmann::ordered_json* rule = hosts.size() == 1 ? &hosts.front() : nullptr;
  for (const auto& h : hosts)
    if (h.value("match", "") == ".*" && (!rule || rule->value("match", "") != fit.match))
      rule = &h;
  for (const auto& h : hosts)
    if (h.value("match", "") == fit.match)
      rule = &h;
  if (!rule || !rule->contains("speed")) {
    const std::string note = "no dgemm trace among the inputs: flops_per_cell (host speed / cell rate) needs "
                             "calib_dgemm's core speed; only stencil_cell_rate was written";
    auto& q = quality["stencil"];
    q["note"] = q.contains("note") ? q["note"].get<std::string>() + "; " + note : note; // keep the nodes' note
    return;
  }
  // The speed as the profile writes it (6 digits), parsed as the simulation will parse it:
  // then cells x flops_per_cell / host speed is the measured time per cell, to the last bit
  // that the division allows.
  const double speed = simcore::parse_quantity(simcore::Quantity::Speed, (*rule)["speed"].get<std::string>(),
                                               fit.path + " (hosts)");
  const double flops = speed / fit.cell_rate;
  rates["flops_per_cell"] = {{"value", flops}, {"unit", "flop"},
                             {"doc", "DGEMM-equivalent flops of one cell update (host speed " + number(speed) +
                                         " flop/s / stencil_cell_rate), " + what}};
  quality["stencil"]["flops_per_cell_nominal"] = fit.nominal_flops;
  // Below 1: the stencil reaches a smaller share of the core than DGEMM (memory-bound).
  if (fit.nominal_flops > 0)
    quality["stencil"]["nominal_over_fitted_flops"] = fit.nominal_flops / flops;
}

} // namespace calibration
