#!/usr/bin/env bash
# Calibrate, then predict, on this machine: measure STREAM and an intra-node MPI ping-pong,
# fit a profile with `simcore calibrate`, predict the halo exchange of 2 ranks on one node
# (the model's SMPI mode on platforms/single_node.xml with the profile), run the same
# exchange natively (build/bin/halo_mpi under mpirun) and print the error per size.
#   calibration/predict_loop.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SIMCORE_BUILD_DIR:-$root/build}/bin
out=${1:-$(mktemp -d)}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$bin/calib_stream" --repetitions 5 -o "$out/stream.h5" > /dev/null
mpirun --oversubscribe -np 2 "$bin/calib_pingpong" --max 4194304 --repetitions 20 -o "$out/pingpong.h5" > /dev/null
"$bin/simcore" calibrate "$out/pingpong.h5" "$out/stream.h5" -o "$out/profile.json"
cat > "$out/halo.xml" <<XML
<?xml version="1.0"?>
<scenario model="halo" seed="1">
  <platform file="$root/platforms/single_node.xml"/>
  <calibration file="$out/profile.json"/>
  <param name="ranks" value="2"/>
  <param name="procs" value="2,1,1"/>
  <param name="periodic" value="false"/>
  <param name="variables" value="5"/>
  <param name="iterations" value="5"/>
  <param name="flops_per_cell" value="0"/>
  <param name="ranks_per_node" value="2"/>
  <param name="mode" value="smpi"/>
</scenario>
XML
printf "%-10s %12s %12s %12s %8s\n" "cells" "face (B)" "native (us)" "model (us)" "error"
for n in 16 32 64 128; do
  native=$(mpirun --oversubscribe -np 2 "$bin/halo_mpi" --procs 2,1,1 --local $n,$n,$n --variables 5 --periodic 0 \
             --iterations 300 --warmup 20 2> /dev/null | tail -1 |
           /usr/bin/python3 -c "import json, statistics, sys; print(statistics.median(json.load(sys.stdin)['per_iteration_max']))")
  model=$("$bin/simcore" run "$out/halo.xml" --set local_cells=$n,$n,$n --quiet --json --out "$out/run-$n" |
          /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['metrics']['communication_time_slowest'])")
  /usr/bin/python3 -c "import sys; n, a, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); print(f'{n}^3'.ljust(10), f'{n*n*5*8:12d} {a*1e6:12.2f} {b*1e6:12.2f} {100*(b-a)/a:+7.1f} %')" \
    "$n" "$native" "$model"
done
echo "traces and profile: $out"
