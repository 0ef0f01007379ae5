#!/bin/sh
# The compiler launcher of the grading build's library (tools/learning/grading.cmake): ccache, and
# after it compiles the precompiled header (-o NAME.gch), that header's SHA-256 in NAME.gch.sum.
# ccache checks every file an object was compiled from at each lookup, the 55 MB precompiled header
# too; with CCACHE_PCH_EXTSUM (tools/learning/build.py) it hashes the small .sum file in its place.
# The .sum is removed before the header is compiled, so it never outlives the header it describes.
output=""
previous=""
for argument in "$@"; do
    if [ "$previous" = "-o" ]; then
        output=$argument
    fi
    previous=$argument
done
case "$output" in
    *.gch)
        rm -f "$output.sum"
        ccache "$@" || exit
        sha256sum "$output" > "$output.sum.new" && mv "$output.sum.new" "$output.sum"
        ;;
    *)
        exec ccache "$@"
        ;;
esac
