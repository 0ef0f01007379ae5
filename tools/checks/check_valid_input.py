#!/usr/bin/env python3
"""Run every chapter program over a grid of valid inputs; none may be refused.

The grid: 1, 2, 3 and 5 tokens; embeddings 1 to 5 features wide; each value of a
chapter's own choice options (--positions), --heads at every divisor of the width,
--parts and --key-block from 1 to n, a --source with another number of tokens than the
sentence, and --causal where the program offers it. Every run must exit with status 0
and print its output on stdout; stderr is empty, or one note line that says which
defaults were fitted to the reader's numbers. A few runs must say which default they
fitted: a default that does not fit is never an error. Every program that reads
embeddings also runs on finite extremes (1e200, 1e-200, the largest and the smallest
double) and must print them short, in scientific notation, never as 200 digits.

Usage: check_valid_input.py --bin DIR   (DIR holds the chapter programs)
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time

TOKENS = (1, 2, 3, 5)
WIDTHS = (1, 2, 3, 4, 5)
# The chapter 3 experiment takes seconds whatever the input, and chapter 11 about one:
# they run the corners of the grid only (the fewest and the most tokens and features).
CORNERS_ONLY = {"ch03-scaling": [(1, 1), (5, 5)], "ch11-gradients": [(1, 1), (2, 3), (5, 5)]}
# A program that trains for about a minute by default: its default run is made once at build
# time and checked there (its .output test), so the grid runs its short trainings only.
TRAINS = {"ch14-next-character", "ch15-induction-head", "ch18-trained", "ch20-trained"}
# A program that reads the models a training program saved at build time (chapter 15's circuit and
# copying, chapter 16's names): its run on them is made once at build time and checked there, and it has no input of its
# own to vary but the file (whose malformed forms tools/checks/check_bad_input.py tries).
READS_SAVED_RUN = {"ch15-circuit", "ch15-copying", "ch16-names"}
# A program that reads a trained model: the grid gives it one made here by a 1-step training
# of chapter 14 (so it also runs where the build trained none, under the sanitizers).
READS_MODEL = {"ch16-generating-text": [[], ["--greedy"], ["--top-k", "1"], ["--temperature", "0.5", "--top-k", "5"],
                                        ["--prompt", "In the beginning", "--length", "5"], ["--uncropped", "--length", "70"]],
               # Chapter 19's held-out windows take seconds each: the grid reads one or two, or none
               # where it varies the worked example (ALiBi's, ch19-alibi, reads no model: the grid runs it).
               "ch19-window-and-sinks": [["--windows", "1"], ["--windows", "2", "--cache", "8", "--sinks", "1,7"],
                                         ["--windows", "1", "--cache", "2", "--sinks", "1"],
                                         ["--windows", "0", "--window", "1"], ["--windows", "0", "--window", "64"],
                                         ["--windows", "0", "--embeddings", "1,0,2;0,1,1;1,1,0;2,0,1"],
                                         ["--windows", "0", "--tokens", "A", "--embeddings", "1,2"]]}


def matrix(rows, cols, salt=0):
    """A small matrix of rows×cols with mixed signs, as the command line writes it."""
    return ";".join(",".join(str(((3 * r + 5 * c + salt) % 7 - 3) / 2) for c in range(cols)) for r in range(rows))


def options_of(usage):
    """The program's own options (name, placeholder) and whether it offers --causal."""
    own, mine = [], False
    for line in usage.splitlines():
        if line.startswith("Options of "):
            mine = True
        elif mine and line.strip().startswith("--"):
            parts = line.split()
            own.append((parts[0], parts[1] if len(parts) > 1 and parts[1].isupper() else ""))
    return own, "  --causal " in usage, "  --embeddings " in usage


def runs_for(name, usage):
    """Every command line of the grid for one program, as lists of arguments."""
    own, causal, embeddings = options_of(usage)
    names = {option for option, _ in own}
    if not embeddings:  # a program without the reader's embeddings (chapter 12): its own options only
        runs = [] if name in TRAINS or name in READS_SAVED_RUN else [[]]
        if "--steps" in names:
            # chapter 15's second half (its copying models) is left out: its measurements take a minute
            # under the sanitizers; the build's run and the try-it command run it
            phase = ["--copy-steps", "0"] if "--copy-steps" in names else []
            # chapter 18's trained models: two steps after mean pooling, a choice between 0, 1 and 2
            phase += ["--uptrain-steps", "2"] if "--uptrain-steps" in names else []
            # chapter 20's trained latents: one narrow latent, a choice of one
            phase += ["--latent-widths", "4"] if "--latent-widths" in names else []
            runs += [["--steps", "0", *phase], ["--steps", "1", *phase]]
        return runs
    shapes = CORNERS_ONLY.get(name, [(n, d) for n in TOKENS for d in WIDTHS])
    runs = []
    for n, d in shapes:
        base = ["--embeddings", matrix(n, d)]
        if "--positions" not in names:  # else its default is one of the choices below
            runs.append(base)
        if causal and (n, d) in [(1, 1), (2, 3), (5, 5)]:
            runs.append(base + ["--causal"])
        if "--positions" in names:
            runs += [base + ["--positions", kind] for kind in ("none", "sinusoidal", "rope")]
        if "--heads" in names:
            runs += [base + ["--heads", str(h)] for h in range(1, d + 1) if d % h == 0]
        if "--source" in names:
            runs += [base + ["--source", matrix(m, d, salt=1)] for m in (1, n + 1)]
            if causal:
                runs.append(base + ["--source", matrix(n + 2, d, salt=2), "--causal"])
        if "--parts" in names:
            runs += [base + ["--parts", str(p)] for p in range(1, n + 1)]
        if "--key-block" in names:
            runs += [base + ["--key-block", str(b)] for b in sorted({1, n, n + 1})]
        if "--upstream" in names:
            runs.append(base + ["--upstream", matrix(n, d, salt=3)])
    return runs


# (program, arguments, what the note line must say): defaults that do not fit are fitted.
NOTES = [
    ("ch13-at-scale", ["--embeddings", "1,0;0,1"], "note: using --parts 2, as its default does not fit"),
    ("ch09-multi-head", ["--embeddings", "1,0,0,1;0,1,1,0;1,1,0,0"], "--source 1,0,0,0;0,1,0,0"),
    ("ch09-multi-head", ["--embeddings", "1,0,0;0,1,0", "--heads", "3"], "--wo 1;1;1"),
    ("ch09-multi-head", ["--embeddings", "1,0,0;0,1,0;0,0,1"], "--heads 1"),
    ("ch11-gradients", ["--embeddings", "1,0;0,1"], "note: using --upstream 0,1;0,0, as its default does not fit"),
]


# (program, arguments, what stdout must say): a section that cannot run on the reader's
# numbers says why in one line, in its place, and the rest runs.
SAYS_WHY = [
    ("ch10-word-order", ["--embeddings", "1,0,2;0,1,1;1,1,0", "--positions", "rope"],
     "Rotary positions turn pairs of features, so they need an even d_k; yours is 3."),
    ("ch10-word-order", ["--embeddings", "1,0,2;0,1,1;1,1,0"],
     "Sinusoidal encodings come in (sin, cos) pairs, so they need an even d_model; yours is 3."),
    ("ch10-word-order", ["--embeddings", "1,2"], "One token has no other order: this comparison needs at least 2"),
    ("ch10-word-order", ["--embeddings", "1,2"], "q, the query of t1"),  # the rest still runs
    # Chapter 17's tables follow the reader's example (4 tokens: 4·(2 + 2)·8 = 128 bytes of K and V,
    # 4·4·8 = 128 of scores) and say which options set which run.
    ("ch17-ring-attention", ["--embeddings", "1,0;0,1;1,1;2,0", "--ranks", "2"],
     "\n        4    2    2       128 B          128 B\n"),
    ("ch17-ring-attention", ["--embeddings", "1,0;0,1;1,1;2,0", "--ranks", "2"],
     "The worked example on G = 4 ranks, one token each"),
    ("ch17-ring-attention", ["--embeddings", "1,0;0,1;1,1;2,0", "--ranks", "2"],
     "--ranks, --length and --layout set the sharded run below"),
    ("ch17-ring-attention", ["--embeddings", "1,0;0,1;1,1;2,0", "--ranks", "2"],
     "split between G = 2 ranks (--ranks)"),
    # ALiBi (chapter 19's ch19-alibi): a width that rules out chapter 10's pairs says so in the table's place,
    # and the fewest and the most heads print their slopes (the grid above runs the default 8 only).
    ("ch19-alibi", ["--embeddings", "1,0,2;0,1,1;1,1,0"],
     "(rotary, R_i q, R_j k left out: it turns pairs of features, and the width is 3.)"),
    ("ch19-alibi", ["--alibi-heads", "1"], "\n  h = 1: 1/256\n"),
    ("ch19-alibi", ["--alibi-heads", "64"], "\n  h = 64: 2^-0.125, 2^-0.25, "),
]


# Finite numbers at the far ends of a double's range: taken, and printed readably. Scientific
# notation (format_number's threshold rule) keeps every number short: no run of more than
# LONGEST_DIGITS digits, where fixed-point would print 1e200 as 201 digits.
EXTREMES = (["--embeddings", "1e200,0;0,1"], ["--embeddings", "1e-200,1;-1e200,0"],
            ["--embeddings", "1.7976931348623157e308,-4.9e-324;1,1"])
LONGEST_DIGITS = 20


def long_digits(stdout):
    """The first run of digits longer than LONGEST_DIGITS in a program's output, or None."""
    found = re.search(rf"[0-9]{{{LONGEST_DIGITS + 1},}}", stdout.decode("utf-8", "replace"))
    return found.group(0) if found else None


def check(program, arguments, note=None, says=None):
    """Problems with one run; an empty list if none."""
    try:
        run = subprocess.run([program, *arguments], capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return ["no answer within 60 s"]
    stderr = run.stderr.decode("utf-8", "replace")
    problems = []
    if run.returncode != 0:
        problems.append(f"exit status {run.returncode}: {stderr.strip()!r}")
    elif not run.stdout and "--smoke" not in arguments:
        problems.append("nothing on stdout")
    elif stderr and (stderr.count("\n") != 1 or ": note: " not in stderr):
        problems.append(f"stderr is not one note line: {stderr!r}")
    if note is not None and note not in stderr:
        problems.append(f"the note does not say {note!r}: {stderr.strip()!r}")
    if says is not None and says not in run.stdout.decode("utf-8", "replace"):
        problems.append(f"the output does not say {says!r}")
    if arguments in EXTREMES and long_digits(run.stdout):
        problems.append(f"the output prints a number of {len(long_digits(run.stdout))} digits; expected scientific "
                        "notation beyond 1e15")
    return problems


def grouped_model_jobs(folder, programs, model, scratch):
    """Chapter 18's models, whose query heads share key/value heads (h_kv = 2 in FILE, 1 in FILE.multi-query),
    made by a 1-step training, read back by chapter 18's --load and chapter 16's; and chapter 14's model too."""
    if "ch18-trained" not in programs:
        return []
    trained = os.path.join(folder, "ch18-trained")
    grouped = os.path.join(scratch, "grouped.safetensors")
    subprocess.run([trained, "--steps", "1", "--uptrain-steps", "0", "--save", grouped],
                   capture_output=True, timeout=300, check=True)
    jobs = [(trained, ["--load", grouped]), (trained, ["--load", grouped + ".multi-query"]),
            (trained, ["--load", model])]
    if "ch16-generating-text" in programs:
        jobs.append((os.path.join(folder, "ch16-generating-text"), ["--load", grouped, "--length", "5"]))
    return jobs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the folder that holds the chapter programs")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    args = parser.parse_args()
    programs = sorted(entry for entry in os.listdir(args.bin)
                      if entry[:2] == "ch" and entry[2:4].isdigit() and entry[4] == "-" and not entry.startswith("ch13-benchmark"))
    if len(programs) < 13:
        print(f"FAIL: {len(programs)} chapter programs in {args.bin}, expected 13")
        return 1
    jobs = []
    scratch = tempfile.mkdtemp(prefix="valid-input-")
    model = os.path.join(scratch, "model.safetensors")
    if READS_MODEL:
        subprocess.run([os.path.join(args.bin, "ch14-next-character"), "--steps", "1", "--save", model],
                       capture_output=True, timeout=120, check=True)
    jobs += grouped_model_jobs(args.bin, programs, model, scratch)
    for name in programs:
        program = os.path.join(args.bin, name)
        if name in READS_MODEL:
            jobs += [(program, ["--load", model, *arguments]) for arguments in READS_MODEL[name]]
            continue
        usage = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60, check=False).stdout
        jobs += [(program, arguments) for arguments in runs_for(name, usage)]
        if "  --embeddings " in usage:
            jobs += [(program, arguments) for arguments in EXTREMES]
    # Only for the programs this build made: under the sanitizers chapter 17's program is left out.
    jobs += [(os.path.join(args.bin, name), arguments, note) for name, arguments, note in NOTES if name in programs]
    jobs += [(os.path.join(args.bin, name), arguments, None, says) for name, arguments, says in SAYS_WHY
             if name in programs]
    benchmark = os.path.join(args.bin, "ch13-benchmark-kernels")
    if os.path.exists(benchmark):  # the kernels' benchmark at the grid's numbers of tokens
        jobs.append((benchmark, ["--smoke", "--sizes", ",".join(map(str, TOKENS))]))
    failures = 0
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (program, arguments, *_), problems in zip(jobs, pool.map(lambda job: check(*job), jobs)):
            if problems:
                failures += 1
                print(f"FAIL {os.path.basename(program)} {' '.join(arguments)}: " + "; ".join(problems))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(jobs) - failures} of {len(jobs)} valid inputs ran ({len(programs)} programs, "
          f"{time.monotonic() - started:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
