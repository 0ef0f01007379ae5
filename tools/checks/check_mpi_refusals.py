#!/usr/bin/env python3
"""Run chapter 17's program under mpirun on input it must refuse, and on a rank that fails.

A refused command line: every process exits with status 2 before any message is sent, the
first process prints the one line (the others print nothing), and stdout stays empty. A rank
that fails: its process prints what went wrong and calls MPI_Abort, so mpirun ends every
process with a non-zero status within seconds instead of leaving them waiting; under
`mpirun -q` the reader sees that one line and nothing else.

    check_mpi_refusals.py --program build/bin/ch17-ring-attention --launcher "mpiexec -n"
"""
import argparse
import shlex
import subprocess
import sys
import time

# (what is wrong, processes, arguments, the fragment the one line must contain)
REFUSALS = [
    ("more ranks than tokens", 2, ["--ranks", "8", "--length", "4"],
     "--ranks 8 is more than the 4 tokens of --length: each rank needs at least one token"),
    ("heads that do not split between the ranks", 2, ["--ranks", "2", "--ulysses-heads", "3"],
     "--ulysses-heads 3 does not split between --ranks 2"),
]
LIMIT = 60  # seconds; a run that waits forever is stopped here and fails


def run(launcher, processes, program, arguments):
    command = shlex.split(launcher) + [str(processes), program, *arguments]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT, check=False)
    except subprocess.TimeoutExpired:
        return None, f"{shlex.join(command)} did not finish within {LIMIT} s: a process was left waiting"
    return done, f"{shlex.join(command)} ({time.monotonic() - started:.1f} s)"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    parser.add_argument("--launcher", required=True, help='e.g. "mpiexec -n"; the number of processes follows')
    args = parser.parse_args()
    failures = 0
    for what, processes, arguments, fragment in REFUSALS:
        done, command = run(args.launcher, processes, args.program, arguments)
        ours = [] if done is None else [line for line in done.stderr.splitlines() if "ch17-ring-attention:" in line]
        if done is None or done.returncode != 2 or done.stdout or len(ours) != 1 or fragment not in ours[0]:
            failures += 1
            print(f"FAILED {what}: {command}")
            if done is not None:
                print(f"  status {done.returncode}, stdout {len(done.stdout)} characters, our lines: {ours}")
        else:
            print(f"ok {what}: {command}: status 2, one line: {ours[0]}")
    done, command = run(args.launcher, 2, args.program, ["--stop-rank", "1"])
    if done is None or done.returncode == 0 or "rank 1 stopped on purpose" not in done.stderr or done.stdout:
        failures += 1
        print(f"FAILED a rank that fails: {command}")
        if done is not None:
            print(f"  status {done.returncode}, stderr:\n{done.stderr}")
    else:
        print(f"ok a rank that fails: {command}: status {done.returncode}, every process stopped")
    # With the launcher's -q (Open MPI's --quiet), its own notice of the abort is gone and
    # what the reader sees is the book's one line.
    quiet = shlex.split(args.launcher)
    done, command = run(shlex.join([quiet[0], "-q", *quiet[1:]]), 2, args.program, ["--stop-rank", "1"])
    lines = [] if done is None else done.stderr.splitlines()
    if done is None or done.returncode == 0 or len(lines) != 1 or "rank 1 stopped on purpose" not in lines[0]:
        failures += 1
        print(f"FAILED a rank that fails, quietly: {command}")
        if done is not None:
            print(f"  status {done.returncode}, stderr of {len(lines)} lines:\n{done.stderr}")
    else:
        print(f"ok a rank that fails, quietly: {command}: one line: {lines[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
