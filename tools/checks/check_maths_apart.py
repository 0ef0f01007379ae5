#!/usr/bin/env python3
"""The maths (src/) never includes the presentation (src/present/).

Two checks, and the test fails on either:
  1. no source or header in src/ includes a header of src/present/, by its name alone
     ("svg.hpp") or through the folder ("present/svg.hpp");
  2. the compiler, given the maths library's own include path (passed by the build),
     cannot find any presentation header by its name: a file that includes one does not
     compile, while the same file including matrix.hpp does. (The spelling through the
     folder, "present/svg.hpp", is what check 1 refuses.)

Usage: check_maths_apart.py --root DIR --compiler CXX --include-dirs "DIR|DIR..."
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def included_presentation(root, present_names):
    """Every line of src/*.[ch]pp that includes a presentation header, as a message."""
    problems = []
    for source in sorted(root.glob("src/*.[ch]pp")):
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            name = match.group(1)
            if name.startswith("present/") or name in present_names:
                problems.append(f"src/{source.name}:{number}: the maths includes the presentation header "
                                f"\"{name}\"; move the code that needs it to src/present/")
    return problems


def compiles(compiler, include_dirs, header, folder):
    """(compiled, compiler's message) for a file that includes only this header."""
    probe = pathlib.Path(folder) / "probe.cpp"
    probe.write_text(f'#include "{header}"\n', encoding="utf-8")
    command = [compiler, "-std=c++20", "-fsyntax-only", *[f"-I{d}" for d in include_dirs], str(probe)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    return result.returncode == 0, result.stderr


def include_path_problems(compiler, include_dirs, present_names):
    """Messages for every presentation header the maths' include path can reach."""
    problems = []
    with tempfile.TemporaryDirectory() as folder:
        compiled, message = compiles(compiler, include_dirs, "matrix.hpp", folder)
        if not compiled:
            return [f"a file including matrix.hpp does not compile with the maths' include path:\n{message}"]
        for name in sorted(present_names):
            compiled, message = compiles(compiler, include_dirs, name, folder)
            if compiled or "No such file" not in message:
                problems.append(f"the maths' include path reaches \"{name}\"; only the presentation "
                                f"library may have src/present on its include path")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the project's root folder")
    parser.add_argument("--compiler", required=True, help="the C++ compiler of the build")
    parser.add_argument("--include-dirs", required=True, help="the maths library's include folders, separated by |")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    present_names = {path.name for path in root.glob("src/present/*.hpp")}
    if not present_names:
        print("src/present/ holds no header; nothing to keep apart", file=sys.stderr)
        return 1
    include_dirs = [d for d in args.include_dirs.split("|") if d]
    problems = included_presentation(root, present_names)
    problems += include_path_problems(args.compiler, include_dirs, present_names)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"the maths includes none of the {len(present_names)} presentation headers, and cannot reach them")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
