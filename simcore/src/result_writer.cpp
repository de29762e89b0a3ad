#include "simcore/result_writer.hpp"
#include "simcore/error.hpp"
#include "simcore/file_to_replace.hpp"

#include <hdf5.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <variant>
#include <unistd.h>

namespace fs = std::filesystem;

namespace simcore {

namespace {

/** Closes an HDF5 handle at scope exit. */
class H5Handle {
public:
  H5Handle(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close)
  {
    if (id_ < 0)
      throw InternalError(std::string("HDF5: cannot create ") + what);
  }
  ~H5Handle()
  {
    if (id_ >= 0)
      close_(id_);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  operator hid_t() const { return id_; }
  /** Closes now, for a caller that must know whether closing (which may write) failed. */
  herr_t close()
  {
    const herr_t rc = close_(id_);
    id_ = -1;
    return rc;
  }

private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/** The system refused to write a file (its errno): a full disk, a quota, a file too large
 *  for its file system, a file system mounted read-only, a device error. */
struct WriteRefused {
  int error;
};

bool refused_by_the_system(int error)
{
  return error == ENOSPC || error == EDQUOT || error == EFBIG || error == EROFS || error == EIO;
}

/** A failed HDF5 call is simcore's failure. */
void check(herr_t rc, const std::string& what)
{
  if (rc < 0)
    throw InternalError("HDF5: " + what + " failed");
}

/** The errno of the system call that failed under an HDF5 call, as HDF5's error stack records
 *  it ("..., errno = 28, error message = 'No space left on device', ..."): errno itself may have
 *  been changed by what HDF5 did after the failure (it formats the time). 0 where none. */
int errno_on_hdf5_stack()
{
  int found = 0;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* entry, void* data) -> herr_t {
        auto* out = static_cast<int*>(data);
        if (*out == 0 && entry && entry->desc)
          if (const char* at = std::strstr(entry->desc, "errno = "))
            *out = std::atoi(at + 8);
        return 0;
      },
      &found);
  return found;
}

/** The same for a call that writes to the file, unless the system refused the write
 *  (WriteRefused: the user's disk, the user's to free). */
void check_write(herr_t rc, const std::string& what)
{
  if (rc < 0) {
    const int error = errno_on_hdf5_stack();
    if (refused_by_the_system(error))
      throw WriteRefused{error};
  }
  check(rc, what);
}

void write_string_attribute(hid_t obj, const std::string& name, const std::string& value)
{
  // Variable-length UTF-8: h5py reads it as str, not bytes.
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type, H5T_VARIABLE), "H5Tset_size");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "H5Tset_cset");
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  H5Handle attr(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attribute");
  const char* ptr = value.c_str();
  check(H5Awrite(attr, type, &ptr), "H5Awrite " + name);
}

/** Bytes of rows packed and written at a time: a table is written through a buffer of this
 *  size (or one row, where a row is larger), not a copy of the whole table (which would take
 *  as much memory as its columns again). */
constexpr std::size_t kBlockBytes = std::size_t{2} << 20;

void write_table(hid_t file, const Table& t)
{
  const std::size_t ncols = t.columns().size();
  const std::size_t rows = t.rows();
  const std::size_t row_size = 8 * ncols;
  // A compound type needs a member: a table without columns becomes an empty int8 dataset.
  H5Handle type(ncols == 0 ? H5Tcopy(H5T_NATIVE_INT8) : H5Tcreate(H5T_COMPOUND, row_size), H5Tclose, "table type");
  for (std::size_t c = 0; c < ncols; c++) {
    const Column& col = t.columns()[c];
    const bool real = std::holds_alternative<std::vector<double>>(col.values);
    check(H5Tinsert(type, col.name.c_str(), 8 * c, real ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64), "H5Tinsert");
  }
  hsize_t dims[1] = {rows};
  H5Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "property list");
  check(H5Pset_obj_track_times(dcpl, false), "H5Pset_obj_track_times");
  H5Handle ds(H5Dcreate2(file, t.name().c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
              ("dataset " + t.name()).c_str());
  if (ncols > 0) {
    const std::size_t rows_per_block = std::max<std::size_t>(1, kBlockBytes / row_size);
    std::vector<unsigned char> block(std::min(rows, rows_per_block) * row_size);
    for (std::size_t first = 0; first < rows; first += rows_per_block) {
      const std::size_t count = std::min(rows_per_block, rows - first);
      for (std::size_t c = 0; c < ncols; c++) {
        const auto& values = t.columns()[c].values;
        const void* column = std::visit([](const auto& v) -> const void* { return v.data(); }, values);
        const auto* from = static_cast<const unsigned char*>(column) + 8 * first;
        for (std::size_t r = 0; r < count; r++)
          std::memcpy(&block[r * row_size + 8 * c], from + 8 * r, 8);
      }
      const hsize_t start[1] = {first};
      const hsize_t extent[1] = {count};
      H5Handle memory(H5Screate_simple(1, extent, nullptr), H5Sclose, "block dataspace");
      check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, extent, nullptr), "H5Sselect_hyperslab");
      check_write(H5Dwrite(ds, type, memory, space, H5P_DEFAULT, block.data()), "H5Dwrite " + t.name());
    }
  }
  std::string units;
  for (const auto& col : t.columns()) {
    write_string_attribute(ds, "unit:" + col.name, col.unit);
    units += (units.empty() ? "" : ",") + col.name + "=" + col.unit;
  }
  write_string_attribute(ds, "units", units);
  if (!t.doc().empty())
    write_string_attribute(ds, "doc", t.doc());
}

std::string temp_name(const fs::path& path)
{
  return path.string() + ".tmp." + std::to_string(::getpid());
}

} // namespace

void write_trace_h5(const std::string& path, const Results& results)
{
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    H5Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "file property list");
    check(H5Pset_obj_track_times(fcpl, false), "H5Pset_obj_track_times");
    H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT), H5Fclose, ("file " + path).c_str());
    write_string_attribute(file, "schema", "simcore-trace/1");
    for (const auto& t : results.tables())
      write_table(file, t);
    check_write(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
    check_write(file.close(), "H5Fclose"); // what closing writes must reach the disk too
  } catch (const WriteRefused& refused) {
    throw InputError(path, std::string("cannot write the file (") + std::strerror(refused.error) +
                               "); expected a folder with room for it, on a file system that may be written");
  }
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write)
{
  const fs::path target = file_to_replace(path);
  const std::string tmp = temp_name(target);
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    try {
      if (out)
        write(out);
    } catch (...) { // what was written of it is no file
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.flush();
    if (out)
      out.close(); // writes what the stream still holds
    if (!out) {
      const int error = errno;
      std::remove(tmp.c_str());
      // The path is the user's: a folder that does not exist or may not be written, or a
      // disk that filled up while it was written.
      throw InputError(path, "cannot write the file (" + (error ? std::string(std::strerror(error)) + ", " : "") +
                                 "through " + tmp + "); expected a path in an existing, writable folder with room "
                                 "for it");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "cannot replace the file (" + ec.message() + "); expected a path that may be written");
  }
}

void write_file_atomically(const std::string& path, const std::string& text)
{
  write_file_atomically(path, [&text](std::ostream& out) { out << text; });
}

std::vector<std::string> earlier_result_files(const std::string& dir)
{
  // The tables the previous run wrote as CSV (its summary names them): stale beside a new
  // result, or beside none once this run fails.
  std::vector<std::string> names{"summary.json"};
  try {
    std::ifstream in(fs::path(dir) / "summary.json", std::ios::binary);
    if (in) {
      const auto previous = nlohmann::json::parse(in, nullptr, false);
      if (previous.is_object() && previous.contains("outputs") && previous["outputs"].is_object() &&
          previous["outputs"].contains("csv") && previous["outputs"]["csv"].is_array())
        for (const auto& name : previous["outputs"]["csv"])
          if (name.is_string() && name.get<std::string>().find('/') == std::string::npos &&
              fs::path(name.get<std::string>()).extension() == ".csv")
            names.push_back(name.get<std::string>());
    }
  } catch (const std::exception&) { // a summary that cannot be read names no table
  }
  names.push_back("trace.h5");
  return names;
}

void remove_result(const std::string& dir)
{
  std::error_code ec;
  const std::vector<std::string> names = earlier_result_files(dir);
  const std::vector<std::string> csv(names.begin() + 1, names.end() - 1);
  for (const auto& name : names) // summary.json first: without it a folder holds no result
    fs::remove(fs::path(dir) / name, ec);
  // Temporary files of killed runs.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool csv_tmp = std::any_of(csv.begin(), csv.end(), [&name](const std::string& c) {
      return name.rfind(c + ".tmp.", 0) == 0;
    });
    if (name.rfind("summary.json.tmp.", 0) == 0 || name.rfind("trace.h5.tmp.", 0) == 0 || csv_tmp)
      fs::remove(it->path(), ec);
  }
}

namespace {

/** One table's text, written to `out` a MiB at a time: the text of a table of millions of
 *  rows takes more memory than its columns. */
void write_csv_text(std::ostream& out, const Table& table)
{
  constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  const auto& cols = table.columns();
  std::string text;
  text.reserve(kBlockBytes + 4096);
  for (std::size_t c = 0; c < cols.size(); c++)
    text += (c ? "," : "") + cols[c].name;
  text += "\n";
  char buf[40];
  for (std::size_t r = 0; r < table.rows() && out; r++) {
    for (std::size_t c = 0; c < cols.size(); c++) {
      if (c)
        text += ",";
      if (const auto* d = std::get_if<std::vector<double>>(&cols[c].values)) {
        const double v = (*d)[r];
        if (std::isnan(v))
          text += "nan";
        else {
          std::snprintf(buf, sizeof buf, "%.17g", v);
          text += buf;
        }
      } else {
        text += std::to_string(std::get<std::vector<std::int64_t>>(cols[c].values)[r]);
      }
    }
    text += "\n";
    if (text.size() >= kBlockBytes) {
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text.clear();
    }
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

/** Writes `dir`/<table>.csv; returns its path in `dir`. */
fs::path write_table_csv(const std::string& dir, const Table& table)
{
  const fs::path path = fs::path(dir) / (table.name() + ".csv");
  write_file_atomically(path.string(), [&table](std::ostream& out) { write_csv_text(out, table); });
  return path;
}

} // namespace

void write_tables_csv(const std::string& dir, const Results& results)
{
  for (const auto& table : results.tables())
    write_table_csv(dir, table);
}

void write_results(const std::string& dir, const nlohmann::ordered_json& summary, const Results& results,
                   bool with_trace, bool with_csv)
{
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(dir, "cannot create the output folder (" + ec.message() + "); expected a writable path");
  const fs::path summary_path = fs::path(dir) / "summary.json";
  remove_result(dir);
  const fs::path trace_path = file_to_replace((fs::path(dir) / "trace.h5").string());
  std::vector<fs::path> written; // removed again if a later file cannot be written
  try {
    if (with_trace) {
      const std::string tmp = temp_name(trace_path);
      try {
        write_trace_h5(tmp, results);
      } catch (const InputError& e) { // named by the file the user asked for
        fs::remove(tmp, ec);
        throw InputError(trace_path.string(), e.detail());
      } catch (...) {
        fs::remove(tmp, ec);
        throw;
      }
      fs::rename(tmp, trace_path, ec);
      if (ec) {
        fs::remove(tmp, ec);
        throw InternalError("cannot rename " + tmp + ": " + ec.message());
      }
      written.push_back(fs::path(dir) / "trace.h5");
    }
    if (with_csv)
      for (const auto& table : results.tables())
        written.push_back(write_table_csv(dir, table));
    write_file_atomically(summary_path.string(),
                          summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  } catch (...) {
    // A part of a result is no result: without summary.json, the folder holds nothing of this
    // run. A link in the folder goes, not the file it led to: nothing outside the folder is
    // removed.
    for (const auto& file : written)
      fs::remove(file, ec);
    throw;
  }
}

} // namespace simcore
