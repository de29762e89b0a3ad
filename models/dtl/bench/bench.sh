#!/usr/bin/env bash
# dtl benchmark: the model against a plain S4U program doing the same transfers, in the same
# run, each in its own process. Prints wall time, simulated time, peak memory, simulated
# transfers per wall second, and the ratio of the two rates.
#   models/dtl/bench/bench.sh [SCENARIO.xml]    (after scripts/build.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
scenario=${1:-$here/scale_10000x2500.xml}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$root/build/bin/simcore" run "$scenario" --out "$out/model" --json --no-progress > "$out/model.json"
raw=$("$root/build/bin/dtl_raw_s4u" "$scenario")

/usr/bin/python3 - "$out/model.json" "$raw" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
raw = dict(line.split() for line in sys.argv[2].strip().splitlines())
rows = [
    ("", "dtl model", "raw S4U"),
    ("wall time (s)", "%.3f" % m["wall_time"], "%.3f" % float(raw["wall_s"])),
    ("simulated time (s)", "%.6g" % m["simulated_time"], "%.6g" % float(raw["simulated_s"])),
    ("peak memory (MiB)", "%.0f" % (m["peak_memory_bytes"] / 2**20), "%.0f" % (int(raw["peak_rss_bytes"]) / 2**20)),
]
model_rate = int(raw["transfers"]) / m["wall_time"]
raw_rate = int(raw["transfers"]) / float(raw["wall_s"])
rows.append(("transfers per wall second", "%.0f" % model_rate, "%.0f" % raw_rate))
for r in rows:
    print("%-28s %14s %14s" % r)
print("transfers: %s; model rate / raw rate = %.2f" % (raw["transfers"], model_rate / raw_rate))
PY
