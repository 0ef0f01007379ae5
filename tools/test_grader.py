"""The grader's own tests: one scenario per run, each preparing the workspace it needs.

    test_grader.py SCENARIO --workspace DIR --build DIR

The grading scenarios share one workspace folder and one build folder, and write a file
only when its content changes, so after the first scenario the others rebuild only what
they changed, and rerun only the chapters whose steps changed. Scenarios:

  stubs          untouched stubs: 0 points on every chapter, a table, a non-zero exit; what the
                 learner's library compiles from names no path of the book's folder
  solutions      the reference solutions: full marks, exit 0, graded alone and together;
                 CTest in the grading build runs the learner's checks and nothing that needs
                 a chapter program
  seeded-bug     scale divides by d_k instead of sqrt(d_k): graded chapter by chapter, the
                 chapters of the two steps with that line (3 and 11) fail and the rest pass;
                 graded together, every chapter whose tests reach them fails too; one chapter
                 graded alone, and `list`, show every failing check
  one-chapter    a learner who starts at chapter 9: with only its steps written, chapter 9
                 gets full points; a NaN bug in chapter 5's softmax fails chapter 5 alone
  old-workspace  a workspace made before chapter 11's exercises (one file in the old
                 whole-file form): grade says to run init; init adds the stubs it lacks,
                 says which, keeps every byte of the learner's; it then builds and grades
  hints          a missing transpose in scores names the matrix and what its rows are; a
                 wrong score names its row and column by token, not by a loop variable; a
                 wraparound in ring_block_owner is named, its own check leads chapter 17's,
                 and the checks that also run it say to fix it first
  crash          a segfault, an abort and an endless loop in project each fail their checks;
                 the endless loop is named while grading goes on, and stopped within seconds
  compile-error  a syntax error in scores.cpp: the compiler's error is shown with the
                 learner's file and line, the chapters of scores.cpp's steps fail, every
                 other chapter passes, nothing crashes; the compiler's paths are shown from
                 the book's folder
  run-mixed      run a chapter program with only some steps written: the stubs run the
                 book's version, the learner's own step runs as written, and a difference
                 from the book's output is shown line by line with a non-zero exit
  run-part-three chapters 14, 15 and 16 run on the learner's code with no extra option: the King
                 James text and the saved models come from the book's build (--book-build), or the
                 text is made in the grading build where that has none; each try.cmd prints the
                 book's try-output.txt; a second program (ch16-names) runs by its own name and is
                 compared with its own output file
  error-wording  every fragment of an error message an exercise's check demands is in the
                 exercise's documentation (the API page), a shape as "X is R×C" where it says
                 the message names the shapes (no build)
  init-keeps-work  init twice: the learner's edit survives; reset puts back one stub (no build)
  moved-step     a workspace made before chapter 17's layouts moved to src/ring_layout.cpp: init moves
                 the learner's code of them, and an #include they added, into the new file, and leaves
                 the old file as it was, which grade names as not graded; reset of one of them
                 before init gives that one its stub (no build)
  hint-sentences hints as sentences, matrices in full, the diff's tables, stale results
                 (no build)
  code-size      tools/learning's modules at most 400 lines, no function of it or of this
                 file over 60 lines (no build)
  ctest-list     CTest's list of the checks, kept in the build folder, is used again while no file
                 CTest reads for it changed (a list of cases, a subfolder's test file; one written
                 again unchanged counts as unchanged) and the folder has not moved, and asked for
                 again otherwise (no build)
  path-free      no compilation the grading build shares with the book's (the tests, the
                 presentation, the library) holds the book's folder in its definitions, which
                 ccache cannot make relative: a copy of the book would compile it again
                 (--book-build; no build)
"""
import argparse
import ast
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning import book, checks, hints, points, run, workspace  # noqa: E402
from learning import build as learning_build  # noqa: E402
from learning import table as results  # noqa: E402
from learning.book import exercise_files, graded_chapters, markers, write_if_changed  # noqa: E402

LEARN = book.ROOT / "tools" / "learn"
# The seeded bug: the scaling of chapter 3, and of its backward step in chapter 11 (the same
# line). Graded chapter by chapter it fails those two chapters alone; graded together it also
# fails every chapter whose tests reach those steps (table.chapters_used).
SEEDED_FILE = "scaling.cpp"
SEEDED_FROM = "std::sqrt(static_cast<double>(key_dim))"
SEEDED_TO = "static_cast<double>(key_dim)"
# A NaN bug in chapter 5's softmax: a fully masked row is no longer kept at zeros, so
# exp(-inf - -inf) makes it NaN. Graded on its own, it costs points in chapter 5 alone.
NAN_FROM = "continue;  // fully masked: the row stays all zeros"
NAN_TO = ";  // (a fully masked row falls through)"

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


# The default time limit of a check (3 s) suits a learner's machine; a test machine that
# builds several things at once can be many times slower, and the reference must still pass.
GRADE_TIMEOUT = ["--timeout", "15"]


def run_learn(args, *extra, timeout=1500):
    if extra[:1] == ("grade",) and "--timeout" not in extra:
        extra = (*extra, *GRADE_TIMEOUT)
    command = [str(LEARN), "--workspace", str(args.workspace), "--build", str(args.build), *extra]
    print("$ tools/learn " + " ".join(command[1:]), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", timeout=timeout)
    print(result.stdout)
    print(f"(exit status {result.returncode})")
    expect("Traceback" not in result.stdout, "the grader printed a Python traceback")
    return result


def write_workspace(args, change=None, solved=lambda exercise: True):
    """A workspace of the reference solutions (of the exercises for which `solved` holds; stubs
    for the others), with `change(file name, text) -> text` applied."""
    args.workspace.mkdir(parents=True, exist_ok=True)
    for name, parts in exercise_files().items():
        text = workspace.file_text(name, parts, solved=solved)
        write_if_changed(args.workspace / name, change(name, text) if change else text)


def table(output):
    """{chapter number: (points, possible, status)} from the grader's table."""
    rows = {}
    for line in output.splitlines():
        match = re.match(r"^\s*(\d+)\s+.*?\s(\d+)/(\d+|\?)\s+(passed|failing|not started|does not build)\s*$", line)
        if match:
            possible = int(match.group(3)) if match.group(3) != "?" else None
            rows[int(match.group(1))] = (int(match.group(2)), possible, match.group(4))
    return rows


def last_line(output):
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def check_table_shape(output, graded):
    rows = table(output)
    expect(set(rows) == graded, f"the table has rows for chapters {sorted(rows)}, expected {sorted(graded)}")
    expect(re.fullmatch(r"\d+ passed, \d+ failed", last_line(output)) is not None,
           f"the last line is \"{last_line(output)}\", expected \"N passed, M failed\"")
    return rows


def graded_numbers():
    return {chapter.number for chapter in graded_chapters()}


def failing_chapters(rows):
    return {number for number, (_points, _possible, status) in rows.items() if status != "passed"}


def first_in_exercise(text, name, line):
    """The workspace file with `line` put first in the named exercise's code."""
    lines = text.splitlines(keepends=True)
    begin = markers.workspace_regions(lines)[name][0]
    return "".join(lines[:begin + 1] + [line] + lines[begin + 1:])


def stubs_everywhere(args):
    write_workspace(args, solved=lambda exercise: False)


def scenario_stubs(args):
    stubs_everywhere(args)
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(result.returncode == 1, f"grading the stubs exited with {result.returncode}, expected 1")
    for number, (points_got, possible, status) in rows.items():
        expect(points_got == 0 and possible, f"chapter {number}: {points_got}/{possible} points with stubs, "
                                             "expected 0/N")
        expect(status == "not started", f"chapter {number}: \"{status}\" with stubs, expected \"not started\"")
    total = sum(possible or 0 for _points, possible, _status in rows.values())
    expect(last_line(result.stdout) == f"0 passed, {total} failed",
           f"the last line is \"{last_line(result.stdout)}\", expected \"0 passed, {total} failed\"")
    expect(book.NOT_IMPLEMENTED in result.stdout, "no hint names the function that is not implemented yet")
    expect("behind the book" not in result.stdout, "a workspace made by init is said to be behind the book")
    check_grading_path_free(args)
    # One step of chapter 4 written: its checks run, and those that reach the other two steps'
    # stubs say which step is not implemented yet.
    write_workspace(args, solved=lambda exercise: exercise.name == "causal_mask")
    partly = run_learn(args, "grade", "--chapter", "4")
    points_got, possible, status = table(partly.stdout).get(4, (0, 0, ""))
    expect(0 < points_got < (possible or 0) and status == "failing",
           f"chapter 4 with causal_mask written: {points_got}/{possible} {status}, expected some points, failing")
    expect(re.search(rf"{book.NOT_IMPLEMENTED} (apply_mask|padding_mask), see chapter 4", partly.stdout) is not None,
           "chapter 4's failing checks do not name the step that is not implemented yet")


def check_grading_path_free(args):
    """What the learner's library compiles from (the grading sources and the header CMake writes for their
    precompiled one) names no path of the book's folder: ccache's key holds their text, so a copy or a move
    of the book would compile them all again (tools/learning/build.py, sources.py)."""
    made = sorted((args.build / "sources").glob("*.cpp")) + \
        sorted(args.build.glob("CMakeFiles/selfattention.dir/cmake_pch.hxx"))
    expect(len(made) == len(exercise_files()) + 1,
           f"{len(made)} grading sources and precompiled headers in {args.build}, expected {len(exercise_files()) + 1}")
    for path in made:
        expect(str(book.ROOT) not in path.read_text(encoding="utf-8"), f"{path} names the book's folder")
    expect(any('"' + book.relative(args.workspace.resolve() / "scores.cpp") + '"' in path.read_text(encoding="utf-8")
               for path in made), "no grading source names the learner's scores.cpp by its path in the book")


def scenario_solutions(args):
    write_workspace(args)
    for extra in ((), ("--together",)):
        result = run_learn(args, "grade", *extra)
        rows = check_table_shape(result.stdout, graded_numbers())
        expect(result.returncode == 0, f"grading the reference solutions {' '.join(extra)} exited with "
                                       f"{result.returncode}, expected 0")
        for number, (points_got, possible, status) in rows.items():
            expect(points_got == possible and status == "passed",
                   f"chapter {number}: {points_got}/{possible} {status} with the reference {' '.join(extra)}, "
                   "expected full marks")
    # A learner who runs CTest in the grading build gets their own checks, and only those.
    ctest = subprocess.run(["ctest", "--test-dir", str(args.build), "-L", "ch01"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
    print(ctest.stdout)
    expect(ctest.returncode == 0 and "100% tests passed" in ctest.stdout,
           "ctest -L ch01 in the grading build does not pass with the reference solutions")
    expect(re.search(r"\.(output|try|prose-numbers|bad-input)\b", ctest.stdout) is None,
           "ctest in the grading build runs the chapter programs' checks, which it does not build")


def seeded_chapters():
    """The chapters of the steps whose reference code holds the seeded line."""
    return {exercise.chapter for parts in exercise_files().values() for exercise, body in markers.regions(parts)
            if exercise.file == SEEDED_FILE and SEEDED_FROM in "".join(body)}


def scenario_seeded_bug(args):
    source = (book.SRC / SEEDED_FILE).read_text(encoding="utf-8")
    expect(SEEDED_FROM in source, f"src/{SEEDED_FILE} no longer contains \"{SEEDED_FROM}\"; update the seeded bug")
    write_workspace(args, lambda name, text: text.replace(SEEDED_FROM, SEEDED_TO) if name == SEEDED_FILE else text)
    result = run_learn(args, "grade")
    graded, seeded = graded_numbers(), seeded_chapters()
    rows = check_table_shape(result.stdout, graded)
    expect(result.returncode == 1, f"grading the seeded bug exited with {result.returncode}, expected 1")
    expect(failing_chapters(rows) == seeded & graded,
           f"scaling by d_k fails chapters {sorted(failing_chapters(rows))} graded one by one, "
           f"expected {sorted(seeded & graded)} (the chapters of the steps with the bug)")
    together = run_learn(args, "grade", "--together")
    reaching = {chapter.number for chapter in graded_chapters()
                if chapter.number in seeded or seeded & results.chapters_used(chapter)} & graded
    expect(failing_chapters(check_table_shape(together.stdout, graded)) == reaching,
           f"graded together, scaling by d_k fails chapters {sorted(failing_chapters(table(together.stdout)))}, "
           f"expected {sorted(reaching)} (every chapter whose tests reach those steps)")
    # Every failing check of a chapter, each with its hint: grading one chapter shows them all...
    number = min(seeded)
    points_got, possible, _status = rows.get(number, (0, 0, ""))
    alone = run_learn(args, "grade", "--chapter", str(number))
    shown = re.findall(r"^\s+failing: .*\n\s+(.*)$", alone.stdout, re.M)
    expect(len(shown) == (possible or 0) - points_got and all(hint.strip() for hint in shown),
           f"grade --chapter {number} shows {len(shown)} failing checks with hints, "
           f"expected {(possible or 0) - points_got}")
    # ...and so does `list`, from the last grade.
    listing = run_learn(args, "list").stdout
    section = listing[listing.find(f"Chapter {number},"):]
    section = section[:section.find("\nChapter ")] if "\nChapter " in section else section
    expect(len(re.findall(r"^\s+1 point\s+failing\s", section, re.M)) == (possible or 0) - points_got,
           f"list does not mark the {(possible or 0) - points_got} failing checks of chapter {number} as failing")


def scenario_one_chapter(args):
    """Issue 21's learner, who starts at chapter 9, and one who has a NaN bug in softmax."""
    write_workspace(args, solved=lambda exercise: exercise.chapter == 9)
    alone = run_learn(args, "grade", "--chapter", "9")
    points_got, possible, status = table(alone.stdout).get(9, (0, 0, ""))
    expect(possible and points_got == possible and status == "passed",
           f"with only chapter 9's steps written, chapter 9 gets {points_got}/{possible} ({status}), "
           "expected full points: its checks use the book's version of the earlier steps")
    expect(alone.returncode == 0, f"grade --chapter 9 exited with {alone.returncode}, expected 0")
    softmax = (book.SRC / "softmax.cpp").read_text(encoding="utf-8")
    expect(NAN_FROM in softmax, f"src/softmax.cpp no longer contains \"{NAN_FROM}\"; update this scenario")
    write_workspace(args, lambda name, text: text.replace(NAN_FROM, NAN_TO) if name == "softmax.cpp" else text)
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(failing_chapters(rows) == {5},
           f"a NaN bug in softmax_rows fails chapters {sorted(failing_chapters(rows))}, expected chapter 5 alone")
    expect("NaN" in result.stdout, "the hint of the softmax bug does not show the NaN")


OLD_CHAPTER = 11  # the workspace was made before this chapter's exercises
OLD_FORM_FILE = "scores.cpp"  # kept in the whole-file form that init used to write


def old_whole_file(parts, keep):
    """The book's file as init used to copy it (every line of it, the steps as exercises), with
    the functions of the exercises not kept left out, as they were before the book had them."""
    out, skip_close = [], False
    for part in parts:
        if isinstance(part, str):
            if skip_close and part.strip() == "}":
                skip_close = False
                continue
            out.append(part)
            continue
        exercise, body = part
        if keep(exercise):
            out += [exercise.begin_line(), *body, exercise.end_line()]
        else:
            del out[len(out) - len(exercise.signature) - 1:]
            skip_close = True
    return "".join(out)


def with_presentation_include(text):
    """An old whole file's includes, with one of a header that has since moved to src/present/
    (multi_head.cpp included cli.hpp): grading leaves it out, as the maths cannot include it."""
    first = text.index("#include")
    return text[:first] + '#include "cli.hpp"\n' + text[first:]


def write_old_workspace(args):
    """The reference solutions of the chapters before OLD_CHAPTER, as a learner had them then."""
    old = lambda exercise: exercise.chapter < OLD_CHAPTER  # noqa: E731
    for path in args.workspace.glob("*.cpp"):  # the earlier scenarios' files, of the book's files then too
        path.unlink()
    for name, parts in exercise_files().items():
        kept = {exercise.name for exercise, _body in markers.regions(parts) if old(exercise)}
        if kept:
            text = with_presentation_include(old_whole_file(parts, old)) if name == OLD_FORM_FILE else \
                workspace.file_text(name, parts, solved=True, only=kept)
            write_if_changed(args.workspace / name, text)
    return {path.name: path.read_text(encoding="utf-8") for path in args.workspace.glob("*.cpp")}


def check_old_grade(output, behind):
    rows = check_table_shape(output, graded_numbers())
    for number, (_points, _possible, status) in rows.items():
        wanted = "passed" if number < OLD_CHAPTER else "not started"
        expect(status == wanted, f"an old workspace: chapter {number} is \"{status}\", expected \"{wanted}\"")
    said = "behind the book" in output and "tools/learn init" in output
    expect(said == behind, "grade does not tell a learner whose workspace is behind the book to run init"
           if behind else "grade says a workspace is behind the book after init")


def scenario_old_workspace(args):
    args.workspace.mkdir(parents=True, exist_ok=True)
    before = write_old_workspace(args)
    check_old_grade(run_learn(args, "grade").stdout, behind=True)
    init = run_learn(args, "init")
    expect(init.returncode == 0, f"init exited with {init.returncode}")
    new = [exercise for exercise in book.exercises() if exercise.chapter >= OLD_CHAPTER]
    for exercise in new:
        expect(re.search(rf"^  added  .*\b{exercise.name}\b.*/{re.escape(exercise.file)}$", init.stdout, re.M)
               is not None,
               f"init does not say that it added {exercise.name} to {exercise.file}")
    expect(not workspace.missing(args.workspace), "after init the workspace still lacks exercises")
    for name, text in before.items():
        after = (args.workspace / name).read_text(encoding="utf-8")
        matcher = difflib.SequenceMatcher(None, text.splitlines(keepends=True), after.splitlines(keepends=True),
                                          autojunk=False)
        expect(all(tag in ("equal", "insert") for tag, *_rest in matcher.get_opcodes()),
               f"init changed the learner's own lines in {name}; it may only add stubs")
    check_old_grade(run_learn(args, "grade").stdout, behind=False)


def scenario_crash(args):
    crashes = {
        "segfault": ("#include <csignal>\n", "std::raise(SIGSEGV);", "SIGSEGV"),
        "abort": ("#include <cstdlib>\n", "std::abort();", "SIGABRT"),
        "endless loop": ("", "volatile bool forever = true;\n    while (forever) {\n    }", "did not finish within"),
    }
    for kind, (include, statement, shown) in crashes.items():
        started = time.monotonic()
        def crash(name, text):
            if name != "projection.cpp":
                return text
            return first_in_exercise(include + text, "project", "    " + statement + "\n")

        write_workspace(args, crash)
        # An endless loop spins a core until it is stopped: it gets 1 s, a crash 2 s to happen.
        timeout = 1 if kind == "endless loop" else 2
        result = run_learn(args, "grade", "--chapter", "1", "--timeout", str(timeout))
        rows = check_table_shape(result.stdout, {1})
        expect(result.returncode == 1, f"a {kind} in project: exit status {result.returncode}, expected 1")
        expect(rows.get(1, (None, None, ""))[2] == "failing", f"a {kind} in project: chapter 1 is not \"failing\"")
        expect(rows.get(1, (1, 0))[0] == 0, f"a {kind} in project: chapter 1 got points")
        expect(shown in result.stdout, f"a {kind} in project: the hint does not say \"{shown}\"")
        if kind == "endless loop":
            expect(re.search(r"^  stopped after 1 s \(an endless loop\?\): chapter 1: ", result.stdout, re.M) is not None,
                   "an endless loop is not named while the grading goes on")
            # 4 checks of 1 s each, two at a time, plus the build: well under the old minute of silence.
            expect(time.monotonic() - started < 120, f"an endless loop took {time.monotonic() - started:.0f} s to grade")


def scenario_compile_error(args):
    def broken(name, text):
        if name != "scores.cpp":
            return text
        return first_in_exercise(text, "scores", "    this is not C++;\n")

    write_workspace(args, broken)
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(result.returncode == 1, f"a compile error: exit status {result.returncode}, expected 1")
    expect(rows.get(2, (0, 0, ""))[2] == "does not build",
           "a compile error in scores.cpp: chapter 2 does not say \"does not build\"")
    expect(re.search(r"scores\.cpp:\d+:\d+: error:", result.stdout) is not None,
           "a compile error: the compiler's error with its file and line is not shown")
    # Graded chapter by chapter, only the chapters of scores.cpp's steps fail; every other keeps its points.
    own = {exercise.chapter for exercise in book.exercises() if exercise.file == "scores.cpp"}
    expect(failing_chapters(rows) == own & graded_numbers(),
           f"a compile error in scores.cpp fails chapters {sorted(failing_chapters(rows))}, expected {sorted(own)}")
    expect(re.search(r"^workspace/scores\.cpp:\d+:\d+: error:|/scores\.cpp:\d+:\d+: error:", result.stdout, re.M)
           is not None and "sources/scores.cpp" not in result.stdout,
           "a compile error is not shown at the learner's own file and line")
    check_compiler_paths(args)


def check_compiler_paths(args):
    """The compiler's messages name paths relative to the grading build, where it runs with ccache's base folder;
    the learner sees each path in the book's folder from that folder, and any other path as it was."""
    build = args.build.resolve()
    below = book.relative(build) != str(build)  # a grading build in the book's folder, as tools/learn makes it
    up = os.path.relpath(book.ROOT, build)
    said = [(f"{up}/src/matrix.hpp:56:5: note: candidate: 'sa::Matrix::Matrix(std::size_t, std::size_t, double)'",
             "src/matrix.hpp:56:5: note: candidate: 'sa::Matrix::Matrix(std::size_t, std::size_t, double)'"),
            (f"{book.ROOT}/src/scores.cpp:40:1: note: in 'a/b' and 'operator/'",
             "src/scores.cpp:40:1: note: in 'a/b' and 'operator/'"),
            ("workspace/scores.cpp:14:55: error: no matching function", "workspace/scores.cpp:14:55: error: no matching function"),
            ("/usr/include/c++/12/bits/stl_vector.h:5: note: here", "/usr/include/c++/12/bits/stl_vector.h:5: note: here")]
    if below and (build / "sources" / "scores.cpp").exists():
        said.append(("sources/scores.cpp:3: error: x", f"{book.relative(build)}/sources/scores.cpp:3: error: x"))
    for line, shown in said[0 if below else 1:]:
        got = learning_build.book_paths(line, build)
        expect(got == shown, f"the compiler's {line!r} is shown as {got!r}, expected {shown!r}")


def scenario_init_keeps_work(args):
    folder = args.workspace
    first = run_learn(args, "init")
    expect(first.returncode == 0, f"init exited with {first.returncode}")
    files = exercise_files()
    for name, parts in files.items():
        expect((folder / name).read_text(encoding="utf-8") == workspace.file_text(name, parts), f"{name} is not its stub")
    edited = folder / "projection.cpp"
    # The first stub of the file is project's (project_backward's follows it).
    mine = edited.read_text(encoding="utf-8").replace(
        "throw sa::NotImplemented(", "return embeddings;  // my first try\n    throw sa::NotImplemented(", 1) + "// mine\n"
    edited.write_text(mine, encoding="utf-8")
    (folder / "scores.cpp").unlink()
    second = run_learn(args, "init")
    expect(second.returncode == 0, f"init (again) exited with {second.returncode}")
    expect(edited.read_text(encoding="utf-8") == mine, "init changed projection.cpp, which the learner edited")
    expect((folder / "scores.cpp").read_text(encoding="utf-8") == workspace.file_text("scores.cpp", files["scores.cpp"]),
           "init did not put back the missing scores.cpp")

    reset = run_learn(args, "reset", "project")
    expect(reset.returncode == 0, f"reset project exited with {reset.returncode}")
    after = edited.read_text(encoding="utf-8")
    expect("my first try" not in after, "reset project left the learner's code in the function")
    expect(after.endswith("// mine\n"), "reset project changed the file outside the function")
    backups = list((folder / book.BACKUP_FOLDER).glob("projection.cpp.*"))
    expect(any(path.read_text(encoding="utf-8") == mine for path in backups), "reset kept no backup of the edit")

    unknown = run_learn(args, "reset", "no_such_step")
    expect(unknown.returncode == 2 and "no exercise named" in unknown.stdout,
           "reset of an unknown exercise does not fail with a clear message")


# A step the book moved to another file: chapter 17's layouts left src/ring_attention.cpp for
# src/ring_layout.cpp, and a workspace made before holds the learner's code of them in ring_attention.cpp.
MOVED_FROM, MOVED_TO = "ring_attention.cpp", "ring_layout.cpp"


def scenario_moved_step(args):
    """init moves the learner's code of a step the book moved, with the #include the learner added, into
    the step's new file; the old file is left byte for byte; a second init changes nothing; reset of a
    moved step before init gives that step its stub."""
    folder = args.workspace
    expect(MOVED_FROM not in exercise_files() and MOVED_TO in exercise_files(),
           f"src/{MOVED_FROM} has exercises again or src/{MOVED_TO} has none; update this scenario")
    first = run_learn(args, "init")
    expect(first.returncode == 0, f"init exited with {first.returncode}")
    parts = exercise_files()[MOVED_TO]
    moved = [exercise.name for exercise, _body in markers.regions(parts)]
    # The learner's file as init made it before the move: the steps solved, a line of their own in each,
    # and an #include they added.
    old = workspace.file_text(MOVED_TO, parts, solved=True).replace(MOVED_TO, MOVED_FROM)
    for exercise, _body in markers.regions(parts):
        old = old.replace(exercise.end_line(), f"{exercise.indent}// my own line\n{exercise.end_line()}")
    old = re.sub(r"^#include", "#include <deque>  // mine\n#include", old, count=1, flags=re.M)
    (folder / MOVED_FROM).write_text(old, encoding="utf-8")
    (folder / MOVED_TO).unlink()
    second = run_learn(args, "init")
    expect(second.returncode == 0, f"init (after the move) exited with {second.returncode}")
    said = re.search(rf"^  moved  your (.*) from .*/{re.escape(MOVED_FROM)} to .*/{re.escape(MOVED_TO)} ", second.stdout,
                     re.M)
    expect(said is not None and said[1].split(", ") == moved,
           f"init does not say that it moved {', '.join(moved)} from {MOVED_FROM} to {MOVED_TO}")
    expect((folder / MOVED_FROM).read_text(encoding="utf-8") == old, f"init changed the learner's {MOVED_FROM}")
    new = (folder / MOVED_TO).read_text(encoding="utf-8").splitlines(keepends=True)
    old_lines = old.splitlines(keepends=True)
    for exercise, _body in markers.regions(parts):
        body = workspace.learner_body(new, exercise)
        expect(body is not None and body == workspace.learner_body(old_lines, exercise)
               and any("// my own line" in line for line in body),
               f"{MOVED_TO}'s {exercise.name} is not the learner's code from {MOVED_FROM}")
    expect(new.count("#include <deque>  // mine\n") == 1, f"init did not carry the learner's #include to {MOVED_TO}")
    expect(workspace.not_graded(folder) == [(folder / MOVED_FROM, sorted(moved))],
           f"grade would not say that {MOVED_FROM} is no longer graded: {workspace.not_graded(folder)}")
    again = run_learn(args, "init")
    expect(re.search(r"^  (moved|added) ", again.stdout, re.M) is None and "0 stub(s) added" in again.stdout,
           "a second init moved or added something again")
    # reset of a moved step before init: that step gets its stub, the others the learner's code.
    (folder / MOVED_TO).unlink()
    reset = run_learn(args, "reset", moved[0])
    new = (folder / MOVED_TO).read_text(encoding="utf-8").splitlines(keepends=True)
    for exercise, _body in markers.regions(parts):
        body, mine = workspace.learner_body(new, exercise), workspace.learner_body(old_lines, exercise)
        wanted = (exercise.stub_body(), "its stub") if exercise.name == moved[0] else (mine, "the learner's code")
        expect(reset.returncode == 0 and body == wanted[0],
               f"reset {moved[0]} before init: {exercise.name} in {MOVED_TO} is not {wanted[1]}")


def scenario_run_mixed(args):
    stubs_everywhere(args)
    files = exercise_files()
    untouched = run_learn(args, "run", "ch02-scores")
    expect(untouched.returncode == 0, f"run with every step a stub exited with {untouched.returncode}, expected 0")
    expect("Same as the book's output" in untouched.stdout,
           "with every step a stub, the book's versions should reproduce the book's output")
    expect(re.search(r"book's version runs instead: .*\bproject\b.*\bscores\b", untouched.stdout) is not None,
           "run does not say that project and scores ran the book's version")

    # The learner writes scores, with a bug: every dot product doubled.
    solved = workspace.file_text("scores.cpp", files["scores.cpp"], solved=True)
    expect("dot += queries(asking, d) * keys(asked, d);" in solved, "src/scores.cpp changed; update this scenario")
    write_if_changed(args.workspace / "scores.cpp",
                           solved.replace("dot += queries(asking, d) * keys(asked, d);",
                                          "dot += 2 * queries(asking, d) * keys(asked, d);"))
    mine = run_learn(args, "run", "ch02-scores")
    expect(mine.returncode == 1, f"run with output that differs from the book's exited with {mine.returncode}, "
                                 "expected 1")
    expect("Same as the book's output" not in mine.stdout, "the learner's doubled scores printed the book's output")
    expect(re.search(r"^-.*4\.000", mine.stdout, re.M) and re.search(r"^\+.*8\.000", mine.stdout, re.M),
           "run does not show the differing lines: the book's with -, the learner's with +")
    expect(re.search(r"book's version runs instead: .*\bscores\b", mine.stdout) is None,
           "run says scores ran the book's version, but the learner wrote it")
    expect("8.000" in mine.stdout, "the learner's doubled score 2·4 = 8 does not show")


def scenario_run_part_three(args):
    write_workspace(args)  # the learner's code is the reference: the book's output, digit for digit
    for folder in ("14-next-character", "15-induction-head", "16-generating-text"):
        command = shlex.split((book.CHAPTERS / folder / "try.cmd").read_text(encoding="utf-8"))
        result = run_learn(args, "run", "--book-build", str(args.book_build), *command)
        expect(result.returncode == 0 and "Same as the book's output" in result.stdout,
               f"learn run {' '.join(command)} does not print the book's try-output.txt (exit {result.returncode})")
        expect("cannot read" not in result.stdout, f"learn run {command[0]} cannot read a file the book's build made")
    # A chapter's second program runs by its own name and compares with its own output file.
    names = run_learn(args, "run", "--book-build", str(args.book_build), "ch16-names")
    expect(names.returncode == 0 and "$ ch16-names" in names.stdout
           and "Same as the book's output (chapters/16-generating-text/names-output.txt)" in names.stdout,
           f"learn run ch16-names does not run ch16-names and print names-output.txt (exit {names.returncode})")
    unknown = run_learn(args, "run", "ch16-nmes")
    expect(unknown.returncode != 0 and "Its programs: ch16-generating-text, ch16-names" in unknown.stdout,
           "learn run ch16-nmes does not refuse with chapter 16's programs")
    # A grading build whose book build has no text makes it itself, as the book's build does.
    for name in ("kjv-training.txt", "kjv-held-out.txt"):
        (args.build / "text" / name).unlink(missing_ok=True)
    command = shlex.split((book.CHAPTERS / "14-next-character" / "try.cmd").read_text(encoding="utf-8"))
    alone = run_learn(args, "run", "--book-build", str(args.build / "no-book-build"), *command)
    expect(alone.returncode == 0 and "Same as the book's output" in alone.stdout
           and "Making the King James text" in alone.stdout,
           f"without the book's build, learn run {command[0]} does not make the King James text and run")


def documentation(name):
    """The documentation comment of a function of the library (src/*.hpp), as one line: what the
    API page shows the learner."""
    found = []
    for header in sorted(book.SRC.glob("*.hpp")):
        block = []
        for line in header.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith("///"):
                block.append(stripped[3:].strip())
                continue
            if re.search(rf"\b{name}\(", stripped) and block:
                found += block
            if not stripped.startswith(("[[", "template")):
                block = []
    return " ".join(" ".join(found).split())


def documented(fragment, name, text):
    """Whether a fragment an exercise's check demands of an error message can be read in its
    documentation: the function's name where it says the message names the operation (or shows
    one), a shape ("3×2", "K is 3×2") where it says the message names the shapes, and any other
    words as they are written there, numbers standing for any number or symbol."""
    if fragment == name:
        return re.search(rf"names (the operation|{name})|\"{name}:", text) is not None
    if re.fullmatch(r"(\S+ is )?\d+×\d+", fragment):
        return "shape" in text
    pattern = re.sub(r"\d+", r"[\\w−-]+", re.escape(" ".join(fragment.split())))
    return re.search(pattern, text) is not None


def scenario_error_wording(args):
    """Issue 37: cross_entropy's check demanded "not below d_vocab = 3" where the API page said
    "not below V". A check may demand an error, and its kind, but only wording the book gives."""
    del args
    exercises = {exercise.name for exercise in book.exercises()}
    checked = 0
    for test in sorted(book.TESTS.glob("ch[0-9][0-9]_*.cpp")):
        text = test.read_text(encoding="utf-8")
        for found in re.finditer(r"(?:CHECK|REQUIRE)_THROWS_WITH\((.*?)\);\n", text, re.S):
            call = re.match(r"\s*(?:sa::)?(\w+)", found[1])[1]
            name = call.removesuffix("_of")  # a test's wrapper that names the step's inputs (tests/hints.hpp)
            if name not in exercises:
                continue  # the book's own code writes that message, not the learner
            line = text[:found.start()].count("\n") + 1
            for fragment in re.findall(r'(?:Contains|StartsWith|EndsWith|Equals)\("((?:[^"\\]|\\.)*)"\)', found[1]):
                checked += 1
                expect(documented(fragment, name, documentation(name)),
                       f"tests/{test.name}:{line} demands \"{fragment}\" of {name}'s error message, which its "
                       f"documentation (src/*.hpp, the API page) does not give")
    print(f"Checked {checked} fragments of error messages demanded of the exercises.")
    expect(checked > 40, f"only {checked} fragments found; has the form of the checks changed?")


def scenario_hints(args):
    solved = workspace.file_text("scores.cpp", exercise_files()["scores.cpp"], solved=True)
    right = "dot += queries(asking, d) * keys(asked, d);"
    expect(right in solved, "src/scores.cpp changed; update this scenario")
    for wrong, wanted in {
        # The most common mistake: K read as if it were already transposed.
        "dot += queries(asking, d) * keys(d, asked);": ["That matrix is K.", "K is 4×3: one row per key",
                                                        "Q or K (both 3×2)"],
        # A wrong number: the hint names the entry by its tokens, as the chapter does.
        "dot += 2 * queries(asking, d) * keys(asked, d);": [
            "scores(mouse, eats): expected 4, got 8 (row Mouse, column Eats (the chapter's row 1, column 2)"],
        # Issue 37: i − 1 at i = 0 wraps around; no transpose is missing.
        "dot += queries(asking, d) * keys(asked - 1, d);": ["is 0 − 1 wrapped around", "i − 1 at i = 0",
                                                            "!missing transpose"],
    }.items():
        write_workspace(args, lambda name, text: text.replace(right, wrong) if name == "scores.cpp" else text)
        result = run_learn(args, "grade", "--chapter", "2")
        for hint in wanted:
            said = hint.lstrip("!") in result.stdout
            expect(said != hint.startswith("!"), f"with \"{wrong}\" the hints {'' if said else 'do not '}say "
                                                 f"\"{hint.lstrip('!')}\"")
        expect(re.search(r"\((row|i|j|col|column), ", result.stdout) is None,
               f"with \"{wrong}\" a hint shows a loop variable instead of a row or column")
    check_ring_hints(args)


def check_ring_hints(args):
    """Issue 60: a planted bug in ring_block_owner, (g - s) mod G on unsigned numbers, is named as the
    wraparound; the table leads with that step's own check, and a check that also runs the step
    says to fix it first."""
    right = "return (rank + ranks - step % ranks) % ranks;"
    expect(right in workspace.file_text("ring_layout.cpp", exercise_files()["ring_layout.cpp"], solved=True),
           "src/ring_layout.cpp's ring_block_owner changed; update this scenario")
    write_workspace(args, lambda name, text: text.replace(right, "return (rank - step) % ranks;")
                    if name == "ring_layout.cpp" else text)
    shown = run_learn(args, "grade", "--chapter", "17").stdout
    failing = re.findall(r"^\s+failing: (.*)$", shown, re.M)
    expect(bool(failing) and failing[0].startswith("The ring's schedule"),
           f"the first failing check of chapter 17 is not ring_block_owner's own: {failing[:1]}")
    expect("wrapped" in shown and "unsigned" in shown, "the hint does not name the unsigned wraparound")
    expect("it runs ring_block_owner too" in shown, "no check that runs ring_block_owner says to fix it first")


# Failed checks as Catch2's XML report writes them (a matrix as tests/catch_matrix.hpp
# shows it), for the hints that need no build.
HINT_REPORT = """<TestCase name="c">
<Expression success="false" type="CHECK"><Original>heads[1] == expected</Original>
<Expanded>2×2:
  1.000  0.500
  2.000  0.250
==
2×2:
  1.000  0.500
  2.000  0.750</Expanded></Expression>
<Expression success="false" type="CHECK"><Original>relative_difference(a, n) &lt; 1e-7</Original>
<Expanded>0.7294650997 &lt; 0.0000001</Expanded></Expression>
<Expression success="false" type="CHECK_THROWS_WITH"><Original>sa::mix_backward(a, v, d), Contains("mix_backward") &amp;&amp; Contains("3×3")</Original>
<Expanded>"mix_backward: dO is 2×2" ( contains: "mix_backward" and contains: "3×3" )</Expanded></Expression>
<Expression success="false" type="CHECK_FALSE"><Original>!(used &gt; 1.0)</Original>
<Expanded>!(1.5 &gt; 1.0)</Expanded></Expression>
</TestCase>"""


# A test case whose error check has no INFO of its own: the INFO still in scope is an earlier check's.
EARLIER_INFO = """TEST_CASE("c", "[ch14]")
{
    INFO("logits (1000, 0), target 1: L = 1000");
    CHECK(big.loss == 1000);
    CHECK_THROWS_WITH(sa::cross_entropy(z, {3}), Contains("below"));
    INFO("a target of 3 is not below d_vocab = 3");
    CHECK_THROWS_WITH(sa::cross_entropy(z, {3}), Contains("below"));
}
"""


def check_hint_causes(args):
    """Issue 37: a hint names no cause that is not this check's: an earlier check's INFO, or a
    missing transpose where an index wrapped below 0."""
    source = args.build / "earlier-info.cpp"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(EARLIER_INFO, encoding="utf-8")
    failed = '<Expression success="false" type="CHECK_THROWS_WITH" filename="{}" line="{}"><Original>' \
             'sa::cross_entropy(z, {{3}}), Contains("below")</Original><Expanded>"no" ( contains: "below" )</Expanded>' \
             '</Expression>'
    infos = ["logits (1000, 0), target 1: L = 1000"]
    earlier = hints.describe_failure(ElementTree.fromstring(failed.format(source, 5)), infos)
    expect("1000" not in earlier, f"an error check's hint gives an earlier check's INFO as its reason: {earlier!r}")
    own = hints.describe_failure(ElementTree.fromstring(failed.format(source, 7)), [*infos, "a target of 3 is not"])
    expect(own.endswith("(a target of 3 is not)"), f"an error check's own INFO is not its reason: {own!r}")
    wrapped = hints.index_cause("matrix index (18446744073709551615, 0) is outside a 3×2 matrix")
    expect("wrapped around" in wrapped and "i - 1 went below 0 at i = 0" in wrapped and "transpose" not in wrapped,
           f"an index that wrapped below 0 is not named as such: {wrapped!r}")
    swapped = hints.index_cause("matrix index (0, 3) is outside a 4×3 matrix")
    expect("missing transpose" in swapped, f"an index that fits the other axis does not suggest a transpose: {swapped!r}")
    past = hints.index_cause("matrix index (0, 7) is outside a 4×3 matrix")
    expect("transpose" not in past, f"an index past both sizes is blamed on a transpose: {past!r}")


def scenario_hint_sentences(args):
    """Hints read as sentences, matrices print as the book prints them, `run`'s diff names
    each hunk's table, and `list` marks results graded before the last edit as stale."""
    cases = ElementTree.fromstring(HINT_REPORT)
    sentences = [hints.describe_failure(element, ["why"]) for element in cases.iter("Expression")]
    for hint in sentences:
        print(hint)
        for leak in ("{?}", "contains:", " < 0.0000001", "( ", "!("):
            expect(leak not in hint, f"the hint {hint!r} shows Catch2's own text {leak!r}")
    expect(sentences[0].startswith("heads[1]: expected 2×2:") and "2.000  0.250" in sentences[0]
           and "got 2×2:" in sentences[0] and "2.000  0.750" in sentences[0],
           f"a matrix is not shown in full, as the book prints it: {sentences[0]!r}")
    expect(sentences[1] == "relative_difference(a, n): expected below 1e-07, got 0.729465 (why)", repr(sentences[1]))
    expect(sentences[2] == 'sa::mix_backward(a, v, d): expected its error message to contain "mix_backward" and '
           '"3×3", but it was "mix_backward: dO is 2×2" (why)', repr(sentences[2]))
    expect(sentences[3] == "used: expected at most 1, got 1.5 (why)", repr(sentences[3]))
    check_hint_causes(args)

    printed = ["Weights A (2×2):", "         a      b", "  a   0.500  0.500", "", "== Cross ==", "",
            "Outputs (2×1):", "        f1", "  a   1.000", "  b   2.000"]
    yours = list(printed)
    yours[2], yours[9] = "  a   0.400  0.600", "  b   2.500"
    diff = run.titled_diff(printed, yours)
    print("\n".join(diff))
    headers = [line for line in diff if line.startswith("@@")]
    expect(headers == ['@@ line 2 of the book\'s output, in "Weights A (2×2)" @@',
                       '@@ line 9 of the book\'s output, in "Outputs (2×1)" @@'],
           f"the diff's hunks do not name their tables: {headers}")

    folder, build = args.workspace / "stale", args.build / "stale"
    (build / "bin").mkdir(parents=True, exist_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    chapter = next(c for c in book.chapters().values() if c.tests)
    (build / "bin" / f"test_{chapter.tests}").write_text("")
    (build / book.RESULTS_FILE).write_text(json.dumps(
        {chapter.tests: {"old": {"passed": False, "hint": "not implemented yet", "graded_at": 1.0},
                         "new": {"passed": True, "hint": "", "graded_at": time.time() + 3600}}}))
    (folder / "scores.cpp").write_text("// edited after the first grade\n")
    original = points.list_cases
    points.list_cases = lambda executable, spec="": ["old", "new"]
    try:
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            points.command_list(argparse.Namespace(workspace=folder, build=build))
    finally:
        points.list_cases = original
    lines = shown.getvalue().splitlines()
    print("\n".join(lines[-4:]))
    expect(any("failing, stale" in line and line.endswith("old") for line in lines),
           "a result graded before the last edit is not marked stale")
    expect(any("passed " in line and "stale" not in line and line.endswith("new") for line in lines),
           "a result graded after the last edit is marked stale")


def scenario_code_size(args):
    """Nothing too long to see at once: each module of tools/learning at most 400 lines, no
    function of it or of this file over 60 lines."""
    package = book.ROOT / "tools" / "learning"
    for path in [*sorted(package.glob("*.py")), Path(__file__).resolve(), book.ROOT / "tools" / "learn.py"]:
        text = path.read_text(encoding="utf-8")
        if path.parent == package:
            lines = len(text.splitlines())
            expect(lines <= 400, f"tools/learning/{path.name} has {lines} lines, more than 400")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                expect(length <= 60, f"{path.name}: {node.name} is {length} lines long, more than 60")
    print(f"Checked {len(list(package.glob('*.py')))} modules of tools/learning and {Path(__file__).name}.")


def scenario_path_free(args):
    """The compilations a grading build takes from the book's (tools/learning/ccache_book.sh) name
    no path in the book's folder in a definition: ccache makes the paths of the command line relative
    to the book's folder, but not a path inside a string."""
    ninja = (args.book_build / "build.ninja").read_text(encoding="utf-8")
    shared = re.compile(r"^build (CMakeFiles/(test_ch\d\d_\w+|selfattention|selfattention-present)\.dir/\S+\.o):", re.M)
    checked = 0
    for match in shared.finditer(ninja):
        block = ninja[match.end():].split("\nbuild ", 1)[0]
        defines = re.search(r"^  DEFINES = (.*)$", block, re.M)
        checked += 1
        expect(defines is None or str(book.ROOT) not in defines.group(1),
               f"{match.group(1)} is compiled with the book's folder in a definition: {defines and defines.group(1)}")
    expect(checked > 40, f"only {checked} compilations of the tests and the library found in build.ninja")
    print(f"Checked the definitions of {checked} compilations of the tests and the library.")


def scenario_ctest_list(args):
    """The grader keeps CTest's list of the checks (tools/learning/checks.py, listed_tests()) and asks
    CTest again as soon as a file that list is read from changes, or the folder moves: a stale list
    would grade the wrong reports. A hand-written test folder: its own CTestTestfile.cmake includes a
    list of cases and names a subfolder with one more test."""
    if args.build.exists():
        shutil.rmtree(args.build)
    (args.build / "tests").mkdir(parents=True)
    top, cases, sub = args.build / "CTestTestfile.cmake", args.build / "cases.cmake", args.build / "tests" / "CTestTestfile.cmake"
    top.write_text(f'include("{cases}")\nsubdirs("tests")\n', encoding="utf-8")
    cases.write_text('add_test(first "true")\n', encoding="utf-8")
    sub.write_text('add_test(second "true")\n', encoding="utf-8")

    def names(build=args.build):
        return sorted(test["name"] for test in checks.listed_tests(build))

    def plant(build=args.build):  # a list CTest never gave, kept under the right key
        kept = build / checks.CTEST_LIST
        kept.write_text(json.dumps(dict(json.loads(kept.read_text(encoding="utf-8")), tests=[{"name": "kept"}])),
                        encoding="utf-8")

    expect(names() == ["first", "second"], f"CTest's list of the hand-written folder is {names()}")
    plant()
    expect(names() == ["kept"], "the kept list is not used again while nothing CTest reads changed")
    time.sleep(0.01)
    top.write_text(top.read_text(encoding="utf-8"), encoding="utf-8")  # as CMake writes it when it configures
    expect(names() == ["kept"], "the kept list is not used again after a file CTest reads was written unchanged")
    cases.write_text('add_test(first "true")\nadd_test(third "true")\n', encoding="utf-8")
    expect(names() == ["first", "second", "third"], f"after a list of cases changed: {names()}")
    plant()
    sub.write_text('add_test(second "true")\nadd_test(fourth "true")\n', encoding="utf-8")
    expect(names() == ["first", "fourth", "second", "third"], f"after a subfolder's test file changed: {names()}")
    plant()
    moved = args.build.with_name(args.build.name + "-moved")
    shutil.rmtree(moved, ignore_errors=True)
    shutil.copytree(args.build, moved)  # times kept, as cp -a keeps them
    expect(names(moved) != ["kept"], "the list kept in a folder copied elsewhere is used there")
    shutil.rmtree(moved)
    print("Checked CTest's kept list against a file written again unchanged and 3 changes.")


SCENARIOS = {
    "ctest-list": scenario_ctest_list,
    "path-free": scenario_path_free,
    "hint-sentences": scenario_hint_sentences,
    "code-size": scenario_code_size,
    "stubs": scenario_stubs,
    "solutions": scenario_solutions,
    "seeded-bug": scenario_seeded_bug,
    "one-chapter": scenario_one_chapter,
    "old-workspace": scenario_old_workspace,
    "hints": scenario_hints,
    "crash": scenario_crash,
    "compile-error": scenario_compile_error,
    "init-keeps-work": scenario_init_keeps_work,
    "moved-step": scenario_moved_step,
    "run-part-three": scenario_run_part_three,
    "error-wording": scenario_error_wording,
    "run-mixed": scenario_run_mixed,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--book-build", type=Path, help="run-part-three: the book's build, with its text and models; path-free: the book's build")
    args = parser.parse_args()
    args.workspace = args.workspace.resolve()
    args.build = args.build.resolve()
    if args.scenario in ("init-keeps-work", "moved-step") and args.workspace.exists():
        shutil.rmtree(args.workspace)
    SCENARIOS[args.scenario](args)
    if failures:
        print(f"\n{len(failures)} problem(s) in the scenario \"{args.scenario}\":")
        for message in failures:
            print(f"  - {message}")
        return 1
    print(f"\nThe scenario \"{args.scenario}\" passed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
