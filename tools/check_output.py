#!/usr/bin/env python3
"""Run a chapter program and compare its output, byte for byte, with the file the book prints.

A mismatch names the chapter, the expected-output file and the first line that differs,
so a wrong number in the book, or a program changed without updating the book, fails.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chapter", required=True, help="chapter folder name, e.g. 01-projection")
    parser.add_argument("--program", help="the built chapter program")
    parser.add_argument("--output", help="instead of running the program, compare this file it already wrote")
    parser.add_argument("--expected", required=True, help="the expected-output file the book includes")
    parser.add_argument("--command-file", help="a try.cmd file holding the command line to run")
    args = parser.parse_args()

    if bool(args.program) == bool(args.output):
        parser.error("give either --program or --output")
    shown = os.path.relpath(args.expected, os.path.join(os.path.dirname(__file__), ".."))
    try:
        with open(args.expected, "rb") as handle:
            expected = handle.read()
    except OSError as error:
        print(f"chapter {args.chapter}: cannot read {shown}: {error.strerror}")
        return 1
    if args.output:
        command = ["(the figures run)"]
        with open(args.output, "rb") as handle:
            actual = handle.read()
    else:
        command = command_from_file(args.command_file, args.program) if args.command_file else [args.program]
        try:
            run = subprocess.run(command, capture_output=True, timeout=120, check=False)
        except subprocess.TimeoutExpired:
            print(f"chapter {args.chapter}: {' '.join(command)} did not finish within 120 s")
            return 1
        if run.returncode != 0:
            print(f"chapter {args.chapter}: the program exited with status {run.returncode}")
            print(run.stderr.decode("utf-8", "replace"))
            return 1
        actual = run.stdout
    if actual == expected:
        print(f"chapter {args.chapter}: output matches {shown}")
        return 0

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
    print(f"  command: {shlex.join(command)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
