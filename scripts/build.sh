#!/usr/bin/env bash
# Configures (once) and builds simcore into build/; prints warnings and errors, not progress.
set -uo pipefail
cd "$(dirname "$0")/.."
# Configure every time (cheap): new model folders and test files are picked up.
mkdir -p build
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >build/configure.log 2>&1; then
  cat build/configure.log
  exit 1
fi
grep -A3 "CMake Warning" build/configure.log || true
cmake --build build -j"$(nproc)" 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^Consolidate compiler|^Scanning dependencies'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "simcore: build ok (build/bin/simcore, build/python)"
exit "$rc"
