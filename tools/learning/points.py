"""The points table of docs/how-to-use.rst (one point per test case, generated from the
tests) and `list`: every exercise with its state, every check with its last result."""
import json
import re
import sys

from .book import HOW_TO_USE, RESULTS_FILE, LearnError, chapters, exercises, graded_chapters, relative, \
    write_if_changed
from .checks import list_cases
from .grade import snapshot
from .workspace import exercise_state


POINTS_BEGIN = ".. BEGIN POINTS TABLE"
POINTS_END = ".. END POINTS TABLE"


def case_names(bin_folder, chapter):
    executable = bin_folder / f"test_{chapter.tests}"
    if not executable.exists():
        raise LearnError(f"{relative(executable)} is not built; build the tests first "
                         f"(bash tools/test.sh, or tools/learn grade)")
    return list_cases(executable)


def points_table(bin_folder):
    by_chapter = {}
    for exercise in exercises():
        by_chapter.setdefault(exercise.chapter, []).append(f"``{exercise.name}``")
    rows = [(f"{chapter.number}\\. {chapter.title}",
             ", ".join(by_chapter.get(chapter.number, [])) or "(nothing new: the steps above)",
             len(case_names(bin_folder, chapter))) for chapter in graded_chapters()]
    rows.append(("Total", "", sum(points for _chapter, _functions, points in rows)))
    lines = [POINTS_BEGIN + " (tools/learn points --write generates it; a test checks it)", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 40 40 20", "",
             "   * - Chapter", "     - You write", "     - Points"]
    for chapter, functions, points in rows:
        lines += [f"   * - {chapter}", f"     - {functions}" if functions else "     -", f"     - {points}"]
    return "\n".join(lines + ["", POINTS_END]) + "\n"


def command_points(args):
    table = points_table(args.bin.resolve() if args.bin else (args.build.resolve() / "bin"))
    text = HOW_TO_USE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(POINTS_BEGIN) + r".*?" + re.escape(POINTS_END) + r"\n", re.S)
    if not pattern.search(text):
        raise LearnError(f"{relative(HOW_TO_USE)} has no \"{POINTS_BEGIN}\" ... \"{POINTS_END}\" block")
    updated = pattern.sub(lambda _match: table, text, count=1)
    if args.write:
        changed = write_if_changed(HOW_TO_USE, updated)
        print(f"{'Updated' if changed else 'Already up to date:'} the points table in {relative(HOW_TO_USE)}.")
    elif args.check:
        if updated != text:
            print(f"The points table in {relative(HOW_TO_USE)} does not match the tests. It should read:\n\n{table}\n"
                  "Run: tools/learn points --write --bin <build>/bin")
            return 1
        print(f"The points table in {relative(HOW_TO_USE)} matches the tests.")
    else:
        sys.stdout.write(table)
    return 0


def command_list(args):
    """Every exercise with its state, and every check with its points and its result in the last grade."""
    workspace = args.workspace.resolve()
    build = args.build.resolve()
    last = json.loads((build / RESULTS_FILE).read_text(encoding="utf-8")) if (build / RESULTS_FILE).exists() else {}
    saved_at = (build / RESULTS_FILE).stat().st_mtime if (build / RESULTS_FILE).exists() else 0.0
    edited_at = last_edit(workspace)
    any_stale = False
    by_chapter = {}
    for exercise in exercises():
        by_chapter.setdefault(exercise.chapter, []).append(exercise)
    for chapter in chapters().values():
        print(f"Chapter {chapter.number}, {chapter.title}")
        for exercise in by_chapter.get(chapter.number, []):
            state = exercise_state(workspace, exercise) if workspace.exists() else "no workspace yet"
            print(f"  exercise  {exercise.name:<18} in {relative(workspace / exercise.file):<28} {state}")
        if not chapter.tests:
            continue
        executable = build / "bin" / f"test_{chapter.tests}"
        if not executable.exists():
            print(f"  checks    in tests/{chapter.tests}.cpp (grade once to list them here)")
            continue
        for name in list_cases(executable):
            result = last.get(chapter.tests, {}).get(name)
            state = "not graded yet" if result is None else "passed" if result["passed"] else "failing"
            if result is not None and result.get("graded_at", saved_at) < edited_at:
                state, any_stale = f"{state}, stale", True  # graded before the learner's last edit
            print(f"  1 point   {state:<16}  {name}")
            if result and not result["passed"]:
                print(f"                              {result['hint']}")
    if any_stale:
        print("(stale: graded before your last edit of the workspace; tools/learn grade grades them again)")
    return 0


def last_edit(workspace):
    """When a file of the workspace was last saved, in seconds since the epoch (0 if none)."""
    if not workspace.exists():
        return 0.0
    return max((mtime for mtime, _size in snapshot(workspace).values()), default=0) / 1e9

