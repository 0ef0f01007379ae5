"""A chapter's result and the table that grading prints."""
import json
import re
import time
from dataclasses import dataclass, field

from .book import RESULTS_FILE, SRC, TESTS, Chapter, exercise_files, exercises, markers


@dataclass
class ChapterResult:
    chapter: Chapter
    checks: list = field(default_factory=list)
    error: str = ""

    @property
    def points(self):
        return sum(check.passed for check in self.checks)

    @property
    def possible(self):
        return len(self.checks)

    @property
    def failing(self):
        return [check for check in self.checks if not check.passed]

    @property
    def status(self):
        if self.error or not self.checks:
            return "failing" if self.error else "no checks"
        if not self.failing:
            return "passed"
        if all(check.hint.startswith("does not build") for check in self.failing):
            return "does not build"
        if self.points == 0 and all(check.stub for check in self.failing):
            return "not started"
        return "failing"




def save_results(build, results):
    now = time.time()
    saved = {result.chapter.tests: {check.name: {"passed": check.passed, "hint": check.hint, "graded_at": now}
                                    for check in result.checks}
             for result in results}
    path = build / RESULTS_FILE
    if path.exists():
        saved = {**json.loads(path.read_text(encoding="utf-8")), **saved}
    path.write_text(json.dumps(saved, indent=1, ensure_ascii=False), encoding="utf-8")


def chapters_used(chapter):
    """The chapters whose steps this chapter's tests call, directly or through another step."""
    steps = {exercise.name: exercise for exercise in exercises()}
    bodies, variables = {}, {}
    for file, parts in exercise_files().items():
        declared = set(re.findall(r"\bMatrix\s*&?\s+(\w+)", (SRC / file).read_text(encoding="utf-8")))
        for exercise, body in markers.regions(parts):
            bodies[exercise.name], variables[exercise.name] = "".join(body), declared

    def calls(text, prefix=r"\b", skip=()):  # a parameter such as `scores(i, j)` is no call
        return {name for name in steps if name not in skip and re.search(prefix + re.escape(name) + r"\s*\(", text)}

    tests = (TESTS / f"{chapter.tests}.cpp").read_text(encoding="utf-8", errors="replace")
    used, todo = set(), calls(tests, prefix=r"\bsa::")  # the tests name the library's functions sa::f
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo |= calls(bodies.get(name, ""), skip=variables.get(name, ())) - used
    return {steps[name].chapter for name in used} - {chapter.number}


def print_table(results, args):
    width = max([len(result.chapter.title) for result in results] + [5])
    print(f"{'Chapter':<{width + 4}}  {'Points':>7}  Status")
    unfinished = {result.chapter.number for result in results if result.status != "passed"}
    show_all = args.all or len(results) == 1
    for result in results:
        chapter = result.chapter
        points = f"{result.points}/{result.possible}" if result.checks else "0/?"
        print(f"{chapter.number:>2}  {chapter.title:<{width}}  {points:>7}  {result.status}")
        failing = result.failing
        if result.error or not failing:
            continue
        shown = failing[:1] if result.status in ("not started", "does not build") or not show_all else failing
        for check in shown:
            hint = check.hint if check.stub or check.hint.startswith("does not build") else \
                f"{check.hint.rstrip('.')}. Read {chapter.label}."
            print(f"      failing: {check.name}\n        {hint}")
        if len(failing) > len(shown) and result.status == "failing":
            print(f"      ...and {len(failing) - len(shown)} more failing: "
                  f"tools/learn grade --chapter {chapter.number} shows each with its hint")
        together = getattr(args, "together", False)  # only then do a chapter's checks run the other chapters' steps
        used = sorted(chapters_used(chapter) & unfinished) if result.status == "failing" and together else []
        if used:
            earlier = " and ".join([", ".join(map(str, used[:-1])), str(used[-1])] if len(used) > 1 else [str(used[0])])
            print(f"      (these checks also use the steps of chapter{'s' if len(used) > 1 else ''} {earlier}, "
                  f"which {'do' if len(used) > 1 else 'does'} not pass yet)")
    passed = sum(result.points for result in results)
    total = sum(result.possible for result in results)
    if any(result.error for result in results):
        print("Fix the first error above, save, and grade again.")
    else:
        print(f"Total: {passed}/{total} points")
    print(f"{passed} passed, {total - passed} failed")


