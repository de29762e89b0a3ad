"""Trace files: attributes, units, the JSON form and its conversion, malformed files refused
naming the object, profiles that never replace a trace."""

import json
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "support"))
from small_disk import run_on_small_disk  # noqa: E402
from calibration_test_support import (  # noqa: E402
    BIN, POWERS, ROOT, SIMCORE, calibrate, cuda_trace_as_the_device_writes_it, fitted, pingpong_law, refused,
    synthetic_trace, two_segment_law, write_synthetic_dgemm, write_synthetic_hash, write_synthetic_network,
    write_synthetic_pingpong, write_synthetic_stencil, write_synthetic_stream)


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such trace file"),
    (lambda p: p.write_text("not hdf5"), "is not an HDF5 file; expected a calibration trace"),
    (lambda p: h5py.File(p, "w").close(), "root attribute 'schema' is ''; expected 'simcore-calibration-trace/1'"),
])
def test_bad_traces_are_refused(tmp_path, make, message):
    trace = tmp_path / "bad.h5"
    make(trace)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert str(trace) in res.stderr and message in res.stderr
    assert not out.exists()


def _array_root_attribute(f):
    f.attrs["host"] = np.array([b"node-a"] * 1000)


def _list_of_texts(f):
    f["pingpong"].attrs["placement"] = ["intra-node"] * 64


def _two_fixed_texts(f):
    f["pingpong"].attrs["placement"] = np.array([b"intra-node", b"inter-node"])


def _unit_as_list(f):
    f["pingpong/round_trip"].attrs["unit"] = ["s", "s"]


def _boolean(f):
    f["pingpong"].attrs["flag"] = True


@pytest.mark.parametrize("spoil, where, message", [
    (_array_root_attribute, "(root)", "attribute 'host' holds 1000 values"),  # read past one value: a crash
    (_list_of_texts, "(pingpong)", "attribute 'placement' holds 64 values"),  # looped for ever
    (_two_fixed_texts, "(pingpong)", "attribute 'placement' holds 2 values"),  # fitted as the first
    (_unit_as_list, "(pingpong) (dataset round_trip)", "attribute 'unit' holds 2 values"),
    (_boolean, "(pingpong)", "attribute 'flag' is neither text nor a number (HDF5: an enum (h5py's bool is one))"),
])
def test_attributes_of_more_than_one_value_or_of_no_known_kind_are_refused(tmp_path, spoil, where, message):
    """h5py stores a list as an array attribute: the reader once read such a root attribute into
    room for one value (a segmentation fault), looped on a list of texts, and fitted two
    placements as the first. Each is bad input now, naming the file, the object and the
    attribute; nothing is written."""
    trace = tmp_path / "bad.h5"
    write_synthetic_pingpong(trace, 2e-6, 1e9)
    with h5py.File(trace, "a") as f:
        spoil(f)
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2, res.stderr
    assert f"{trace} {where}: {message}; expected one value, a text or a number" in res.stderr
    assert not out.exists()


def test_numeric_attributes_are_read_as_their_numbers(tmp_path):
    """A parameter h5py writes as a number (miss_rate = 0.9) was dropped: the profile said "?"
    and traces of different workloads were pooled. Numbers now read as text that reads back to
    the same value: integers exactly, floats in the fewest digits that do."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_hash(a, 1e8, 2e8, 100e-9)
    write_synthetic_hash(b, 1e8, 2e8, 100e-9)
    for path, miss in ((a, 0.9), (b, 0.5)):
        with h5py.File(path, "a") as f:
            f["hash_table"].attrs["miss_rate"] = miss
            f["hash_table"].attrs["buckets"] = np.int64(2 ** 40 + 1)
    doc = fitted(tmp_path, a)["rates"]["hash_lookup_rate"]["doc"]
    assert "90 % misses" in doc or "0.9" in doc, doc
    json_trace = tmp_path / "a.json"
    subprocess.run([str(BIN / "calib_trace_convert"), str(a), "-o", str(json_trace)], check=True)
    params = json.loads(json_trace.read_text())["benchmarks"]["hash_table"]["parameters"]
    assert params["miss_rate"] == "0.9" and params["buckets"] == str(2 ** 40 + 1)
    res, out = calibrate(tmp_path, a, b)
    assert res.returncode == 2 and "expected the same workload on every node of a host type" in res.stderr


def test_the_profile_never_replaces_a_trace_or_a_folder(tmp_path):
    """-o naming one of the traces once replaced its measurements with the profile's JSON, and
    -o naming a folder ended with an internal error (exit 1)."""
    trace = tmp_path / "s.h5"
    write_synthetic_pingpong(trace, 2e-6, 1e9)
    before = trace.read_bytes()
    for out, message in ((trace, f"-o {trace} is also a trace to fit ({trace})"),
                         (tmp_path, f"{tmp_path}: is a folder; expected the path of a file to write")):
        res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out)], capture_output=True, text=True)
        assert res.returncode == 2 and message in res.stderr, res.stderr
    assert trace.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]


def test_the_profile_goes_through_a_link_and_never_replaces_a_device(tmp_path):
    """-o naming a device (as root: /dev/full) replaced the device node with the profile, and -o
    naming a symbolic link replaced the link; the profile is written where the link leads, and
    anything that is not a regular file is refused."""
    trace = tmp_path / "s.h5"
    write_synthetic_pingpong(trace, 2e-6, 1e9)
    target, link = tmp_path / "profiles" / "p.json", tmp_path / "latest.json"
    target.parent.mkdir()
    link.symlink_to(target)  # a link to a file not yet there
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(link)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert link.is_symlink() and json.loads(target.read_text())["schema"] == "simcore-profile/1"
    # A named pipe stands for a device here: a test that broke /dev/null would break the machine.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(fifo)], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    assert (f"{fifo}: is not a regular file (a device, a pipe or a socket), which writing would replace; "
            "expected the path of a file to write") in res.stderr
    assert fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "pipe", "profiles", "s.h5"]


def test_a_trace_given_twice_is_refused(tmp_path):
    """The same node's trace given twice counted as two nodes, weighing twice in the medians."""
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_synthetic_stream(a, 10e9, 15e9)
    write_synthetic_stream(b, 12e9, 18e9)
    for again in (a, tmp_path / "." / "a.h5"):
        assert (f"{again}: given twice (also as {a}); expected each trace once, one per node measured"
                in refused(tmp_path, a, b, again))
    # A copy of a trace is the same run (every trace records its host and date): refused too.
    copy = tmp_path / "copy.h5"
    copy.write_bytes(a.read_bytes())
    assert (f"{copy}: a copy of {a} (the same bytes): the same run given twice; expected each trace once, "
            "one per node measured") in refused(tmp_path, a, b, copy)


def test_what_is_no_trace_is_not_taken_for_a_copy(tmp_path):
    """Two folders, or two empty files, read as the same bytes (none) and were called copies of
    each other; /dev/zero was read whole into memory. Each is left to the trace reader, which
    says what it is."""
    d1, d2, e1, e2 = tmp_path / "d1", tmp_path / "d2", tmp_path / "e1.h5", tmp_path / "e2.h5"
    d1.mkdir()
    d2.mkdir()
    e1.write_bytes(b"")
    e2.write_bytes(b"")
    assert f"{d1}: is a folder; expected a calibration trace file" in refused(tmp_path, d1, d2)
    assert f"{e1}: is not an HDF5 file; expected a calibration trace" in refused(tmp_path, e1, e2)
    res = subprocess.run(["bash", "-c", 'ulimit -v 1000000 && exec "$@"', "sh", str(SIMCORE), "calibrate", "/dev/zero",
                          "-o", str(tmp_path / "p.json")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "/dev/zero: is not a regular file; expected a calibration trace file" in res.stderr


def test_a_group_no_part_reads_is_noted(tmp_path):
    """A misspelt group ("pingpng") beside a known one was left out in silence."""
    trace = tmp_path / "s.h5"
    write_synthetic_stream(trace, 10e9, 15e9)
    with h5py.File(trace, "a") as f:
        f.create_group("pingpng").create_dataset("size", data=POWERS).attrs["unit"] = "B"
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 0, res.stderr
    q = json.loads(out.read_text())["quality"]["ignored_groups"]
    assert q["groups"] == [f"{trace} (pingpng)"]
    assert (f"simcore calibrate: note (ignored_groups): group(s) no part of the fit reads, left out: {trace} "
            "(pingpng); expected pingpong") in res.stderr
    # pingping and one_way are read with their trace's pingpong group: not noted.
    net = tmp_path / "net.h5"
    write_synthetic_network(net, POWERS, pingpong_law, pingpong_law)
    with h5py.File(net, "a") as f:
        f.copy(f["pingping"], "one_way")
    assert "ignored_groups" not in fitted(tmp_path, net)["quality"]


def test_a_time_in_greek_mu_seconds_is_taken_as_in_micro_sign_ones(tmp_path):
    """"\u03bcs" (Greek mu) and "\u00b5s" (micro sign) look alike; the first was refused with a
    message listing the second."""
    micro, greek = tmp_path / "micro.h5", tmp_path / "greek.h5"
    for path, unit in ((micro, "\u00b5s"), (greek, "\u03bcs")):
        write_synthetic_network(path, POWERS, pingpong_law)
        with h5py.File(path, "a") as f:
            f["pingpong"]["round_trip"][...] = f["pingpong"]["round_trip"][()] * 1e6
            f["pingpong"]["round_trip"].attrs["unit"] = unit
    a = fitted(tmp_path, micro)
    (tmp_path / "g").mkdir()
    assert fitted(tmp_path / "g", greek)["network_factors"] == a["network_factors"]


@pytest.mark.parametrize("benchmark, dataset, message", [
    ("pingpong", "copy/bandwidth", "dataset 'copy/bandwidth'; expected a name that is not empty, not '.', without '/'"),
    ("a/b", "size", "benchmark 'a/b'; expected a name"),
    ("pingpong", "", "dataset ''; expected a name"),
])
def test_trace_convert_refuses_names_hdf5_cannot_hold(tmp_path, benchmark, dataset, message):
    """A name with '/' or an empty one made HDF5 fail with its error stack and exit 1."""
    src = tmp_path / "bad.json"
    src.write_text(json.dumps({"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {
        benchmark: {"parameters": {}, "datasets": {dataset: {"unit": "B", "shape": [1], "values": [1]}}}}}))
    out = tmp_path / "out.h5"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and message in res.stderr and "HDF5-DIAG" not in res.stderr, res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_units_are_read_and_converted(tmp_path):
    """The fitter reads each dataset's unit: times in us and bandwidths in GB/s give the profile
    that s and B/s give (it once took 2 us as 2 s and 5 GB/s as 5 B/s)."""
    law = two_segment_law(1e-6, 5e9, 65536, 1e-5, 1e10)
    si, scaled = tmp_path / "si.h5", tmp_path / "scaled.h5"
    write_synthetic_network(si, POWERS, law, law)
    write_synthetic_network(scaled, POWERS, law, law)
    stream_si = tmp_path / "stream_si.h5"
    write_synthetic_stream(stream_si, 2e10, 3e10)
    with h5py.File(scaled, "a") as f:
        for group, name in (("pingpong", "round_trip"), ("pingping", "time")):
            d = f[group][name]
            d[...] = d[()] * 1e6
            d.attrs["unit"] = "us"
        f["pingpong/size"][...] = f["pingpong/size"][()] / 1024
        f["pingpong/size"].attrs["unit"] = "KiB"
        f["pingping/size"][...] = f["pingping/size"][()] / 1024
        f["pingping/size"].attrs["unit"] = "KiB"
    stream_gb = tmp_path / "stream_gb.h5"
    write_synthetic_stream(stream_gb, 2e10, 3e10)
    with h5py.File(stream_gb, "a") as f:
        for name in ("copy_bandwidth", "triad_bandwidth"):
            d = f["stream"][name]
            d[...] = d[()] / 1e9
            d.attrs["unit"] = "GB/s"
    a = fitted(tmp_path, si, stream_si)
    (tmp_path / "b").mkdir()
    b = fitted(tmp_path / "b", scaled, stream_gb)
    assert b["network_factors"] == a["network_factors"]
    for x, y in zip(a["quality"]["network"]["segments"], b["quality"]["network"]["segments"]):
        assert y["from"] == x["from"]
        assert y["latency"] == pytest.approx(x["latency"], rel=1e-9)
        assert y["bandwidth"] == pytest.approx(x["bandwidth"], rel=1e-9)
    assert b["rates"]["memcpy_bandwidth"]["value"] == pytest.approx(a["rates"]["memcpy_bandwidth"]["value"], rel=1e-9)


@pytest.mark.parametrize("dataset, unit, expected", [
    ("round_trip", "fortnights", "expected 's', 'ms', 'us', '\u00b5s', 'ns'"),
    ("round_trip", "", "expected 's', 'ms'"),  # a time without a unit
    ("size", "bytes", "expected 'B', 'kB', 'KiB', 'MB', 'MiB', 'GB', 'GiB'"),
])
def test_a_unit_the_fitter_does_not_know_is_refused(tmp_path, dataset, unit, expected):
    trace = tmp_path / "net.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    with h5py.File(trace, "a") as f:
        f["pingpong"][dataset].attrs["unit"] = unit
    res, out = calibrate(tmp_path, trace)
    assert res.returncode == 2
    assert f"{trace} (pingpong): dataset '{dataset}' has unit '{unit}'; {expected}" in res.stderr, res.stderr
    assert not out.exists()


def test_calibrate_needs_traces_and_an_output(tmp_path):
    res = subprocess.run([SIMCORE, "calibrate"], capture_output=True, text=True)
    assert res.returncode == 2 and "expected simcore calibrate TRACE.h5... -o PROFILE.json" in res.stderr


def test_sizes_in_decimal_units_stay_whole_bytes(tmp_path):
    """1.001 kB times 1000 is 1000.9999999999999 in doubles, which the whole-byte check refused."""
    si, kb = tmp_path / "si.h5", tmp_path / "kb.h5"
    sizes = np.array([1.0, 10.0, 100.0, 1001.0, 10007.0, 100003.0, 1000003.0])
    write_synthetic_network(si, sizes, pingpong_law)
    write_synthetic_network(kb, sizes, pingpong_law)
    with h5py.File(kb, "a") as f:
        f["pingpong/size"][...] = sizes / 1000
        f["pingpong/size"].attrs["unit"] = "kB"
    a = fitted(tmp_path, si)
    (tmp_path / "kb").mkdir()
    b = fitted(tmp_path / "kb", kb)
    assert b["network_factors"] == a["network_factors"] and b["links"] == a["links"]


def test_a_json_trace_converts_to_hdf5_that_h5py_reads_and_the_fitter_fits_alike(tmp_path):
    convert = str(BIN / "calib_trace_convert")
    src = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(src, {"gemm_fp32": [1.0 / 3, 2.5, 0.1], "conv3d_ncdhw": [7.0]})
    h5 = tmp_path / "cuda.h5"
    res = subprocess.run([convert, str(src), "-o", str(h5)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with h5py.File(h5) as f:
        assert f.attrs["schema"] == "simcore-calibration-trace/1" and f.attrs["gpu"] == "Test GPU"
        g = f["cuda"]
        assert g.attrs["check_gemm_fp32"] == "1.2e-07"
        assert g["gemm_fp32"].attrs["unit"] == "Gflop/s"
        assert list(g["gemm_fp32"][()]) == [1.0 / 3, 2.5, 0.1]  # bit for bit
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert fitted(tmp_path / "a", src)["rates"] == fitted(tmp_path / "b", h5)["rates"]
    # And back: HDF5 to JSON gives the same document.
    back = tmp_path / "back.json"
    assert subprocess.run([convert, str(h5), "-o", str(back)]).returncode == 0
    assert json.loads(back.read_text()) == json.loads(src.read_text())


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ('{"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {"cuda": {"parameters": {}, '
     '"datasets": {"gemm_fp32": {"unit": "Gflop/s", "shape": [2], "values": [1]}}}}}',
     "benchmarks.cuda.datasets.gemm_fp32.values holds 1 numbers; expected 2"),
])
def test_trace_convert_refuses_bad_json_and_writes_nothing(tmp_path, text, message):
    src = tmp_path / "bad.json"
    src.write_text(text)
    out = tmp_path / "out.h5"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2
    assert str(src) in res.stderr and message in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_trace_convert_never_overwrites(tmp_path):
    src = tmp_path / "cuda.json"
    cuda_trace_as_the_device_writes_it(src, {"gemm_fp32": [1.0]})
    out = tmp_path / "cuda.h5"
    out.write_text("kept")
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and "exists already" in res.stderr
    assert out.read_text() == "kept"


def test_a_full_disk_is_named_and_leaves_no_part_of_a_file(tmp_path):
    """A JSON trace of 1 MB on a disk of 64 KiB, a profile of 32 kB on one of 8 KiB. calib_trace_convert said "cannot
    write the trace file" and nothing of why or what was expected; `simcore calibrate` named no
    reason either. Nothing, not even a temporary file, stays behind."""
    trace = ROOT / "calibration" / "traces" / "vm" / "pingpong-intra.h5"
    res, left = run_on_small_disk(tmp_path, "64k", [BIN / "calib_trace_convert", trace, "-o", "{disk}/t.json"])
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().endswith("/disk/t.json: cannot write the trace file (No space left on device); "
                                       "expected a folder with room for its 1001821 bytes"), res.stderr
    assert left == []
    traces = sorted((ROOT / "calibration" / "traces" / "vm").glob("*.h5"))  # a profile of 32 kB
    res, left = run_on_small_disk(tmp_path, "8k", [SIMCORE, "calibrate", *traces, "-o", "{disk}/p.json"])
    assert res.returncode == 2, res.stderr
    assert "/disk/p.json: cannot write the file (No space left on device, through " in res.stderr
    assert left == []


def test_an_output_in_a_missing_folder_is_bad_input(tmp_path):
    trace = tmp_path / "pp.h5"
    write_synthetic_network(trace, POWERS, pingpong_law)
    out = tmp_path / "missing" / "p.json"
    res = subprocess.run([SIMCORE, "calibrate", str(trace), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and str(out) in res.stderr and "expected a path in an existing, writable folder" \
        in res.stderr


def hdf5_with_text_dataset(f):
    f.create_group("stream").create_dataset("threads", data=np.array([b"one", b"two"]))


def hdf5_with_root_dataset(f):
    f.create_dataset("size", data=np.arange(4.0))


def hdf5_with_3d_dataset(f):
    f.create_group("pingpong").create_dataset("round_trip", data=np.ones((2, 2, 2)))


@pytest.mark.parametrize("make, message", [
    (hdf5_with_text_dataset, "(stream): dataset 'threads' does not hold numbers; expected a dataset of numbers"),
    (hdf5_with_root_dataset, "'size' at the root is not a group; expected one group per benchmark"),
    (hdf5_with_3d_dataset, "(pingpong): dataset 'round_trip' has 3 dimensions; expected a dataset of numbers with 1 or 2"),
])
def test_malformed_hdf5_traces_are_refused_naming_the_object(tmp_path, make, message):
    """A text dataset once ended in HDF5's error stack and exit 1, a dataset at the root was
    dropped, and a 3-D one converted to JSON that did not convert back."""
    src = tmp_path / "bad.h5"
    with synthetic_trace(src) as f:
        make(f)
    out = tmp_path / "out.json"
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and f"{src}" in res.stderr and message in res.stderr, res.stderr
    assert "HDF5-DIAG" not in res.stderr and not out.exists()
    res, profile = calibrate(tmp_path, src)
    assert res.returncode == 2 and message in res.stderr and not profile.exists()


def _convert(src, out):
    return subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True)


def test_a_shape_whose_product_wraps_is_refused(tmp_path):
    """25 x 737,869,762,948,382,065 values wrap past 2^64 to 9: the reader allocated 9 and the
    fitter read past them (a segfault); the converter wrote the shape into JSON, exit 0."""
    trace = tmp_path / "wrap.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = "inter-node"
        g.create_dataset("size", data=POWERS).attrs["unit"] = "B"
        g.create_dataset("round_trip", shape=(25, 2 ** 64 // 25 + 1), dtype="f8", chunks=(1, 1),
                         fillvalue=1e-5).attrs["unit"] = "s"
    message = "dataset 'round_trip' of shape (25, 737869762948382065) is too large; expected fewer than 2^32 values"
    assert message in refused(tmp_path, trace)
    res = _convert(trace, tmp_path / "wrap.json")
    assert res.returncode == 2 and message in res.stderr and not (tmp_path / "wrap.json").exists()


@pytest.mark.parametrize("layout", ["contiguous", "chunked"])
def test_a_shape_of_more_values_than_the_file_holds_is_refused(tmp_path, layout):
    """A corrupt shape of 2 x 1,275,068,421 values in a 10 kB file: the reader asked for 20 GB and
    filled it, for minutes. Contiguous values are in the file as they are; chunked ones may be
    compressed, by at most 1032 times (deflate); a dataset never written holds none."""
    trace = tmp_path / "big.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        g.attrs["threads"] = "1"
        g.create_dataset("copy_bandwidth", shape=(2, 1275068421), dtype="f8",
                         **({"chunks": (1, 1024)} if layout == "chunked" else {})).attrs["unit"] = "B/s"
    held = "0 of them (compressed at most 1032 times)" if layout == "chunked" else "0 of them"
    message = (f"{trace} (stream): dataset 'copy_bandwidth' of shape (2, 1275068421) needs 20401094736 bytes, and "
               f"the file holds {held}; expected its values in the file (it is corrupt, or the dataset was never "
               f"written)")
    assert message in refused(tmp_path, trace)
    res = _convert(trace, tmp_path / "big.json")
    assert res.returncode == 2 and message in res.stderr and not (tmp_path / "big.json").exists()


CORRUPT = os.path.join(os.path.dirname(__file__), "corrupt")


def test_compressed_datasets_are_read_whatever_their_ratio_beyond_deflate(tmp_path):
    """h5py's scale-offset filter stores 10^6 equal integers in a few bytes, far past deflate's
    1032 times: read, not taken for a corrupt shape."""
    trace = tmp_path / "so.h5"
    with synthetic_trace(trace) as f:
        g = f.create_group("stream")
        d = g.create_dataset("threads", data=np.full(1000000, 7, dtype="i8"), chunks=(1000000,), scaleoffset=0,
                             compression="gzip")
        d.attrs["unit"] = ""
        f.flush()
        assert d.id.get_storage_size() * 1032 < 8000000
    res = _convert(trace, tmp_path / "so.json")
    assert res.returncode == 0, res.stderr
    values = json.loads((tmp_path / "so.json").read_text())["benchmarks"]["stream"]["datasets"]["threads"]["values"]
    assert len(values) == 1000000 and set(values) == {7}


@pytest.mark.parametrize("name", ["heap-crash.h5", "string-length.h5"])
def test_a_file_libhdf5_crashes_on_is_refused_naming_it(tmp_path, name):
    """libhdf5 1.10.8 crashed (SIGSEGV) or asked for memory without end reading these corrupt
    traces (corrupt/README.md); each is read in a child process now, within limits."""
    trace = os.path.join(CORRUPT, name)
    err = refused(tmp_path, trace)
    assert err.startswith(f"simcore: error: {trace}") and "expected" in err, err
    res = _convert(trace, tmp_path / "c.json")
    assert res.returncode == 2 and trace in res.stderr and not (tmp_path / "c.json").exists()


def test_names_of_256_bytes_and_more_are_read_whole(tmp_path):
    """Names were read into 256 bytes: two groups of 256 bytes that differ in the last one read
    as one, the first one's data twice, exit 0."""
    trace = tmp_path / "long.h5"
    with synthetic_trace(trace) as f:
        for suffix, value in (("A", 1.0), ("B", 2.0)):
            g = f.create_group("x" * 255 + suffix)
            g.create_dataset("v" * 300, data=[value]).attrs["unit"] = ""
    out = tmp_path / "long.json"
    assert _convert(trace, out).returncode == 0
    doc = json.loads(out.read_text())["benchmarks"]
    assert {k: v["datasets"]["v" * 300]["values"] for k, v in doc.items()} == {"x" * 255 + "A": [1.0],
                                                                             "x" * 255 + "B": [2.0]}


@pytest.mark.parametrize("link, kind", [("soft", "soft link"), ("external", "link to another file")])
def test_links_are_refused_not_followed(tmp_path, link, kind):
    """An external link was followed (to another file's group, or to a FIFO, where the fit hung)."""
    other = tmp_path / "other.h5"
    write_synthetic_stream(other, 1e10, 1e10)
    trace = tmp_path / "linked.h5"
    write_synthetic_stream(trace, 2e10, 2e10)
    with h5py.File(trace, "a") as f:
        f["alias"] = h5py.SoftLink("/stream") if link == "soft" else h5py.ExternalLink(str(other), "/stream")
    assert f"{trace}: 'alias' in the root is a {kind}; expected the groups and datasets themselves" in \
        refused(tmp_path, trace)


def test_a_trace_that_is_no_regular_file_is_refused(tmp_path):
    """A FIFO given as a trace blocked the fit forever."""
    fifo = tmp_path / "fifo.h5"
    os.mkfifo(fifo)
    assert f"{fifo}: is not a regular file; expected a calibration trace file" in refused(tmp_path, fifo)


def test_unsigned_64_bit_attributes_are_kept_exactly(tmp_path):
    """2^64 - 1 read back as 2^63 - 1."""
    trace = tmp_path / "u.h5"
    write_synthetic_stream(trace, 1e10, 1e10)
    with h5py.File(trace, "a") as f:
        f["stream"].attrs["count"] = np.uint64(2 ** 64 - 1)
    out = tmp_path / "u.json"
    assert _convert(trace, out).returncode == 0
    assert json.loads(out.read_text())["benchmarks"]["stream"]["parameters"]["count"] == str(2 ** 64 - 1)


def test_names_json_cannot_keep_apart_are_refused(tmp_path):
    """Groups b"g\\xff" and b"g\\xfe" both became "g\\ufffd" in JSON: one was lost when read back."""
    trace = tmp_path / "two.h5"
    with synthetic_trace(trace) as f:
        for name, value in ((b"g\xff", 1.0), (b"g\xfe", 2.0)):
            f.create_group(name).create_dataset("v", data=[value]).attrs["unit"] = ""
    res = _convert(trace, tmp_path / "two.json")
    assert res.returncode == 2 and "two names read 'g\ufffd' once their bytes that are not UTF-8 are replaced" in \
        res.stderr, res.stderr
    assert not (tmp_path / "two.json").exists()
    # A JSON trace that gives a name twice is refused too (the last one was kept, silently).
    src = tmp_path / "twice.json"
    src.write_text('{"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {'
                   '"g": {"parameters": {}, "datasets": {}}, "g": {"parameters": {}, "datasets": {}}}}')
    assert "the key 'g' twice in one object; expected each name once" in refused(tmp_path, src)


def test_text_that_is_not_utf8_reaches_the_profile_replaced(tmp_path):
    """A CPU model of b"AMD \\xff EPYC" stopped the fit with an internal JSON error, exit 1."""
    trace = tmp_path / "s.h5"
    write_synthetic_stream(trace, 1e10, 2e10)
    with h5py.File(trace, "a") as f:
        f.attrs["cpu_model"] = np.bytes_(b"AMD \xff EPYC")
    p = fitted(tmp_path, trace)
    assert p["rates"]["memcpy_bandwidth"]["value"] > 0


def test_a_trace_without_room_to_write_is_refused_before_hdf5_fails(tmp_path):
    """HDF5 1.10 crashed inside a write that failed for want of room (here a file size limit
    standing in for a full disk), after printing its error stack."""
    import resource
    import signal
    src = tmp_path / "s.json"
    trace = tmp_path / "s.h5"
    write_synthetic_stream(trace, 1e10, 2e10)
    assert _convert(trace, src).returncode == 0
    out = tmp_path / "out.h5"

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    res = subprocess.run([str(BIN / "calib_trace_convert"), str(src), "-o", str(out)], capture_output=True, text=True,
                         preexec_fn=limit)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert f"{out}: cannot write the trace file: it needs up to" in res.stderr and "HDF5-DIAG" not in res.stderr
    assert not out.exists() and not list(tmp_path.glob("out.h5.tmp.*"))


def test_a_run_given_as_a_trace_and_its_conversion_is_refused(tmp_path):
    """The same run in two forms has other bytes: it counted as two nodes."""
    trace = tmp_path / "s.h5"
    write_synthetic_stream(trace, 1e10, 2e10)
    converted = tmp_path / "s.json"
    assert _convert(trace, converted).returncode == 0
    assert f"{converted}: the same run as {trace} (the same contents in another form" in \
        refused(tmp_path, trace, converted)


def test_a_name_with_a_nul_byte_is_refused_when_converted(tmp_path):
    """HDF5 keeps a name up to its NUL: "x\\u0000y" was stored as "x", silently."""
    src = tmp_path / "nul.json"
    src.write_text(json.dumps({"attributes": {"schema": "simcore-calibration-trace/1"}, "benchmarks": {
        "g": {"parameters": {}, "datasets": {"x\u0000y": {"unit": "", "shape": [1], "values": [1]}}}}}))
    res = _convert(src, tmp_path / "nul.h5")
    assert res.returncode == 2 and "expected a name that is not empty, not '.', without '/' or a NUL byte" in \
        res.stderr, res.stderr
    assert not (tmp_path / "nul.h5").exists()


@pytest.mark.parametrize("group, dataset", [("stream", "triad_bandwidth"), ("stream", "threads")])
def test_a_group_without_a_dataset_its_fit_reads_is_refused_saying_what_was_expected(tmp_path, group, dataset):
    """Found by tests/fuzz/trace_fuzz.py: "t.h5 (stream): no dataset 'triad_bandwidth'" said
    what was missing, not what was expected."""
    trace = tmp_path / "stream.h5"
    write_synthetic_stream(trace, 10e9, 15e9)
    with h5py.File(trace, "r+") as f:
        del f[group][dataset]
    assert (f"{trace} ({group}): no dataset '{dataset}'; expected a '{group}' group as its benchmark writes it, "
            f"with a dataset '{dataset}'") in refused(tmp_path, trace)


def _stencil_cells(f, value):
    cells = np.array(f["stencil/cells"][()])
    cells[1] = value
    f["stencil/cells"][...] = cells


def _hash_layouts(shares, failures):
    def spoil(f):
        f["hash_table"].create_dataset("secondary_share", data=np.asarray(shares, dtype=float))
        f["hash_table"].create_dataset("insert_failure_rate", data=np.asarray(failures, dtype=float))
    return spoil


@pytest.mark.parametrize("kind, spoil, message", [
    # A cube of 5e-324 cells a side passed as "positive": its relative error was NaN, null in the profile.
    ("stencil", lambda f: _stencil_cells(f, 5e-324),
     "(stencil): cells[1] = 4.94066e-324; expected cells per side, a whole number from 1 to 1e6"),
    ("stencil", lambda f: _stencil_cells(f, 16.5), "(stencil): cells[1] = 16.5; expected cells per side"),
    # Parameters read with a strtod that stopped early: "abc" was 0, "nan" was null in the profile.
    ("stencil", lambda f: f["stencil"].attrs.__setitem__("variables", "nan"),
     "(stencil): parameter 'variables' = 'nan'; expected the number of fields swept, a whole number from 1 to 1e6"),
    ("stencil", lambda f: f["stencil"].attrs.__setitem__("flops_per_cell_nominal", "40 flops"),
     "(stencil): parameter 'flops_per_cell_nominal' = '40 flops'; expected the flops of one cell update as coded"),
    # Insertion failures per layout went into the profile's quality as they were: inf as null.
    ("dgemm", lambda f: f["dgemm"].attrs.__setitem__("measured_peak_gflops", "1e-320"),
     "(dgemm): parameter 'measured_peak_gflops' = '1e-320'; expected the core's measured peak in Gflop/s"),
    ("dgemm", lambda f: f["dgemm/size"].__setitem__(0, 1e-300),
     "(dgemm): dataset 'size' holds 1e-300 at index 0; expected matrix orders, whole numbers from 1 to 1e+09"),
    ("hash", _hash_layouts([0, 0.1, 0.2], [0, 0.5, float("inf")]),
     "(hash_table): dataset 'insert_failure_rate' holds inf at index 2; expected shares from 0 to 1"),
    ("hash", _hash_layouts([0, -0.1], [0, 0]),
     "(hash_table): dataset 'secondary_share' holds -0.1 at index 1; expected shares from 0 to 1"),
    ("hash", _hash_layouts([0, 0.1, 0.2], [0, 0]),
     "(hash_table): dataset 'insert_failure_rate' holds 2 values for 3 in 'secondary_share'; expected one per "
     "memory layout"),
])
def test_trace_values_a_profile_would_carry_as_null_are_refused(tmp_path, kind, spoil, message):
    """Found by tests/fuzz/trace_fuzz.py, which flags a profile holding null (a NaN or an
    infinity of a trace let through) besides an undefined R^2."""
    trace = tmp_path / f"{kind}.h5"
    if kind == "stencil":
        write_synthetic_stencil(trace, [16, 32, 64], [[1e8] * 3] * 3)
    elif kind == "dgemm":
        write_synthetic_dgemm(trace, [256, 512], [[50.0] * 3, [60.0] * 3])
    else:
        write_synthetic_hash(trace, 4e7, 1e8, 2.5e-7)
    with h5py.File(trace, "r+") as f:
        spoil(f)
    assert f"{trace} {message}" in refused(tmp_path, trace)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_short_trace_fuzzing_run_flags_nothing(tmp_path, seed):
    """200 sets of the shipped traces a seed, one or two of them changed (attributes, values,
    shapes, types, units, groups, bytes): every set is fitted into a profile without null that
    the loader reads, or refused naming the trace with what was expected, leaving no profile.
    The tool takes --cases and any seed for longer campaigns (tests/fuzz/README.md)."""
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "fuzz" / "trace_fuzz.py"), "--bin", str(SIMCORE),
                          "--cases", "200", "--seed", str(seed), "--quiet"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "nothing flagged" in res.stdout
