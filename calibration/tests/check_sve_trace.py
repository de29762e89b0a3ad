"""The SVE DGEMM's trace, end to end (a ctest of tests/CMakeLists.txt, where the aarch64 cross
build and qemu-aarch64 exist): calib_dgemm_sve run under `qemu-aarch64 -cpu max` writes the
JSON form of a trace with a `dgemm` group as calib_dgemm writes it (path "sve"), its root
attributes name the emulated CPU's SVE, and `simcore calibrate` takes the host speed from it,
as is and once calib_trace_convert made an HDF5 trace of it.
  check_sve_trace.py QEMU_AARCH64 CALIB_DGEMM_SVE SIMCORE CALIB_TRACE_CONVERT OUT_DIR
Exits 0 when every check holds, else 1 naming the first that failed."""

import json
import platform
import math
import pathlib
import subprocess
import sys

SIZES = [48, 64]
REPETITIONS = 2


def fail(message):
    print("check_sve_trace: " + message, file=sys.stderr)
    sys.exit(1)


def run(argv):
    res = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300)
    print("$ " + " ".join(str(a) for a in argv) + "\n" + res.stdout + res.stderr, end="")
    if res.returncode != 0:
        fail("%s exited %d; expected 0" % (pathlib.Path(argv[0]).name, res.returncode))
    return res.stdout


def median(values):
    """simcore::quantile(values, 0.5), operation for operation (so that the speed it gives,
    written with 6 significant digits, is the same text)."""
    v = sorted(values)
    pos = 0.5 * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def check_profile(profile_path, trace_name, expected_speed):
    profile = json.loads(profile_path.read_text())
    hosts = profile.get("hosts")
    if hosts != [{"match": ".*", "speed": "%.6gf" % expected_speed}]:
        fail("%s: hosts %s; expected one rule of speed %.6gf (the median Gflop/s at n = %d x 1e9)"
             % (profile_path, hosts, expected_speed, SIZES[-1]))
    compute = profile.get("quality", {}).get("compute", [])
    if len(compute) != 1 or compute[0].get("path") != "sve" or compute[0].get("size") != SIZES[-1]:
        fail("%s: quality.compute %s; expected one entry of path 'sve' at size %d" % (profile_path, compute, SIZES[-1]))
    if pathlib.Path(compute[0].get("trace", "")).name != trace_name:
        fail("%s: quality.compute[0].trace is %s; expected %s" % (profile_path, compute[0].get("trace"), trace_name))
    if profile.get("rates", {}).get("dgemm_flops", {}).get("value") != expected_speed:
        fail("%s: rates.dgemm_flops %s; expected %r" % (profile_path, profile.get("rates", {}).get("dgemm_flops"),
                                                       expected_speed))


def main():
    if len(sys.argv) != 6:
        fail("usage: check_sve_trace.py QEMU_AARCH64 CALIB_DGEMM_SVE SIMCORE CALIB_TRACE_CONVERT OUT_DIR")
    qemu, sve, simcore, convert = sys.argv[1:5]
    out = pathlib.Path(sys.argv[5]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    trace_path, h5_path = out / "dgemm-sve.json", out / "dgemm-sve.h5"
    profile_path, profile_h5_path = out / "profile.json", out / "profile-h5.json"
    for stale in (trace_path, h5_path, profile_path, profile_h5_path):
        stale.unlink(missing_ok=True)

    # The benchmark: its standard output stays one JSON document, which names the trace.
    printed = json.loads(run([qemu, "-cpu", "max", sve, "--sizes", ",".join(map(str, SIZES)),
                              "--repetitions", REPETITIONS, "-o", trace_path]))
    if printed.get("correct") is not True or printed.get("trace") != str(trace_path):
        fail("standard output %s; expected correct: true and the trace's path" % printed)
    if "not under emulation" not in printed.get("note", ""):
        fail("standard output %s; expected the note that timings under emulation mean nothing" % printed)

    trace = json.loads(trace_path.read_text())
    attributes = trace.get("attributes", {})
    if attributes.get("schema") != "simcore-calibration-trace/1":
        fail("schema %r; expected simcore-calibration-trace/1" % attributes.get("schema"))
    if "sve" not in attributes.get("isa", "").split():
        fail("isa %r; expected it to name sve (qemu -cpu max has SVE)" % attributes.get("isa"))
    if any(f.startswith("avx") or f.startswith("sse") for f in attributes.get("isa", "").split()):
        fail("isa %r names x86 flags: read from the host's /proc/cpuinfo, not from the Arm CPU"
             % attributes.get("isa"))
    for key in ("host", "cpu_model", "compiler", "flags", "date", "git_revision", "gpu"):
        if not attributes.get(key):
            fail("root attribute %s is %r; expected it set" % (key, attributes.get(key)))
    # Under qemu-user /proc/cpuinfo and sysfs are the host's: the core and the caches say so.
    if platform.machine() not in ("aarch64", "arm64") and not all(
            attributes.get(key, "").startswith("emulated (") for key in ("cpu_id", "caches")):
        fail("cpu_id %r, caches %r; expected both to say they are the emulating host's"
             % (attributes.get("cpu_id"), attributes.get("caches")))
    if "-march=armv8.2-a+sve" not in attributes["flags"]:
        fail("flags %r; expected the cross build's" % attributes["flags"])
    if sorted(trace.get("benchmarks", {})) != ["dgemm"]:
        fail("groups %s; expected dgemm alone" % sorted(trace.get("benchmarks", {})))
    dgemm = trace["benchmarks"]["dgemm"]
    parameters, datasets = dgemm.get("parameters", {}), dgemm.get("datasets", {})
    if parameters.get("path") != "sve" or parameters.get("vector_bits") != str(printed.get("vector_bits")):
        fail("parameters %s; expected path sve and vector_bits %s" % (parameters, printed.get("vector_bits")))
    if parameters.get("repetitions") != str(REPETITIONS) or parameters.get("threads") != "1":
        fail("parameters %s; expected repetitions %d, threads 1" % (parameters, REPETITIONS))
    size = datasets.get("size", {})
    if size.get("unit") != "" or size.get("shape") != [len(SIZES)] or size.get("values") != SIZES:
        fail("dataset size %s; expected unit '', shape [%d], values %s" % (size, len(SIZES), SIZES))
    rows = {}
    for name, unit in (("gflops", "Gflop/s"), ("seconds", "s")):
        d = datasets.get(name, {})
        values = d.get("values", [])
        if d.get("unit") != unit or d.get("shape") != [len(SIZES), REPETITIONS] or len(values) != len(SIZES) * REPETITIONS:
            fail("dataset %s %s; expected unit %s, shape [%d, %d]" % (name, d, unit, len(SIZES), REPETITIONS))
        if not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values):
            fail("dataset %s holds %s; expected positive, finite values" % (name, values))
        rows[name] = [values[r * REPETITIONS:(r + 1) * REPETITIONS] for r in range(len(SIZES))]
    for r, n in enumerate(SIZES):  # each rate is the flops of its own time
        for g, s in zip(rows["gflops"][r], rows["seconds"][r]):
            if not math.isclose(g, 2.0 * n ** 3 / s / 1e9, rel_tol=1e-9):
                fail("at n = %d, %r Gflop/s in %r s; expected 2 n^3 / time" % (n, g, s))

    # The fitter: the host speed is the median at the largest size, path sve in its quality.
    speed = median(rows["gflops"][-1]) * 1e9
    run([simcore, "calibrate", trace_path, "-o", profile_path])
    check_profile(profile_path, trace_path.name, speed)
    # The HDF5 trace made from it gives the same profile's speed.
    run([convert, trace_path, "-o", h5_path])
    run([simcore, "calibrate", h5_path, "-o", profile_h5_path])
    check_profile(profile_h5_path, h5_path.name, speed)
    print("check_sve_trace: ok (speed %.6gf, isa %s)" % (speed, attributes["isa"]))


if __name__ == "__main__":
    main()
