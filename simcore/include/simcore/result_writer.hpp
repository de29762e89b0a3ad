/* Writing results: summary.json and trace.h5, atomically. */
#pragma once

#include "simcore/results.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace simcore {

/** Writes each table of `results` as a compound HDF5 dataset (one field per column, units
 *  in the dataset attribute "units" and per-field attributes "unit:<column>"). The file is
 *  byte-identical for identical results (no timestamps). Rows are written 2 MiB at a time (one
 *  row at a time where a row is larger): the memory it takes beyond the results' own is a
 *  few MiB, whatever their number of rows. A write the system refuses (a full disk, a quota,
 *  a read-only file system) is an InputError at `path` with the system's reason. */
void write_trace_h5(const std::string& path, const Results& results);

/** Writes each table of `results` as `dir`/<table>.csv: a header of column names, then one
 *  line per row (17 significant digits, "nan" for missing values), each file atomically and
 *  a MiB of text at a time. */
void write_tables_csv(const std::string& dir, const Results& results);

/** Writes `text` to `path` through a temporary file in the same folder and a rename. */
void write_file_atomically(const std::string& path, const std::string& text);

/** The same, where `write` writes the text to the temporary file's stream as it makes it
 *  (a large file needs no copy of its whole text in memory). A stream that fails, while or
 *  after `write` writes to it, leaves no file (InputError at `path`). */
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

/** The files of the result in `dir` that the next run there removes before it writes its own:
 *  summary.json, the CSV tables that summary names, trace.h5 (names in `dir`, there or not). */
std::vector<std::string> earlier_result_files(const std::string& dir);

/** Removes the earlier result's files from `dir` (earlier_result_files()), and the
 *  temporary files of a run killed while it wrote them. */
void remove_result(const std::string& dir);

/** Creates `dir` (and parents), then writes trace.h5 and the CSV files (if wanted) and summary.json, each via
 *  a temporary name renamed at the end; summary.json comes last, so its presence means the
 *  run completed. Removes stale files of an earlier run first. */
void write_results(const std::string& dir, const nlohmann::ordered_json& summary, const Results& results,
                   bool with_trace, bool with_csv = false);

} // namespace simcore
