#!/usr/bin/env bash
# Command 2: install what is missing, build everything (warnings are errors) and
# run the whole test suite. ctest's summary is the last thing printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/setup.sh"
cmake -S "$root" -B "$build" -DBOOK_DOCS=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" -- --no-print-directory >/dev/null
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" "$@"
