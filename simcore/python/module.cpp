/* _simcore: the compiled part of the Python package `simcore` (see simcore/__init__.py). */
#include "simcore/error.hpp"
#include "simcore/memory_guard.hpp"
#include "simcore/model_registry.hpp"
#include "simcore/runner.hpp"
#include "simcore/scenario.hpp"
#include "simcore/version.hpp"

#include <calibration/profile_fitter.hpp>

#include <pybind11/pybind11.h>

#include <cstring>
#include <memory>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

py::object param_value(const simcore::ParamSet& params, const simcore::ParamSpec& spec)
{
  using simcore::ParamType;
  switch (spec.type) {
    case ParamType::Integer: return py::int_(params.get_int(spec.name));
    case ParamType::Boolean: return py::bool_(params.get_bool(spec.name));
    case ParamType::String:
    case ParamType::Choice:
    case ParamType::File: return py::str(params.get_string(spec.name));
    case ParamType::IntegerList: return py::cast(params.get_int_list(spec.name));
    default: return py::float_(params.get_double(spec.name));
  }
}

py::dict param_dict(const simcore::Scenario& sc)
{
  py::dict d;
  for (const auto& spec : sc.params().specs())
    if (sc.params().has(spec.name))
      d[spec.name.c_str()] = param_value(sc.params(), spec);
  return d;
}

py::dict param_spec_dict(const simcore::ParamSpec& p)
{
  py::dict pd;
  pd["name"] = p.name;
  pd["type"] = simcore::to_string(p.type);
  pd["unit"] = p.unit();
  pd["default"] = p.default_value;
  pd["required"] = p.required();
  pd["min"] = p.min ? py::object(py::float_(*p.min)) : py::object(py::none());
  pd["max"] = p.max ? py::object(py::float_(*p.max)) : py::object(py::none());
  pd["choices"] = p.choices;
  pd["doc"] = p.doc;
  return pd;
}

py::dict section_spec_dict(const simcore::SectionSpec& s)
{
  py::dict d;
  d["element"] = s.name;
  d["doc"] = s.doc;
  py::list attrs, children;
  for (const auto& a : s.attributes)
    attrs.append(param_spec_dict(a));
  for (const auto& c : s.children)
    children.append(section_spec_dict(c));
  d["attributes"] = attrs;
  d["children"] = children;
  return d;
}

py::list models()
{
  py::list out;
  for (const auto* m : simcore::ModelRegistry::instance().all()) {
    py::list params;
    for (const auto& p : m->params)
      params.append(param_spec_dict(p));
    py::list elements;
    for (const auto& e : m->sections)
      elements.append(section_spec_dict(e));
    py::dict md;
    md["name"] = m->name;
    md["summary"] = m->summary;
    md["parameters"] = params;
    md["elements"] = elements;
    out.append(md);
  }
  return out;
}

/** What is done around each fork, called with the GIL released: the GIL taken, then
 *  `fork_lock` (h5py's global lock, which h5py holds around every call into libhdf5, with the
 *  GIL released). A Python thread inside libhdf5 at the fork left the library's own lock held,
 *  with no owner, in the child, which then hung in libhdf5 (writing trace.h5, reading a trace).
 *  The state lives in the returned functions. */
calibration::ForkGuard fork_guard(const py::object& fork_lock)
{
  auto gil = std::make_shared<PyGILState_STATE>();
  auto lock = std::make_shared<py::object>(fork_lock);
  calibration::ForkGuard guard;
  guard.before = [gil, lock] {
    *gil = PyGILState_Ensure();
    if (!lock->is_none())
      lock->attr("acquire")();
  };
  guard.after = [gil, lock] {
    if (!lock->is_none())
      lock->attr("release")();
    PyGILState_Release(*gil);
  };
  // Python's signal flag, polled while a child reads a trace: Ctrl-C ends it and raises here.
  guard.interrupted = [] {
    py::gil_scoped_acquire acquire;
    return PyErr_CheckSignals() != 0;
  };
  return guard;
}

/** (exit_code, error message, output dir) per scenario, each run in its own child process. */
std::vector<std::tuple<int, std::string, std::string>> run_in_children(const std::vector<simcore::Scenario>& scenarios,
                                                                       int jobs, bool progress, py::object fork_lock,
                                                                       const std::string& max_memory)
{
  simcore::RunOptions options;
  if (!max_memory.empty())
    options.max_memory_bytes = simcore::parse_memory_limit(max_memory, "max_memory=");
  options.progress = progress ? simcore::Progress::Always : simcore::Progress::Never;
  const auto guard = fork_guard(fork_lock);
  options.before_fork = guard.before;
  options.after_fork = guard.after;
  std::vector<simcore::ChildOutcome> outcomes;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    // Poll Python's signal flag while waiting, so Ctrl-C ends the children and raises here.
    auto check = [&interrupted] {
      py::gil_scoped_acquire acquire;
      interrupted = PyErr_CheckSignals() != 0;
      return interrupted;
    };
    try {
      outcomes = simcore::run_in_children(scenarios, jobs, options, check);
    } catch (const simcore::Interrupted&) {
    }
  }
  if (interrupted)
    throw py::error_already_set();
  std::vector<std::tuple<int, std::string, std::string>> out;
  for (const auto& o : outcomes)
    out.emplace_back(o.exit_code, o.error, o.output_dir);
  return out;
}

} // namespace

PYBIND11_MODULE(_simcore, m)
{
  m.doc() = "compiled core of simcore; use the `simcore` package";
  m.attr("__version__") = SIMCORE_VERSION;
  m.attr("EXIT_BAD_INPUT") = static_cast<int>(simcore::kExitBadInput);

  // Messages may hold bytes that are not UTF-8 (a path given so): pybind11's own translation
  // then raised the exception with no message at all.
  static py::exception<simcore::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const simcore::InputError& e) {
      PyObject* text = PyUnicode_DecodeUTF8(e.what(), static_cast<Py_ssize_t>(std::strlen(e.what())), "backslashreplace");
      PyErr_SetObject(input_error.ptr(), text);
      Py_XDECREF(text);
    }
  });

  m.def("models", &models, "every registered model with its parameter declarations");

  py::class_<simcore::Scenario>(m, "Scenario")
      .def_static("load", &simcore::Scenario::load, py::arg("path"))
      .def("copy", [](const simcore::Scenario& s) { return simcore::Scenario(s); })
      .def("set", &simcore::Scenario::set, py::arg("name"), py::arg("value"), py::arg("where") = "set()")
      .def("set_calibration", &simcore::Scenario::set_calibration, py::arg("path"), py::arg("where") = "calibration")
      .def(
          "param_type",
          [](const simcore::Scenario& s, const std::string& name) -> std::string {
            try {
              return s.params().spec(name).type == simcore::ParamType::IntegerList ? "list" : "one value";
            } catch (const std::exception&) { // not a parameter: set() says so
              return "";
            }
          },
          py::arg("name"))
      .def_property_readonly("path", &simcore::Scenario::path)
      .def_property_readonly("sha256", &simcore::Scenario::sha256)
      .def_property_readonly("model", &simcore::Scenario::model_name)
      .def_property_readonly("platform", &simcore::Scenario::platform_path)
      .def_property_readonly("calibration", &simcore::Scenario::calibration_path)
      .def_property_readonly("description", &simcore::Scenario::description)
      .def_property("seed", &simcore::Scenario::seed, &simcore::Scenario::set_seed)
      .def_property("output_dir", &simcore::Scenario::output_dir, &simcore::Scenario::set_output_dir)
      .def_property_readonly("write_trace", &simcore::Scenario::write_trace)
      .def_property_readonly("params", &param_dict);

  m.def(
      "calibrate",
      [](const std::vector<std::string>& traces, const std::vector<std::string>& hosts, const std::string& pattern,
         int max_segments, double outlier_tolerance, const std::string& out, py::object fork_lock) {
        calibration::FitOptions options;
        options.host_match = hosts;
        options.network_pattern = pattern;
        options.max_segments = max_segments;
        options.outlier_tolerance = outlier_tolerance;
        options.fork_guard = fork_guard(fork_lock);
        if (!out.empty())
          calibration::check_profile_path(traces, out, "out=");
        std::string text;
        bool interrupted = false;
        {
          // Each HDF5 trace is read in a forked child (read_trace), the GIL released meanwhile.
          py::gil_scoped_release release;
          try {
            const auto profile = calibration::fit_profile(traces, options);
            if (!out.empty())
              calibration::write_profile(profile, out); // the bytes simcore calibrate writes
            text = profile.dump();
          } catch (const simcore::Interrupted&) {
            interrupted = true; // the child ended, Python's exception (KeyboardInterrupt) set
          }
        }
        if (interrupted) {
          // The flag may be unread yet where the child ended first (Ctrl-C reaches both).
          if (!PyErr_Occurred() && PyErr_CheckSignals() == 0)
            PyErr_SetNone(PyExc_KeyboardInterrupt);
          throw py::error_already_set();
        }
        return text;
      },
      py::arg("traces"), py::arg("hosts") = std::vector<std::string>{}, py::arg("network_pattern") = "auto",
      py::arg("max_segments") = 8, py::arg("outlier_tolerance") = calibration::FitOptions{}.outlier_tolerance,
      py::arg("out") = std::string(), py::arg("fork_lock") = py::none(),
      "fits a calibration profile from traces; writes it to `out` (unless empty) as simcore calibrate does and "
      "returns its JSON text");

  m.def("run_in_children", &run_in_children, py::arg("scenarios"), py::arg("jobs") = 1, py::arg("progress") = false, py::arg("fork_lock") = py::none(),
        py::arg("max_memory") = "",
        "runs each scenario in its own forked child process, at most `jobs` at a time");
}
