#!/usr/bin/python3
"""Sweep ranks per node for a halo exchange and plot the intra/inter-node split.

    scripts/build.sh && export PYTHONPATH=$PWD/build/python
    /usr/bin/python3 examples/halo_ranks_per_node.py [--out halo_ranks_per_node.png]

The case is scenarios/halo/minighost_weak.xml (512 ranks, 100^3 cells each, 5 variables) with
8 to 32 ranks per node: more ranks per node move bytes from the network to the memory bus.
Each point runs with the static and the dynamic protocol policy.
"""
import argparse
import os

import simcore

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "halo", "minighost_weak.xml")
RANKS_PER_NODE = [8, 16, 32]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="halo_ranks_per_node.png", help="PNG to write")
    args = ap.parse_args()

    base = simcore.load(SCENARIO)
    runs = [base.with_params(ranks_per_node=n, policy=p) for n in RANKS_PER_NODE for p in ("static", "dynamic")]
    results = simcore.run_many(runs)
    print("%14s %12s %12s %16s %16s" % ("ranks/node", "intra (GB)", "inter (GB)", "static (ms)", "dynamic (ms)"))
    intra, inter, times, dynamic = [], [], [], []
    for i, n in enumerate(RANKS_PER_NODE):
        m, d = results[2 * i].metrics, results[2 * i + 1].metrics
        intra.append(m["intra_bytes_per_iteration"] / 1e9)
        inter.append(m["inter_bytes_per_iteration"] / 1e9)
        times.append(m["iteration_time"] * 1e3)
        dynamic.append(d["iteration_time"] * 1e3)
        print("%14d %12.3f %12.3f %16.3f %16.3f" % (n, intra[-1], inter[-1], times[-1], dynamic[-1]))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = range(len(RANKS_PER_NODE))
    ax.bar(x, intra, label="intra-node (memory bus)")
    ax.bar(x, inter, bottom=intra, label="inter-node (network)")
    ax.set_xticks(list(x), [str(n) for n in RANKS_PER_NODE])
    ax.set_xlabel("ranks per node")
    ax.set_ylabel("halo bytes per iteration (GB)")
    ax2 = ax.twinx()
    ax2.plot(list(x), times, "ko-", label="iteration, static policy")
    ax2.plot(list(x), dynamic, "rs--", label="iteration, dynamic policy")
    ax2.set_ylabel("iteration time (ms)")
    ax.set_ylim(0, 1.5 * max(a + b for a, b in zip(intra, inter)))  # room for the legends
    ax2.set_ylim(0, 1.5 * max(times + dynamic))
    ax.legend(loc="upper left")
    ax2.legend(loc="upper right")
    ax.set_title("halo exchange, 512 ranks, 100^3 cells and 5 variables each")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("plot:", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
