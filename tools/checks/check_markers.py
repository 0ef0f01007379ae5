#!/usr/bin/env python3
"""The snippet markers that weave the real code into the book are all in use.

Code reaches the prose only through `literalinclude` between two marker comments in
the source, `//> name` and `//< name`. This check fails, naming file and line, when
- a marker opens without closing, closes without opening, or appears twice in a file;
- a marker name is not lowercase words joined by '-' (so `causal_mask` and
  `causal-mask` cannot both exist);
- a literalinclude names a file or a marker that does not exist;
- a marker is included by no page (dead snippets drift unseen);
- an elision (below) opens without closing, closes without opening, opens inside
  another, says nothing, hides no line, lies outside every snippet or across a
  snippet's edge (an unused elision), or lies inside an exercise's solution (the
  book shows a solution whole: the learner writes the same checks).

An elision keeps plumbing out of a listing while the file stays the real file. The
lines between `//{ what they do` and `//}`, inside a snippet, show in the book as the
one line `// … what they do (see src/file.cpp)`, indented as the marker:

    //{ checks its arguments
    if (period == 0) {
        throw std::invalid_argument("...");
    }
    //}

conf.py elides them through `elided`, so this module is the one reader of both kinds.
"""
import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # tools/, for exercises.py
import exercises as exercise_markers  # noqa: E402  (the one reader of the exercise markers)

MARKER = re.compile(r"^\s*//([<>]) (\S+)\s*$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
INCLUDE = re.compile(r"^\s*\.\. literalinclude:: (\S+)\s*$")  # nested in an aside too
OPTION = re.compile(r"^\s+:(start-after|end-before): //([<>]) (\S+)\s*$")
ELISION_OPEN = re.compile(r"^(\s*)//\{(.*)$")
ELISION_CLOSE = re.compile(r"^\s*//\}\s*$")


def elisions(lines):
    """The elisions of some lines, [(index of //{, index of //}, indent, what they hide)], and
    their problems, [(index, problem)]."""
    found, problems, opened = [], [], None
    for index, line in enumerate(lines):
        start, end = ELISION_OPEN.match(line), ELISION_CLOSE.match(line)
        if start:
            if opened is not None:
                problems.append((index, f"an elision opens before the one of line {opened[0] + 1} closes "
                                        "(elisions do not nest; close that one with //})"))
            if not start[2].strip():
                problems.append((index, "an elision says nothing; write what the hidden lines do, "
                                        "as in \"//{ checks its arguments\""))
            opened = (index, start[1], start[2].strip())
        elif end:
            if opened is None:
                problems.append((index, "an elision closes but never opened"))
            elif index == opened[0] + 1:
                problems.append((opened[0], "an elision hides no line"))
            else:
                found.append((opened[0], index, opened[1], opened[2]))
            opened = None
    if opened is not None:
        problems.append((opened[0], "an elision opens but never closes (add //})"))
    return found, problems


def elided(lines, source):
    """A listing's lines with each elision replaced by one line that says what it hides and where
    (`source`, the file as the reader finds it); ValueError on a broken elision."""
    found, problems = elisions(lines)
    if problems:
        index, problem = problems[0]
        raise ValueError(f"the listing of {source}, its line {index + 1}: {problem}")
    kept, last = [], 0
    for first, end, indent, what in found:
        kept += [*lines[last:first], f"{indent}// … {what} (see {source})"]
        last = end + 1
    return [*kept, *lines[last:]]


def elision_problems(path, root, lines):
    """Where the elisions of one source file are broken, unused (outside every snippet, or across
    a snippet's edge) or inside an exercise's solution."""
    found, problems = elisions(lines)
    where = [f"{path.relative_to(root)}:{index + 1}: {problem}" for index, problem in problems]
    opened, spans = {}, []
    for index, line in enumerate(lines):
        match = MARKER.match(line)
        if match and match[1] == ">":
            opened[match[2]] = index
        elif match and match[2] in opened:
            spans.append((opened.pop(match[2]), index))
    for first, end, _indent, what in found:
        if not any(start < first and end < stop for start, stop in spans):
            where.append(f"{path.relative_to(root)}:{first + 1}: the elision \"{what}\" lies outside every "
                         "snippet or across a snippet's edge, so no listing uses it; move it or remove it")
    if path.suffix == ".cpp":
        parts = exercise_markers.split_regions(path, [line + "\n" for line in lines])
        for exercise, body in exercise_markers.regions(parts):
            if any(ELISION_OPEN.match(line) or ELISION_CLOSE.match(line) for line in body):
                where.append(f"{path.relative_to(root)}:{exercise.line}: an elision inside the solution of "
                             f"{exercise.name}; a solution shows whole, as the learner writes it")
    return where


def markers_of(path, root, problems):
    """{name: line} of the markers in one source file."""
    opened, found = {}, {}
    lines = path.read_text(encoding="utf-8").splitlines()
    problems += elision_problems(path, root, lines)
    for number, line in enumerate(lines, 1):
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
    sources = sorted([*root.glob("src/*.[ch]pp"), *root.glob("src/present/*.[ch]pp"), *root.glob("chapters/*/*.[ch]pp")])
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
    elided_count = sum(len(elisions(path.read_text(encoding="utf-8").splitlines())[0]) for path in sources)
    print(f"{count} markers and {elided_count} elisions in {len(sources)} sources: "
          f"{'every one closed, named with -, and included' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
