#!/usr/bin/env python3
"""Run a chapter program on each kind of malformed input and check what the reader gets.

Each case must exit with status 2, print nothing on stdout (no partial result) and
exactly one line on stderr that contains the expected description of the problem.

Every file the program writes or reads (`--figures DIR`, and each of its own options that
takes a FILE: one whose help begins "write" is written, any other is read) is checked
before the run starts: a path in a folder that does not exist, a folder given for a file,
a file that does not exist, and a text file that is not plain ASCII are each refused in
one line, and a training program refuses them with its longest run asked for, within
LONG_RUN_LIMIT seconds of CPU time, far less than that run takes.

Then a few changes that are not errors, such as new embeddings alone: the program
either runs (status 0, its output on stdout, at most one line of note on stderr) or
refuses with one line that blames none of the options the reader did not give.
"""
import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

# (what is wrong, arguments, a fragment the one-line message must contain)
CASES = [
    ("a non-numeric entry", ["--embeddings", "2,0;1,x;2,0"], '--embeddings row 2: "1,x": "x" is not a number'),
    ("ragged rows", ["--embeddings", "2,0;1,2,3;2,0"], "has 3 entries but row 1 has 2"),
    ("an empty matrix", ["--wq", ""], "--wq: the matrix is empty"),
    ("an empty row", ["--embeddings", "2,0;;2,0"], "--embeddings row 2 is empty"),
    ("a trailing ';'", ["--embeddings", "2,0;1,2;2,0;"], "--embeddings row 4 is empty (the matrix ends with ';')"),
    ("an empty entry", ["--wq", "0,1;1,"], '--wq row 2: "1,": entry 2 is empty'),
    ("a line break inside a value", ["--embeddings", "2,0;1,x\ny;2,0"], '--embeddings row 2: "1,x\\ny": "x\\ny" is not a number'),
    ("a bad value in the --name=value form", ["--embeddings=2,0;1,x;2,0"], '--embeddings row 2: "1,x"'),
    ("a NaN entry", ["--embeddings", "2,0;1,nan;2,0"],
     '--embeddings row 2: "1,nan": entry 2 is "nan"; expected a finite number (NaN and infinities are refused)'),
    ("an infinite entry", ["--wq", "0,1;-inf,0"], '--wq row 2: "-inf,0": entry 1 is "-inf"; expected a finite number'),
    ("an infinite entry spelled out", ["--wv", "Infinity,0;0,1"], '--wv row 1: "Infinity,0": entry 1 is "Infinity"'),
    ("a flag given a value", ["--causal=yes"], '--causal: takes no value, got "yes"'),
    ("W_Q with the wrong number of rows", ["--wq", "0,1;1,0;1,1"], "--wq: expected 2 rows (one per embedding feature), got 3"),
    ("W_K with a d_k different from W_Q", ["--wq", "0,1;1,0", "--wk", "1,0,0;0,1,0"],
     "--wk: expected 2 columns (d_k, the same as --wq), got 3"),
    ("W_Q that does not fit new embeddings", ["--embeddings", "1,0,2;0,1,1", "--wq", "0,1;1,0"],
     "--wq: expected 3 rows (one per embedding feature), got 2"),
    ("W_V with the wrong number of rows", ["--wv", "1,0"], "--wv: expected 2 rows (one per embedding feature), got 1"),
    ("too few token names", ["--tokens", "A,B"], "--tokens: expected 3 names (one per embedding row), got 2"),
    ("too many token names", ["--tokens", "A,B,C,D"], "--tokens: expected 3 names (one per embedding row), got 4"),
    ("an unknown flag", ["--frobnicate"], 'unknown option "--frobnicate"'),
    ("a flag missing its value", ["--embeddings"], "--embeddings: missing value"),
    ("a bad precision", ["--precision", "x"], '--precision: expected a whole number from 0 to 10, got "x"'),
    ("a precision just above 10", ["--precision", "11"], '--precision: expected a whole number from 0 to 10, got "11"'),
    ("a negative seed", ["--seed", "-1"], '--seed: expected a whole number from 0 to 2147483647, got "-1"'),
]

# With grouped keys, W_K may be narrower than W_Q: here W_Q holds 2 query heads of width 1 and
# h_kv is 1, so W_K needs 1 column.
GROUPED_WK_CASE = ("W_K that does not hold h_kv key heads as wide as a query head",
                   ["--wq", "0,1;1,0", "--wk", "1,0,0;0,1,0"],
                   "--wk: expected 1 column (h_kv = 1 key head as wide as a query head, d_k/h = 1), got 3")

# A sliding window and its sinks (chapter 19): each refused before the model is read.
WINDOW_CASES = [
    ("a window of 0 keys", ["--window", "0"], '--window: expected a whole number from 1 to 64, got "0"'),
    ("a rolling cache of 0 positions", ["--cache", "0"], '--cache: expected a whole number from 1 to 127, got "0"'),
    ("sinks that fill the cache", ["--cache", "8", "--sinks", "1,8"],
     "--sinks: 8 sinks in a cache of --cache 8; expected each count below the cache"),
    ("0 sinks", ["--cache", "8", "--sinks", "0,2"], '--sinks: entry 1 of "0,2" is "0"; expected whole numbers from 1'),
]
# ALiBi's heads (chapter 19's ch19-alibi): a whole number from 1 to 64, the most whose slopes it writes exactly.
ALIBI_CASES = [
    ("0 ALiBi heads", ["--alibi-heads", "0"], '--alibi-heads: expected a whole number from 1 to 64, got "0"'),
    ("65 ALiBi heads", ["--alibi-heads", "65"], '--alibi-heads: expected a whole number from 1 to 64, got "65"'),
    ("ALiBi heads that are not a whole number", ["--alibi-heads", "2.5"],
     '--alibi-heads: expected a whole number from 1 to 64, got "2.5"'),
    ("ALiBi heads missing their value", ["--alibi-heads"], "--alibi-heads: missing value"),
]
# Latent keys and values (chapter 20): the latent narrower than the token, the rotary key in pairs.
LATENT_CASES = [
    ("a latent wider than the token", ["--wdkv", "1,0,0;0,1,0"],
     "--wdkv: it is 2×3; expected d×d_c with d = 2 rows (one per embedding feature) and 1 ≤ d_c ≤ 2 columns"),
    ("a latent of no features", ["--wdkv", ""], "--wdkv: the matrix is empty"),
    ("a rotary key of odd width", ["--wkr", "1;0"], "--wkr: it is 2×1; expected d×d_R with d = 2 rows and an even d_R"),
    ("content keys narrower than the queries", ["--wuk", "1,0"], "--wuk: it is 1×2; expected d_c×(h·d_h) = 1×4"),
    ("heads that do not divide W_Q", ["--heads", "3"], "--heads: 3 does not divide the 4 columns of --wq"),
]
# Chapter 20's trained latents: each width from 1 to d, the rotary width even; refused before training.
LATENT_WIDTH_CASES = [
    ("a latent of width 0", ["--latent-widths", "0,16"], '--latent-widths: entry 1 of "0,16" is "0"; expected whole '
     "numbers from 1 to 64"),
    ("a latent wider than the model", ["--latent-widths", "16,65"], '--latent-widths: entry 2 of "16,65" is "65"'),
    ("an odd rotary width", ["--rotary-width", "7"], "--rotary-width: 7 is odd; expected an even width from 2 to 64"),
]
# The kernels' benchmark's own option (shown in its --help): a list of sizes.
SIZES_CASES = [
    ("sizes that are not numbers", ["--sizes", "abc"], '--sizes: entry 1 of "abc" is "abc"; expected whole numbers'),
    ("a negative size", ["--sizes", "-5"], '--sizes: entry 1 of "-5" is "-5"; expected whole numbers from 1'),
    ("a size of 0", ["--sizes", "512,0"], '--sizes: entry 2 of "512,0" is "0"'),
    ("an empty size", ["--sizes", "512,,1024"], '--sizes: entry 2 of "512,,1024" is empty'),
    ("sizes missing their value", ["--sizes"], "--sizes: missing value"),
    ("sizes followed by a flag", ["--sizes", "--smoke"], "--sizes: missing value"),
]
# Every benchmark's two short runs (shown in its --help): one at a time.
SHORT_RUN_CASES = [("two short runs at once", ["--smoke", "--quick"], "--smoke and --quick: choose one")]

# The longest run a program offers, added to its file cases: a bad path must be refused before
# the run, never after it (issue 37: a bad --save was reported after the whole training).
LONG_RUNS = {"ch14-next-character": ["--steps", "5000"], "ch15-induction-head": ["--steps", "5000"],
             "ch18-trained": ["--steps", "5000", "--uptrain-steps", "5000"], "ch20-trained": ["--steps", "5000"]}
# Seconds of CPU time (not of the clock, which a busy machine stretches) a refusal may take: 5000
# training steps take minutes of it; reading the text and checking the options about one.
LONG_RUN_LIMIT = 15
# A text with "é" (UTF-8: bytes 0xC3 0xA9) on its line 4, the first byte named in the refusal.
NOT_ASCII = b"In the beginning\nGod created\nthe heaven\nand the earth, caf\xc3\xa9\n" * 5


def own_matrices(usage):
    """The program's own options that take a matrix (placeholder M), from its --help."""
    own = usage.split("\nOptions of ", 1)[1] if "\nOptions of " in usage else ""
    return [line.split()[0] for line in own.splitlines() if line.startswith("  --") and line.split()[1:2] == ["M"]]


def file_options(usage):
    """The program's files from its --help: (option, written) for each option taking FILE or DIR."""
    found = []
    for line in usage.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[0].startswith("--") and parts[1] in ("FILE", "DIR"):
            found.append((parts[0], parts[1] == "DIR" or parts[2].lower() == "write"))
    return found


def file_cases(program, usage, folder):
    """Each file option given a path it cannot use: (what, arguments, fragment) cases."""
    os.makedirs(os.path.join(folder, "a-folder"), exist_ok=True)
    text = os.path.join(folder, "not-ascii.txt")
    with open(text, "wb") as out:
        out.write(NOT_ASCII)
    longest = LONG_RUNS.get(os.path.basename(program), [])
    cases = []
    for option, written in file_options(usage):
        missing = os.path.join(folder, "no-such-folder", "file")
        if option == "--figures":
            cases += [(f"{option} in a folder that does not exist", [*longest, option, missing],
                       f"{option}: cannot write into the folder {missing}: it does not exist"),
                      (f"{option} naming a file", [*longest, option, text], f"{option}: cannot write into the folder")]
        elif written:
            cases += [(f"{option} in a folder that does not exist", [*longest, option, missing],
                       f"{option}: cannot write the file {missing}: the folder {os.path.dirname(missing)} does not "
                       "exist"),
                      (f"{option} naming a folder", [*longest, option, os.path.join(folder, "a-folder")],
                       f"{option}: cannot write the file {os.path.join(folder, 'a-folder')}: it is a folder")]
        else:
            cases.append((f"{option} naming a file that does not exist", [*longest, option, missing],
                          f"{option}: cannot read the file {missing}"))
            if option in ("--text", "--eval"):
                cases.append((f"{option} naming a text that is not plain ASCII", [*longest, option, text],
                              "byte 0xC3 on line 4 is not plain ASCII; the model reads ASCII text only"))
    return cases


# (what the reader changed, arguments, the options given): new numbers that need
# other shapes than the defaults. No message may be about a matrix or the names the
# reader did not give (a chapter's own option, such as --heads, may need changing).
CHANGES = [
    ("only the embeddings, 4 tokens with 3 features", ["--embeddings", "1,0,2;0,1,1;1,1,0;2,0,1"], {"--embeddings"}),
    ("only W_Q, with 3 columns", ["--wq", "1,0,1;0,1,1"], {"--wq"}),
]
PROJECTIONS = ("--tokens", "--embeddings", "--wq", "--wk", "--wv")


def check_change(program, what, arguments, given):
    """Problems with a run on numbers that need new defaults; an empty list if none."""
    run = subprocess.run([program, *arguments], capture_output=True, timeout=60, check=False)
    stderr = run.stderr.decode("utf-8", "replace")
    if run.returncode == 0:
        if not run.stdout:
            return ["exit status 0 but nothing on stdout"]
        if stderr.count("\n") > 1:
            return [f"more than one line of note on stderr: {stderr!r}"]
        return []
    problems = []
    if run.returncode != 2 or run.stdout or stderr.count("\n") != 1:
        problems.append(f"exit status {run.returncode}, {len(run.stdout)} bytes on stdout, stderr {stderr!r}; "
                        "expected status 0, or status 2 with one line on stderr")
    # The option a message is about comes first: "program: --wk: expected 3 columns ...".
    about = stderr.split(": ")[1] if stderr.count(": ") >= 2 else ""
    blamed = [option for option in PROJECTIONS if option not in given and about == option]
    if blamed:
        problems.append(f"the message blames {', '.join(blamed)}, which the reader did not give: {stderr.strip()!r}")
    return problems


def check_changes(program, usage):
    """Run CHANGES, print a line for each; returns how many failed."""
    change_failures = 0
    # Chapter 19's held-out windows read the saved model, not the reader's numbers, and take seconds
    # (3.9 of the check's 4.1 s): the changes run without them, as check_valid_input.py's grid does.
    skip = ["--windows", "0"] if re.search(r"^  --windows N .*\(0 skips them\)", usage, re.M) else []
    for what, arguments, given in CHANGES:
        problems = check_change(program, what, arguments + skip, given)
        if problems:
            change_failures += 1
            print(f"FAIL {what} ({' '.join(arguments + skip)}): " + "; ".join(problems))
        else:
            print(f"ok   {what}")
    print(f"{len(CHANGES) - change_failures} of {len(CHANGES)} changes that need new defaults handled")
    return change_failures


def cpu_limit(seconds):
    """For a child process: killed (SIGXCPU, then SIGKILL) past `seconds` of CPU time."""
    return lambda: resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def refusal_problems(program, what, arguments, fragment, cpu_seconds=None):
    """Runs one malformed input; prints "ok" or "FAIL" with its problems; returns 1 on failure.
    With cpu_seconds, the program must refuse within that much CPU time: before its long run."""
    try:
        run = subprocess.run([program, *arguments], capture_output=True, timeout=600 if cpu_seconds else 60,
                             check=False, preexec_fn=cpu_limit(cpu_seconds) if cpu_seconds else None)
    except subprocess.TimeoutExpired:
        print(f"FAIL {what}: no answer within {600 if cpu_seconds else 60} s")
        return 1
    if run.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        print(f"FAIL {what} ({' '.join(arguments)}): still running after {cpu_seconds} s of CPU time, so it "
              "refuses (if at all) after its run, not before")
        return 1
    stderr = run.stderr.decode("utf-8", "replace")
    problems = []
    if "\ufffd" in stderr:  # a byte that is not UTF-8, garbled on the reader's terminal
        problems.append(f"the message holds bytes that are not text: {run.stderr!r}")
    if run.returncode != 2:
        problems.append(f"exit status {run.returncode}, expected 2")
    if run.stdout:
        problems.append(f"printed {len(run.stdout)} bytes on stdout, expected none")
    if stderr.count("\n") != 1 or not stderr.endswith("\n"):
        problems.append(f"expected exactly one line on stderr, got {stderr!r}")
    if fragment not in stderr:
        problems.append(f"the message does not say {fragment!r}: {stderr.strip()!r}")
    if problems:
        print(f"FAIL {what} ({' '.join(arguments)}): " + "; ".join(problems))
        return 1
    print(f"ok   {what}: {stderr.strip()}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    args = parser.parse_args()
    # A case about an option this program does not read (left out of its --help) would
    # only test the refusal; run_case checks that refusal once, below.
    usage = subprocess.run([args.program, "--help"], capture_output=True, text=True, timeout=60, check=False).stdout
    cases = [case for case in CASES if f"  {case[1][0].split('=')[0]} " in usage]
    # A case that also gives an option the program does not read would only test that refusal.
    cases = [case for case in cases
             if all(f"  {word.split('=')[0]} " in usage for word in case[1][1:] if word.startswith("--"))]
    if "  --kv-heads " in usage:  # grouped keys (chapter 18): W_K holds h_kv heads as wide as a query head
        cases = [GROUPED_WK_CASE if case[0] == "W_K with a d_k different from W_Q" else case for case in cases]
    if "  --sizes " in usage:
        cases += SIZES_CASES
    if "  --sinks " in usage:
        cases += WINDOW_CASES
    if "  --alibi-heads " in usage:
        cases += ALIBI_CASES
    if "  --wdkv " in usage:
        cases += LATENT_CASES
    if "  --latent-widths " in usage:
        cases += LATENT_WIDTH_CASES
    if "  --smoke " in usage and "  --quick " in usage:
        cases += SHORT_RUN_CASES
    cases += [(f"NaN in {option}, a matrix of the program's own", [option, "nan"],
               f'{option} row 1: "nan": entry 1 is "nan"; expected a finite number') for option in own_matrices(usage)]
    refused = [option for option in ("--causal", "--wv") if f"  {option} " not in usage]
    for option in refused:
        for arguments in ([option, "1"], [f"{option}=1"]) if option == "--wv" else ([option],):
            cases.append((f"{option}, which this program does not read", arguments,
                          f"{option}: {os.path.basename(args.program)} does not use this option"))
    folder = tempfile.mkdtemp(prefix="bad-input-")
    files = file_cases(args.program, usage, folder)
    failures = sum(refusal_problems(args.program, what, arguments, fragment,
                                    LONG_RUN_LIMIT if (what, arguments, fragment) in files else None)
                   for what, arguments, fragment in cases + files)
    shutil.rmtree(folder, ignore_errors=True)
    cases += files
    print(f"{len(cases) - failures} of {len(cases)} malformed inputs handled")
    # --help is not an error: the usage on stdout, nothing on stderr, exit status 0.
    name = os.path.basename(args.program)
    for arguments in (["--help"], ["-h"], ["--frobnicate", "--help"]):
        run = subprocess.run([args.program, *arguments], capture_output=True, text=True, timeout=60, check=False)
        if run.returncode != 0 or run.stderr or not run.stdout.startswith(f"{name}: "):
            failures += 1
            print(f"FAIL {' '.join(arguments)}: exit status {run.returncode}, stderr {run.stderr!r}, "
                  f"stdout begins {run.stdout[:40]!r}; expected the usage on stdout and status 0")
        else:
            print(f"ok   {' '.join(arguments)}: the usage on stdout, status 0")
    change_failures = check_changes(args.program, usage)
    return 1 if failures or change_failures else 0


if __name__ == "__main__":
    sys.exit(main())
