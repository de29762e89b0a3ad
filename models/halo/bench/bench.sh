#!/usr/bin/env bash
# Benchmark of issue 4: 2,304 ranks (144 nodes x 16) on platforms/fat_tree_144.xml, 100^3
# cells and 5 variables per rank, 7-point, ITERATIONS iterations (default 100). Runs, in the
# same session, the MPI halo program under SMPI and the halo model at node granularity (and,
# for a shorter run, at rank granularity), and prints wall time, peak memory, the predicted
# communication time per iteration and the speed ratio.
#   models/halo/bench/bench.sh [ITERATIONS] [RANK_ITERATIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${SIMCORE_BUILD_DIR:-$root/build}/bin
its=${1:-100}
rank_its=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in $(seq 0 143); do for _ in $(seq 16); do echo "ft-$n"; done; done > "$work/hosts"

measure() { # name, command...: prints "name wall_s peak_kib cpu_s" and keeps the command's stdout
  local name=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/$name.time" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
    { echo "$name failed:"; tail -5 "$work/$name.err"; exit 1; }
  read -r wall peak user sys < "$work/$name.time"
  echo "$name: wall $wall s, peak memory $((peak / 1024)) MiB, CPU $(/usr/bin/python3 -c "print(round($user + $sys, 2))") s"
}
metric() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

measure smpi smpirun -np 2304 -platform "$root/platforms/fat_tree_144.xml" -hostfile "$work/hosts" \
  --cfg=smpi/simulate-computation:no --log=root.thres:critical \
  "$bin/halo_mpi_smpi" --local 100,100,100 --variables 5 --iterations "$its" --warmup 0
common=(--set iterations="$its" --set flops_per_cell=0 --quiet --json)
measure model_node "$bin/simcore" run "$root/scenarios/halo/fat_tree_2304.xml" --set granularity=node "${common[@]}" --out "$work/node"
measure model_node_smpi_net "$bin/simcore" run "$root/scenarios/halo/fat_tree_2304.xml" --set granularity=node \
  --cfg=network/model:SMPI "${common[@]}" --out "$work/node_smpi"
measure model_rank "$bin/simcore" run "$root/scenarios/halo/fat_tree_2304.xml" --set granularity=rank \
  --set iterations="$rank_its" --set flops_per_cell=0 --quiet --json --out "$work/rank"

smpi_wall=$(cut -d' ' -f1 "$work/smpi.time"); node_wall=$(cut -d' ' -f1 "$work/model_node.time")
smpi_cpu=$(awk '{print $3 + $4}' "$work/smpi.time"); node_cpu=$(awk '{print $3 + $4}' "$work/model_node.time")
rank_wall=$(cut -d' ' -f1 "$work/model_rank.time")
echo "iterations: $its (rank granularity: $rank_its)"
echo "communication time per iteration (slowest rank, mean over iterations):"
echo "  SMPI                           $(metric "$work/smpi.out" "['communication_time_max']") s"
echo "  model, node, detailed          $(metric "$work/model_node.out" "['metrics']['communication_time_slowest']") s"
echo "  model, node, SMPI network      $(metric "$work/model_node_smpi_net.out" "['metrics']['communication_time_slowest']") s"
echo "  model, rank, detailed          $(metric "$work/model_rank.out" "['metrics']['communication_time_slowest']") s"
/usr/bin/python3 -c "import sys; s,n,r,i,ri,sc,nc=map(float,sys.argv[1:]); print(f'speed: model (node) {s/n:.1f}x faster than SMPI in wall time, {sc/nc:.1f}x in CPU time; per iteration: SMPI {s/i:.3f} s, node {n/i:.4f} s, rank {r/ri:.3f} s')" \
  "$smpi_wall" "$node_wall" "$rank_wall" "$its" "$rank_its" "$smpi_cpu" "$node_cpu"
