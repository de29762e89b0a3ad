/* A trace as JSON: the same content as the HDF5 file (root attributes, one object per
 * benchmark with its parameters and datasets), for machines without the HDF5 library (the
 * GPU benchmark built for a bare machine writes it) and for reading by eye. Layout:
 *   {"attributes": {"schema": "simcore-calibration-trace/1", "host": ..., ...},
 *    "benchmarks": {"cuda": {"parameters": {"device": ...},
 *                            "datasets": {"gemm_fp32": {"unit": "Gflop/s", "shape": [5],
 *                                                       "values": [...]}}}}}
 * NaN and infinities, which JSON lacks, are written "nan", "inf" and "-inf" (null reads as
 * NaN too); text that is not UTF-8 is written with U+FFFD in its place. `calib_trace_convert`
 * turns one form into the other; read_trace and write_trace take either, by extension. */
#pragma once

#include "calibration/trace_file.hpp"

#include <string>

namespace calibration {

/** True when `path` names a JSON trace (it ends in ".json", in any case). */
bool is_json_trace_path(const std::string& path);

/** The trace as JSON text (doubles written so that they read back bit for bit). */
std::string trace_to_json_text(const Trace& trace);

/** Parses a JSON trace; throws simcore::InputError naming `where` (a file), the element at
 *  fault and what was expected. */
Trace trace_from_json_text(const std::string& text, const std::string& where);

/** Writes the JSON form to `path` through a temporary file renamed at the end. */
void write_trace_json(const std::string& path, const Trace& trace);

/** Reads a JSON trace; throws simcore::InputError as trace_from_json_text. */
Trace read_trace_json(const std::string& path);

} // namespace calibration
