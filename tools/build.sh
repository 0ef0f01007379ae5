#!/usr/bin/env bash
# Install the missing Debian packages, configure and build everything (the chapter
# programs, the tests and the HTML book) with warnings as errors, in build/ or in
# $BOOK_BUILD_DIR. The two README commands both start here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BOOK_BUILD_DIR:-$root/build}"
bash "$root/tools/setup.sh"
echo "Building the programs, the tests and the book in $build (a few minutes the first time)..."
# Ninja checks an unchanged build in a fraction of a second; ccache, where installed, makes a
# build folder made afresh (or the sanitizer build of the same sources) cheap to rebuild.
options=()
# A build folder copied or moved with the book keeps the path it was made at, which CMake refuses:
# its CMake state is made afresh here (the compiler cache still has what it compiled).
made_at=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [[ -n "$made_at" && ! "$made_at" -ef "$build" ]]; then
  echo "The build folder $build was made at $made_at: configuring it afresh here."
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
[[ -f "$build/CMakeCache.txt" ]] || options+=(-G Ninja)
command -v ccache >/dev/null && options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# A compilation is cached whichever build folder ran it, so tools/learn's grading build
# (build/grade/) finds the tests this build compiled, with the same flags.
export CCACHE_NOHASHDIR=1
# ...and whichever folder the book is in: ccache keys a compilation on the paths in the book's folder
# made relative to the build folder, so a copy or a move of the book (its build with it) takes what
# the original compiled. The grading build compiles the same files the same way (tools/learning/ccache_book.sh).
export CCACHE_BASEDIR="$root"
# ...and a compilation it has not seen runs the compiler once: in its depend mode ccache keys the
# result on the dependency file the compiler writes anyway (-MD), where by default it first runs the
# preprocessor to key it on the preprocessed text. A first build is nearly all such compilations.
export CCACHE_DEPEND=1
cmake -S "$root" -B "$build" "${options[@]}" -DBOOK_DOCS=ON -DBOOK_WERROR=ON >/dev/null
# The build's own lines go to build.log; when it fails, its last lines say why.
if ! cmake --build "$build" --parallel "$(nproc)" > "$build/build.log" 2>&1; then
  echo "error: the build failed; its last lines follow (all of them in $build/build.log)" >&2
  tail -n 40 "$build/build.log" >&2
  exit 1
fi
