"""simcore from Python: load scenarios, change parameters, run them, read results.

After the build, make the package importable with
    export PYTHONPATH=$PWD/build/python
and use Debian's interpreter (/usr/bin/python3), which has numpy and h5py.

    import simcore
    sc = simcore.load("scenarios/master_worker/star.xml")
    sc.set(tasks=50, task_bytes="4MB")
    res = sc.run()
    res.metrics["makespan"], res.series["tasks"]["compute_end"]

Each simulation runs in its own child process (SimGrid allows one engine per process),
so Python code never runs inside simulated actors, and run_many() runs several at once.
"""

import json
import numbers
import os
import shutil
import sys
import tempfile

from . import _simcore
from ._simcore import InputError

__version__ = _simcore.__version__
__all__ = ["InputError", "SimulationError", "Scenario", "Result", "models", "load", "run_many", "calibrate"]


class SimulationError(RuntimeError):
    """A run failed for a reason other than bad input (a model or kernel failure)."""


def models():
    """Every registered model: a list of dicts with name, summary and parameters."""
    return _simcore.models()


def _path(value, what):
    """A path given from Python, as text: str or os.PathLike of text. Bytes (or text that is not
    UTF-8) and NUL characters are refused with InputError naming `what` (a NUL made load() read
    another file, the part before it; bytes not UTF-8 left a folder without its summary)."""
    text = os.fspath(value)
    if isinstance(text, bytes):
        raise InputError("%s: %r is bytes; expected a path as text (str)" % (what, value))
    if "\0" in text:
        raise InputError("%s: %r holds a NUL character; expected a path without one" % (what, text))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("%s: %r is not UTF-8 text; expected a path in UTF-8" % (what, text)) from None
    return text


def _text(value, top=True):
    """Turns a Python value into the text a scenario file would hold (a list, one level deep,
    for an integer-list parameter)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        if not top:
            raise InputError("%r: a list inside a list; expected a value or a list of values" % (value,))
        return ",".join(_text(v, False) for v in value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


class Scenario:
    """A loaded and validated scenario. Parameters are checked as in the scenario file."""

    def __init__(self, core):
        self._core = core

    @property
    def path(self):
        return self._core.path

    @property
    def model(self):
        return self._core.model

    @property
    def platform(self):
        return self._core.platform

    @property
    def calibration(self):
        return self._core.calibration

    @calibration.setter
    def calibration(self, path):
        """Attach a calibration profile (a path from the working directory), or None to detach."""
        where = "calibration=%r" % (path,)
        self._core.set_calibration("" if path is None else _path(path, where), where)

    @property
    def sha256(self):
        return self._core.sha256

    @property
    def seed(self):
        return self._core.seed

    @seed.setter
    def seed(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**64:
            raise InputError("seed: expected a non-negative integer below 2^64, got %r" % (value,))
        self._core.seed = int(value)

    @property
    def params(self):
        """{name: value} after defaults and overrides; quantities in base units (s, B, Bps, flop/s, flop)."""
        return self._core.params

    def set(self, *name_value, **params):
        """set("tasks", 10) or set(tasks=10, task_bytes="4MB"); returns self.
        Raises InputError (a ValueError) on an unknown parameter, a bad value or unit."""
        if name_value:
            if len(name_value) != 2:
                raise TypeError("set() takes (name, value) or keyword arguments")
            params = dict([name_value], **params)
        for key, val in params.items():
            where = "set(%s=%r)" % (key, val)
            text = _text(val)
            if "\0" in text:  # the C++ side ended the value (and its message) there
                raise InputError("%s: holds a NUL character; expected a value without one" % where)
            if isinstance(val, (list, tuple)) and self._core.param_type(key) == "one value":
                raise InputError("%s: a list for a parameter that takes one value; expected one value" % where)
            self._core.set(key, text, where)
        return self

    def copy(self):
        return Scenario(self._core.copy())

    def with_params(self, **params):
        """A copy with some parameters changed."""
        return self.copy().set(**params)

    def run(self, out=None, progress=False, max_memory=None):
        """Runs in a child process; results go to `out`, or only into memory when None.
        max_memory: see run_many."""
        return run_many([self], jobs=1, out=[out] if out is not None else None, progress=progress,
                        max_memory=max_memory)[0]

    def __repr__(self):
        return "<simcore.Scenario %s model=%s seed=%d>" % (self.path, self.model, self.seed)


def _h5py_lock():
    """h5py's global lock where h5py is loaded, held at each fork (see run_in_children): no
    thread is then inside libhdf5, whose own lock a child would inherit held by no one (it hung
    writing trace.h5)."""
    h5py = sys.modules.get("h5py")
    return getattr(getattr(h5py, "_objects", None), "phil", None)


def load(path):
    """Reads and validates a scenario file. Raises InputError with file:line on bad input."""
    return Scenario(_simcore.Scenario.load(_path(path, "load(%r)" % (path,))))


def calibrate(traces, out=None, hosts=None, network_pattern="auto", max_segments=8, outlier_tolerance=None):
    """Fits a calibration profile from calibration traces (HDF5, or their JSON form), as
    `simcore calibrate` does; returns it as a dict and, with `out`, writes it there
    (atomically, the bytes `simcore calibrate` writes) for Scenario.calibration.

    hosts: None, or one regular expression per trace (its host type; "" for every host).
    network_pattern: "pingping", "pingpong" or "auto".
    max_segments: the most segments of a network fit, 1 to 64.
    outlier_tolerance: network sizes whose time strays alone from their neighbours by more than
    this share are left out of the fit (quality["network"]["excluded_sizes"]); 0 keeps them;
    None: the command line's default (0.25).
    Raises InputError on a bad trace or option."""
    if isinstance(traces, (str, bytes, os.PathLike)):  # one trace: not a list of its characters
        traces = [traces]
    paths = [_path(t, "calibrate(traces)") for t in traces]
    if not isinstance(max_segments, numbers.Integral) or isinstance(max_segments, bool) or \
            not -2 ** 31 <= max_segments < 2 ** 31:  # beyond an int: pybind11's TypeError before
        raise InputError("max segments: %r; expected a whole number from 1 to 64" % (max_segments,))
    options = {} if outlier_tolerance is None else {"outlier_tolerance": float(outlier_tolerance)}
    # Checked (out is not a trace), fitted and written (indented, atomically) by the same
    # code as `simcore calibrate`: the same bytes for the same traces.
    # Each HDF5 trace is read in a forked child (libhdf5 crashes on some corrupt files), forked
    # holding h5py's global lock as run_many does.
    text = _simcore.calibrate(paths, [] if hosts is None else list(hosts), network_pattern, int(max_segments),
                              out="" if out is None else _path(out, "calibrate(out=%r)" % (out,)),
                              fork_lock=_h5py_lock(), **options)
    return json.loads(text)


class Result:
    """Results of one run: the summary as a dict, tables as dicts of numpy arrays."""

    def __init__(self, out_dir):
        self.out = out_dir
        with open(os.path.join(out_dir, "summary.json")) as f:
            self.summary = json.load(f)
        self.metrics = self.summary["metrics"]
        self.units = self.summary["metric_units"]
        self.series = {}
        trace = os.path.join(out_dir, "trace.h5")
        if os.path.exists(trace):
            import h5py

            with h5py.File(trace, "r") as f:
                for name, ds in f.items():
                    data = ds[()]
                    self.series[name] = {col: data[col].copy() for col in data.dtype.names or ()}

    @property
    def simulated_time(self):
        return self.summary["simulated_time"]

    def table(self, name):
        """A table as a numpy structured array (pandas.DataFrame(result.table(name)) works)."""
        import numpy as np

        cols = self.series[name]
        dtype = [(c, v.dtype) for c, v in cols.items()]
        n = len(next(iter(cols.values()))) if cols else 0
        arr = np.empty(n, dtype=dtype)
        for c, v in cols.items():
            arr[c] = v
        return arr

    def __repr__(self):
        return "<simcore.Result %s: %s>" % (self.out, self.metrics)


def run_many(scenarios, jobs=None, out=None, progress=False, raise_on_error=True, max_memory=None):
    """Runs scenarios in parallel child processes, at most `jobs` at a time (default: CPU count).

    out: None (results are read into memory and no folder is kept), a folder (runs go to out/run-000, out/run-001, ...)
    or a list with one folder per scenario. Returns one Result per scenario, in order. A failed
    run raises its InputError or SimulationError; with raise_on_error=False the exception object
    takes its place in the list instead.

    max_memory: the memory each run may take, as bytes (an int) or a size ("8GiB", "500MB"), or
    "none". A run past it ends with InputError instead of being killed by the system. Default:
    90 % of the memory available when the runs start, shared by the runs at once."""
    scenarios = list(scenarios)
    if max_memory is None:
        max_memory = ""
    elif isinstance(max_memory, numbers.Integral) and not isinstance(max_memory, bool):
        max_memory = "%dB" % max_memory
    elif not isinstance(max_memory, str) or max_memory == "":
        raise InputError("run_many(max_memory=%r): expected a number of bytes, a size such as '8GiB', or 'none'"
                         % (max_memory,))
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not isinstance(jobs, numbers.Integral) or isinstance(jobs, bool) or not 1 <= jobs <= 4096:
        raise InputError("run_many(jobs=%r): expected a whole number of processes from 1 to 4096" % (jobs,))
    keep = out is not None
    if out is not None and not isinstance(out, (list, tuple)):
        out = _path(out, "out=%r" % (out,))
    if isinstance(out, (list, tuple)):
        if len(out) != len(scenarios):
            raise ValueError("out: expected one folder per scenario")
        dirs = [_path(d, "out=%r" % (d,)) for d in out]
    elif out is not None:
        dirs = [os.path.join(out, "run-%03d" % i) for i in range(len(scenarios))]
    real = [os.path.realpath(d) for d in dirs] if keep else []
    if len(set(real)) != len(real):
        raise ValueError("out: two scenarios would write into the same folder")
    if not keep:
        dirs = [tempfile.mkdtemp(prefix="simcore-") for _ in scenarios]
    try:
        cores = []
        for sc, d in zip(scenarios, dirs):
            core = sc._core.copy()
            core.output_dir = os.path.abspath(d)
            cores.append(core)
        results = []
        runs = _simcore.run_in_children(cores, int(jobs), bool(progress), _h5py_lock(), max_memory)
        for (code, error, out_dir), sc in zip(runs, scenarios):
            if code == 0:
                results.append(Result(out_dir))
                if not keep:  # everything is in memory now
                    results[-1].out = None
                continue
            exc = InputError(error) if code == _simcore.EXIT_BAD_INPUT else SimulationError(
                "%s: %s" % (sc.path, error))
            if raise_on_error:
                raise exc
            results.append(exc)
        return results
    finally:
        # No temporary folder is left behind, whatever ends the runs (a failure raised, Ctrl-C).
        if not keep:
            for d in dirs:
                shutil.rmtree(d, ignore_errors=True)
