#!/usr/bin/env python3
"""Every Catch2 test case runs under CTest exactly once.

catch_discover_tests turns each Catch2 test case into one CTest test whose command
selects the case by name. A name that CMake splits (a ';' in it) or escapes wrongly
gives a CTest test that selects no case, which Catch2 would count as passed. This check
asks each CTest test's own command which cases it selects (--list-test-names-only) and
fails unless each selects exactly one, and every case of every test program is selected
by exactly one CTest test.
"""
import argparse
import collections
import json
import subprocess
import sys


def listed(command):
    result = subprocess.run(command + ["--list-test-names-only"], capture_output=True, text=True, check=False)
    return [line for line in result.stdout.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", required=True, help="the CTest build folder")
    args = parser.parse_args()
    show = subprocess.run(["ctest", "-N", "--show-only=json-v1"], cwd=args.build, capture_output=True, text=True,
                          check=True)
    tests = json.loads(show.stdout)["tests"]
    programs = sorted({test["command"][0] for test in tests
                       if test.get("command") and "/test_" in test["command"][0]})
    problems = []
    selected = collections.Counter()
    for test in tests:
        command = test.get("command") or []
        if not command or command[0] not in programs:
            continue
        names = listed(command)
        if len(names) != 1:
            problems.append(f"CTest test \"{test['name']}\" selects {len(names)} Catch2 test cases, "
                            f"not 1: {names}")
        selected.update((command[0], name) for name in names)
    total = 0
    for program in programs:
        for name in listed([program]):
            total += 1
            if selected[(program, name)] != 1:
                problems.append(f"Catch2 test case \"{name}\" of {program.rsplit('/', 1)[-1]} runs under "
                                f"{selected[(program, name)]} CTest tests, not 1 (a ';' in a test name splits it)")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{total} Catch2 test cases in {len(programs)} programs, "
          f"{'each run by exactly one CTest test' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
