#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "calibration/trace_json.hpp"

#include <cstdio>
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

std::map<std::string, std::string> read_attributes(hid_t loc, const char* obj)
{
  std::map<std::string, std::string> out;
  hid_t o = H5Oopen(loc, obj, H5P_DEFAULT);
  H5O_info_t info;
  H5Oget_info(o, &info);
  for (hsize_t i = 0; i < info.num_attrs; i++) {
    hid_t a = H5Aopen_by_idx(o, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
    char name[256];
    H5Aget_name(a, sizeof name, name);
    hid_t t = H5Aget_type(a);
    if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) { // as h5py writes them
      char* text = nullptr;
      hid_t mem = H5Tcopy(H5T_C_S1);
      H5Tset_size(mem, H5T_VARIABLE);
      H5Tset_cset(mem, H5Tget_cset(t)); // h5py writes UTF-8
      if (H5Aread(a, mem, &text) >= 0 && text) {
        out[name] = text;
        H5free_memory(text);
      }
      H5Tclose(mem);
    } else if (H5Tget_class(t) == H5T_STRING) {
      std::string v(H5Tget_size(t), '\0');
      hid_t mem = H5Tcopy(t);
      H5Aread(a, mem, v.data());
      H5Tclose(mem);
      v.resize(v.find('\0') == std::string::npos ? v.size() : v.find('\0'));
      out[name] = v;
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Oclose(o);
  return out;
}

} // namespace

void write_trace(const std::string& path, const Trace& trace)
{
  if (is_json_trace_path(path))
    return write_trace_json(path, trace);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
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
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp);
    throw simcore::InputError(path, "cannot write the trace file (" + ec.message() + ")");
  }
}

Trace read_trace(const std::string& path)
{
  if (!fs::exists(path))
    throw simcore::InputError(path, "no such trace file");
  if (fs::is_directory(path))
    throw simcore::InputError(path, "is a folder; expected a calibration trace file");
  if (is_json_trace_path(path))
    return read_trace_json(path);
  H5E_auto2_t old_func;
  void* old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors become our messages
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
  if (f < 0)
    throw simcore::InputError(path, "is not an HDF5 file; expected a calibration trace");
  Trace t;
  t.attributes = read_attributes(f, "/");
  if (t.attributes["schema"] != kTraceSchema) {
    H5Fclose(f);
    throw simcore::InputError(path, "root attribute 'schema' is '" + t.attributes["schema"] + "'; expected '" +
                                        kTraceSchema + "'");
  }
  H5G_info_t ginfo;
  H5Gget_info(f, &ginfo);
  for (hsize_t i = 0; i < ginfo.nlinks; i++) {
    char name[256];
    H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
    Benchmark b;
    b.name = name;
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    b.parameters = read_attributes(g, ".");
    H5G_info_t di;
    H5Gget_info(g, &di);
    for (hsize_t k = 0; k < di.nlinks; k++) {
      char dname[256];
      H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, dname, sizeof dname, H5P_DEFAULT);
      int rank = 0;
      H5LTget_dataset_ndims(g, dname, &rank);
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      H5LTget_dataset_info(g, dname, dims.data(), nullptr, nullptr);
      Dataset d;
      std::size_t n = 1;
      for (auto x : dims) {
        d.shape.push_back(static_cast<std::size_t>(x));
        n *= static_cast<std::size_t>(x);
      }
      d.values.resize(n);
      check(H5LTread_dataset_double(g, dname, d.values.data()), std::string("dataset ") + dname);
      const auto attrs = read_attributes(g, dname);
      const auto u = attrs.find("unit");
      d.unit = u == attrs.end() ? "" : u->second;
      b.datasets[dname] = std::move(d);
    }
    H5Gclose(g);
    t.benchmarks[b.name] = std::move(b);
  }
  H5Fclose(f);
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
