#!/usr/bin/env bash
# Command 2: install what is missing, build everything (warnings are errors) and
# run the whole test suite. ctest's summary is the last thing printed.
# Extra arguments go to ctest, e.g. `bash tools/test.sh -L ch02`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/build.sh"
cd "$build"
ctest --output-on-failure --no-label-summary --parallel "$(nproc)" "$@"
