#!/usr/bin/env bash
# Build everything with AddressSanitizer and UndefinedBehaviorSanitizer and run the
# whole test suite under them: the Catch2 tests, every chapter program on its
# example, on the "try it yourself" command and on each kind of malformed input.
# Any report stops the run (-fno-sanitize-recover) and fails the test that caused it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_SANITIZE_DIR:-$root/build-sanitize}"
bash "$root/tools/setup.sh"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -DBOOK_DOCS=OFF -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" --parallel "$(nproc)" >/dev/null
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure --no-label-summary --parallel "$(nproc)" "$@"
