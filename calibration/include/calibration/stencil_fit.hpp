/* The compute cost of a stencil code from calib_stencil's trace: the cell rate of one core
 * and, divided into the host speed that calib_dgemm gives the profile, the flops per cell
 * that the halo model charges (DGEMM-equivalent flops: cells x flops_per_cell / host speed
 * gives back the measured sweep time). */
#pragma once

#include "calibration/trace_file.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace calibration {

/** What a "stencil" group gives before the host speed is known. */
struct StencilFit {
  std::string path;         ///< the trace, for notes
  std::string match = ".*"; ///< the host type (host rule pattern) the trace stands for
  std::string stencil;      ///< "7-point" or "27-point", as the benchmark wrote it
  std::string variables;    ///< fields per cell, as written
  double nominal_flops = 0; ///< flops_per_cell_nominal: the arithmetic as coded; 0 when absent
  double cells = 0;         ///< cells per side of the largest size, where the rate is taken
  double cell_rate = 0;     ///< cells per second, one core: the median repetition at `cells`
  nlohmann::ordered_json quality; ///< spread of the repetitions, the rate of every size
  std::vector<double> work;       ///< cells of one sweep (n^3), every size and repetition (of every pooled trace)
  std::vector<double> rates;      ///< the cell rate of each of them
};

/** Reads a "stencil" group of the trace `path`. Throws simcore::InputError naming the file
 *  when a dataset is missing or misshapen, or holds a size or rate that is not positive. */
StencilFit fit_stencil(const Benchmark& b, const std::string& path);

/** The stencil traces of one host type (one per node) as one fit: the median of their cell
 *  rates, and in its quality the number of traces, how far the nodes stray from the median
 *  and each trace's rate. Throws simcore::InputError naming the second trace when the traces
 *  measured different things (stencil, variables or largest size). */
StencilFit pool_stencil_fits(const std::vector<StencilFit>& fits);

/** Adds the rate `stencil_cell_rate` and quality["stencil"]; with a host rule in `hosts` (the
 *  profile's, from a dgemm trace: the one of the stencil trace's host type, else the
 *  catch-all one, else the only one)
 *  `flops_per_cell` = that speed / the cell rate, else a note in quality["stencil"]. */
void add_stencil_rates(const StencilFit& fit, const nlohmann::ordered_json& hosts, nlohmann::ordered_json& rates,
                       nlohmann::ordered_json& quality);

} // namespace calibration
