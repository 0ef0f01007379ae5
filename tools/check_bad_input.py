#!/usr/bin/env python3
"""Run a chapter program on each kind of malformed input and check what the reader gets.

Each case must exit with status 2, print nothing on stdout (no partial result) and
exactly one line on stderr that contains the expected description of the problem.
"""
import argparse
import os
import subprocess
import sys

# (what is wrong, arguments, a fragment the one-line message must contain)
CASES = [
    ("a non-numeric entry", ["--embeddings", "2,0;1,x;2,0"], '--embeddings row 2: "1,x": "x" is not a number'),
    ("ragged rows", ["--embeddings", "2,0;1,2,3;2,0"], "has 3 entries but row 1 has 2"),
    ("an empty matrix", ["--wq", ""], "--wq: the matrix is empty"),
    ("an empty row", ["--embeddings", "2,0;;2,0"], '"" is not a number'),
    ("W_Q with the wrong number of rows", ["--wq", "0,1;1,0;1,1"], "--wq: expected 2 rows (one per embedding feature), got 3"),
    ("W_K with a d_k different from W_Q", ["--wk", "1,0,0;0,1,0"], "columns (d_k, the same as --wq), got 3"),
    ("W_V with the wrong number of rows", ["--wv", "1,0"], "--wv: expected 2 rows (one per embedding feature), got 1"),
    ("too few token names", ["--tokens", "A,B"], "--tokens: expected 3 names (one per embedding row), got 2"),
    ("too many token names", ["--tokens", "A,B,C,D"], "--tokens: expected 3 names (one per embedding row), got 4"),
    ("an unknown flag", ["--frobnicate"], 'unknown option "--frobnicate"'),
    ("a flag missing its value", ["--embeddings"], "--embeddings: missing value"),
    ("a bad precision", ["--precision", "x"], '--precision: expected a whole number from 0 to 10, got "x"'),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    args = parser.parse_args()
    failures = 0
    # A case about an option this program does not read (left out of its --help) would
    # only test the refusal; run_case checks that refusal once, below.
    usage = subprocess.run([args.program, "--help"], capture_output=True, text=True, timeout=60, check=False).stdout
    cases = [case for case in CASES if f"  {case[1][0]} " in usage]
    refused = [option for option in ("--causal", "--wv") if f"  {option} " not in usage]
    for option in refused:
        cases.append((f"{option}, which this program does not read", [option, "1"] if option == "--wv" else [option],
                      f"{option}: {os.path.basename(args.program)} does not use this option"))
    for what, arguments, fragment in cases:
        try:
            run = subprocess.run([args.program, *arguments], capture_output=True, timeout=60, check=False)
        except subprocess.TimeoutExpired:
            print(f"FAIL {what}: no answer within 60 s")
            failures += 1
            continue
        stderr = run.stderr.decode("utf-8", "replace")
        problems = []
        if run.returncode != 2:
            problems.append(f"exit status {run.returncode}, expected 2")
        if run.stdout:
            problems.append(f"printed {len(run.stdout)} bytes on stdout, expected none")
        if stderr.count("\n") != 1 or not stderr.endswith("\n"):
            problems.append(f"expected exactly one line on stderr, got {stderr!r}")
        if fragment not in stderr:
            problems.append(f"the message does not say {fragment!r}: {stderr.strip()!r}")
        if problems:
            failures += 1
            print(f"FAIL {what} ({' '.join(arguments)}): " + "; ".join(problems))
        else:
            print(f"ok   {what}: {stderr.strip()}")
    print(f"{len(cases) - failures} of {len(cases)} malformed inputs handled")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
