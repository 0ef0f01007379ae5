#!/usr/bin/env bash
# Install the missing Debian packages, configure and build everything (the chapter
# programs, the tests and the HTML book) with warnings as errors, in build/ or in
# $BOOK_BUILD_DIR. The two README commands both start here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/setup.sh"
echo "Building the programs, the tests and the book in $build (a few minutes the first time)..."
cmake -S "$root" -B "$build" -DBOOK_DOCS=ON -DBOOK_WERROR=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" >/dev/null
