#!/usr/bin/python3
"""Cross-validation of the halo model against SMPI.

Each case runs the MPI halo program (models/halo/mpi/halo_mpi.cpp, built with smpicxx) under
smpirun, and the halo model in its SMPI-equivalent mode (`mode=smpi`, SMPI's network model,
the same platform, decomposition and placement), and compares the communication time per
iteration (max over ranks, mean over iterations). Also reports the detailed model (static
protocols, memory buses) next to them, to show where it departs from SMPI.

    compare_smpi.py [--small] [--no-barrier] [--build BUILD_DIR]    prints a Markdown table

The MPI program meets in MPI_Barrier, then runs two warm-up iterations, then three; with
--no-barrier it starts every rank at time 0, as the model does, without warm-up.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]

# (platform, host prefix, ranks, ranks per node, local cells, variables, stencil, bundled)
CASES = [
    ("small_cluster.xml", "c-", 8, 1, 32, 5, 7, True),
    ("small_cluster.xml", "c-", 8, 4, 32, 5, 7, True),
    ("small_cluster.xml", "c-", 8, 8, 32, 5, 27, True),
    ("small_cluster.xml", "c-", 16, 1, 10, 40, 27, True),
    ("small_cluster.xml", "c-", 16, 2, 64, 5, 7, True),
    ("small_cluster.xml", "c-", 64, 4, 20, 5, 27, True),
    ("small_cluster.xml", "c-", 128, 8, 50, 5, 7, True),
    ("fat_tree.xml", "ft-", 64, 1, 100, 5, 7, True),
    ("fat_tree.xml", "ft-", 216, 8, 32, 5, 27, True),
    ("fat_tree.xml", "ft-", 512, 8, 100, 5, 7, True),
    ("fat_tree.xml", "ft-", 512, 32, 20, 40, 27, True),
    # unbundled: one message per variable and neighbour, more than `transfers_per_actor` a rank
    ("small_cluster.xml", "c-", 8, 1, 8, 5, 7, False),
    ("small_cluster.xml", "c-", 8, 4, 16, 8, 27, False),
    ("small_cluster.xml", "c-", 16, 2, 4, 10, 27, False),
    ("small_cluster.xml", "c-", 64, 4, 8, 5, 27, False),
]
SMALL = [c for c in CASES if c[2] <= 16]


def smpi_run(build, platform, hosts, ranks, per_node, local, variables, stencil, bundled, iterations, barrier=True,
             flops_per_cell=0, overlap=False, ois=None):
    """The MPI program's JSON line under smpirun (with `ois`: smpi/ois, what MPI_Isend sleeps)."""
    with tempfile.TemporaryDirectory() as tmp:
        hostfile = pathlib.Path(tmp) / "hosts"
        hostfile.write_text("".join(f"{hosts}{r // per_node}\n" for r in range(ranks)))
        cmd = ["smpirun", "-np", str(ranks), "-platform", str(ROOT / "platforms" / platform), "-hostfile",
               str(hostfile), "--cfg=smpi/simulate-computation:no", "--log=root.thres:critical",
               # MPI_Wtime would add 10 ns of its own to every measured time
               "--cfg=smpi/wtime:0", *([f"--cfg=smpi/ois:{ois}"] if ois else []),
               str(build / "bin" / "halo_mpi_smpi"), "--local", f"{local},{local},{local}", "--variables",
               str(variables), "--stencil", str(stencil), "--bundled", str(int(bundled)), "--iterations",
               str(iterations), "--warmup", "2" if barrier else "0", "--barrier", str(int(barrier)),
               "--flops-per-cell", str(flops_per_cell), "--overlap", str(int(overlap))]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tmp).stdout
    return json.loads(out.strip().splitlines()[-1])


def smpi_time(build, *case_and_iterations, barrier=True, ois=None):
    return smpi_run(build, *case_and_iterations, barrier=barrier, ois=ois)["communication_time_max"]


def model_run(build, platform, hosts, ranks, per_node, local, variables, stencil, bundled, iterations, smpi_mode,
              flops_per_cell=0, overlap=False, ois=None, extra=None):
    """The model's metrics for the same case (`ois`: the law of parameter smpi_ois; `extra`:
    more parameters)."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario = pathlib.Path(tmp) / "s.xml"
        params = dict(ranks=ranks, local_cells=f"{local},{local},{local}", variables=variables,
                      stencil=f"{stencil}-point", bundled=str(bundled).lower(), iterations=iterations,
                      flops_per_cell=flops_per_cell, overlap=str(overlap).lower(), ranks_per_node=per_node,
                      hosts=f"{hosts}.*")
        if smpi_mode:
            params["mode"] = "smpi"
        if ois:
            params["smpi_ois"] = ois
        params.update(extra or {})
        lines = ['<?xml version="1.0"?>', '<scenario model="halo" seed="1">',
                 f'  <platform file="{ROOT / "platforms" / platform}"/>']
        lines += [f'  <param name="{k}" value="{v}"/>' for k, v in params.items()]
        if smpi_mode:  # what smpirun sets
            lines += ['  <config name="network/model" value="SMPI"/>',
                      '  <config name="surf/precision" value="1e-9"/>']
        lines.append("</scenario>")
        scenario.write_text("\n".join(lines) + "\n")
        out = subprocess.run([str(build / "bin" / "simcore"), "run", str(scenario), "--quiet", "--json", "--out",
                              str(pathlib.Path(tmp) / "out")], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["metrics"]


def model_time(build, *case_and_iterations_and_mode, **options):
    return model_run(build, *case_and_iterations_and_mode, **options)["communication_time_slowest"]


def compare(case, build, iterations=3, barrier=True, ois=None):
    smpi = smpi_time(build, *case, iterations, barrier=barrier, ois=ois)
    equivalent = model_time(build, *case, iterations, True, ois=ois)
    detailed = model_time(build, *case, iterations, False)
    return smpi, equivalent, detailed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="only the cases of up to 16 ranks")
    ap.add_argument("--no-barrier", action="store_true", help="start every rank at time 0, without warm-up")
    ap.add_argument("--build", default=os.environ.get("SIMCORE_BUILD_DIR", str(ROOT / "build")))
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    print("| platform | ranks | per node | cells/rank | vars | bundled | stencil | SMPI (us) | model, smpi mode (us) | error |"
          " detailed model (us) | detailed / SMPI |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for case in SMALL if args.small else CASES:
        smpi, eq, det = compare(case, build, barrier=not args.no_barrier)
        err = abs(eq - smpi) / smpi
        worst = max(worst, err)
        p, _, ranks, per, local, var, st, bundled = case
        print(f"| {p} | {ranks} | {per} | {local}^3 | {var} | {'yes' if bundled else 'no'} | {st} | {smpi * 1e6:.2f} | {eq * 1e6:.2f} |"
              f" {100 * err:.2g} % | {det * 1e6:.2f} | {det / smpi:.2f} |", flush=True)
    print(f"\nworst error of the smpi mode: {100 * worst:.2g} %")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
