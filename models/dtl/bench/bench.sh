#!/usr/bin/env bash
# dtl benchmark: the model against a plain S4U program doing the same transfers, in the same
# run, each in its own process, interleaved REPEAT times (the machines are shared and noisy:
# medians are reported). Prints wall time, simulated time, peak memory, simulated transfers
# per wall second, and the ratio of the two rates.
#   models/dtl/bench/bench.sh [SCENARIO.xml] [REPEAT]     (after scripts/build.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
scenario=${1:-$here/scale_10000x2500.xml}
repeat=${2:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for i in $(seq 1 "$repeat"); do
  "$root/build/bin/simcore" run "$scenario" --out "$out/model" --json --no-progress > "$out/model-$i.json"
  "$root/build/bin/dtl_raw_s4u" "$scenario" > "$out/raw-$i.txt"
done

/usr/bin/python3 - "$out" "$repeat" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
models = [json.load(open("%s/model-%d.json" % (out, i))) for i in range(1, n + 1)]
raws = [dict(l.split() for l in open("%s/raw-%d.txt" % (out, i))) for i in range(1, n + 1)]
transfers = int(raws[0]["transfers"])
mw = statistics.median(m["wall_time"] for m in models)
rw = statistics.median(float(r["wall_s"]) for r in raws)
print("%-28s %14s %14s" % ("", "dtl model", "raw S4U"))
print("%-28s %14.3f %14.3f" % ("wall time (s), median of %d" % n, mw, rw))
print("%-28s %14s %14s" % ("wall times (s)", " ".join("%.2f" % m["wall_time"] for m in models),
                           " ".join("%.2f" % float(r["wall_s"]) for r in raws)))
print("%-28s %14.6g %14.6g" % ("simulated time (s)", models[0]["simulated_time"], float(raws[0]["simulated_s"])))
print("%-28s %14.0f %14.0f" % ("peak memory (MiB)", models[0]["peak_memory_bytes"] / 2**20,
                               int(raws[0]["peak_rss_bytes"]) / 2**20))
print("%-28s %14.0f %14.0f" % ("transfers per wall second", transfers / mw, transfers / rw))
print("transfers: %d; model rate / raw rate = %.2f (median walls)" % (transfers, rw / mw))
PY
