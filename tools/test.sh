#!/usr/bin/env bash
# Command 2: install what is missing, build everything (warnings are errors) and
# run the whole test suite. After ctest's summary it prints the ten slowest tests
# and the times of the run (tools/checks/slowest_tests.py, from CTest's JUnit report), so
# that a change that slows the suite shows in its own log. The exit status is ctest's.
# Extra arguments go to ctest, e.g. `bash tools/test.sh -L ch02`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
# The clock, in seconds since the epoch, with a decimal point whatever the locale.
now() { local time=$EPOCHREALTIME; echo "${time/,/.}"; }
started=$(now)
bash "$root/tools/build.sh"
built=$(now)
cd "$build"
# The suite runs many programs at once on few cores. An OpenMP thread that waits for its next
# piece of work sleeps at once instead of spinning for it (the default), which would take the
# core from another test (chapter 13's fast-kernel check beside one busy loop: 0.67 s of CPU time
# and 0.58 s of wall time spinning, 0.22 s and 0.23 s sleeping). Only the waiting changes: every
# sum is computed as before.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
junit="$build/Testing/last-run-junit.xml"
rm -f "$junit"
status=0
ctest --output-on-failure --no-label-summary --parallel "$(nproc)" --output-junit "$junit" "$@" || status=$?
finished=$(now)
if [[ -f "$junit" ]]; then
  echo
  /usr/bin/python3 "$root/tools/checks/slowest_tests.py" --junit "$junit" --count 10 \
    --started "$started" --built "$built" --finished "$finished" || true
fi
exit "$status"
