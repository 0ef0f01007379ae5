"""Grading: build the workspace, run each chapter's checks on that chapter's exercises (and the
book's version of every other step), or with --together on the learner's whole library, and
print the table. A chapter whose checks, steps and settings did not change since the last
grade keeps its results, so a regrade after one edit runs the checks of that step's chapter."""
import dataclasses
import datetime
import json
import time
from pathlib import Path

from .book import BACKUP_FOLDER, NOT_IMPLEMENTED, SRC, LearnError, exercises, graded_chapters, relative
from .build import BuildFailed, build_workspace
from .checks import SLOW_FACTOR, SLOW_TAG, Check, grade_check, list_cases, listed_tests, report_paths, \
    run_ctest, run_in_one_process
from .sources import chapter_digest
from .table import ChapterResult, print_table, save_results
from .workspace import exercise_state, missing, not_graded

RESULTS_CACHE = ".grade-cache.json"  # in the grading build: each chapter's last results and what they depend on


def warn_if_behind(workspace):
    """Tell a learner whose workspace lacks exercises the book has to run init, and which of their files
    are not graded any more (the book moved their steps)."""
    where = {exercise.name: exercise.file for exercise in exercises()}
    for path, names in not_graded(workspace):
        moved = ", ".join(f"{name} (now in {where[name]})" if name in where else name for name in names)
        print(f"Not graded: {relative(path)}, since the book's {path.name} has no exercises now: {moved}. "
              "tools/learn init copies your code of them into their new files; then this file can go.", flush=True)
    lacking = [exercise for absent in missing(workspace).values() for exercise in absent]
    if lacking:
        names = ", ".join(f"{exercise.name} (chapter {exercise.chapter})" for exercise in lacking)
        print(f"Your workspace is behind the book: it lacks {len(lacking)} exercise(s): {names}.\n"
              "Run: tools/learn init    (it adds their stubs, or your code of a step the book has moved to another "
              "file, and keeps your code byte for byte; "
              "until then they count as not started)\n", flush=True)


def stem_of(chapter, together):
    return f"together {chapter.tests}" if together else chapter.tests


def result_key(build, chapter, workspace, broken, timeout, together):
    """What a chapter's results depend on: its checks' program, the book's sources and the
    grader's, the time limit and the learner's code that the checks run (all of it, together)."""
    executable = build / "bin" / f"test_{chapter.tests}"
    stat = executable.stat()
    book = max(path.stat().st_mtime_ns for path in [*SRC.iterdir(), *Path(__file__).parent.glob("*.py")])
    mine = chapter_digest(None if together else chapter.number, workspace, broken)
    return json.dumps([stat.st_mtime_ns, stat.st_size, book, timeout, together, mine])


def run_chapters(build, chapters, timeout, jobs, together):
    """Run the checks of these chapters; returns {stem: [Check]}."""
    if not chapters:
        return {}
    programs = {stem_of(chapter, together): build / "bin" / f"test_{chapter.tests}" for chapter in chapters}
    names = {stem: list_cases(program) for stem, program in programs.items()}
    slow_names = {stem: set(list_cases(program, SLOW_TAG)) for stem, program in programs.items()}
    reports, settings = report_paths(build)
    for stem in names:
        for name in names[stem]:
            reports.get((stem, name), ("", Path("/nonexistent")))[1].unlink(missing_ok=True)
    print(f"Running {sum(map(len, names.values()))} checks (each stops after {timeout:g} s)...", flush=True)
    # Each program runs its checks in one process first; the rest run alone, each in its own process.
    passed = run_in_one_process(build, programs, settings, timeout, jobs)
    # A check tagged [slow] (an experiment of many random draws) gets a longer time limit.
    slow = {reports.get((stem, name), ("",))[0] for stem in names for name in slow_names[stem]} - {""}
    chosen = {reports.get((stem, name), ("",))[0] for stem in names for name in names[stem]
              if name not in passed[stem]} - slow - {""}
    ended = run_ctest(build, sorted(slow), timeout * SLOW_FACTOR, jobs)
    ended.update(run_ctest(build, sorted(chosen), timeout, jobs))
    checks = {}
    for stem in names:
        checks[stem] = []
        for name in names[stem]:
            test, report = reports.get((stem, name), ("", None))
            checks[stem].append(Check(name, passed=True) if name in passed[stem] else
                                grade_check(name, report, ended.get(test, "not run"),
                                            timeout * (SLOW_FACTOR if test in slow else 1)))
    return checks


def grade_chapters(args, workspace, build, graded, broken):
    """[ChapterResult] for the graded chapters, running only those whose results may have changed."""
    together = getattr(args, "together", False)
    cache_path = build / RESULTS_CACHE
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    keys = {stem_of(chapter, together): result_key(build, chapter, workspace, broken, args.timeout, together)
            for chapter in graded}
    stale = [chapter for chapter in graded if cache.get(stem_of(chapter, together), {}).get("key")
             != keys[stem_of(chapter, together)]]
    if len(stale) < len(graded):
        kept = [str(chapter.number) for chapter in graded if chapter not in stale]
        print(f"Chapter(s) {', '.join(kept)}: nothing they run changed since the last grade; their results stand.")
    # A chapter without exercises of its own checks the book's steps alone: it always runs.
    started = written_chapters(workspace) | ({chapter.number for chapter in graded} - exercise_chapters())
    running = [chapter for chapter in stale if together or chapter.number in started]
    fresh = run_chapters(build, running, args.timeout, args.jobs, together)
    if not running:  # CTest's list of the checks, kept now for the grade after the learner's first edit
        listed_tests(build)
    fresh.update({chapter.tests: not_started(build, chapter) for chapter in stale
                  if not together and chapter.number not in started})
    for stem, checks in fresh.items():
        timed_out = any(check.hint.startswith("did not finish") for check in checks)
        cache[stem] = {"key": "" if timed_out else keys[stem], "checks": [dataclasses.asdict(c) for c in checks]}
    cache_path.write_text(json.dumps(cache, ensure_ascii=False), encoding="utf-8")
    return [ChapterResult(chapter, [Check(**check) for check in cache[stem_of(chapter, together)]["checks"]])
            for chapter in graded]


def exercise_chapters():
    return {exercise.chapter for exercise in exercises()}


def written_chapters(workspace):
    """The chapters with at least one step the learner has written."""
    return {exercise.chapter for exercise in exercises() if exercise_state(workspace, exercise) == "edited"}


def not_started(build, chapter):
    """The checks of a chapter none of whose steps is written yet: each fails at the chapter's
    first stub, without running (run against the book's other steps, a check that does not
    reach this chapter's steps would pass, and give a point for nothing written)."""
    first = next(exercise for exercise in exercises() if exercise.chapter == chapter.number)
    hint = f"{NOT_IMPLEMENTED} {first.name}, see {first.where}"
    return [Check(name, False, hint, first.name) for name in list_cases(build / "bin" / f"test_{chapter.tests}")]


def mark_broken(results, workspace, broken):
    """A check that reached a stub standing in for a file that did not compile says so."""
    broken_stubs = {exercise.name: exercise.file for exercise in exercises() if exercise.file in broken}
    for result in results:
        for check in result.checks:
            if check.stub in broken_stubs:
                check.hint = f"does not build: {relative(workspace / broken_stubs[check.stub])} has errors (above)"


def grade_once(args):
    workspace, build = args.workspace.resolve(), args.build.resolve()
    if not workspace.exists():
        raise LearnError("there is no workspace yet. Create it with: tools/learn init")
    warn_if_behind(workspace)
    graded = graded_chapters(args.chapter)
    started = time.monotonic()
    print(f"Building your workspace ({relative(workspace)}/) in {relative(build)}/...", flush=True)
    try:
        broken, errors = build_workspace(workspace, build, [f"test_{chapter.tests}" for chapter in graded], args.jobs)
    except BuildFailed as failure:
        print(f"\nYour code does not build yet ({failure.summary}). The first errors:\n\n{failure.output}\n")
        print_table([ChapterResult(chapter, error="does not build") for chapter in graded], args)
        return 1
    if broken:
        print(f"\n{', '.join(broken)} does not compile, so its stubs stand in for it: the chapters of its steps "
              f"fail, the others are graded. The first errors:\n\n{errors}\n")
    built = time.monotonic()
    if getattr(args, "together", False):
        print("Together: every check runs your whole library, each step as you wrote it.")
    results = grade_chapters(args, workspace, build, graded, broken)
    mark_broken(results, workspace, broken)
    save_results(build, results)
    print()
    print_table(results, args)
    if args.verbose:
        print(f"(built in {built - started:.1f} s, ran the checks in {time.monotonic() - built:.1f} s)")
    return 0 if all(result.status == "passed" for result in results) else 1


def snapshot(workspace):
    return {str(path): (path.stat().st_mtime_ns, path.stat().st_size) for path in sorted(workspace.rglob("*"))
            if path.is_file() and BACKUP_FOLDER not in path.relative_to(workspace).parts}


def command_grade(args):
    if not args.watch:
        return grade_once(args)
    workspace = args.workspace.resolve()
    try:
        while True:
            try:
                grade_once(args)
            except LearnError as error:
                print(f"learn: {error}")
            before = snapshot(workspace) if workspace.exists() else {}
            print(f"\nWatching {relative(workspace)}/: save a file to grade again, Ctrl-C to stop.", flush=True)
            while (now := snapshot(workspace) if workspace.exists() else {}) == before:
                time.sleep(0.5)
            time.sleep(0.2)  # let the editor finish writing
            names = sorted({Path(path).name for path, _ in set(now.items()) ^ set(before.items())})
            print(f"\n--- {datetime.datetime.now():%H:%M:%S}: {', '.join(names)} changed; grading again ---\n",
                  flush=True)
    except KeyboardInterrupt:
        print()
        return 0
