#!/usr/bin/env bash
# The learner's loop, timed (the figures in the README): tools/learn init, the first grade, a
# one-line edit of scores.cpp (the stub's throw becomes a first try), the regrade, and a grade
# with nothing changed. It works in build/walk/, never in workspace/, and prints one line per
# step with its wall time and the CPU time of everything it ran. Each edit holds the time it was
# made, so that no edit is in the compiler cache from an earlier run: a regrade compiles, as after a
# learner's own edit. With --each, it then regrades after
# a one-line edit of each workspace file in turn (a comment added to its first step): the regrade a
# learner meets in every chapter, which grows with the size of the book's file that holds the step.
#   bash tools/learning/walk.sh [--each]   (CCACHE_DISABLE=1 in front: without the compiler cache)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
walk="$root/build/walk"
rm -rf "$walk"
mkdir -p "$walk"
learn=("$root/tools/learn" --workspace "$walk/workspace" --build "$walk/grade")
step() {
  local name=$1
  shift
  /usr/bin/time -f "$name: %e s wall, %U s user + %S s sys" "$@" > "$walk/$name.log" 2>&1 || true
  tail -n 1 "$walk/$name.log"
}
step init "${learn[@]}" init
step first-grade "${learn[@]}" grade
# A one-line edit of a workspace file: "first-try" makes scores' stub throw a first try; "comment" adds a
# comment to the file's first step. Each holds the time it was made.
edit() {
  /usr/bin/python3 - "$root/tools" "$1" "$2" <<'PY'
import sys
import time
sys.path.insert(0, sys.argv[1])
import exercises
lines = open(sys.argv[2], encoding="utf-8").read().splitlines(keepends=True)
if sys.argv[3] == "first-try":
    first, last = exercises.workspace_regions(lines)["scores"]
    throw = next(i for i in range(first, last) if "throw sa::NotImplemented" in lines[i])
    lines[throw] = f"    return sa::Matrix(queries.rows(), keys.rows());  // a first try, {time.time_ns()}\n"
else:
    first, _last = min(exercises.workspace_regions(lines).values())
    lines.insert(first + 1, f"    // an edit, {time.time_ns()}\n")
open(sys.argv[2], "w", encoding="utf-8").write("".join(lines))
PY
}
edit "$walk/workspace/scores.cpp" first-try
step regrade "${learn[@]}" grade
step grade-again "${learn[@]}" grade
if [[ ${1:-} == --each ]]; then
  for file in "$walk"/workspace/*.cpp; do
    edit "$file" comment
    step "regrade after an edit of $(basename "$file")" "${learn[@]}" grade
  done
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
