"""What the calibration tests share: the programs' paths, synthetic traces as h5py writes them,
and runs of `simcore calibrate` and of the halo model with a profile."""

import json
import os
import pathlib
import subprocess

import h5py
import numpy as np

BIN = pathlib.Path(os.environ["SIMCORE_BIN"]).resolve().parent
ROOT = pathlib.Path(os.environ["SIMCORE_SOURCE_DIR"])
SIMCORE = str(BIN / "simcore")


def calibrate(tmp_path, *traces):
    out = tmp_path / "profile.json"
    res = subprocess.run([SIMCORE, "calibrate", *map(str, traces), "-o", str(out)], capture_output=True, text=True)
    return res, out


def refused(tmp_path, *traces):
    """The stderr of `simcore calibrate` on `traces`, which must refuse them: exit 2, no profile."""
    res, out = calibrate(tmp_path, *traces)
    assert res.returncode == 2 and not out.exists(), res.stderr
    return res.stderr


def synthetic_trace(path):
    """A new trace file (an open h5py.File) with the root attributes the fitter reads."""
    f = h5py.File(path, "w")
    f.attrs["schema"] = "simcore-calibration-trace/1"
    f.attrs["host"] = "synthetic"
    return f


def fitted(tmp_path, *traces):
    """The profile `simcore calibrate` fits from `traces`, which must succeed."""
    res, out = calibrate(tmp_path, *traces)
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text())


def write_synthetic_pingpong(path, latency, bandwidth, noise=0.0, placement="inter-node"):
    """A trace as h5py writes it: one-way time = latency + size / bandwidth."""
    rng = np.random.default_rng(3)
    sizes = 2.0 ** np.arange(0, 25)
    one_way = latency + sizes / bandwidth
    rt = 2 * one_way[:, None] * (1 + noise * rng.standard_normal((len(sizes), 5)))
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = placement
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=rt).attrs["unit"] = "s"


def run_halo(tmp_path, name, params, profile=None, metric="makespan", extra=(), platform=None):
    """One metric of a 2-rank halo scenario on platforms/single_node.xml (1 Gf cores) with the
    given <param> values (name: value; None leaves one out) and, optionally, a profile."""
    platform = platform or ROOT / "platforms" / "single_node.xml"
    scenario = tmp_path / ("halo_%s.xml" % name)
    calibration = "" if profile is None else f'<calibration file="{profile}"/>'
    lines = "\n".join(f'  <param name="{k}" value="{v}"/>' for k, v in params.items() if v is not None)
    scenario.write_text(f"""<?xml version="1.0"?>
<scenario model="halo" seed="1">
  <platform file="{platform}"/>
  {calibration}
  <param name="ranks" value="2"/>
  <param name="procs" value="2,1,1"/>
{lines}
</scenario>
""")
    out = subprocess.run([SIMCORE, "run", str(scenario), "--json", "--quiet", "--out", str(tmp_path / name), *extra],
                         capture_output=True, text=True, check=True).stdout
    metrics = json.loads(out)["metrics"]
    return metrics if metric is None else metrics[metric]


def write_synthetic_stencil(path, cells, rates, stencil="7-point", variables=5):
    """A calib_stencil trace as h5py writes it: `rates` holds one row of repetitions per size."""
    rates = np.asarray(rates, dtype=float)
    with synthetic_trace(path) as f:
        g = f.create_group("stencil")
        g.attrs["stencil"] = stencil
        g.attrs["variables"] = str(variables)
        g.attrs["flops_per_cell_nominal"] = str(8 * variables)
        g.create_dataset("cells", data=np.asarray(cells, dtype=float)).attrs["unit"] = ""
        cubes = np.asarray(cells, dtype=float)[:, None] ** 3
        g.create_dataset("seconds", data=cubes / rates).attrs["unit"] = "s"
        g.create_dataset("cell_rate", data=rates).attrs["unit"] = "1/s"


def write_synthetic_dgemm(path, sizes, gflops, cpu_id=None, caches=None):
    with synthetic_trace(path) as f:
        if cpu_id is not None:
            f.attrs["cpu_id"] = cpu_id
        if caches is not None:
            f.attrs["caches"] = caches
        g = f.create_group("dgemm")
        g.attrs["path"] = "portable"
        g.create_dataset("size", data=np.asarray(sizes, dtype=float)).attrs["unit"] = ""
        g.create_dataset("gflops", data=np.asarray(gflops, dtype=float)).attrs["unit"] = "Gflop/s"


# Three sizes, five repetitions; the largest (64) is not the last row, and its median (2e8)
# is neither its first nor its mean.
STENCIL_CELLS = [16, 64, 32]
STENCIL_RATES = [[4.0e8, 4.1e8, 3.9e8, 4.0e8, 4.2e8],
                 [2.1e8, 1.9e8, 2.0e8, 2.5e8, 1.5e8],
                 [3.0e8, 3.0e8, 3.1e8, 2.9e8, 3.0e8]]


def write_synthetic_network(path, sizes, pingpong, pingping=None, placement="inter-node", reps=5, buffers=None):
    """A calib_pingpong-like trace as h5py writes it, without noise: `pingpong` and `pingping` are
    functions of the size (array) giving the one-way time (s); the ping-ping group is left out
    when `pingping` is None; `buffers` (calib_pingpong --buffers) is left out when None, as
    traces written before the option have it."""
    sizes = np.asarray(sizes, dtype=float)
    with synthetic_trace(path) as f:
        g = f.create_group("pingpong")
        g.attrs["placement"] = placement
        if buffers is not None:
            g.attrs["buffers"] = buffers
        g.create_dataset("size", data=sizes).attrs["unit"] = "B"
        g.create_dataset("round_trip", data=np.repeat(2 * pingpong(sizes)[:, None], reps, axis=1)).attrs["unit"] = "s"
        if pingping is not None:
            h = f.create_group("pingping")
            h.attrs["placement"] = placement
            h.create_dataset("size", data=sizes).attrs["unit"] = "B"
            h.create_dataset("time", data=np.repeat(pingping(sizes)[:, None], reps, axis=1)).attrs["unit"] = "s"


# Ping-pong: a message alone (ping-ping, both directions busy, is in test_fit_network.py).
PP_LAT, PP_BW = 2e-6, 4e9


POWERS = 2.0 ** np.arange(0, 25)


def pingpong_law(s):
    return PP_LAT + s / PP_BW


def link_of(profile):
    assert len(profile["links"]) == 1
    link = profile["links"][0]
    assert link["match"] == ".*"
    return float(link["latency"].rstrip("s")), float(link["bandwidth"].rstrip("Bps"))


def parse_factors(text):
    """SMPI's "size:factor;size:factor" as a list of (size, factor)."""
    pairs = []
    for item in text.split(";"):
        size, factor = item.split(":")
        pairs.append((float(size), float(factor)))
    return pairs


def cuda_trace_as_the_device_writes_it(path, rates):
    """The JSON form of a trace (what calib_cuda_device writes on a bare GPU machine)."""
    trace = {"attributes": {"schema": "simcore-calibration-trace/1", "host": "gpu-node", "gpu": "Test GPU",
                            "cpu_model": "x", "isa": "", "compiler": "nvcc", "flags": "-O3",
                            "date": "2026-12-04T00:00:00Z", "git_revision": "abc1234"},
             "benchmarks": {"cuda": {"parameters": {"device": "Test GPU", "compute_capability": "9.0",
                                                    "check_gemm_fp32": "1.2e-07"},
                                     "datasets": {k: {"unit": "Gflop/s", "shape": [len(v)], "values": v}
                                                  for k, v in rates.items()}}}}
    path.write_text(json.dumps(trace))


def write_synthetic_stream(path, copy, triad):
    """A calib_stream trace: one thread count (1), three repetitions of each rate (B/s)."""
    with synthetic_trace(path) as f:
        g = f.create_group("stream")
        g.create_dataset("threads", data=np.array([1.0])).attrs["unit"] = ""
        g.create_dataset("copy_bandwidth", data=np.full((1, 3), copy)).attrs["unit"] = "Bps"
        g.create_dataset("triad_bandwidth", data=np.full((1, 3), triad)).attrs["unit"] = "Bps"


def write_synthetic_hash(path, lookups, lines, latency):
    """A calib_hash trace: the pipelined table's lookups/s (3 repetitions), the line rates of 1
    and 2 chains (the first gives the latency)."""
    with synthetic_trace(path) as f:
        g = f.create_group("hash_table")
        g.attrs["structures"] = "simd_table,simd_table_batched"
        g.attrs["miss_rate"] = "0.9"
        g.create_dataset("lookup_rate", data=np.array([[1e7] * 3, [lookups] * 3])).attrs["unit"] = "1/s"
        g.create_dataset("random_line_rate", data=np.array([1 / latency, lines])).attrs["unit"] = "1/s"


def two_segment_law(latency, bandwidth, switch, latency2, bandwidth2):
    """One-way time of an eager protocol up to `switch` bytes and a rendezvous above it."""
    return lambda s: np.where(np.asarray(s, dtype=float) < switch, latency + np.asarray(s, dtype=float) / bandwidth,
                              latency2 + np.asarray(s, dtype=float) / bandwidth2)


def two_host_platform(path, hosts=("n0", "n1"), sharing_policy=None, direction=None):
    """Writes a SimGrid platform of two hosts of 1 Gf joined by one link of 1 GB/s and 10 us
    (`sharing_policy` and the route's `direction` where given) to `path`, and returns it."""
    policy = f' sharing_policy="{sharing_policy}"' if sharing_policy else ""
    way = f' direction="{direction}"' if direction else ""
    a, b = hosts
    path.write_text(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="{a}" speed="1Gf"/>
    <host id="{b}" speed="1Gf"/>
    <link id="wire" bandwidth="1GBps" latency="10us"{policy}/>
    <route src="{a}" dst="{b}"><link_ctn id="wire"{way}/></route>
  </zone>
</platform>
""")
    return path
