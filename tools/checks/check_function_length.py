#!/usr/bin/env python3
"""No function too long to see at once: at most 60 lines, in C++ and in Python.

C++ (src/, src/present/, chapters/*/): a function of the book opens with its own line
"{" after the line that closes its parameters, and ends at the "}" of the same indentation;
it is counted from the first line of its signature to that "}". Python (tools/*.py): every
function and method, from its "def" line to its last line, as the ast gives them.

Usage: check_function_length.py --root DIR [--limit 60]
"""

import argparse
import ast
import pathlib
import re
import sys

OPENING = re.compile(r"^(\s*)\{\s*$")


def signature_start(lines, brace):
    """The index of the first line of the signature whose body opens at lines[brace]."""
    start = brace - 1
    while start > 0:
        previous = lines[start - 1].strip()
        if (not previous or previous.startswith(("//", "#", "template")) or previous.endswith((";", "}", "{"))
                or previous.startswith("/*") or previous.endswith("*/")):
            break
        start -= 1
    return start


def cpp_functions(path):
    """(name, first line, length) of every function defined in a C++ file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for index, line in enumerate(lines):
        match = OPENING.match(line)
        if not match or index == 0:
            continue
        previous = lines[index - 1].strip()
        if not previous or previous.startswith("#") or previous.endswith((";", "{", "}")):
            continue  # a block of its own (an OpenMP region), not a function
        closing = match.group(1) + "}"
        end = next((i for i in range(index + 1, len(lines)) if lines[i].rstrip() == closing), None)
        if end is None:
            continue
        start = signature_start(lines, index)
        name = re.search(r"([\w:~<>=!+\-*/\[\]]+)\s*\(", " ".join(l.strip() for l in lines[start:index]))
        found.append((name.group(1) if name else lines[start].strip(), start + 1, end - start + 1))
    return found


def python_functions(path):
    """(name, first line, length) of every function and method of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def checked_files(root):
    """Every C++ and Python file the rule covers, relative to the root."""
    cpp = [*root.glob("src/*.[ch]pp"), *root.glob("src/present/*.[ch]pp"), *root.glob("chapters/*/*.cpp")]
    python = [path for path in root.glob("tools/**/*.py") if "node_modules" not in path.parts]
    return sorted(cpp), sorted(python)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the project's root folder")
    parser.add_argument("--limit", type=int, default=60, help="the most lines a function may have")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    cpp, python = checked_files(root)
    problems = []
    for files, reader in ((cpp, cpp_functions), (python, python_functions)):
        for path in files:
            for name, line, length in reader(path):
                if length > args.limit:
                    problems.append(f"{path.relative_to(root)}:{line}: {name} is {length} lines; split it into "
                                    f"named helpers of at most {args.limit}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"every function of {len(cpp)} C++ and {len(python)} Python files fits in {args.limit} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
