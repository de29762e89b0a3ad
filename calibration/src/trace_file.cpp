#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>
#include <simcore/file_to_replace.hpp>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "calibration/trace_json.hpp"
#include "trace_in_child.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sys/resource.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace calibration {

namespace {

/** HDF5's automatic error printing off for the object's life. */
struct QuietHdf5 {
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  QuietHdf5() { H5Eget_auto2(H5E_DEFAULT, &func, &data), H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func, data); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;
};

/** Closes the HDF5 object it holds, on any way out. */
struct Hdf5Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Hdf5Handle()
  {
    if (id >= 0)
      close(id);
  }
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
};

void check(herr_t rc, const std::string& what)
{
  if (rc < 0)
    throw simcore::InternalError("HDF5: " + what);
}

/** A variable-length UTF-8 string attribute (what h5py reads as str). */
void set_text(hid_t loc, const char* obj, const std::string& name, const std::string& value)
{
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT);
  check(o, "object for attribute " + name);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(o, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = value.c_str();
  const herr_t rc = a < 0 ? -1 : H5Awrite(a, type, &text);
  if (a >= 0)
    H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
  H5Oclose(o);
  check(rc, "attribute " + name);
}

/** A number read from an attribute, as text that reads back to the same value. */
std::string number_text(double v)
{
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v)
    std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/** The attributes of object `obj` of `loc`, as text: strings (variable or fixed length, as
 *  h5py and our writer store them) and numbers (integers exactly, floats so that they read
 *  back the same), one value each. Anything else is refused, naming `where` and the attribute:
 *  an array (a list in h5py) once overran the one value read, and a number was dropped. */
std::map<std::string, std::string> read_attributes(hid_t loc, const char* obj, const std::string& where)
{
  std::map<std::string, std::string> out;
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT);
  if (o < 0)
    throw simcore::InputError(where, "cannot be opened; expected an HDF5 group or dataset");
  H5O_info_t info;
  H5Oget_info(o, &info);
  std::string error;
  for (hsize_t i = 0; i < info.num_attrs && error.empty(); i++) {
    hid_t a = H5Aopen_by_idx(o, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) {
      error = "attribute " + std::to_string(i) + " cannot be opened (a damaged file?); expected a readable "
              "HDF5 file as a benchmark writes it";
      break;
    }
    std::string name(static_cast<std::size_t>(std::max<ssize_t>(H5Aget_name(a, 0, nullptr), 0)), '\0');
    H5Aget_name(a, name.size() + 1, name.data());
    hid_t t = H5Aget_type(a), space = H5Aget_space(a);
    const hssize_t count = H5Sget_simple_extent_npoints(space);
    const H5T_class_t cls = H5Tget_class(t);
    const std::string expected = "; expected one value, a text or a number";
    if (count != 1) {
      error = "attribute '" + name + "' holds " + std::to_string(count) + " values" + expected;
    } else if (cls == H5T_STRING && H5Tis_variable_str(t) > 0) { // as h5py writes them
      char* text = nullptr;
      hid_t mem = H5Tcopy(H5T_C_S1);
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5Tget_cset(t)); // h5py writes UTF-8
      if (H5Aread(a, mem, &text) >= 0 && text)
        out[name] = text;
      else
        error = "attribute '" + name + "' cannot be read" + expected;
      if (text)
        H5free_memory(text);
      H5Tclose(mem);
    } else if (cls == H5T_STRING) {
      std::string v(H5Tget_size(t), '\0');
      hid_t mem = H5Tcopy(t);
      if (H5Aread(a, mem, v.data()) < 0)
        error = "attribute '" + name + "' cannot be read" + expected;
      H5Tclose(mem);
      v.resize(v.find('\0') == std::string::npos ? v.size() : v.find('\0'));
      out[name] = v;
    } else if (cls == H5T_INTEGER && H5Tget_sign(t) == H5T_SGN_NONE) { // kept exactly up to 2^64 - 1
      unsigned long long v = 0;
      if (H5Aread(a, H5T_NATIVE_ULLONG, &v) < 0)
        error = "attribute '" + name + "' cannot be read as an integer" + expected;
      out[name] = std::to_string(v);
    } else if (cls == H5T_INTEGER) {
      long long v = 0;
      if (H5Aread(a, H5T_NATIVE_LLONG, &v) < 0)
        error = "attribute '" + name + "' cannot be read as an integer" + expected;
      out[name] = std::to_string(v);
    } else if (cls == H5T_FLOAT) {
      double v = 0;
      if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
        error = "attribute '" + name + "' cannot be read as a number" + expected;
      out[name] = number_text(v);
    } else {
      static const std::map<H5T_class_t, const char*> kinds{
          {H5T_TIME, "a time"},          {H5T_BITFIELD, "a bit field"}, {H5T_OPAQUE, "opaque"},
          {H5T_COMPOUND, "a compound"},  {H5T_REFERENCE, "a reference"}, {H5T_ENUM, "an enum (h5py's bool is one)"},
          {H5T_VLEN, "a variable-length sequence"}, {H5T_ARRAY, "an array type"}};
      const auto kind = kinds.find(cls);
      error = "attribute '" + name + "' is neither text nor a number (HDF5: " +
              (kind == kinds.end() ? "class " + std::to_string(cls) : std::string(kind->second)) + ")" + expected;
    }
    H5Sclose(space);
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Oclose(o);
  if (!error.empty())
    throw simcore::InputError(where, error);
  return out;
}

/** A name HDF5 stores as one link: not empty, no '/', not "." (the writer would make a path
 *  of it, or fail deep in HDF5). */
void check_name(const std::string& path, const std::string& what, const std::string& name)
{
  if (name.empty() || name == "." || name.find('/') != std::string::npos || name.find('\0') != std::string::npos)
    throw simcore::InputError(path, what + " '" + name.substr(0, name.find('\0')) +
                                        (name.find('\0') != std::string::npos ? "\\0...'" : "'") +
                                        "; expected a name that is not empty, not '.', without '/' or a NUL byte");
}

/** Refuses a trace that HDF5 cannot store as it stands, before any file is created. */
void check_writable(const std::string& path, const Trace& trace)
{
  for (const auto& [k, v] : trace.attributes)
    check_name(path, "root attribute", k);
  for (const auto& [name, b] : trace.benchmarks) {
    check_name(path, "benchmark", name);
    const std::string where = path + " (" + name + ")";
    for (const auto& [k, v] : b.parameters)
      check_name(where, "parameter", k);
    for (const auto& [dname, d] : b.datasets) {
      check_name(where, "dataset", dname);
      std::size_t n = d.shape.empty() ? 0 : 1;
      for (auto x : d.shape)
        n *= x;
      if (d.shape.empty() || d.shape.size() > 2 || n != d.values.size())
        throw simcore::InputError(where, "dataset '" + dname + "' has " + std::to_string(d.values.size()) +
                                             " values and " + std::to_string(d.shape.size()) +
                                             " dimensions; expected 1 or 2 dimensions whose product is the count");
    }
  }
}

} // namespace

void write_trace(const std::string& path, const Trace& trace)
{
  check_writable(path, trace);
  if (is_json_trace_path(path))
    return write_trace_json(path, trace);
  const fs::path target = simcore::file_to_replace(path);
  const std::string tmp = target.string() + ".tmp." + std::to_string(getpid());
  // HDF5 1.10 crashes inside a write that fails for want of room (a full disk, a file size
  // limit): the room is checked first, from above (its values, and 4 KiB an object).
  std::uintmax_t need = 64 * 1024;
  for (const auto& [name, b] : trace.benchmarks) {
    need += 4096 * (1 + b.parameters.size() + b.datasets.size());
    for (const auto& [dname, d] : b.datasets)
      need += 8 * d.values.size() + d.unit.size();
  }
  for (const auto& [k, v] : trace.attributes)
    need += 4096 + v.size();
  std::error_code space_ec;
  const auto space = fs::space(target.parent_path().empty() ? fs::path(".") : target.parent_path(), space_ec);
  struct rlimit limit {};
  const bool limited = getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
  if ((!space_ec && space.available < need) || (limited && limit.rlim_cur < need))
    throw simcore::InputError(path, "cannot write the trace file: it needs up to " + std::to_string(need) +
                                        " bytes, and " +
                                        std::to_string(limited && (space_ec || limit.rlim_cur < space.available)
                                                           ? static_cast<std::uintmax_t>(limit.rlim_cur)
                                                           : space.available) +
                                        " may be written there; expected a path with room for it");
  // HDF5's own error printing stays off while the file is written (a folder that is not there,
  // a full disk): every failure becomes one message naming the file, and every handle is
  // closed on the way out (one left open crashed HDF5 as the program ended).
  const QuietHdf5 quiet;
  hid_t f = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0)
    throw simcore::InputError(path, "cannot create the trace file; expected a writable path");
  try {
    for (const auto& [k, v] : trace.attributes)
      set_text(f, "/", k, v);
    for (const auto& [name, b] : trace.benchmarks) {
      const Hdf5Handle g{H5Gcreate2(f, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
      check(g.id, "group " + name);
      for (const auto& [k, v] : b.parameters)
        set_text(g.id, ".", k, v);
      for (const auto& [dname, d] : b.datasets) {
        std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
        check(H5LTmake_dataset_double(g.id, dname.c_str(), static_cast<int>(dims.size()), dims.data(),
                                      d.values.data()),
              "dataset " + dname + " of " + name);
        set_text(g.id, dname.c_str(), "unit", d.unit);
      }
    }
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "the file's contents");
  } catch (const simcore::InternalError& e) {
    H5Fclose(f);
    fs::remove(tmp);
    // HDF5 fails a write where the disk is full or the file too large for its limit.
    throw simcore::InputError(path, std::string("cannot write the trace file (") + e.what() +
                                        "); expected a writable path with room for it");
  } catch (...) {
    H5Fclose(f);
    fs::remove(tmp);
    throw;
  }
  if (H5Fclose(f) < 0) {
    fs::remove(tmp);
    throw simcore::InputError(path, "cannot write the trace file (HDF5: closing it); expected a writable path with "
                                    "room for it");
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp);
    throw simcore::InputError(path, "cannot write the trace file (" + ec.message() + ")");
  }
}

namespace {

/** The most values a dataset of a trace may hold (as the JSON form's reader allows). */
constexpr std::size_t kMostTraceValues = std::size_t{1} << 32;

std::string shape_text(const std::vector<hsize_t>& dims)
{
  std::string out = "(";
  for (std::size_t i = 0; i < dims.size(); i++)
    out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + ")";
}

/** The name of link `i` of group `loc`, whole (names of 256 bytes and more were cut, and two
 *  such names read as one); a link other than a hard one (soft, external: another file, or a
 *  FIFO, which blocked the read) refused, naming `where` and `in`. */
std::string link_name(hid_t loc, hsize_t i, const std::string& where, const std::string& in)
{
  const ssize_t len = H5Lget_name_by_idx(loc, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
  if (len < 0)
    throw simcore::InputError(where, "link " + std::to_string(i) + " of the " + in +
                                         " cannot be read (a damaged file?); expected a readable HDF5 file as a "
                                         "benchmark writes it");
  std::string name(static_cast<std::size_t>(len), '\0');
  H5Lget_name_by_idx(loc, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
  H5L_info_t info{};
  if (H5Lget_info(loc, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5L_TYPE_HARD)
    throw simcore::InputError(where, "'" + name + "' in the " + in + " is a " +
                                         (info.type == H5L_TYPE_SOFT ? "soft link" : info.type == H5L_TYPE_EXTERNAL ? "link to another file" : "link of another kind") +
                                         "; expected the groups and datasets themselves");
  return name;
}

/** deflate, HDF5's usual filter, shrinks data by at most 1032 times. */
constexpr std::uintmax_t kMostInflation = 1032;

/** Refuses dataset `name` of `loc` where its shape (`dims`, of `type_size`-byte values) claims
 *  more bytes than the file holds for it: a corrupt shape asked for 20 GB of memory from a
 *  10 kB file. Contiguous and compact datasets hold their bytes as they are; chunked ones
 *  compressed by deflate (with shuffle, checksums) at most 1032 times; chunked ones of other
 *  filters (scale-offset, szip, n-bit) are not bounded. A dataset never written holds none. */
void check_stored(hid_t loc, const char* name, const std::vector<hsize_t>& dims, std::size_t type_size,
                  const std::string& where)
{
  std::uintmax_t bytes = type_size;
  for (auto x : dims)
    bytes *= x; // below 2^32 values of at most 2^32 bytes each: no wrap
  const Hdf5Handle d{H5Dopen2(loc, name, H5P_DEFAULT), H5Dclose};
  const Hdf5Handle plist{d.id < 0 ? -1 : H5Dget_create_plist(d.id), H5Pclose};
  if (plist.id < 0)
    throw simcore::InputError(where, "dataset '" + std::string(name) + "' cannot be opened; expected a dataset "
                                                                         "of numbers with 1 or 2 dimensions");
  const bool chunked = H5Pget_layout(plist.id) == H5D_CHUNKED;
  bool deflate_only = true;
  for (int i = 0, n = chunked ? H5Pget_nfilters(plist.id) : 0; i < n; i++) {
    unsigned flags = 0;
    std::size_t nvalues = 0;
    const H5Z_filter_t id = H5Pget_filter2(plist.id, static_cast<unsigned>(i), &flags, &nvalues, nullptr, 0,
                                           nullptr, nullptr);
    deflate_only = deflate_only && (id == H5Z_FILTER_DEFLATE || id == H5Z_FILTER_SHUFFLE || id == H5Z_FILTER_FLETCHER32);
  }
  const std::uintmax_t stored = H5Dget_storage_size(d.id);
  if (bytes > 0 && (stored == 0 || (chunked ? deflate_only && bytes > kMostInflation * stored : stored < bytes)))
    throw simcore::InputError(where, "dataset '" + std::string(name) + "' of shape " + shape_text(dims) +
                                         " needs " + std::to_string(bytes) + " bytes, and the file holds " +
                                         std::to_string(stored) + " of them" +
                                         (chunked ? " (compressed at most 1032 times)" : "") +
                                         "; expected its values in the file (it is corrupt, or the dataset "
                                         "was never written)");
}

/** What the link `name` of `loc` leads to (H5O_TYPE_UNKNOWN where it cannot be told). */
H5O_type_t object_type(hid_t loc, const char* name)
{
  H5O_info_t info;
  return H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ? H5O_TYPE_UNKNOWN : info.type;
}

} // namespace

Trace read_trace_h5(const std::string& path, const ReserveMemory& reserve)
{
  // HDF5's own error printing stays off while the file is read: every failure becomes one of
  // our messages, naming the file and the object.
  const QuietHdf5 quiet;
  using Handle = Hdf5Handle;
  const Handle f{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (f.id < 0)
    throw simcore::InputError(path, "is not an HDF5 file; expected a calibration trace");
  Trace t;
  t.attributes = read_attributes(f.id, "/", path + " (root)");
  if (t.attributes["schema"] != kTraceSchema)
    throw simcore::InputError(path, "root attribute 'schema' is '" + t.attributes["schema"] + "'; expected '" +
                                        kTraceSchema + "'");
  H5G_info_t ginfo;
  H5Gget_info(f.id, &ginfo);
  for (hsize_t i = 0; i < ginfo.nlinks; i++) {
    const std::string name = link_name(f.id, i, path, "root");
    Benchmark b;
    b.name = name;
    const Handle g{object_type(f.id, name.c_str()) == H5O_TYPE_GROUP ? H5Gopen2(f.id, name.c_str(), H5P_DEFAULT) : -1,
                   H5Gclose};
    if (g.id < 0)
      throw simcore::InputError(path, "'" + b.name + "' at the root is not a group; expected one group per "
                                                     "benchmark, holding its datasets");
    b.parameters = read_attributes(g.id, ".", path + " (" + b.name + ")");
    H5G_info_t di;
    H5Gget_info(g.id, &di);
    for (hsize_t k = 0; k < di.nlinks; k++) {
      const std::string where = path + " (" + b.name + ")";
      const std::string dname_text = link_name(g.id, k, where, "group '" + b.name + "'");
      const char* dname = dname_text.c_str();
      const std::string expected = "; expected a dataset of numbers with 1 or 2 dimensions";
      if (object_type(g.id, dname) != H5O_TYPE_DATASET)
        throw simcore::InputError(where, "'" + std::string(dname) + "' is not a dataset" + expected);
      int rank = 0;
      H5LTget_dataset_ndims(g.id, dname, &rank);
      if (rank < 1 || rank > 2)
        throw simcore::InputError(where, "dataset '" + std::string(dname) + "' has " + std::to_string(rank) +
                                             " dimensions" + expected);
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      H5T_class_t type_class = H5T_NO_CLASS;
      std::size_t type_size = 0;
      H5LTget_dataset_info(g.id, dname, dims.data(), &type_class, &type_size);
      if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
        throw simcore::InputError(where, "dataset '" + std::string(dname) + "' does not hold numbers" + expected);
      Dataset d;
      std::size_t n = 1;
      for (auto x : dims) { // a shape whose product wraps past 2^64 once read as 9 values
        if (x != 0 && n > kMostTraceValues / static_cast<std::size_t>(x))
          throw simcore::InputError(where, "dataset '" + std::string(dname) + "' of shape " + shape_text(dims) +
                                               " is too large; expected fewer than 2^32 values");
        d.shape.push_back(static_cast<std::size_t>(x));
        n *= static_cast<std::size_t>(x);
      }
      check_stored(g.id, dname, dims, type_size, where);
      if (reserve)
        reserve(n * sizeof(double));
      d.values.resize(n);
      if (H5LTread_dataset_double(g.id, dname, d.values.data()) < 0)
        throw simcore::InputError(where, "dataset '" + std::string(dname) + "' cannot be read" + expected);
      const auto attrs = read_attributes(g.id, dname, where + " (dataset " + dname + ")");
      const auto u = attrs.find("unit");
      d.unit = u == attrs.end() ? "" : u->second;
      b.datasets[dname] = std::move(d);
    }
    t.benchmarks[b.name] = std::move(b);
  }
  return t;
}

Trace read_trace(const std::string& path, const ForkGuard& guard)
{
  if (!fs::exists(path))
    throw simcore::InputError(path, "no such trace file");
  if (fs::is_directory(path))
    throw simcore::InputError(path, "is a folder; expected a calibration trace file");
  if (is_json_trace_path(path))
    return read_trace_json(path);
  // A FIFO or a device would block the read, or never end.
  if (!fs::is_regular_file(path))
    throw simcore::InputError(path, "is not a regular file; expected a calibration trace file");
  return read_trace_in_child(path, guard, read_trace_h5, child_limits(path));
}

int write_trace_or_report(const std::string& path, const Trace& trace)
{
  try {
    write_trace(path, trace);
    return 0;
  } catch (const simcore::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

} // namespace calibration
