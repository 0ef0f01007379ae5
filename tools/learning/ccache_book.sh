#!/usr/bin/env bash
# The compiler launcher of the grading build's files that the book's own build compiles too: the
# tests, the presentation and the library's files without exercises (tools/learning/grading.cmake).
#   bash ccache_book.sh BOOK_BUILD COMPILER ARGUMENTS...
#
# ccache keys a compilation on its paths. With CCACHE_BASEDIR set to the book's folder, it makes
# every path in that folder relative to the folder the compiler runs in, so a key no longer holds
# the folder's own path: a copy or a move of the book finds what the original compiled. The book's
# build compiles in build/ (tools/build.sh sets the same CCACHE_BASEDIR); the grading build would
# compile in build/grade/, where the same file is ../../tests/ch02_scores.cpp instead of
# ../tests/ch02_scores.cpp, so this runs the compiler in the book's build folder. The two paths
# Ninja gives relative to the grading build (the object and its dependency file) are made absolute
# first; the dependency file's paths, relative to the book's build once written, are made absolute
# after, for Ninja reads them from the grading build. The learner's own steps do not come here: the
# book compiles none of them; they compile in the grading build, with the same CCACHE_BASEDIR
# (tools/learning/build.py), so a copy of the book finds those of the original's grades too.
set -euo pipefail
book_build=$1
shift
grading_build=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
arguments=()
depfile=""
previous=""
for argument in "$@"; do
  if [[ ( $previous == -o || $previous == -MF ) && $argument != /* ]]; then
    argument="$grading_build/$argument"
  fi
  [[ $previous == -MF ]] && depfile=$argument
  arguments+=("$argument")
  previous=$argument
done
mkdir -p "$book_build"
cd "$book_build"
CCACHE_BASEDIR="$root" ccache "${arguments[@]}"
if [[ -n $depfile && -f $depfile ]]; then
  # Every dependency that is not absolute, never the target (the word that ends with a colon).
  awk -v prefix="$book_build/" 'BEGIN { gsub(/ /, "\\ ", prefix) }
    { for (i = 1; i <= NF; i++) if ($i !~ /^\// && $i != "\\" && $i !~ /:$/) $i = prefix $i; print }' \
    "$depfile" > "$depfile.absolute"
  mv "$depfile.absolute" "$depfile"
fi
