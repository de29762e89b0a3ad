#!/usr/bin/python3
"""Sweep the dtl transport and the analysis/simulation rank ratio; plot time to solution.

    scripts/build.sh && export PYTHONPATH=$PWD/build/python
    /usr/bin/python3 examples/dtl_transport_sweep.py [--out dtl_transport_sweep.png]

The workflow is scenarios/dtl/staging_two_clusters.xml (512 simulation ranks on the compute
cluster, the analysis on the analysis cluster). Each point is one simulation, run in parallel
child processes.
"""
import argparse
import os

import simcore

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "dtl", "staging_two_clusters.xml")

TRANSPORTS = {
    "staging, network (mailbox)": dict(engine="staging", transport="mailbox"),
    "staging, ideal (lower bound)": dict(engine="staging", transport="ideal"),
    "file, parallel file system": dict(engine="file", storage="pfs", pfs_hosts="ana-[0-3]",
                                       disks_per_storage_host=4),
}
ANALYSIS_RANKS = [16, 32, 64, 128]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="dtl_transport_sweep.png", help="PNG to write")
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulations (default: all cores)")
    args = ap.parse_args()

    base = simcore.load(SCENARIO)
    sim_ranks = base.params["sim_ranks"]
    runs = [(name, n, base.with_params(ana_ranks=n, **params)) for name, params in TRANSPORTS.items()
            for n in ANALYSIS_RANKS]
    results = simcore.run_many([sc for _, _, sc in runs], jobs=args.jobs)

    print("%-30s %10s %16s %14s" % ("transport", "ana/sim", "time to solution", "network (GB)"))
    curves = {}
    for (name, n, _), res in zip(runs, results):
        ratio = n / sim_ranks
        curves.setdefault(name, []).append((ratio, res.metrics["makespan"]))
        print("%-30s %10.4f %14.3f s %14.1f" % (name, ratio, res.metrics["makespan"],
                                                 res.metrics["bytes_network"] / 1e9))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pts in curves.items():
        ax.plot([r for r, _ in pts], [t for _, t in pts], "o-", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("analysis ranks / simulation ranks (%d simulation ranks)" % sim_ranks)
    ax.set_ylabel("time to solution (s)")
    ax.set_title("in situ workflow, 4 GiB per transaction, 10 transactions")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("plot:", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
