#!/usr/bin/env bash
# Fuzz the command line: build tests/fuzz/parse_fuzz.cpp with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, then run it from the seed corpus
# in tests/fuzz/corpus/ for a bounded time. At the same time, the same for chapter 14's model loader,
# tests/fuzz/load_fuzz.cpp, from the seed files in tests/fuzz/model-corpus/. The run fails on a crash, a sanitizer
# report, or an input that breaks the one-line error contract; libFuzzer then
# writes that input to the build folder as crash-* and prints how to replay it.
#
# The seeds are a few hand-written inputs and the files libFuzzer kept from longer runs (named by
# their SHA-1): a run starts from all the coverage those runs found instead of finding it again.
# Each run's new inputs go to the build folder's corpus; `merge` copies into the seeds only those
# that reach code or branches the seeds do not (libFuzzer's -merge=1).
#
# Usage: bash tools/fuzz.sh [BUILD_DIR] [SECONDS]   (defaults: build/fuzz, 10)
#        bash tools/fuzz.sh BUILD_DIR build         (build the two fuzzers only: the book's build
#                                                    does this, so the test spends its time fuzzing)
#        bash tools/fuzz.sh BUILD_DIR merge         (add the build folder's new inputs to the seeds)
# Needs the Debian packages clang-14 and libclang-rt-14-dev (tools/packages.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build/fuzz}"
seconds="${2:-10}"
compiler="$(command -v clang++-14 || true)"
if [[ -z "$compiler" ]]; then
  echo "clang++-14 was not found. Install the Debian packages: apt-get install clang-14 libclang-rt-14-dev" >&2
  exit 1
fi
mkdir -p "$build/corpus" "$build/model-corpus"
build="$(cd "$build" && pwd)"
# -fopenmp: the library shares a training step among threads with OpenMP, as in the book's build.
flags=(-std=c++20 -O1 -g -fopenmp -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror -I "$root/src" -I "$root/src/present")
# Each source compiles to an object of its own, through ccache where installed, so a build
# folder made afresh (or a source that changed back) costs a link, not a compilation. With the
# dependency file (-MD), a new compilation runs the compiler once: ccache's depend mode keys it on
# that file instead of running the preprocessor first (tools/build.sh).
launcher=()
command -v ccache >/dev/null && launcher=(env CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 ccache)
# fuzzer_build OUTPUT SOURCE...: compile the sources that changed, then link OUTPUT.
fuzzer_build() {
  local output=$1 objects=() source object
  shift
  # Rebuild only when a source or header is newer than the fuzzer.
  if [[ -x "$output" ]] && [[ -z "$(find "$root/tests/fuzz" "$root/src" -newer "$output" \
                                     \( -name '*.cpp' -o -name '*.hpp' \) -print -quit)" ]]; then
    return 0
  fi
  echo "building $output"
  mkdir -p "$build/objects"
  for source in "$@"; do
    object="$build/objects/$(basename "$output")-$(basename "${source%.cpp}").o"
    "${launcher[@]}" "$compiler" "${flags[@]}" -MD -c "$source" -o "$object"
    objects+=("$object")
  done
  "$compiler" "${flags[@]}" "${objects[@]}" -lfmt -o "$output"
}
fuzzer="$build/parse_fuzz"
fuzzer_build "$fuzzer" "$root/tests/fuzz/parse_fuzz.cpp" "$root/src/present/cli.cpp" "$root/src/matrix.cpp" \
             "$root/src/present/example.cpp"
# The model loader: any bytes given to --load are a model or a one-line refusal.
loader="$build/load_fuzz"
fuzzer_build "$loader" "$root/tests/fuzz/load_fuzz.cpp" "$root/src/safetensors.cpp" "$root/src/language_model.cpp" \
             "$root/src/matrix.cpp" "$root/src/random.cpp" "$root/src/embedding.cpp" "$root/src/cross_entropy.cpp" \
             "$root/src/dense.cpp" "$root/src/adam.cpp" "$root/src/head_tiles.cpp" \
             "$root/src/latent_model.cpp" "$root/src/latent_attention.cpp" "$root/src/grouped_query.cpp" \
             "$root/src/positions.cpp" "$root/src/multi_head.cpp" "$root/src/multi_head_backward.cpp" \
             "$root/src/attention.cpp" "$root/src/masking.cpp" "$root/src/mixing.cpp" "$root/src/projection.cpp" \
             "$root/src/scaling.cpp" "$root/src/scores.cpp" "$root/src/softmax.cpp" "$root/src/attention_shapes.cpp"
if [[ "$seconds" == "build" ]]; then
  exit 0
fi

# New inputs go to the build folder's corpus; the seeds in the source tree stay as they are.
cd "$build"
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if [[ "$seconds" == "merge" ]]; then
  "$fuzzer" -merge=1 "$root/tests/fuzz/corpus" "$build/corpus"
  "$loader" -merge=1 "$root/tests/fuzz/model-corpus" "$build/model-corpus"
  exit 0
fi
# The two fuzzers run at the same time, each for the full time; the loader's log follows the
# command line's, and the run fails if either does.
"$loader" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$build/model-corpus" "$root/tests/fuzz/model-corpus" > "$build/load_fuzz.log" 2>&1 &
loader_run=$!
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$build/corpus" "$root/tests/fuzz/corpus" || status=$?
wait "$loader_run" || status=$?
echo "--- the model loader's fuzzer ($build/load_fuzz.log):"
cat "$build/load_fuzz.log"
exit "$status"
