#!/usr/bin/python3
"""Calibrate, then predict, on this machine: measure STREAM and an intra-node MPI ping-pong
(with ping-ping), fit a profile with `simcore calibrate`, predict the halo exchange of 2 ranks
on one node (scenarios/halo/two_ranks_one_node.xml: the halo model's SMPI mode with the profile), run
the same exchange natively (build/bin/halo_mpi under mpirun, median of its iterations) and
print the error per size.

The machine is shared and its speed drifts from one minute to the next: the loop takes
ROUNDS rounds, each a ping-pong trace and a native run of every size, interleaved, then fits
one profile on all the ping-pong traces (the fitter pools them, as it would traces of several
node pairs of a cluster) and compares its prediction with the median of the native runs.
The machine's state can change between rounds (here, on a shared virtual machine, small
messages between the two cores take either about 2.5 or about 4 us for minutes at a time),
and the pooled medians of traces and native runs may then fall in different states. So each
round is also calibrated and predicted on its own (its trace and STREAM, against its native
run, seconds apart): the paired errors, whose median per size is the model's error with the
machine's state held.

    calibration/predict_loop.py [OUT_DIR] [--rounds 11] [--sizes 16,32,64,128]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("SIMCORE_BUILD_DIR", ROOT / "build")) / "bin"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MPIRUN = ["mpirun", "--oversubscribe", "-np", "2"]

SCENARIO = ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml"  # the same exchange, SMPI mode


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], env=ENV, check=True, capture_output=True, text=True, **kw).stdout


def native(n):
    out = run(MPIRUN + [BIN / "halo_mpi", "--procs", "2,1,1", "--local", f"{n},{n},{n}", "--variables", "5",
                        "--periodic", "0", "--iterations", "300", "--warmup", "20"])
    return statistics.median(json.loads(out.strip().splitlines()[-1])["per_iteration_max"])


def model(profile, n, out_dir):
    out = run([BIN / "simcore", "run", SCENARIO, "--calibration", profile, "--set", f"local_cells={n},{n},{n}",
               "--quiet", "--json", "--out", out_dir])
    return json.loads(out)["metrics"]["communication_time_slowest"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", help="folder for traces, profiles and runs (default: a new temporary one)")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--sizes", default="16,32,64,128", help="cells per rank along each side")
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="simcore-loop-"))
    out.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    run([BIN / "calib_stream", "--repetitions", "5", "-o", out / "stream.h5"])
    natives = {n: [] for n in sizes}
    traces = []
    for r in range(a.rounds):
        traces.append(out / f"pingpong-{r}.h5")
        run(MPIRUN + [BIN / "calib_pingpong", "--max", "4194304", "--repetitions", "20", "-o", traces[-1]])
        for n in sizes:
            natives[n].append(native(n))
    profile = out / "profile.json"
    print(run([BIN / "simcore", "calibrate", *traces, out / "stream.h5", "-o", profile]), end="")
    models = {n: model(profile, n, out / f"run-{n}") for n in sizes}
    paired = {n: [] for n in sizes}  # each round: its own profile against its own native run
    for r, trace in enumerate(traces):
        own = out / f"profile-{r}.json"
        run([BIN / "simcore", "calibrate", trace, out / "stream.h5", "-o", own])
        for n in sizes:
            paired[n].append((model(own, n, out / f"run-{n}-{r}") - natives[n][r]) / natives[n][r])
    print(f"{'cells':<8} {'face (B)':>9} {'native (us)':>12} {'model (us)':>11} {'error':>8}  {'paired error':>13}"
          f"   native per round (us)")
    worst = worst_paired = 0.0
    for n in sizes:
        nat, mod = statistics.median(natives[n]), models[n]
        err, perr = (mod - nat) / nat, statistics.median(paired[n])
        worst, worst_paired = max(worst, abs(err)), max(worst_paired, abs(perr))
        rounds = ", ".join(f"{1e6 * x:.2f}" for x in natives[n])
        print(f"{str(n) + '^3':<8} {n * n * 5 * 8:>9} {nat * 1e6:>12.2f} {mod * 1e6:>11.2f} {100 * err:>+7.1f} %"
              f" {100 * perr:>+11.1f} %   {rounds}")
    print(f"largest error: {100 * worst:.1f} % pooled, {100 * worst_paired:.1f} % paired (median of {a.rounds} "
          f"rounds, each calibrated and predicted on its own); traces and profiles: {out}")
    json.dump({"sizes": sizes, "native_s": natives, "model_s": models, "paired_error": paired},
              open(out / "loop.json", "w"), indent=1)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"predict_loop: {' '.join(map(str, e.cmd))} failed ({e.returncode}):\n{e.stderr}")
