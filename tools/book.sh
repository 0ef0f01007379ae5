#!/usr/bin/env bash
# Command 1: install what is missing, build every chapter program, run each one,
# render the HTML book and print the path of its front page (docs/index.html: Sphinx writes
# the root document there; the book's top index.html only forwards to it).
# The build runs a chapter program only when its binary or its command changed and keeps
# what it printed (build/outputs/); this prints those outputs, so when nothing changed
# nothing is run again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/build.sh"
for output in "$build"/outputs/*/output.txt; do
  chapter="$(basename "$(dirname "$output")")"
  echo "===== ch$chapter ====="
  cat "$output"
done
for measured in kernels decoding training; do
  if [[ -f "$build/figures/13-at-scale-benchmark-$measured.txt" ]]; then
    echo "===== ch13-benchmark-$measured --quick (the full run: $build/bin/ch13-benchmark-$measured) ====="
    cat "$build/figures/13-at-scale-benchmark-$measured.txt"
  fi
done
# A chapter's other programs (chapter 18's ch18-trained: outputs/18-grouped-queries/trained-output.txt).
for output in "$build"/outputs/*/*-output.txt; do
  [[ "$(basename "$output")" == try-output.txt ]] && continue
  echo "===== ch$(basename "$(dirname "$output")" | cut -c1-2)-$(basename "$output" -output.txt) ====="
  cat "$output"
done
echo
echo "The book: $build/book/docs/index.html"
