#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>
#include <simcore/file_to_replace.hpp>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "calibration/trace_json.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace calibration {

namespace {

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
      error = "attribute " + std::to_string(i) + " cannot be opened";
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
  if (name.empty() || name == "." || name.find('/') != std::string::npos)
    throw simcore::InputError(path, what + " '" + name + "'; expected a name that is not empty, not '.', "
                                           "without '/'");
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
  H5E_auto2_t old_func = nullptr;
  void* old_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // a folder that is not there: our message, not HDF5's stack
  hid_t f = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
  if (f < 0)
    throw simcore::InputError(path, "cannot create the trace file; expected a writable path");
  try {
    for (const auto& [k, v] : trace.attributes)
      set_text(f, "/", k, v);
    for (const auto& [name, b] : trace.benchmarks) {
      hid_t g = H5Gcreate2(f, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      check(g, "group " + name);
      for (const auto& [k, v] : b.parameters)
        set_text(g, ".", k, v);
      for (const auto& [dname, d] : b.datasets) {
        std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
        check(H5LTmake_dataset_double(g, dname.c_str(), static_cast<int>(dims.size()), dims.data(), d.values.data()),
              "dataset " + dname);
        set_text(g, dname.c_str(), "unit", d.unit);
      }
      H5Gclose(g);
    }
  } catch (...) {
    H5Fclose(f);
    fs::remove(tmp);
    throw;
  }
  H5Fclose(f);
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp);
    throw simcore::InputError(path, "cannot write the trace file (" + ec.message() + ")");
  }
}

namespace {

/** What the link `name` of `loc` leads to (H5O_TYPE_UNKNOWN where it cannot be told). */
H5O_type_t object_type(hid_t loc, const char* name)
{
  H5O_info_t info;
  return H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ? H5O_TYPE_UNKNOWN : info.type;
}

} // namespace

Trace read_trace(const std::string& path)
{
  if (!fs::exists(path))
    throw simcore::InputError(path, "no such trace file");
  if (fs::is_directory(path))
    throw simcore::InputError(path, "is a folder; expected a calibration trace file");
  if (is_json_trace_path(path))
    return read_trace_json(path);
  // HDF5's own error printing stays off while the file is read: every failure becomes one of
  // our messages, naming the file and the object.
  struct Quiet {
    H5E_auto2_t func = nullptr;
    void* data = nullptr;
    Quiet() { H5Eget_auto2(H5E_DEFAULT, &func, &data), H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
    ~Quiet() { H5Eset_auto2(H5E_DEFAULT, func, data); }
  } quiet;
  struct Handle { // closes what it holds, on any way out
    hid_t id;
    herr_t (*close)(hid_t);
    ~Handle()
    {
      if (id >= 0)
        close(id);
    }
  };
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
    char name[256];
    H5Lget_name_by_idx(f.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    Benchmark b;
    b.name = name;
    const Handle g{object_type(f.id, name) == H5O_TYPE_GROUP ? H5Gopen2(f.id, name, H5P_DEFAULT) : -1, H5Gclose};
    if (g.id < 0)
      throw simcore::InputError(path, "'" + b.name + "' at the root is not a group; expected one group per "
                                                     "benchmark, holding its datasets");
    b.parameters = read_attributes(g.id, ".", path + " (" + b.name + ")");
    H5G_info_t di;
    H5Gget_info(g.id, &di);
    for (hsize_t k = 0; k < di.nlinks; k++) {
      char dname[256];
      H5Lget_name_by_idx(g.id, ".", H5_INDEX_NAME, H5_ITER_INC, k, dname, sizeof dname, H5P_DEFAULT);
      const std::string where = path + " (" + b.name + ")";
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
      for (auto x : dims) {
        d.shape.push_back(static_cast<std::size_t>(x));
        n *= static_cast<std::size_t>(x);
      }
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
