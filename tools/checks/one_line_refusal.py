"""The verdict on one run of a program given a bad input (or a default that must adapt).

A refusal is one line on stderr that names the problem, exit status 2 and nothing on
stdout. A run that must succeed instead (status 0) prints its output and one note line.
The option checks in tests/*.cmake build each case's arguments and call verdict().
"""
import subprocess


def verdict(program, arguments, fragment, status=2, timeout=120):
    """Runs the program; prints its stderr and one "FAIL: ..." line per problem; returns 0 or 1."""
    run = subprocess.run([program, *arguments], capture_output=True, text=True, timeout=timeout, check=False)
    lines = run.stderr.splitlines()
    problems = [text for bad, text in [
        (run.returncode != status, f"exit status {run.returncode}, expected {status}"),
        ((run.stdout != "") != (status == 0), "stdout " + ("is empty" if status == 0 else "is not empty")),
        (len(lines) != 1, f"{len(lines)} lines on stderr, expected 1"),
        (fragment not in run.stderr, f"stderr does not contain {fragment!r}")] if bad]
    print(run.stderr, end="")
    for problem in problems:
        print("FAIL:", problem)
    return 1 if problems else 0
