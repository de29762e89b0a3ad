#!/usr/bin/python3
"""Compare wait-time predictors on the HPC2N trace and plot their error CDFs.

    scripts/build.sh && export PYTHONPATH=$PWD/build/python
    /usr/bin/python3 examples/batch_wait_predictors.py [--policy easy] [--out batch_wait_predictors.png]

Runs scenarios/batch/hpc2n_<policy>.xml. For the jobs of the evaluation period (the second
half of the submissions) that the scheduler gave a predicted start, compares the start the scheduler predicted (its first plan that
tested the job), XGBoost's and ridge regression's (trained on the jobs that finished before
that period) with the actual start.
"""
import argparse
import os

import numpy as np

import simcore

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="easy", choices=["easy", "conservative", "slurm"])
    ap.add_argument("--out", default="batch_wait_predictors.png", help="PNG to write")
    args = ap.parse_args()

    res = simcore.load(os.path.join(HERE, "..", "scenarios", "batch", "hpc2n_%s.xml" % args.policy)).run()
    jobs = res.table("jobs")
    ev = jobs[jobs["ml_set"] == 2]
    # The curves compare the three on the same jobs: those the scheduler predicted (a job that
    # started before any backfill pass tested it has no scheduler prediction).
    ev = ev[~np.isnan(ev["predicted_start_scheduler"])]
    errors = {
        "scheduler (its plan)": np.abs(ev["predicted_start_scheduler"] - ev["start"]),
        "XGBoost": np.abs(ev["predicted_start_xgboost"] - ev["start"]),
        "ridge regression": np.abs(ev["predicted_start_ridge"] - ev["start"]),
    }
    m = res.metrics
    print("%d evaluation jobs, %d with a scheduler prediction" % (m["ml_evaluation_jobs"], m["scheduler_jobs"]))
    print("%-22s %10s %12s %10s %10s" % ("predictor", "MAE (h)", "median (min)", "<= 1 min", "<= 10 %"))
    for key, name in (("scheduler", "scheduler (its plan)"), ("xgboost", "XGBoost"), ("ridge", "ridge regression")):
        print("%-22s %10.2f %12.1f %9.0f%% %9.0f%%" % (name, m[key + "_mae"] / 3600, m[key + "_median_abs_error"] / 60,
                                                     100 * m[key + "_within_1min"], 100 * m[key + "_within_10pct"]))
    print("scheduler / XGBoost error on the jobs the scheduler predicted: %.2f" % m["scheduler_to_xgboost_error_ratio"])

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, err in errors.items():
        err = np.sort(err[~np.isnan(err)]) / 60
        ax.step(np.maximum(err, 1e-2), np.arange(1, len(err) + 1) / len(err), where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("absolute error of the predicted start (minutes)")
    ax.set_ylabel("share of jobs")
    ax.set_title("HPC2N, %s: predicted starts, %d jobs" % (args.policy, len(ev)))
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print("plot:", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
