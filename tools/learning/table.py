"""A chapter's result and the table that grading prints."""
import functools
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


def functions(text):
    """{name: body} of the functions a source file defines at its outer level (the book's style: the
    signature starts a line, its body's braces stand at the start of lines)."""
    found = {}
    for match in re.finditer(r"^[A-Za-z][^;{}\n]*?\b(\w+)\s*\([^;{}]*?\)[^;{}]*?\n\{\n(.*?)^\}", text, re.M | re.S):
        found[match[1]] = found.get(match[1], "") + match[2]
    return found


# A grade prints the table of every chapter it graded, and each chapter's table reads the same book
# sources (src/*.cpp, which do not change while it runs): each is read and cut into functions once.
@functools.lru_cache(maxsize=None)
def source_functions(file):
    """functions() of one of the library's src/*.cpp files."""
    return functions((SRC / file).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def exercise_bodies():
    """{exercise name: (the body of its solution, the names of the matrices its file declares)}."""
    found = {}
    for file, parts in exercise_files().items():
        declared = frozenset(re.findall(r"\bMatrix\s*&?\s+(\w+)", (SRC / file).read_text(encoding="utf-8")))
        for exercise, body in markers.regions(parts):
            found[exercise.name] = ("".join(body), declared)
    return found


def step_calls(files=(), tests=""):
    """(every step by name, calls) where calls(text, prefix) is the set of steps `text` calls, directly
    or through another step's body, or through a function of the library's `files` (src/*.cpp) or of
    the `tests` file's text. A test names the library's functions sa::f (prefix r"\\bsa::")."""
    steps = {exercise.name: exercise for exercise in exercises()}
    bodies, variables = {}, {}
    for found in [source_functions(file) for file in files] + [functions(tests)]:
        for name, body in found.items():
            bodies[name], variables[name] = bodies.get(name, "") + body, set()
    for name, (body, declared) in exercise_bodies().items():
        bodies[name], variables[name] = body, declared

    names = bodies.keys() | steps.keys()
    reached = {}  # {name: the names its body calls directly}, each body searched once

    def direct(text, prefix=r"(?<![.>\w])", skip=()):  # a parameter such as `scores(i, j)` is no call
        # every whole name before a parenthesis, in one pass, kept where it is a step or a function
        return (set(re.findall(prefix + r"(\w+)\s*\(", text)) & names) - set(skip)

    def calls(text, prefix=r"(?<![.>\w])"):
        used, todo = set(), direct(text, prefix)
        while todo:
            name = todo.pop()
            if name not in used:
                used.add(name)
                if name not in reached:
                    reached[name] = direct(bodies.get(name, ""), skip=variables.get(name, ()))
                todo |= reached[name] - used
        return used & steps.keys()

    return steps, calls


def chapters_used(chapter):
    """The chapters whose steps this chapter's tests call, directly or through another step."""
    steps, calls = step_calls()
    tests = (TESTS / f"{chapter.tests}.cpp").read_text(encoding="utf-8", errors="replace")
    return {steps[name].chapter for name in calls(tests, prefix=r"\bsa::")} - {chapter.number}


BRACES = re.compile(r"[{}]")


def test_cases(text):
    """{name: body} of every TEST_CASE in a test file's text (a name may be several literals)."""
    cases = {}
    for match in re.finditer(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
        name = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', match[1])).replace('\\"', '"').replace("\\\\", "\\")
        start = text.find("{", match.end())
        if start < 0:  # no body
            cases[name] = ""
            continue
        depth, end = 0, start
        for brace in BRACES.finditer(text, start):  # brace by brace to the one that closes the first
            end = brace.start()
            depth += 1 if brace[0] == "{" else -1
            if depth == 0:
                break
        else:  # never closed (a brace inside a string): to the end of the file
            end = len(text) - 1
        cases[name] = text[start:end + 1]
    return cases


def steps_of(chapter):
    return [exercise for exercise in exercises() if exercise.chapter == chapter.number]


def own_steps(chapter):
    """{check name: the chapter's own steps it runs}, for the checks of a chapter with exercises: through
    any function of the library (a step's caller may live in another file than the step, as chapter 17's
    ring_attention() calls ring_block_owner())."""
    text = (TESTS / f"{chapter.tests}.cpp").read_text(encoding="utf-8", errors="replace")
    steps, calls = step_calls(sorted(path.name for path in SRC.glob("*.cpp")), text)
    return {name: {step for step in calls(body) if steps[step].chapter == chapter.number}
            for name, body in test_cases(text).items()}


def in_step_order(chapter, failing):
    """The failing checks, those of the fewest own steps first (a step's own check before the checks
    that combine it with others), each with the steps it runs whose own checks fail before it."""
    owned = own_steps(chapter)
    ordered = sorted(failing, key=lambda check: len(owned.get(check.name, ())) or len(owned) + 1)
    earlier = []
    for index, check in enumerate(ordered):
        mine = owned.get(check.name, set())
        below = set().union(*[owned.get(other.name, set()) for other in ordered[:index]
                              if owned.get(other.name) and owned[other.name] < mine])
        earlier.append(sorted(below))
    return list(zip(ordered, earlier))


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
        ordered = in_step_order(chapter, failing)
        shown = ordered[:1] if result.status in ("not started", "does not build") or not show_all else ordered
        for check, below in shown:
            hint = check.hint if check.stub or check.hint.startswith("does not build") else \
                f"{check.hint.rstrip('.')}. Read {chapter.label}."
            print(f"      failing: {check.name}\n        {hint}")
            if below and not check.stub:
                steps = " and ".join(below)
                print(f"        (it runs {steps} too, whose own check{'s' if len(below) > 1 else ''} above "
                      f"fail{'' if len(below) > 1 else 's'}: fix {'those' if len(below) > 1 else 'that'} first)")
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


