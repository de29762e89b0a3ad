#!/usr/bin/python3
"""Sweep the number of workers of the master_worker example and plot the makespan.

    cmake --build build && export PYTHONPATH=$PWD/build/python
    /usr/bin/python3 examples/master_worker_sweep.py [--out master_worker_sweep.png]

Runs the scenarios in parallel child processes and compares each makespan with the
closed form of examples/models/master_worker/README.md.
"""
import argparse
import math
import os

import simcore

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "master_worker", "star.xml")


def closed_form(tasks, workers, flops, size, lat=2 * 50e-6, bw=1.25e9, speed=1e9, lat_f=13.01, bw_f=0.97):
    c = lat * lat_f + size / (bw * bw_f)
    x = flops / speed
    k = tasks - 1
    return math.floor(k / workers) * max(c + x, workers * c) + (k % workers) * c + c + x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="master_worker_sweep.png", help="PNG to write")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    args = ap.parse_args()

    base = simcore.load(SCENARIO)
    workers = [1, 2, 4, 8, 12, 16]
    runs = simcore.run_many([base.with_params(workers=w) for w in workers], jobs=args.jobs)
    p = base.params
    print("%8s %14s %14s" % ("workers", "makespan (s)", "closed form"))
    for w, r in zip(workers, runs):
        cf = closed_form(p["tasks"], w, p["task_flops"], p["task_bytes"])
        print("%8d %14.6f %14.6f" % (w, r.metrics["makespan"], cf))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(workers, [r.metrics["makespan"] for r in runs], "o-", label="simcore")
    ax.plot(workers, [closed_form(p["tasks"], w, p["task_flops"], p["task_bytes"]) for w in workers], "x--",
            label="closed form")
    ax.set_xlabel("workers")
    ax.set_ylabel("makespan (s)")
    ax.set_title("master/workers, %d tasks" % p["tasks"])
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("plot:", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
