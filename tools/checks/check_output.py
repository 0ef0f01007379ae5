#!/usr/bin/env python3
"""Compare a chapter program's output, byte for byte, with the file the book prints.

A mismatch names the chapter, the expected-output file and the first line that differs,
so a wrong number in the book, or a program changed without updating the book, fails.

The build runs each program once and keeps what it printed (--save, a build product that
depends on the program and its command), so that a long run (a training chapter) happens
once per change; the output check and the book then read that file (--output):

    check_output.py --chapter 01-projection --program bin/ch01-projection --save outputs/01-projection/output.txt
    check_output.py --chapter 01-projection --output outputs/01-projection/output.txt --expected chapters/01-projection/output.txt
"""
import argparse
import os
import shlex
import subprocess
import sys


def command_from_file(path, program):
    """The first non-comment line of a try.cmd file, with its program name replaced by the built one."""
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        sys.exit(f"{path}: no command found")
    words = shlex.split(lines[0])
    expected_name = os.path.basename(program)
    if os.path.basename(words[0]) != expected_name:
        sys.exit(f"{path}: the command must start with {expected_name}, not {words[0]}")
    return [program] + words[1:]


TIME_LIMIT = 900  # seconds; a training chapter runs for a minute, longer under the sanitizers


def program_command(args):
    """The command that runs the program (try.cmd's, or the program alone), after its --launcher."""
    command = command_from_file(args.command_file, args.program) if args.command_file else [args.program]
    return shlex.split(args.launcher or "") + command + (args.extra_arg or [])


def save(args):
    """Run the program once; its stdout goes to --save, its exit status and stderr next to it
    (FILE.status). A program that fails does not fail the build: the output check reports it."""
    command = program_command(args)
    if args.figures:
        os.makedirs(args.figures, exist_ok=True)
        command += ["--figures", args.figures]
    try:
        run = subprocess.run(command, capture_output=True, timeout=TIME_LIMIT, check=False)
        stdout, status, stderr = run.stdout, str(run.returncode), run.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        stdout, status, stderr = b"", "timeout", f"it did not finish within {TIME_LIMIT} s\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.save)), exist_ok=True)
    with open(args.save + ".status", "w", encoding="utf-8") as handle:
        handle.write(f"{status}\n{shlex.join(command)}\n{stderr}")
    with open(args.save, "wb") as handle:
        handle.write(stdout)
    return 0


def saved_run(path):
    """The exit status, command and stderr of a run that --save kept, or None."""
    try:
        with open(path + ".status", encoding="utf-8") as handle:
            status, command, stderr = (handle.read().split("\n", 2) + ["", ""])[:3]
    except OSError:
        return None
    return status, command, stderr


def program_output(args):
    """(the program's output, its command) from the build's kept run or a new one; None, with
    the reason printed, when there is none."""
    if args.output:
        command = ["(the run the build kept)"]
        try:
            with open(args.output, "rb") as handle:
                actual = handle.read()
        except OSError as error:
            print(f"chapter {args.chapter}: cannot read the program's output {args.output}: {error.strerror}; "
                  "build first (the build runs each program once)")
            return None
        run = saved_run(args.output)
        if run:
            status, ran, stderr = run
            command = [ran]
            if status != "0":
                print(f"chapter {args.chapter}: {ran} "
                      + (f"exited with status {status}" if status != "timeout" else "did not finish"))
                print(stderr)
                return None
    else:
        command = program_command(args)
        try:
            run = subprocess.run(command, capture_output=True, timeout=120, check=False)
        except subprocess.TimeoutExpired:
            print(f"chapter {args.chapter}: {' '.join(command)} did not finish within 120 s")
            return None
        if run.returncode != 0:
            print(f"chapter {args.chapter}: the program exited with status {run.returncode}")
            print(run.stderr.decode("utf-8", "replace"))
            return None
        actual = run.stdout
    return actual, command


def print_difference(args, shown, expected, actual, command):
    """The first line where the output and the book differ, and the command that printed it."""
    expected_lines = expected.decode("utf-8", "replace").split("\n")
    actual_lines = actual.decode("utf-8", "replace").split("\n")
    for number, (want, got) in enumerate(zip(expected_lines, actual_lines), start=1):
        if want != got:
            break
    else:
        number = min(len(expected_lines), len(actual_lines)) + 1
        want = expected_lines[number - 1] if number <= len(expected_lines) else "(end of file)"
        got = actual_lines[number - 1] if number <= len(actual_lines) else "(end of output)"
    print(f"chapter {args.chapter}: the program's output differs from {shown} at line {number}")
    print(f"  book:    {want!r}")
    print(f"  program: {got!r}")
    print(f"  command: {command[0] if args.output else shlex.join(command)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chapter", required=True, help="chapter folder name, e.g. 01-projection")
    parser.add_argument("--program", help="the built chapter program")
    parser.add_argument("--output", help="instead of running the program, compare this file it already wrote")
    parser.add_argument("--expected", help="the expected-output file the book includes")
    parser.add_argument("--command-file", help="a try.cmd file holding the command line to run")
    parser.add_argument("--extra-arg", action="append",
                        help="with --save: one more argument after the command's, e.g. --extra-arg=--load; repeat it")
    parser.add_argument("--save", help="run the program once and keep its output in this file (no comparison)")
    parser.add_argument("--figures", help="with --save: also write the program's figures into this folder")
    parser.add_argument("--launcher", help="words that start the program, e.g. \"mpiexec -n 4\" (chapter 17)")
    args = parser.parse_args()

    if bool(args.program) == bool(args.output):
        parser.error("give either --program or --output")
    if args.save:
        if not args.program:
            parser.error("--save needs --program")
        return save(args)
    if not args.expected:
        parser.error("--expected is needed, except with --save")
    shown = os.path.relpath(args.expected, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    try:
        with open(args.expected, "rb") as handle:
            expected = handle.read()
    except OSError as error:
        print(f"chapter {args.chapter}: cannot read {shown}: {error.strerror}")
        return 1
    got = program_output(args)
    if got is None:
        return 1
    actual, command = got
    if actual == expected:
        print(f"chapter {args.chapter}: output matches {shown}")
        return 0
    print_difference(args, shown, expected, actual, command)
    return 1


if __name__ == "__main__":
    sys.exit(main())
