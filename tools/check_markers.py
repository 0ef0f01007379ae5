#!/usr/bin/env python3
"""The snippet markers that weave the real code into the book are all in use.

Code reaches the prose only through `literalinclude` between two marker comments in
the source, `//> name` and `//< name`. This check fails, naming file and line, when
- a marker opens without closing, closes without opening, or appears twice in a file;
- a marker name is not lowercase words joined by '-' (so `causal_mask` and
  `causal-mask` cannot both exist);
- a literalinclude names a file or a marker that does not exist;
- a marker is included by no page (dead snippets drift unseen).
"""
import argparse
import pathlib
import re
import sys

MARKER = re.compile(r"^\s*//([<>]) (\S+)\s*$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
INCLUDE = re.compile(r"^\s*\.\. literalinclude:: (\S+)\s*$")  # nested in an aside too
OPTION = re.compile(r"^\s+:(start-after|end-before): //([<>]) (\S+)\s*$")


def markers_of(path, root, problems):
    """{name: line} of the markers in one source file."""
    opened, found = {}, {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = MARKER.match(line)
        if not match:
            continue
        kind, name = match.groups()
        where = f"{path.relative_to(root)}:{number}"
        if not NAME.match(name):
            problems.append(f"{where}: marker \"{name}\": use lowercase words joined by '-'")
        if kind == ">":
            if name in found or name in opened:
                problems.append(f"{where}: marker \"{name}\" opens a second time in this file")
            opened[name] = number
        elif name not in opened:
            problems.append(f"{where}: marker \"{name}\" closes but never opened")
        else:
            found[name] = opened.pop(name)
    for name, number in opened.items():
        problems.append(f"{path.relative_to(root)}:{number}: marker \"{name}\" opens but never closes (add //< {name})")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", required=True, help="the project's root folder")
    root = pathlib.Path(parser.parse_args().root).resolve()
    problems = []
    sources = sorted([*root.glob("src/*.[ch]pp"), *root.glob("src/present/*.[ch]pp"), *root.glob("chapters/*/*.cpp")])
    markers = {path: markers_of(path, root, problems) for path in sources}
    used = set()
    for page in sorted([*root.glob("chapters/*/*.rst"), *root.glob("docs/*.rst")]):
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = (page.parent / match.group(1)).resolve()
            for option_line in lines[number:]:
                option = OPTION.match(option_line)
                if not option_line.strip() or not option_line.startswith(" "):
                    break
                if not option:
                    continue
                where = f"{page.relative_to(root)}:{number}"
                if target not in markers:
                    problems.append(f"{where}: {match.group(1)} is not a source file with markers")
                    break
                name = option.group(3)
                if name not in markers[target]:
                    problems.append(f"{where}: {target.relative_to(root)} has no marker \"{name}\"")
                used.add((target, name))
    twins = {}
    for path, names in markers.items():
        for name, number in names.items():
            if (path, name) not in used:
                problems.append(f"{path.relative_to(root)}:{number}: marker \"{name}\" is included by no page; "
                                "include it or remove it")
            twins.setdefault(name.replace("_", "-"), set()).add(name)
    for spellings in twins.values():
        if len(spellings) > 1:
            problems.append(f"markers {' and '.join(sorted(spellings))} differ only by '-' and '_'")
    for problem in problems:
        print(problem, file=sys.stderr)
    count = sum(len(names) for names in markers.values())
    print(f"{count} markers in {len(sources)} sources: "
          f"{'every one closed, named with -, and included' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
