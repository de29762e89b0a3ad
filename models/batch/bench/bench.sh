#!/usr/bin/env bash
# Benchmark of issue 5: jobs simulated per wall second for EASY on hpc2n, and on a
# 1,000,110-job workload (hpc2n repeated 318 times, each copy shifted by the trace's span),
# with peak memory. The wait-time predictors are left out of the timing runs (predict_waits
# false) and timed apart on hpc2n.
#   models/batch/bench/bench.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${SIMCORE_BUILD_DIR:-$root/build}/bin/simcore
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { # name, --set...: prints jobs, wall, jobs/s, peak memory
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$bin" run "$root/scenarios/batch/hpc2n_easy.xml" \
    --quiet --json --out "$work/$name" "$@" > "$work/$name.json"
  /usr/bin/python3 - "$name" "$work/$name.json" "$work/$name.time" <<'PY'
import json, sys
name, summary, timing = sys.argv[1:]
d = json.load(open(summary))
wall, peak = open(timing).read().split()
jobs = d["metrics"]["jobs"]
print(f"{name:28s} {jobs:>9d} jobs  simulation {d['wall_time']:7.2f} s  process {float(wall):7.2f} s  "
      f"{jobs / float(wall):>9.0f} jobs/s  peak {int(peak) // 1024} MiB")
PY
}
run hpc2n_easy --set predict_waits=false
run hpc2n_easy_with_predictors
run million_easy --set predict_waits=false --set repeat=318
