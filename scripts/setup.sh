#!/usr/bin/env bash
# README command 1: install what is missing, build, run the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scenario=${SIMCORE_DEFAULT_SCENARIO:-scenarios/dtl/staging_two_clusters.xml}
echo "simcore: running the default scenario $scenario"
build/bin/simcore run "$scenario" --out results/default
