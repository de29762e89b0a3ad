#!/usr/bin/python3
"""A stand-in for Slurm's srun and scontrol, Open MPI's mpirun and hostname, to run
calibration/slurm/calibrate.sbatch on one machine (called through links of those names).

- Options are checked as Slurm and Open MPI would take them: srun knows --nodes, --ntasks,
  --ntasks-per-node (else SLURM_NTASKS_PER_NODE, as srun reads it), --cpus-per-task,
  --nodelist and --mpi (a plugin that FAKE_SRUN_PLUGINS lists); the tasks must fit on the
  nodes of SLURM_JOB_NODELIST (SLURM_NTASKS_PER_NODE task slots each); mpirun knows -np, --host
  and --map-by slot|node and, as Open MPI does inside an allocation, takes each host's slots
  from the allocation (a ":N" after a host name does not add any).
- Each task of a step runs here, one after another, with `hostname` answering its node.
- An MPI step (calib_pingpong) on one node runs under the real mpirun; across two nodes it runs
  calib_pingpong_smpi under smpirun on FAKE_PLATFORM, whose hosts are the nodes: an inter-node
  trace of known links.
Every step is logged as one JSON line in FAKE_SLURM_LOG."""

import json
import os
import subprocess
import sys

MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def die(message):
    print("fake %s: %s" % (os.path.basename(sys.argv[0]), message), file=sys.stderr)
    sys.exit(1)


def allocation():
    return os.environ["SLURM_JOB_NODELIST"].split(",")


def log(entry):
    with open(os.environ["FAKE_SLURM_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def run_mpi(hosts, argv):
    """calib_pingpong's ranks on `hosts` (one entry per rank)."""
    if len(set(hosts)) == 1:
        cmd = [os.environ["REAL_MPIRUN"], "--oversubscribe", "-np", str(len(hosts))] + argv
    else:
        hostfile = os.path.join(os.environ["FAKE_WORK_DIR"], "hostfile")
        with open(hostfile, "w") as f:
            f.write("\n".join(hosts) + "\n")
        smpi = os.path.join(os.path.dirname(argv[0]), "calib_pingpong_smpi")
        cmd = ["smpirun", "-np", str(len(hosts)), "-platform", os.environ["FAKE_PLATFORM"], "-hostfile", hostfile,
               "--cfg=smpi/privatization:0", "--cfg=smpi/simulate-computation:no", "--cfg=smpi/bw-factor:0:1",
               "--cfg=smpi/lat-factor:0:1", "--cfg=network/crosstraffic:0",
               "--cfg=smpi/async-small-thresh:2000000", "--cfg=smpi/send-is-detached-thresh:2000000",
               "--log=root.thres:critical", smpi] + argv[1:]
    return subprocess.run(cmd, env=MPI_ENV).returncode


def srun(args):
    plugins = [p for p in os.environ.get("FAKE_SRUN_PLUGINS", "").split(",") if p]
    if args == ["--mpi=list"]:
        print("MPI plugin types are...\n\tnone\n" + "".join("\t%s\n" % p for p in plugins), end="")
        return 0
    known = {"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "nodelist", "mpi", "gpus-per-task"}
    opts = {}
    while args and args[0].startswith("-"):
        a = args.pop(0)
        key, _, value = a[2:].partition("=")
        if not a.startswith("--") or not value or key not in known:
            die("unrecognized option '%s'" % a)
        opts[key] = value
    if not args:
        die("no program")
    nodes = int(opts.get("nodes", 1))
    ntasks = int(opts.get("ntasks", nodes))
    per_node = int(opts.get("ntasks-per-node", os.environ.get("SLURM_NTASKS_PER_NODE", ntasks)))
    nodelist = opts["nodelist"].split(",") if "nodelist" in opts else allocation()[:nodes]
    if nodes > len(allocation()) or len(nodelist) != nodes or not set(nodelist) <= set(allocation()):
        die("nodes %s (%d) are not %d nodes of the allocation %s" % (nodelist, len(nodelist), nodes, allocation()))
    if ntasks != nodes * per_node:
        die("%d tasks on %d nodes with %d tasks per node" % (ntasks, nodes, per_node))
    # The smallest node's CPUs (FAKE_NODE_CPUS), else the batch node's.
    if int(opts.get("cpus-per-task", 1)) > int(os.environ.get("FAKE_NODE_CPUS") or os.environ["SLURM_CPUS_ON_NODE"]):
        die("more cores per task than a node has")
    if "mpi" in opts and opts["mpi"] not in plugins:
        die("MPI plugin '%s' not found" % opts["mpi"])
    hosts = [n for n in nodelist for _ in range(per_node)]
    # `bash -c SCRIPT $0 DIR NAME PROGRAM ARGS...` (a wrapper that names the trace) is logged as PROGRAM.
    program = args[6] if args[:2] == ["bash", "-c"] and len(args) > 6 else args[0]
    log({"launcher": "srun", "options": opts, "hosts": hosts, "program": os.path.basename(program)})
    if os.path.basename(args[0]) == "calib_pingpong":
        return run_mpi(hosts, args)
    worst = 0
    for node in hosts:
        worst = max(worst, subprocess.run(args, env=dict(os.environ, FAKE_HOSTNAME=node)).returncode)
    return worst


def mpirun(args):
    np_, hosts, mapping = None, None, "slot"
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a == "-np" and args:
            np_ = int(args.pop(0))
        elif a == "--host" and args:
            hosts = [entry.partition(":")[0] for entry in args.pop(0).split(",")]
        elif a == "--map-by" and args and args[0] in ("slot", "node"):
            mapping = args.pop(0)
        else:
            die("unrecognized option '%s'" % a)
    if np_ is None or hosts is None or not args:
        die("expected -np N --host HOSTS PROGRAM")
    if not set(hosts) <= set(allocation()):
        die("hosts %s are not in the allocation %s" % (hosts, allocation()))
    slots = int(os.environ["SLURM_NTASKS_PER_NODE"])  # each host's slots: the allocation's
    if np_ > slots * len(hosts):
        die("There are not enough slots available in the system to satisfy the %d slots" % np_)
    if mapping == "slot":
        ranks = [h for h in hosts for _ in range(slots)][:np_]
    else:
        ranks = [hosts[i % len(hosts)] for i in range(np_)]
        if np_ > slots * len(hosts):
            die("not enough slots")
    log({"launcher": "mpirun", "np": np_, "hosts": ranks, "program": os.path.basename(args[0])})
    return run_mpi(ranks, args)


def main():
    name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
    if name == "srun":
        return srun(args)
    if name == "mpirun":
        return mpirun(args)
    if name == "scontrol":
        if args[:2] != ["show", "hostnames"] or len(args) != 3:
            die("expected show hostnames LIST")
        print("\n".join(args[2].split(",")))
        return 0
    if name == "hostname":
        if "FAKE_HOSTNAME" in os.environ:
            print(os.environ["FAKE_HOSTNAME"])
            return 0
        return subprocess.run(["/bin/hostname"] + args).returncode
    die("called as '%s'; expected srun, mpirun, scontrol or hostname" % name)


if __name__ == "__main__":
    sys.exit(main())
