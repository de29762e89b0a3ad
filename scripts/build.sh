#!/usr/bin/env bash
# Configures (once) and builds simcore into build/; prints warnings and errors, not progress.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
fi
cmake --build build -j"$(nproc)" 2>&1 | grep -Ev '^\[ *[0-9]+%\]|^Consolidate compiler|^Scanning dependencies'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && echo "simcore: build ok (build/bin/simcore, build/python)"
exit "$rc"
