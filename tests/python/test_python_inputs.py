"""The bindings against what a review found on 2026-12-07: a run that hung beside a thread
using h5py, temporary folders left behind, paths and values that crossed into C++ wrongly."""

import glob
import os
import re
import tempfile
import threading

import h5py
import numpy as np
import pytest

import simcore

from conftest import SOURCE_DIR


def temp_folders():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "simcore-*")))


def test_runs_beside_a_thread_reading_hdf5_never_hang(star_scenario_path, tmp_path):
    """A child forked while another thread was inside libhdf5 inherited its lock held by no
    one, and hung writing trace.h5: run() never returned."""
    data = tmp_path / "x.h5"
    with h5py.File(data, "w") as f:
        f["a"] = np.arange(100000)
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            with h5py.File(data, "r") as f:
                f["a"][()]
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        sc = simcore.load(star_scenario_path).with_params(tasks=5)
        results = [sc.run() for _ in range(40)]  # hung within the first few before
    finally:
        stop.set()
        thread.join()
    assert len({r.simulated_time for r in results}) == 1


def test_calibrate_beside_a_thread_reading_hdf5_never_hangs():
    """Each HDF5 trace is read in a forked child now (libhdf5 crashes on some corrupt files): it
    is forked holding h5py's lock, as run() is, or it would inherit libhdf5's lock held."""
    trace = SOURCE_DIR / "calibration" / "traces" / "vm" / "stream.h5"
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            with h5py.File(trace, "r") as f:
                for g in f.values():
                    for d in g.values():
                        d[()]
    thread = threading.Thread(target=reader)
    thread.start()
    try:
        profiles = [simcore.calibrate(trace) for _ in range(60)]
    finally:
        stop.set()
        thread.join()
    assert all(p == profiles[0] for p in profiles)


def test_calibrate_refuses_a_trace_libhdf5_crashes_on():
    """libhdf5 1.10.8 crashed on this corrupt trace (SIGSEGV), and took Python with it."""
    trace = SOURCE_DIR / "calibration" / "tests" / "corrupt" / "heap-crash.h5"
    # libhdf5 crashes on it, or, in some runs, refuses a link (it reads memory it never set).
    with pytest.raises(simcore.InputError, match="^" + re.escape(str(trace)) + "[: ]"):
        simcore.calibrate(trace)


def test_no_temporary_folder_outlives_run_many(star_scenario_path):
    """A failed run raised before the other runs' temporary folders (with full results) were
    removed: 2 left each call."""
    ok = simcore.load(star_scenario_path).with_params(tasks=3)
    bad = ok.with_params(workers=99)
    before = temp_folders()
    for _ in range(3):
        with pytest.raises(simcore.InputError):
            simcore.run_many([ok, bad, ok, ok], jobs=4)
    assert temp_folders() == before
    with pytest.raises(simcore.InputError):
        simcore.run_many([ok], jobs=2 ** 31)  # refused before any folder is made
    assert temp_folders() == before


def test_paths_as_bytes_or_with_nul_are_refused(star_scenario_path, tmp_path):
    """A NUL made load() read the file named by the part before it; bytes that are not UTF-8
    left a result folder without its summary, or an InputError without any message."""
    star = str(star_scenario_path)
    for path, message in ((star + "\0garbage", "holds a NUL character"),
                          (os.fsencode(star), "is bytes; expected a path as text"),
                          (str(tmp_path) + "/\udcff.xml", "is not UTF-8 text")):
        with pytest.raises(simcore.InputError, match=message):
            simcore.load(path)
    sc = simcore.load(star_scenario_path)
    with pytest.raises(simcore.InputError, match="is bytes"):
        sc.run(out=os.fsencode(str(tmp_path)) + b"/\xffout")
    assert sorted(os.listdir(tmp_path)) == []
    with pytest.raises(simcore.InputError, match="holds a NUL character"):
        sc.calibration = "/x\0y"


def test_values_are_taken_as_given_or_refused(star_scenario_path):
    sc = simcore.load(star_scenario_path)
    # The C++ side ended a value (and its message) at a NUL: "5\0junk" read as "5".
    with pytest.raises(simcore.InputError, match=r"set\(tasks='5\\x00junk'\): holds a NUL character"):
        sc.set(tasks="5\0junk")
    # A list for a parameter of one value was flattened into it.
    with pytest.raises(simcore.InputError, match="a list for a parameter that takes one value"):
        sc.set(tasks=[3])
    with pytest.raises(simcore.InputError, match="a list inside a list"):
        sc.set(tasks=[[3]])
    assert sc.params["tasks"] == simcore.load(star_scenario_path).params["tasks"]


def test_calibrate_takes_one_trace_as_a_path_not_as_its_characters(tmp_path):
    """calibrate("x.h5") fitted the traces "x", ".", "h", "5" ("/: given twice")."""
    trace = tmp_path / "none.h5"
    with pytest.raises(simcore.InputError, match="none.h5: no such trace file"):
        simcore.calibrate(str(trace))
    with pytest.raises(simcore.InputError, match=r"max segments: 1099511627776; expected a whole number"):
        simcore.calibrate([str(trace)], max_segments=2 ** 40)


def test_an_error_message_that_is_not_utf8_reaches_python_whole(star_scenario_path, tmp_path):
    """pybind11 raised InputError with no message at all for one that holds bytes not UTF-8
    (here a value in a scenario written in Latin-1)."""
    text = star_scenario_path.read_text().replace('../../platforms/star.xml',
                                                  str(star_scenario_path.parents[2] / "platforms" / "star.xml"))
    bad = tmp_path / "latin1.xml"
    bad.write_bytes(text.replace("</scenario>", '  <param name="flops_jitter" value="5\xe9"/>\n</scenario>').encode("latin-1"))
    with pytest.raises(simcore.InputError) as e:
        simcore.load(bad)
    assert "latin1.xml:" in str(e.value) and "parameter 'flops_jitter' = '5\\xe9'" in str(e.value), str(e.value)
