"""`run`: a chapter program built on the learner's steps (the book's version for the steps
still stubs), its output compared with the book's line by line."""
import difflib
import os
import re
import shlex
import signal
import subprocess
import sys

from .book import CHAPTERS, LearnError, chapters, exercises, relative
from .build import BuildFailed, build_workspace
from .workspace import exercise_state


def find_chapter(text):
    match = re.fullmatch(r"(?:ch)?0*(\d+)(?:[-_].*)?", text)
    found = chapters().get(int(match[1])) if match else None
    if found and found.folder:
        return found
    names = ", ".join(chapter.program for chapter in chapters().values() if chapter.folder)
    raise LearnError(f"no chapter program \"{text}\". Programs: {names}")



def borrowed(workspace):
    """The exercises still stubs (or missing), whose book's version runs instead."""
    return [exercise.name for exercise in exercises() if exercise_state(workspace, exercise) != "edited"]


def book_output(chapter, arguments):
    """The file holding what the book prints for these arguments: output.txt without any,
    try-output.txt for the chapter's "try it yourself" command, else None."""
    folder = CHAPTERS / chapter.folder
    if not arguments:
        return folder / "output.txt"
    try_command = folder / "try.cmd"
    if try_command.exists() and shlex.split(try_command.read_text(encoding="utf-8"))[1:] == arguments:
        return folder / "try-output.txt"
    return None


def command_run(args):
    workspace = args.workspace.resolve()
    if not workspace.exists():
        raise LearnError("there is no workspace yet. Create it with: tools/learn init")
    chapter = find_chapter(args.program)
    build = args.build.resolve()  # the grading build: its steps pick the learner's code or the book's at run time
    try:
        broken, errors = build_workspace(workspace, build, [chapter.program], args.jobs)
    except BuildFailed as failure:
        print(f"Your code does not build yet ({failure.summary}). The first errors:\n\n{failure.output}")
        return 1
    if broken:
        print(f"{', '.join(broken)} does not compile, so the book's version of its steps runs. The first errors:"
              f"\n\n{errors}\n")
    extra = args.arguments[1:] if args.arguments[:1] == ["--"] else list(args.arguments)
    print(f"$ {chapter.program} {shlex.join(extra)}".rstrip() + "   (built from your workspace)", flush=True)
    stubs = borrowed(workspace)
    if stubs:
        print(f"(not written yet, so the book's version runs instead: {', '.join(stubs)})", flush=True)
    result = subprocess.run([str(build / "bin" / chapter.program), *extra], stdout=subprocess.PIPE, text=True,
                            errors="replace", env=dict(os.environ, BOOK_GRADE_CHAPTER="written"))
    sys.stdout.write(result.stdout)
    if result.returncode < 0:
        print(f"{chapter.program} crashed ({signal.Signals(-result.returncode).name})")
        return 1
    return compare(chapter, extra, result)


def compare(chapter, extra, result):
    """0 when the program printed what the book prints for these arguments; else the differences and 1."""
    expected = book_output(chapter, extra)
    if result.returncode != 0 or expected is None or not expected.exists():
        return result.returncode
    book = expected.read_text(encoding="utf-8")
    if result.stdout == book:
        print(f"\nSame as the book's output ({relative(expected)}).")
        return 0
    print(f"\nYour output differs from the book's ({relative(expected)}). "
          f"Lines with - are the book's, lines with + are yours:\n")
    print("\n".join(titled_diff(book.splitlines(), result.stdout.splitlines())))
    return 1


def table_title(lines, index):
    """The title of the table (or the heading) that line `index` of a chapter's output is in:
    the nearest line above it, or it, that starts at the margin and ends with ':' or is '== ... =='."""
    for line in reversed(lines[:index + 1]):
        if line[:1].strip() and (line.endswith(":") or line.startswith("==")):
            return line.rstrip(":").strip("= ")
    return None


def titled_diff(book, yours):
    """The differences between the book's output and the learner's, one line of context,
    each hunk headed by the book's line number and the table it is in."""
    out = []
    matcher = difflib.SequenceMatcher(None, book, yours, autojunk=False)
    for group in matcher.get_grouped_opcodes(1):
        changed = next(i1 for tag, i1, _i2, _j1, _j2 in group if tag != "equal")
        title = table_title(book, min(changed, len(book) - 1))
        where = f"in \"{title}\"" if title else "before the first table"
        out.append(f"@@ line {group[0][1] + 1} of the book's output, {where} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {line}" for line in book[i1:i2]]
            else:
                out += [f"-{line}" for line in book[i1:i2]] + [f"+{line}" for line in yours[j1:j2]]
    return out

