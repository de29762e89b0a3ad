#!/usr/bin/python3
"""Fit a calibration profile from this machine's traces and see what it changes in a halo run.

    scripts/build.sh && export PYTHONPATH=$PWD/build/python
    /usr/bin/python3 examples/calibrated_halo.py [--traces calibration/traces/vm] [--out calibrated_halo.png]

simcore.calibrate() fits the traces (STREAM, DGEMM, stencil, ping-pong/ping-ping, hash lookups)
as `simcore calibrate` does. The case is scenarios/halo/two_ranks_one_node.xml (2 ranks on one
node, one face of 5 variables each way, SMPI's network model) at 16^3 to 128^3 cells per rank,
run without a profile (the platform's nominal host speed and loopback, 50 flops per cell)
and with it (the fitted loopback and SMPI factors, the DGEMM core speed, and the stencil's
flops per cell), printed and plotted side by side. Then the same exchange with periodic
boundaries (six faces a rank: two to the other rank, four to itself), predicted with the
profile in both modes: SMPI mode (one loopback transfer per message) and the detailed mode
(copies through the node's memory at calib_copy's cached rates, the single copies' start-up
from the ping-pong fit), which sees the six copies contend.
"""
import argparse
import glob
import os
import tempfile

import simcore

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
SCENARIO = os.path.join(ROOT, "scenarios", "halo", "two_ranks_one_node.xml")
SIZES = [16, 32, 64, 128]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=os.path.join(ROOT, "calibration", "traces", "vm"),
                    help="folder of calibration traces (*.h5)")
    ap.add_argument("--out", default="calibrated_halo.png", help="PNG to write")
    args = ap.parse_args()

    traces = sorted(glob.glob(os.path.join(args.traces, "*.h5")))
    with tempfile.TemporaryDirectory() as tmp:
        profile_path = os.path.join(tmp, "profile.json")
        profile = simcore.calibrate(traces, out=profile_path)
        net = profile["quality"]["network"]
        print("profile from %d traces: network %s (%s), %d segments, switch at %g B; core %.1f Gflop/s; "
              "%.0f flops per stencil cell" % (len(traces), net["placement"], net["pattern"], len(net["segments"]),
                                               net["protocol_switch"], profile["rates"]["dgemm_flops"]["value"] / 1e9,
                                               profile["rates"]["flops_per_cell"]["value"]))
        base = simcore.load(SCENARIO)
        plain = [base.with_params(local_cells=[n, n, n]) for n in SIZES]
        fitted = []
        for run in plain:
            run = run.copy()
            run.calibration = profile_path
            fitted.append(run)
        periodic = {mode: [run.with_params(periodic=True, mode=mode) for run in fitted]
                    for mode in ("smpi", "detailed")}
        results = simcore.run_many(plain + fitted + periodic["smpi"] + periodic["detailed"])
    print("%8s %10s | %14s %14s | %14s %14s" % ("cells", "face (kB)", "comm, plain", "comm, fitted", "compute, plain",
                                              "compute, fitted"))
    comm = {"plain": [], "fitted": []}
    compute = {"plain": [], "fitted": []}
    for i, n in enumerate(SIZES):
        p, f = results[i].metrics, results[len(SIZES) + i].metrics
        comm["plain"].append(p["communication_time_slowest"] * 1e6)
        comm["fitted"].append(f["communication_time_slowest"] * 1e6)
        compute["plain"].append(p["compute_time_mean"] * 1e3)
        compute["fitted"].append(f["compute_time_mean"] * 1e3)
        print("%8s %10.1f | %11.2f us %11.2f us | %11.3f ms %11.3f ms" % (
            "%d^3" % n, n * n * 5 * 8 / 1e3, comm["plain"][-1], comm["fitted"][-1], compute["plain"][-1],
            compute["fitted"][-1]))

    print("periodic, with the profile (six faces a rank):")
    print("%8s %10s | %14s %14s" % ("cells", "face (kB)", "SMPI mode", "detailed mode"))
    for i, n in enumerate(SIZES):
        smpi, detailed = (results[(k + 2) * len(SIZES) + i].metrics["communication_time_slowest"] * 1e6
                          for k in (0, 1))
        print("%8s %10.1f | %11.2f us %11.2f us" % ("%d^3" % n, n * n * 5 * 8 / 1e3, smpi, detailed))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    faces = [n * n * 5 * 8 / 1e3 for n in SIZES]
    for key, style in (("plain", "o--"), ("fitted", "s-")):
        a1.loglog(faces, comm[key], style, label=key)
        a2.loglog([n**3 for n in SIZES], compute[key], style, label=key)
    a1.set_xlabel("face (kB)")
    a1.set_ylabel("exchange time per iteration (us)")
    a2.set_xlabel("cells per rank")
    a2.set_ylabel("compute time per iteration (ms)")
    for a in (a1, a2):
        a.legend()
    fig.suptitle("halo, 2 ranks on one node: nominal platform against the fitted profile")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("plot:", args.out)


if __name__ == "__main__":
    main()
