#!/usr/bin/env bash
# Build everything with AddressSanitizer and UndefinedBehaviorSanitizer and run the
# whole test suite under them: the Catch2 tests, every chapter program on its
# example, on the "try it yourself" command and on each kind of malformed input.
# (Not the grader's scenarios: their grading builds take their own flags, not these,
# so they would only repeat tools/test.sh's run; nor the fuzzers, which carry their own;
# nor the check of the CTest tests' names, which are the same in both builds.)
# Any report stops the run (-fno-sanitize-recover) and fails the test that caused it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_SANITIZE_DIR:-$root/build-sanitize}"
bash "$root/tools/setup.sh"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# The build runs each chapter program once (its output is a build product that the output
# checks read), so the sanitizers' settings hold for the build as for the tests.
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
options=()
[[ -f "$build/CMakeCache.txt" ]] || options+=(-G Ninja)
command -v ccache >/dev/null && options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_DEPEND=1  # a new compilation runs the compiler once, not the preprocessor first (tools/build.sh)
# -g1: line tables and function names, all a sanitizer's report prints (each frame's function,
# file and line), without the variables' debug information, which a report never reads: the
# Catch2 tests' instrumented code compiles a quarter faster (chapter 9's tests 25 s -> 18 s).
cmake -S "$root" -B "$build" "${options[@]}" -DBOOK_DOCS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" --parallel "$(nproc)" >/dev/null
cd "$build"
# As in tools/test.sh: an OpenMP thread waiting for work sleeps rather than spin beside the other tests.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
ctest --output-on-failure --no-label-summary --parallel "$(nproc)" "$@"
