#!/usr/bin/python3
"""Print the slowest tests of a CTest run and the run's total, from CTest's JUnit report.

tools/test.sh runs CTest with --output-junit and calls this after CTest's summary, so that a
change that slows the suite shows in the test command's own log (and in CI's). The report is
CTest's structured account of the run just made: one <testcase> per test that ran, with its
name, its wall time in seconds (`time`) and its status.

Usage: slowest_tests.py --junit FILE [--count N] [--started T --built T --finished T]
(T: seconds since the epoch, as bash's $EPOCHREALTIME gives them, when the command started,
when its build ended and CTest began, and when CTest ended)
"""
import argparse
import sys
import xml.etree.ElementTree as ElementTree


def read_times(path):
    """(name, seconds, status) of every test case in the JUnit report at path."""
    root = ElementTree.parse(path).getroot()
    cases = []
    for case in root.iter("testcase"):
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            seconds = 0.0
        cases.append((case.get("name", "?"), seconds, case.get("status", "run")))
    return cases


def report(cases, count, ctest_seconds, build_seconds):
    """The lines to print: the slowest tests, then the totals."""
    slowest = sorted(cases, key=lambda case: case[1], reverse=True)[:count]
    lines = [f"The {len(slowest)} slowest of {len(cases)} tests (wall time of each):"]
    for name, seconds, status in slowest:
        note = "" if status == "run" else f" ({status})"
        lines.append(f"  {seconds:8.2f} s  {name}{note}")
    summed = sum(seconds for _, seconds, _ in cases)
    total = f"Total: the tests' own times add up to {summed:.1f} s"
    if ctest_seconds is not None:
        total += f"; CTest ran {ctest_seconds:.1f} s of wall time"
    if build_seconds is not None:
        total += f"; the build before it {build_seconds:.1f} s"
        if ctest_seconds is not None:
            total += f"; the whole command {build_seconds + ctest_seconds:.1f} s"
    lines.append(total + ".")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", required=True, help="CTest's --output-junit report")
    parser.add_argument("--count", type=int, default=10, help="how many of the slowest tests to print")
    parser.add_argument("--started", type=float, help="when the command started (seconds since the epoch)")
    parser.add_argument("--built", type=float, help="when its build ended and CTest started")
    parser.add_argument("--finished", type=float, help="when CTest ended")
    args = parser.parse_args()
    try:
        cases = read_times(args.junit)
    except (OSError, ElementTree.ParseError) as error:
        print(f"slowest_tests.py: no timing report of this run ({error})", file=sys.stderr)
        return 1
    build_seconds = args.built - args.started if None not in (args.started, args.built) else None
    ctest_seconds = args.finished - args.built if None not in (args.built, args.finished) else None
    print("\n".join(report(cases, args.count, ctest_seconds, build_seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
