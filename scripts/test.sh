#!/usr/bin/env bash
# README command 2: install what is missing, build if needed, run every test
# (C++ unit tests with Catch2, CLI and Python tests with pytest) under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
