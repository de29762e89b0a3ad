#!/usr/bin/python3
"""Calibrate, then predict, on this machine: measure STREAM and an intra-node MPI ping-pong
(with ping-ping), fit a profile with `simcore calibrate`, predict the halo exchange of 2 ranks
on one node (scenarios/halo/two_ranks_one_node.xml: the halo model's SMPI mode with the profile), run
the same exchange natively (build/bin/halo_mpi under mpirun, median of its iterations) and
print the error per size. STREAM goes into the profile, as on a cluster, but the SMPI-mode
prediction reads none of it (the copies within MPI are in the ping-pong times). The halo
model's default (detailed) mode charges those copies itself: at the cached-copy rates of
calib_copy (measured in every round beside the ping-pong, into the profiles), each single copy
no faster than the ping-pong fit at its size and after the fit's latency there as its
start-up. It is predicted too and
its errors (pooled and paired) printed beside; the loop checks SMPI mode.

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

With --hosts A,B (inside an allocation holding nodes A and B, e.g. `salloc -N2`, and an OUT_DIR
on storage both nodes see) the loop runs between two nodes instead: the ping-pong and the native exchange with one rank on each
(mpirun --host A,B --map-by node), STREAM on A, and the prediction on
scenarios/halo/two_ranks_two_nodes.xml (one link between two hosts, which the inter-node
profile sets).

With --periodic the exchange has periodic boundaries: each rank sends both its x faces to the
other rank and its four y and z faces to itself (six copies a rank, which contend for the
node's memory), in the native run and in both modes of the model. With --stencil 27 a rank
also exchanges edges and corners (periodic: 26 messages, 18 of them to the other rank), and
with --unbundled each variable goes in a message of its own: many small messages, whose cost
a rank pays one after another (the message gaps of calib_pingpong's exchange windows, which
the detailed mode charges; SMPI mode charges none, unless --smpi-ois: then it sleeps the
placement's gaps before each send, as SMPI with smpi/ois does).

    calibration/predict_loop.py [OUT_DIR] [--rounds 11] [--sizes 16,32,64,128] [--hosts A,B]
                                [--max-bytes 4194304] [--buffers per-size|shared] [--periodic]
                                [--stencil 7|27] [--unbundled] [--smpi-ois]
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
# The same exchange in SMPI mode: two ranks on one node, or one on each of two nodes.
SCENARIOS = {"intra-node": ROOT / "scenarios" / "halo" / "two_ranks_one_node.xml",
             "inter-node": ROOT / "scenarios" / "halo" / "two_ranks_two_nodes.xml"}


class Placement:
    """Where the ranks go: both on this node, or one on each of two named nodes."""

    def __init__(self, hosts):
        self.hosts = hosts
        self.name = "inter-node" if hosts else "intra-node"
        self.mpirun = (["mpirun", "-np", "2", "--host", ",".join(hosts), "--map-by", "node"] if hosts
                       else ["mpirun", "--oversubscribe", "-np", "2"])
        # STREAM on the (first) node: through mpirun there, which any allocation allows, unbound
        # (Open MPI binds one rank to one core, and STREAM's threads would share it).
        self.on_node = ["mpirun", "-np", "1", "--bind-to", "none", "--host", hosts[0]] if hosts else []
        self.scenario = SCENARIOS[self.name]


def whole(text):
    """`text` as a whole number written with digits only (int() also takes " 16" and "1_6")."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number, digits only")
    return int(text)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], env=ENV, check=True, capture_output=True, text=True, **kw).stdout


class Shape:
    """The exchange of the loop: boundaries, stencil, one message a neighbour or a variable."""

    def __init__(self, periodic=False, stencil=7, bundled=True, smpi_ois=False):
        self.periodic, self.stencil, self.bundled, self.smpi_ois = periodic, stencil, bundled, smpi_ois

    def native_args(self):
        return ["--periodic", "1" if self.periodic else "0", "--stencil", str(self.stencil),
                "--bundled", "1" if self.bundled else "0"]

    def model_args(self):
        return ["--set", f"periodic={'true' if self.periodic else 'false'}", "--set", f"stencil={self.stencil}-point",
                "--set", f"bundled={'true' if self.bundled else 'false'}"]


def native(where, n, shape):
    out = run(where.mpirun + [BIN / "halo_mpi", "--procs", "2,1,1", "--local", f"{n},{n},{n}", "--variables", "5",
                              *shape.native_args(), "--iterations", "300", "--warmup", "20"])
    return statistics.median(json.loads(out.strip().splitlines()[-1])["per_iteration_max"])


def model(where, profile, n, out_dir, shape, mode="smpi"):
    # With --smpi-ois, SMPI mode sleeps the profile's message gaps of the placement before each
    # send, as SMPI with smpi/ois does.
    ois = ["--set", f"smpi_ois={where.name}"] if mode == "smpi" and shape.smpi_ois else []
    out = run([BIN / "simcore", "run", where.scenario, "--calibration", profile, "--set", f"local_cells={n},{n},{n}",
               "--set", f"mode={mode}", *shape.model_args(), *ois, "--quiet", "--json",
               "--out", out_dir])
    return json.loads(out)["metrics"]["communication_time_slowest"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", help="folder for traces, profiles and runs, without traces of an earlier loop "
                                           "(default: a new temporary one; with --hosts, required, on storage both "
                                           "nodes see)")
    ap.add_argument("--rounds", type=whole, default=11)
    ap.add_argument("--sizes", default="16,32,64,128", help="cells per rank along each side")
    ap.add_argument("--hosts", help="A,B: between nodes A and B (in an allocation holding both), not on this node")
    ap.add_argument("--max-bytes", type=whole, default=4194304, help="largest ping-pong message (default 4 MiB)")
    ap.add_argument("--buffers", choices=["per-size", "shared"], default="per-size",
                    help="calib_pingpong's buffers: allocated for each size (default) or one large one")
    ap.add_argument("--periodic", action="store_true",
                    help="periodic boundaries: six faces a rank (two to the other rank, four to itself)")
    ap.add_argument("--stencil", type=int, choices=[7, 27], default=7,
                    help="27: faces, edges and corners (with --periodic, 26 messages a rank: 18 to the other rank)")
    ap.add_argument("--unbundled", action="store_true",
                    help="one message a variable (5 a neighbour) instead of one a neighbour")
    ap.add_argument("--smpi-ois", action="store_true",
                    help="SMPI mode sleeps the placement's message gaps before each send (smpi_ois, SMPI's smpi/ois)")
    a = ap.parse_args()
    shape = Shape(a.periodic, a.stencil, not a.unbundled, a.smpi_ois)
    hosts = a.hosts.split(",") if a.hosts else []
    if a.hosts is not None and (len(hosts) != 2 or not all(hosts) or hosts[0] == hosts[1]):
        ap.error(f"--hosts {a.hosts}: expected two different node names A,B")
    if not 1 <= a.max_bytes <= 2147483647:
        ap.error(f"--max-bytes {a.max_bytes}: expected a size from 1 to 2147483647 (an MPI count)")
    if a.rounds < 1:
        ap.error(f"--rounds {a.rounds}: expected at least 1")
    try:
        sizes = [whole(s) for s in a.sizes.split(",")]
    except argparse.ArgumentTypeError:
        sizes = []
    # A size twice would pair one round's native run with another's model (the runs are kept
    # by size, then read by round).
    if not sizes or min(sizes) < 1 or len(set(sizes)) != len(sizes):
        ap.error(f"--sizes {a.sizes}: expected cells per rank side, distinct whole numbers of at least 1 separated "
                 "by commas")
    # The ping-pong fit covers messages up to --max-bytes: a larger face would be predicted
    # from a segment extended past the data.
    largest_face = max(sizes) ** 2 * 5 * 8
    if largest_face > a.max_bytes:
        ap.error(f"--sizes {a.sizes}: a face of {max(sizes)}^2 cells of 5 doubles is {largest_face} B, beyond --max-bytes "
                 f"{a.max_bytes}; expected --max-bytes of at least {largest_face}")
    # The programs on node A write into the folder: a temporary one made here would be on this
    # node's disk alone.
    if hosts and not a.out:
        ap.error("--hosts needs OUT_DIR, a folder on storage that both nodes and this one see (not /tmp)")
    where = Placement(hosts)
    # The programs the loop runs, before any folder is made (a build folder without them left
    # a new, empty output folder and a traceback).
    missing = [name for name in ("calib_stream", "calib_pingpong", "calib_copy", "halo_mpi", "simcore")
               if not (BIN / name).is_file()]
    if missing:
        ap.error(f"no {', '.join(missing)} in {BIN}; expected the built programs (SIMCORE_BUILD_DIR, or build/)")
    if a.out and Path(a.out).exists() and not Path(a.out).is_dir():
        ap.error(f"{a.out} exists and is not a folder; expected a new or empty folder")
    out = Path(a.out or tempfile.mkdtemp(prefix="simcore-loop-"))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a path under a file, a folder it may not make
        ap.error(f"{out}: cannot make the folder ({e.strerror}); expected a writable path")
    # Traces of an earlier loop would stay beside the new ones and mix with them in a later fit.
    earlier = sorted(p.name for p in out.glob("*.h5"))
    if earlier:
        ap.error(f"{out} holds traces of an earlier loop ({', '.join(earlier[:3])}{', ...' if len(earlier) > 3 else ''})"
                 "; expected a new or empty folder")
    run(where.on_node + [BIN / "calib_stream", "--repetitions", "5", "-o", out / "stream.h5"])
    natives = {n: [] for n in sizes}
    traces, copies = [], []
    for r in range(a.rounds):
        traces.append(out / f"pingpong-{r}.h5")
        run(where.mpirun + [BIN / "calib_pingpong", "--max", a.max_bytes, "--repetitions", "20",
                            "--buffers", a.buffers, "-o", traces[-1]])
        # The cached copies, as the ping-pong, in each round: the machine's state changes.
        # On a node of one core calib_copy has nothing to measure (exit 77, no trace): the
        # detailed mode then copies at memcpy_bandwidth.
        copy = out / f"copy-{r}.h5"
        done = subprocess.run([str(c) for c in where.on_node + [BIN / "calib_copy", "-o", copy]], env=ENV,
                              capture_output=True, text=True)
        if done.returncode not in (0, 77):
            raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
        copies.append(copy if done.returncode == 0 else None)
        for n in sizes:
            natives[n].append(native(where, n, shape))
    profile = out / "profile.json"
    print(run([BIN / "simcore", "calibrate", *traces, out / "stream.h5", *filter(None, copies), "-o", profile]), end="")
    models = {n: model(where, profile, n, out / f"run-{n}", shape) for n in sizes}
    # The halo model's default mode, which charges MPI's copies itself at the profile's cached
    # copy rates: printed beside, not what the loop checks.
    detailed = {n: model(where, profile, n, out / f"run-{n}-detailed", shape, "detailed") for n in sizes}
    paired = {n: [] for n in sizes}  # each round: its own profile against its own native run
    paired_detailed = {n: [] for n in sizes}
    for r, trace in enumerate(traces):
        own = out / f"profile-{r}.json"
        run([BIN / "simcore", "calibrate", trace, out / "stream.h5", *filter(None, [copies[r]]), "-o", own])
        for n in sizes:
            paired[n].append((model(where, own, n, out / f"run-{n}-{r}", shape) - natives[n][r])
                             / natives[n][r])
            paired_detailed[n].append((model(where, own, n, out / f"run-{n}-{r}-detailed", shape, "detailed")
                                       - natives[n][r]) / natives[n][r])
    print(f"{'cells':<8} {'message (B)':>11} {'native (us)':>12} {'model (us)':>11} {'error':>8}  {'paired error':>13}"
          f"  {'detailed (us)':>13} {'error':>8} {'paired':>8}   native per round (us)")
    worst = worst_paired = 0.0
    for n in sizes:
        nat, mod = statistics.median(natives[n]), models[n]
        err, perr = (mod - nat) / nat, statistics.median(paired[n])
        worst, worst_paired = max(worst, abs(err)), max(worst_paired, abs(perr))
        rounds = ", ".join(f"{1e6 * x:.2f}" for x in natives[n])
        print(f"{str(n) + '^3':<8} {n * n * (5 if shape.bundled else 1) * 8:>11} {nat * 1e6:>12.2f} {mod * 1e6:>11.2f} {100 * err:>+7.1f} %"
              f" {100 * perr:>+11.1f} %  {detailed[n] * 1e6:>13.2f} {100 * (detailed[n] - nat) / nat:>+7.1f} %"
              f" {100 * statistics.median(paired_detailed[n]):>+6.1f} %   {rounds}")
    print(f"{where.name}{' (' + ','.join(hosts) + ')' if hosts else ''}: "
          f"largest error: {100 * worst:.1f} % pooled, {100 * worst_paired:.1f} % paired (median of {a.rounds} "
          f"rounds, each calibrated and predicted on its own), SMPI mode; the detailed mode's errors are beside it; "
          f"traces and profiles: {out}")
    json.dump({"placement": where.name, "hosts": hosts, "periodic": a.periodic, "stencil": a.stencil,
               "bundled": shape.bundled, "smpi_ois": a.smpi_ois, "sizes": sizes, "native_s": natives, "model_s": models, "paired_error": paired,
               "model_detailed_s": detailed, "paired_error_detailed": paired_detailed},
              open(out / "loop.json", "w"), indent=1)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"predict_loop: {' '.join(map(str, e.cmd))} failed ({e.returncode}):\n{e.stderr}")
    except OSError as e:  # a program that cannot start, a file it cannot write
        sys.exit(f"predict_loop: {e}")
