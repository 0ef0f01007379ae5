#!/usr/bin/env python3
"""Every test of the book is registered in one place.

Fails when a CMake file of the project calls add_test anywhere but in the one function
book_test() of tests/book_test.cmake, or runs a Python program kept in a CMake string
(python -c "..."): such a check belongs in a script in tools/.

Usage: check_test_sites.py --root DIR
"""

import argparse
import pathlib
import re
import sys

ADD_TEST = re.compile(r"\badd_test\s*\(", re.IGNORECASE)
# A program kept in a CMake variable and run with python -c "${...}" (a one-line probe at
# configure time, python -c "import furo", is no test and may stay).
INLINE_PYTHON = re.compile(r"BOOK_PYTHON\}\"?\s+-c\s+\"?\$\{")
THE_SITE = "tests/book_test.cmake"
SKIPPED = ("build", "workspace", ".git", "node_modules")


def cmake_files(root):
    """Every CMakeLists.txt and *.cmake of the project, relative to the root, outside build folders."""
    found = [*root.rglob("CMakeLists.txt"), *root.rglob("*.cmake")]
    return sorted(path.relative_to(root).as_posix() for path in found
                  if not any(part.startswith(SKIPPED) for part in path.relative_to(root).parts))


def sites(root, name):
    """(line, text) of every add_test call and every inline Python program in one CMake file."""
    found = []
    for number, line in enumerate((root / name).read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("#", 1)[0]
        if ADD_TEST.search(code) or INLINE_PYTHON.search(code):
            found.append((number, line.strip()))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the project's root folder")
    root = pathlib.Path(parser.parse_args().root).resolve()
    problems = []
    calls = 0
    for name in cmake_files(root):
        for number, text in sites(root, name):
            if INLINE_PYTHON.search(text):
                problems.append(f"{name}:{number}: a Python program in a CMake string; put it in a script in tools/")
            elif name != THE_SITE:
                problems.append(f"{name}:{number}: add_test outside book_test() of {THE_SITE}: {text}")
            else:
                calls += 1
    if calls != 1:
        problems.append(f"{THE_SITE}: {calls} add_test calls; book_test() must be the one")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"every test goes through book_test() ({THE_SITE})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
