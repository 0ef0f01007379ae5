#!/usr/bin/env bash
# Command 1: install what is missing, build every chapter program, run each one,
# render the HTML book and print the path of its index.html.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/build.sh"
for program in "$build"/bin/ch[0-9][0-9]-*; do
  echo "===== $(basename "$program") ====="
  "$program"
done
echo
echo "The book: $build/book/index.html"
