"""The grading build's sources: each book file with exercises, with the learner's version of
every step spliced in next to the book's, and a switch that picks one at run time.

A check of chapter N runs with BOOK_GRADE_CHAPTER=N: the steps of chapter N run the learner's
code, every other step the book's, so a chapter is graded on its own exercises alone.
BOOK_GRADE_CHAPTER=all runs the learner's code everywhere (`grade --together`), and
BOOK_GRADE_CHAPTER=written the learner's code where written and the book's for the stubs
(`run`). Each file is compiled once, whichever chapter is graded.

The learner's lines keep their own file and line numbers (#line), so a compiler error names
workspace/scores.cpp and the line the learner wrote. Those names are relative to the book's folder
(where it holds the file): a grading source holds no path of the machine, so a copy or a move of
the book compiles the same text, which ccache finds (tools/learning/build.py)."""
import hashlib
import pathlib

from .book import SRC, exercise_files, markers, relative, write_if_changed
from .workspace import is_stub, learner_body, read_lines

SWITCH = """// Made by tools/learn from src/{name} and your workspace/{name}; it is rewritten at each grade.
#include <cstdlib>
#include <string>

namespace {{

// Whose code a step of `chapter` runs: BOOK_GRADE_CHAPTER=N the learner's in chapter N's steps,
// "all" (or unset) the learner's everywhere, "written" the learner's where it is not a stub.
bool learners_code(int chapter, bool written)
{{
    static const std::string graded = [] {{
        const char* value = std::getenv("BOOK_GRADE_CHAPTER");
        return std::string(value != nullptr ? value : "all");
    }}();
    if (graded == "all") {{
        return true;
    }}
    if (graded == "written") {{
        return written;
    }}
    return graded == std::to_string(chapter);
}}

}}  // namespace
"""


def dual_region(exercise, book_path, body, body_line, workspace_path):
    """The lines that replace one solution region: the learner's body in a lambda, run when the
    switch says so, then the book's. Missing code (a file behind the book) is the stub."""
    written = not is_stub(body, exercise)
    mine = body if body is not None else exercise.stub_body()
    at = f'#line {body_line} "{workspace_path}"\n' if body is not None else ""
    back = f'#line {exercise.line + 1} "{book_path}"\n'
    returns = exercise.returns or "auto"
    return [f"{exercise.indent}if (learners_code({exercise.chapter}, {str(written).lower()})) {{\n",
            f"{exercise.indent}    return [&]() -> {returns} {{\n", at, *mine,
            f'#line {body_line + len(mine)} "{workspace_path}"\n' if body is not None else "",
            f"{exercise.indent}    }}();\n", f"{exercise.indent}}}\n", back]


def presentation_include(line):
    """Whether an #include line names a header of the book's presentation (src/present/), which
    the maths cannot include. A workspace made before the presentation moved there still has
    such lines (multi_head.cpp included cli.hpp); the steps never needed them."""
    quoted = line.split('"')
    return len(quoted) == 3 and (SRC / "present" / pathlib.PurePosixPath(quoted[1]).name).is_file()


def learner_includes(lines, book_lines, workspace_path):
    """The learner's #include lines that the book's file lacks, each at its own line number,
    less those of the presentation's headers."""
    known = {line.strip() for line in markers.include_lines(book_lines)}
    out = []
    for index, line in enumerate(lines or []):
        if line in markers.include_lines([line]) and line.strip() not in known and not presentation_include(line):
            out += [f'#line {index + 1} "{workspace_path}"\n', line]
    return out


def dual_text(name, parts, lines, workspace_path, stubbed=False):
    """The grading source of one book file. `stubbed`: the learner's file did not compile, so
    its steps stand as stubs."""
    book_path = relative(SRC / name)
    book_lines = [part for part in parts if isinstance(part, str)]
    out = [SWITCH.format(name=name), *learner_includes(None if stubbed else lines, book_lines, workspace_path),
           f'#line 1 "{book_path}"\n']
    number = 0  # the book's line number of the last line written
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            number += 1
            continue
        exercise, solution = part
        body = None if stubbed else learner_body(lines, exercise)
        region = markers.workspace_regions(lines or []).get(exercise.name)
        body_line = region[0] + 2 if region else 0
        out += dual_region(exercise, book_path, body, body_line, workspace_path)
        out += solution
        number += len(solution) + 2
        out.append(f'#line {number + 1} "{book_path}"\n')
    return "".join(out)


def write_sources(workspace, sources, stubbed=()):
    """Write the grading sources of every exercise file into `sources` (only those that changed,
    so only they are compiled again); the files in `stubbed` with the learner's steps as stubs.
    A grading source of a book file that no longer has exercises (its steps moved) is removed.
    Returns {file name: a digest of what the learner's file contributes}."""
    digests = {}
    for stale in sources.glob("*.cpp") if sources.is_dir() else ():
        if stale.name not in exercise_files():  # a book file that no longer has exercises
            stale.unlink()
    for name, parts in exercise_files().items():
        path = workspace / name
        lines = read_lines(path)
        text = dual_text(name, parts, lines, relative(path.resolve()), stubbed=name in stubbed)
        write_if_changed(sources / name, text)
        digests[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digests


def chapter_digest(chapter, workspace, stubbed=()):
    """A digest of everything of the learner's that chapter N's checks run: the bodies of the
    chapter's exercises and the #include lines of their files, and which files did not compile.
    Chapter None: every chapter's (the checks graded together)."""
    digest = hashlib.sha256()
    for name, parts in exercise_files().items():
        mine = [exercise for exercise, _body in markers.regions(parts) if chapter is None or exercise.chapter == chapter]
        if not mine:
            continue
        lines = read_lines(workspace / name)
        digest.update(f"{name} {name in stubbed}\n".encode("utf-8"))
        digest.update("".join(markers.include_lines(lines or [])).encode("utf-8"))
        for exercise in mine:
            digest.update(repr(learner_body(lines, exercise)).encode("utf-8"))
    return digest.hexdigest()
