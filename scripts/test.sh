#!/usr/bin/env bash
# README command 2: install what is missing, build if needed, run every test
# (C++ unit tests with Catch2, CLI and Python tests with pytest) under ctest.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1
scripts/build.sh || exit 1
cd build
ctest --output-on-failure -j"$(nproc)" 2>&1 | tee ctest-last.log
rc=${PIPESTATUS[0]}
# ctest's own summary, restated as the closing line: "tests: N passed, N failed, N skipped"
# (a skipped test, e.g. the CUDA kernels without a GPU, is not counted as passed).
summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' ctest-last.log | tail -1)
if [ -n "$summary" ]; then
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+)/\1/')
  total=$(echo "$summary" | sed -E 's/.* failed out of ([0-9]+)/\1/')
  skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' ctest-last.log)
  echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
fi
exit "$rc"
