"""The grader's own tests: one scenario per run, each preparing the workspace it needs.

    test_grader.py SCENARIO --workspace DIR --build DIR

The grading scenarios share one workspace folder and one build folder, and write a file
only when its content changes, so after the first scenario the others rebuild only what
they changed. Scenarios:

  stubs          untouched stubs: 0 points on every chapter, a table, a non-zero exit
  solutions      the reference solutions: full marks, exit 0; CTest in the grading build
                 runs the learner's checks and nothing that needs a chapter program
  seeded-bug     scale divides by d_k instead of sqrt(d_k): chapter 3 and every chapter whose
                 tests reach it (7 and later, through sa::attention) fail, the rest pass;
                 one chapter graded alone, and `list`, show every failing check
  hints          a missing transpose in scores names the matrix and what its rows are; a
                 wrong score names its row and column by token, not by a loop variable
  crash          a segfault, an abort and an endless loop in project each fail their checks;
                 the endless loop is named while grading goes on, and stopped within seconds
  compile-error  a syntax error in scores.cpp: the compiler's error is shown, the chapters
                 that need scores fail, the others are still graded, nothing crashes
  init-keeps-work  init twice: the learner's edit survives; reset puts back one stub
  hint-sentences hints as sentences, matrices in full, the diff's tables, stale results
                 (no build)
  run-mixed      run a chapter program with only some steps written: the stubs run the
                 book's version, the learner's own step runs as written, and a difference
                 from the book's output is shown line by line with a non-zero exit
"""
import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import learn  # noqa: E402

LEARN = learn.ROOT / "tools" / "learn"
# The seeded bug: the step of chapter 3. It fails chapter 3 and every chapter whose tests
# reach that step (learn.chapters_used), which is how a new chapter joins the list.
SEEDED_FILE = "scaling.cpp"
SEEDED_FROM = "std::sqrt(static_cast<double>(key_dim))"
SEEDED_TO = "static_cast<double>(key_dim)"
SEEDED_CHAPTER = 3

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


def write_workspace(args, change=None):
    """The reference solutions, with `change(file name, text) -> text` applied."""
    for name, parts in learn.exercise_files().items():
        text = learn.solution_text(parts)
        if change:
            text = change(name, text)
        learn.write_if_changed(args.workspace / name, text)


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
    return {chapter.number for chapter in learn.graded_chapters()}


def scenario_stubs(args):
    args.workspace.mkdir(parents=True, exist_ok=True)
    for name, parts in learn.exercise_files().items():
        learn.write_if_changed(args.workspace / name, learn.stub_text(parts))
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(result.returncode == 1, f"grading the stubs exited with {result.returncode}, expected 1")
    for number, (points, possible, status) in rows.items():
        expect(points == 0 and possible, f"chapter {number}: {points}/{possible} points with stubs, expected 0/N")
        expect(status == "not started", f"chapter {number}: \"{status}\" with stubs, expected \"not started\"")
    total = sum(possible or 0 for _points, possible, _status in rows.values())
    expect(last_line(result.stdout) == f"0 passed, {total} failed",
           f"the last line is \"{last_line(result.stdout)}\", expected \"0 passed, {total} failed\"")
    expect(learn.NOT_IMPLEMENTED in result.stdout, "no hint names the function that is not implemented yet")


def scenario_solutions(args):
    write_workspace(args)
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(result.returncode == 0, f"grading the reference solutions exited with {result.returncode}, expected 0")
    for number, (points, possible, status) in rows.items():
        expect(points == possible and status == "passed",
               f"chapter {number}: {points}/{possible} {status} with the reference, expected full marks")
    # A learner who runs CTest in the grading build gets their own checks, and only those.
    ctest = subprocess.run(["ctest", "--test-dir", str(args.build), "-L", "ch01"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
    print(ctest.stdout)
    expect(ctest.returncode == 0 and "100% tests passed" in ctest.stdout,
           "ctest -L ch01 in the grading build does not pass with the reference solutions")
    expect(re.search(r"\.(output|try|prose-numbers|bad-input)\b", ctest.stdout) is None,
           "ctest in the grading build runs the chapter programs' checks, which it does not build")


def scenario_seeded_bug(args):
    source = (learn.SRC / SEEDED_FILE).read_text(encoding="utf-8")
    expect(SEEDED_FROM in source, f"src/{SEEDED_FILE} no longer contains \"{SEEDED_FROM}\"; update the seeded bug")

    def seed(name, text):
        return text.replace(SEEDED_FROM, SEEDED_TO) if name == SEEDED_FILE else text

    write_workspace(args, seed)
    result = run_learn(args, "grade")
    graded = graded_numbers()
    rows = check_table_shape(result.stdout, graded)
    expect(result.returncode == 1, f"grading the seeded bug exited with {result.returncode}, expected 1")
    failing = {number for number, (_p, _n, status) in rows.items() if status != "passed"}
    expected = {chapter.number for chapter in learn.graded_chapters()
                if chapter.number == SEEDED_CHAPTER or SEEDED_CHAPTER in learn.chapters_used(chapter)} & graded
    expect(failing == expected,
           f"scaling by d_k instead of sqrt(d_k) fails chapters {sorted(failing)}, expected {sorted(expected)}")

    # Every failing check of a chapter, each with its hint: grading one chapter shows them all...
    number = SEEDED_CHAPTER
    points, possible, _status = rows.get(number, (0, 0, ""))
    alone = run_learn(args, "grade", "--chapter", str(number))
    shown = re.findall(r"^\s+failing: .*\n\s+(.*)$", alone.stdout, re.M)
    expect(len(shown) == (possible or 0) - points and all(hint.strip() for hint in shown),
           f"grade --chapter {number} shows {len(shown)} failing checks with hints, expected {(possible or 0) - points}")
    # ...and so does `list`, from the last grade.
    listing = run_learn(args, "list").stdout
    section = listing[listing.find(f"Chapter {number},"):]
    section = section[:section.find("\nChapter ")] if "\nChapter " in section else section
    expect(len(re.findall(r"^\s+1 point\s+failing\s", section, re.M)) == (possible or 0) - points,
           f"list does not mark the {(possible or 0) - points} failing checks of chapter {number} as failing")


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
            text = include + text
            return re.sub(r"(// BEGIN EXERCISE project[^\n]*\n)", lambda m: m.group(1) + "    " + statement + "\n",
                          text, count=1)

        write_workspace(args, crash)
        result = run_learn(args, "grade", "--chapter", "1", "--timeout", "2")
        rows = check_table_shape(result.stdout, {1})
        expect(result.returncode == 1, f"a {kind} in project: exit status {result.returncode}, expected 1")
        expect(rows.get(1, (None, None, ""))[2] == "failing", f"a {kind} in project: chapter 1 is not \"failing\"")
        expect(rows.get(1, (1, 0))[0] == 0, f"a {kind} in project: chapter 1 got points")
        expect(shown in result.stdout, f"a {kind} in project: the hint does not say \"{shown}\"")
        if kind == "endless loop":
            expect(re.search(r"^  stopped after 2 s \(an endless loop\?\): chapter 1: ", result.stdout, re.M) is not None,
                   "an endless loop is not named while the grading goes on")
            # 4 checks of 2 s each, two at a time, plus the build: well under the old minute of silence.
            expect(time.monotonic() - started < 120, f"an endless loop took {time.monotonic() - started:.0f} s to grade")


def scenario_compile_error(args):
    def broken(name, text):
        if name != "scores.cpp":
            return text
        return text.replace("// BEGIN EXERCISE scores", "this is not C++;\n    // BEGIN EXERCISE scores", 1)

    write_workspace(args, broken)
    result = run_learn(args, "grade")
    rows = check_table_shape(result.stdout, graded_numbers())
    expect(result.returncode == 1, f"a compile error: exit status {result.returncode}, expected 1")
    expect(rows.get(2, (0, 0, ""))[2] == "does not build",
           "a compile error in scores.cpp: chapter 2 does not say \"does not build\"")
    expect(re.search(r"scores\.cpp:\d+:\d+: error:", result.stdout) is not None,
           "a compile error: the compiler's error with its file and line is not shown")
    # Only the chapters whose checks reach scores fail; the chapters already solved keep their points.
    needless = {number for number in graded_numbers() if not learn.chapters_used(learn.chapters()[number]) & {2}} - {2}
    for number in sorted(needless & {1, 4, 5, 6}):
        expect(rows.get(number, (0, 0, ""))[2] == "passed",
               f"a compile error in scores.cpp fails chapter {number}, which does not need scores")


def scenario_init_keeps_work(args):
    workspace = args.workspace
    first = run_learn(args, "init")
    expect(first.returncode == 0, f"init exited with {first.returncode}")
    files = learn.exercise_files()
    for name, parts in files.items():
        expect((workspace / name).read_text(encoding="utf-8") == learn.stub_text(parts), f"{name} is not its stub")
    edited = workspace / "projection.cpp"
    # The first stub of the file is project's (project_backward's follows it).
    mine = edited.read_text(encoding="utf-8").replace(
        "throw sa::NotImplemented(", "return embeddings;  // my first try\n    throw sa::NotImplemented(", 1) + "// mine\n"
    edited.write_text(mine, encoding="utf-8")
    (workspace / "scores.cpp").unlink()
    second = run_learn(args, "init")
    expect(second.returncode == 0, f"init (again) exited with {second.returncode}")
    expect(edited.read_text(encoding="utf-8") == mine, "init changed projection.cpp, which the learner edited")
    expect((workspace / "scores.cpp").read_text(encoding="utf-8") == learn.stub_text(files["scores.cpp"]),
           "init did not put back the missing scores.cpp")

    reset = run_learn(args, "reset", "project")
    expect(reset.returncode == 0, f"reset project exited with {reset.returncode}")
    after = edited.read_text(encoding="utf-8")
    expect("my first try" not in after, "reset project left the learner's code in the function")
    expect(after.endswith("// mine\n"), "reset project changed the file outside the function")
    backups = list((workspace / learn.BACKUP_FOLDER).glob("projection.cpp.*"))
    expect(any(path.read_text(encoding="utf-8") == mine for path in backups), "reset kept no backup of the edit")

    unknown = run_learn(args, "reset", "no_such_step")
    expect(unknown.returncode == 2 and "no exercise named" in unknown.stdout,
           "reset of an unknown exercise does not fail with a clear message")


def scenario_run_mixed(args):
    args.workspace.mkdir(parents=True, exist_ok=True)
    files = learn.exercise_files()
    for name, parts in files.items():
        learn.write_if_changed(args.workspace / name, learn.stub_text(parts))
    untouched = run_learn(args, "run", "ch02-scores")
    expect(untouched.returncode == 0, f"run with every step a stub exited with {untouched.returncode}, expected 0")
    expect("Same as the book's output" in untouched.stdout,
           "with every step a stub, the book's versions should reproduce the book's output")
    expect(re.search(r"book's version runs instead: .*\bproject\b.*\bscores\b", untouched.stdout) is not None,
           "run does not say that project and scores ran the book's version")

    # The learner writes scores, with a bug: every dot product doubled.
    solved = learn.solution_text(files["scores.cpp"])
    expect("dot += queries(asking, d) * keys(asked, d);" in solved, "src/scores.cpp changed; update this scenario")
    learn.write_if_changed(args.workspace / "scores.cpp",
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


def scenario_hints(args):
    solved = learn.solution_text(learn.exercise_files()["scores.cpp"])
    right = "dot += queries(asking, d) * keys(asked, d);"
    expect(right in solved, "src/scores.cpp changed; update this scenario")
    for wrong, hints in {
        # The most common mistake: K read as if it were already transposed.
        "dot += queries(asking, d) * keys(d, asked);": ["That matrix is K.", "K is 4×3: one row per key",
                                                        "Q or K (both 3×2)"],
        # A wrong number: the hint names the entry by its tokens, as the chapter does.
        "dot += 2 * queries(asking, d) * keys(asked, d);": [
            "scores(mouse, eats): expected 4, got 8 (row Mouse, column Eats (the chapter's row 1, column 2)"],
    }.items():
        write_workspace(args, lambda name, text: text.replace(right, wrong) if name == "scores.cpp" else text)
        result = run_learn(args, "grade", "--chapter", "2")
        for hint in hints:
            expect(hint in result.stdout, f"with \"{wrong}\" the hints do not say \"{hint}\"")
        expect(re.search(r"\((row|i|j|col|column), ", result.stdout) is None,
               f"with \"{wrong}\" a hint shows a loop variable instead of a row or column")


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


def scenario_hint_sentences(args):
    """Hints read as sentences, matrices print as the book prints them, `run`'s diff names
    each hunk's table, and `list` marks results graded before the last edit as stale."""
    cases = learn.ElementTree.fromstring(HINT_REPORT)
    hints = [learn.describe_failure(element, ["why"]) for element in cases.iter("Expression")]
    for hint in hints:
        print(hint)
        for leak in ("{?}", "contains:", " < 0.0000001", "( ", "!("):
            expect(leak not in hint, f"the hint {hint!r} shows Catch2's own text {leak!r}")
    expect(hints[0].startswith("heads[1]: expected 2×2:") and "2.000  0.250" in hints[0]
           and "got 2×2:" in hints[0] and "2.000  0.750" in hints[0],
           f"a matrix is not shown in full, as the book prints it: {hints[0]!r}")
    expect(hints[1] == "relative_difference(a, n): expected below 1e-07, got 0.729465 (why)", repr(hints[1]))
    expect(hints[2] == 'sa::mix_backward(a, v, d): expected its error message to contain "mix_backward" and '
           '"3×3", but it was "mix_backward: dO is 2×2" (why)', repr(hints[2]))
    expect(hints[3] == "used: expected at most 1, got 1.5 (why)", repr(hints[3]))

    book = ["Weights A (2×2):", "         a      b", "  a   0.500  0.500", "", "== Cross ==", "",
            "Outputs (2×1):", "        f1", "  a   1.000", "  b   2.000"]
    yours = list(book)
    yours[2], yours[9] = "  a   0.400  0.600", "  b   2.500"
    diff = learn.titled_diff(book, yours)
    print("\n".join(diff))
    headers = [line for line in diff if line.startswith("@@")]
    expect(headers == ['@@ line 2 of the book\'s output, in "Weights A (2×2)" @@',
                       '@@ line 9 of the book\'s output, in "Outputs (2×1)" @@'],
           f"the diff's hunks do not name their tables: {headers}")

    workspace, build = args.workspace / "stale", args.build / "stale"
    (build / "bin").mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    chapter = next(c for c in learn.chapters().values() if c.tests)
    (build / "bin" / f"test_{chapter.tests}").write_text("")
    (build / learn.RESULTS_FILE).write_text(learn.json.dumps(
        {chapter.tests: {"old": {"passed": False, "hint": "not implemented yet", "graded_at": 1.0},
                         "new": {"passed": True, "hint": "", "graded_at": time.time() + 3600}}}))
    (workspace / "scores.cpp").write_text("// edited after the first grade\n")
    original = learn.list_cases
    learn.list_cases = lambda executable, spec="": ["old", "new"]
    try:
        import contextlib
        import io
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            learn.command_list(argparse.Namespace(workspace=workspace, build=build))
    finally:
        learn.list_cases = original
    lines = shown.getvalue().splitlines()
    print("\n".join(lines[-4:]))
    expect(any("failing, stale" in line and line.endswith("old") for line in lines),
           "a result graded before the last edit is not marked stale")
    expect(any("passed " in line and "stale" not in line and line.endswith("new") for line in lines),
           "a result graded after the last edit is marked stale")


SCENARIOS = {
    "hint-sentences": scenario_hint_sentences,
    "stubs": scenario_stubs,
    "solutions": scenario_solutions,
    "seeded-bug": scenario_seeded_bug,
    "hints": scenario_hints,
    "crash": scenario_crash,
    "compile-error": scenario_compile_error,
    "init-keeps-work": scenario_init_keeps_work,
    "run-mixed": scenario_run_mixed,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--build", type=Path, required=True)
    args = parser.parse_args()
    args.workspace = args.workspace.resolve()
    args.build = args.build.resolve()
    if args.scenario == "init-keeps-work" and args.workspace.exists():
        import shutil
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
