#!/usr/bin/env python3
"""The book's measured figures are measured one at a time.

Chapters 13 and 17 time their programs on the machine that builds the book (the measured-*.svg
figures, docs/CMakeLists.txt). They wait for every other target, and Ninja runs several jobs at once,
so two measuring commands would run side by side, each slowing the other. Each build statement
that writes a measured figure must be in the pool book_measuring, and that pool
(declared in a file build.ninja includes) must hold one job.

Usage: check_measured_alone.py --ninja FILE   (FILE: the build's build.ninja)
"""
import argparse
import os
import re
import sys


def ninja_text(path):
    """A Ninja file with the files it includes (CMake writes its pools into CMakeFiles/rules.ninja)."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    folder = os.path.dirname(os.path.abspath(path))
    for included in re.findall(r"^(?:include|subninja) (.+)$", text, re.M):
        text += "\n" + ninja_text(os.path.join(folder, included.strip()))
    return text


def statements(text):
    """Each build statement of a Ninja file: (its outputs, its indented variables)."""
    found = []
    for match in re.finditer(r"^build (.*?)(?<!\$):(.*)\n((?:[ \t]+.*\n)*)", text, re.M):
        outputs = [path for path in re.split(r"(?<!\$) ", match.group(1).split(" | ")[0]) if path]
        variables = dict(re.findall(r"^[ \t]+(\w+) = (.*)$", match.group(3), re.M))
        found.append((outputs, variables))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ninja", required=True, help="the build's build.ninja")
    args = parser.parse_args()
    text = ninja_text(args.ninja)
    problems = []
    depth = re.search(r"^pool book_measuring\n[ \t]+depth = (\d+)$", text, re.M)
    if depth is None or depth.group(1) != "1":
        problems.append(f"the pool book_measuring holds {depth.group(1) + ' jobs' if depth else 'nothing'}; "
                        "expected a pool of depth 1 (docs/CMakeLists.txt)")
    measuring = [(outputs, variables) for outputs, variables in statements(text)
                 if any(re.search(r"/measured-[\w-]+\.svg$", path) for path in outputs)]
    if not measuring:
        problems.append("no build statement writes a measured figure (measured-*.svg)")
    for outputs, variables in measuring:
        if variables.get("pool") != "book_measuring":
            problems.append(f"{' '.join(outputs)} is measured in pool {variables.get('pool', '(none)')}, "
                            "expected book_measuring: it would run beside another measurement")
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"ok   {len(measuring)} measuring commands, one at a time (pool book_measuring, depth 1)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
