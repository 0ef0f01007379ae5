"""The book's exercises: a workspace of stubs, a grader with hints, a watch mode.

Every step function in src/ holds its reference solution between two markers:

    // BEGIN SOLUTION scores: chapter 2, Scores
    ...the reference code...
    // END SOLUTION

`init` copies each such file into workspace/ with every solution region replaced by a
stub that throws sa::NotImplemented("not implemented yet: scores, see chapter 2,
Scores"), so the stubs are generated from the reference and cannot drift from it.
`grade` builds the tests against a copy of the workspace (CMake's BOOK_WORKSPACE mode,
in build/grade/), lets CTest run every Catch2 test case in a process of its own with a
time limit, reads each case's result from the XML report Catch2 writes for it, and
prints one row per chapter with points, a status and a hint for each failing check.
A file that does not compile is graded as its stubs, so it fails only the chapters
that need it. A check may run for 3 s (one tagged [slow], 12 s); each check stopped is
named as it happens.

Run it as tools/learn COMMAND; tools/learn --help lists the commands.
"""
import argparse
import datetime
import difflib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TESTS = ROOT / "tests"
CHAPTERS = ROOT / "chapters"
HOW_TO_USE = ROOT / "docs" / "how-to-use.rst"
DEFAULT_WORKSPACE = ROOT / "workspace"
DEFAULT_GRADE_BUILD = ROOT / "build" / "grade"
BACKUP_FOLDER = ".backup"
RESULTS_FILE = "last-grade.json"  # in the grading build: what `list` shows for each check

SOLUTION_BEGIN = re.compile(
    r"^(?P<indent>[ \t]*)//\s*BEGIN SOLUTION\s+(?P<name>[A-Za-z_]\w*)\s*:\s*"
    r"(?P<where>chapter\s+(?P<chapter>\d+)\s*,\s*(?P<section>.*?))\s*$")
SOLUTION_END = re.compile(r"^[ \t]*//\s*END SOLUTION\s*$")
# In the workspace the same regions are marked as exercises, so that `reset` can put
# one function back to its stub while the rest of the file keeps the learner's work.
EXERCISE_BEGIN = re.compile(r"^[ \t]*//\s*BEGIN EXERCISE\s+(?P<name>[A-Za-z_]\w*)\b")
EXERCISE_END = re.compile(r"^[ \t]*//\s*END EXERCISE\s*$")
NOT_IMPLEMENTED = "not implemented yet:"


class LearnError(Exception):
    """A problem to report in one message, without a traceback."""


# --------------------------------------------------------------------------------------
# Exercises: the solution regions of src/*.cpp


@dataclass
class Exercise:
    name: str       # the function, e.g. "scores"
    file: str       # the source file, e.g. "scores.cpp"
    chapter: int
    section: str    # e.g. "Scores"
    indent: str

    @property
    def where(self):
        return f"chapter {self.chapter}, {self.section}"

    def stub_lines(self):
        return [
            f"{self.indent}// BEGIN EXERCISE {self.name}: {self.where}\n",
            f"{self.indent}// Write this step (read {self.where}), then delete the line below.\n",
            f'{self.indent}throw sa::NotImplemented("{NOT_IMPLEMENTED} {self.name}, see {self.where}");\n',
            f"{self.indent}// END EXERCISE\n",
        ]


def split_regions(path, lines):
    """The file as a list of plain lines and (Exercise, solution lines) regions."""
    parts = []
    region = None
    for number, line in enumerate(lines, start=1):
        begin = SOLUTION_BEGIN.match(line)
        if begin:
            if region:
                raise LearnError(f"{path}:{number}: BEGIN SOLUTION inside the region of {region[0].name}")
            exercise = Exercise(begin["name"], path.name, int(begin["chapter"]), begin["section"], begin["indent"])
            region = (exercise, [])
        elif SOLUTION_END.match(line):
            if not region:
                raise LearnError(f"{path}:{number}: END SOLUTION without a BEGIN SOLUTION")
            parts.append(region)
            region = None
        elif region:
            region[1].append(line)
        else:
            parts.append(line)
    if region:
        raise LearnError(f"{path}: the region of {region[0].name} has no END SOLUTION")
    return parts


def exercise_files():
    """{file name: parts} for every src/*.cpp that holds a solution region."""
    files = {}
    for path in sorted(SRC.glob("*.cpp")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if any(SOLUTION_BEGIN.match(line) for line in lines):
            files[path.name] = split_regions(path, lines)
    return files


def exercises():
    """Every exercise, in chapter order."""
    found = [part[0] for parts in exercise_files().values() for part in parts if isinstance(part, tuple)]
    return sorted(found, key=lambda exercise: (exercise.chapter, exercise.file, exercise.name))


def stub_text(parts):
    out = []
    for part in parts:
        out.extend(part[0].stub_lines() if isinstance(part, tuple) else [part])
    return "".join(out)


def solution_text(parts):
    """The reference file with exercise markers, as a learner who solved everything would have it."""
    out = []
    for part in parts:
        if isinstance(part, tuple):
            exercise, body = part
            out.append(f"{exercise.indent}// BEGIN EXERCISE {exercise.name}: {exercise.where}\n")
            out.extend(body)
            out.append(f"{exercise.indent}// END EXERCISE\n")
        else:
            out.append(part)
    return "".join(out)


def find_exercise_region(lines, name):
    """(first, last) line indexes of the named exercise's markers in a workspace file, or None."""
    first = None
    for index, line in enumerate(lines):
        begin = EXERCISE_BEGIN.match(line)
        if begin and begin["name"] == name:
            first = index
        elif first is not None and EXERCISE_END.match(line):
            return first, index
    return None


# --------------------------------------------------------------------------------------
# Chapters and their tests


@dataclass
class Chapter:
    number: int
    folder: str = ""      # e.g. "01-projection"
    title: str = ""       # e.g. "Projection"
    tests: str = ""       # e.g. "ch01_projection", the test file's stem

    @property
    def label(self):
        return f"chapter {self.number}, {self.title}" if self.title else f"chapter {self.number}"

    @property
    def program(self):
        return f"ch{self.folder}"


def rst_title(path):
    """The first section heading of a reStructuredText file, without its number or subtitle."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for index in range(len(lines) - 1):
        text, under = lines[index].strip(), lines[index + 1].strip()
        if (text and not text.startswith("..") and len(under) >= len(text)
                and re.fullmatch(r"([=\-~^\"'`#*+<>_:.])\1*", under)):
            text = re.sub(r"^\d+\.\s*", "", text)
            return text.split(":")[0].strip()
    return ""


def chapters():
    """{number: Chapter} for every chapter folder and every tests/chNN_*.cpp."""
    found = {}
    for folder in sorted(CHAPTERS.glob("[0-9][0-9]-*")):
        if folder.is_dir():
            number = int(folder.name[:2])
            titles = [rst_title(rst) for rst in sorted(folder.glob("*.rst"))]
            title = next((t for t in titles if t), folder.name[3:].replace("-", " ").capitalize())
            found[number] = Chapter(number, folder.name, title)
    for test in sorted(TESTS.glob("ch[0-9][0-9]_*.cpp")):
        number = int(test.name[2:4])
        found.setdefault(number, Chapter(number)).tests = test.stem
    return dict(sorted(found.items()))


def graded_chapters(only=None):
    graded = [chapter for chapter in chapters().values() if chapter.tests]
    if only:
        unknown = sorted(set(only) - {chapter.number for chapter in graded})
        if unknown:
            raise LearnError(f"no tests for chapter {', '.join(map(str, unknown))}; "
                             f"chapters with tests: {', '.join(str(c.number) for c in graded)}")
        graded = [chapter for chapter in graded if chapter.number in only]
    return graded


# --------------------------------------------------------------------------------------
# The workspace


def relative(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def write_if_changed(path, text):
    """Write only when the content differs, so the build sees no change otherwise."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def add_missing_stubs(workspace, quiet=False):
    """Create the workspace and every exercise file it lacks; never touch an existing file."""
    workspace.mkdir(parents=True, exist_ok=True)
    added, kept = [], []
    for name, parts in exercise_files().items():
        target = workspace / name
        if target.exists():
            kept.append(name)
        else:
            target.write_text(stub_text(parts), encoding="utf-8")
            added.append(name)
    if not quiet or added:
        for name in added:
            print(f"  added  {relative(workspace / name)}")
    return added, kept


def backup(workspace, name):
    source = workspace / name
    if not source.exists():
        return None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = workspace / BACKUP_FOLDER / f"{name}.{stamp}"
    counter = 1
    while target.exists():
        counter += 1
        target = workspace / BACKUP_FOLDER / f"{name}.{stamp}-{counter}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return target


def command_init(args):
    workspace = args.workspace
    existed = workspace.exists()
    files = exercise_files()
    if args.solutions:  # for the grader's own tests: a workspace where everything is solved
        workspace.mkdir(parents=True, exist_ok=True)
        for name, parts in files.items():
            write_if_changed(workspace / name, solution_text(parts))
        print(f"Wrote the reference solutions into {relative(workspace)}/")
        return 0
    added, kept = add_missing_stubs(workspace)
    for name in kept:
        print(f"  kept   {relative(workspace / name)} (yours; `tools/learn reset` puts back a stub)")
    print(f"{'Updated' if existed else 'Created'} {relative(workspace)}/: {len(added)} file(s) added, "
          f"{len(kept)} kept.")
    if not kept:
        print("Next: tools/learn grade     (every chapter starts at 0 points)")
    return 0


def command_reset(args):
    workspace = args.workspace
    files = exercise_files()
    target = args.exercise
    if target in files:
        saved = backup(workspace, target)
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / target).write_text(stub_text(files[target]), encoding="utf-8")
        print(f"Reset {relative(workspace / target)} to its stubs."
              + (f" Your version is saved as {relative(saved)}." if saved else ""))
        return 0
    by_name = {exercise.name: exercise for exercise in exercises()}
    if target not in by_name:
        raise LearnError(f"no exercise named \"{target}\". Exercises: {', '.join(by_name)}; "
                         f"or name a whole file: {', '.join(files)}")
    exercise = by_name[target]
    path = workspace / exercise.file
    if not path.exists():
        add_missing_stubs(workspace)
        print(f"Reset {target}: {relative(path)} was missing and now holds the stubs.")
        return 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    region = find_exercise_region(lines, target)
    if not region:
        raise LearnError(f"{relative(path)} no longer has the markers \"// BEGIN EXERCISE {target}\" ... "
                         f"\"// END EXERCISE\". Reset the whole file instead: tools/learn reset {exercise.file}")
    saved = backup(workspace, exercise.file)
    first, last = region
    lines[first:last + 1] = exercise.stub_lines()
    path.write_text("".join(lines), encoding="utf-8")
    print(f"Reset {target} in {relative(path)} to its stub; the rest of the file is unchanged. "
          f"Your version is saved as {relative(saved)}.")
    return 0


def exercise_state(workspace, exercise):
    path = workspace / exercise.file
    if not path.exists():
        return "missing"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    region = find_exercise_region(lines, exercise.name)
    if not region:
        return "edited"
    return "stub" if lines[region[0]:region[1] + 1] == exercise.stub_lines() else "edited"


# --------------------------------------------------------------------------------------
# Building against the workspace


def run_quietly(command, **kwargs):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", **kwargs)


def first_errors(output, limit=25):
    """The compiler's (or CMake's) first errors, with their context lines, paths made relative."""
    lines = output.replace(str(ROOT) + "/", "").splitlines()
    picked = []
    for index, line in enumerate(lines):
        if re.search(r"(: error:|: fatal error:|undefined reference|CMake Error|No rule to make target)", line):
            picked.append(line)
            for follow in lines[index + 1:index + 8]:
                if not re.match(r"^(\s|\d+\s*\|)", follow) or "***" in follow:
                    break
                picked.append(follow)
        if len(picked) >= limit:
            break
    return "\n".join((picked or [line for line in lines if "***" not in line][-limit:])[:limit])


class BuildFailed(Exception):
    def __init__(self, summary, output):
        super().__init__(summary)
        self.summary = summary
        self.output = output


# Optimized, so that the experiments in the tests run in well under a second, but with
# assert() still on for learners who use it.
GRADE_SETTINGS = {"BOOK_DOCS": "OFF", "BOOK_WERROR": "ON", "CMAKE_BUILD_TYPE": "Release",
                  "CMAKE_CXX_FLAGS_RELEASE": "-O2"}


def configure(sources, build, first_time="the first build compiles the tests, which takes about a minute"):
    """Configure a build of the library from `sources` once; CMake notices later changes itself."""
    wanted = dict(GRADE_SETTINGS, BOOK_WORKSPACE=str(sources.resolve()))
    cache = build / "CMakeCache.txt"
    if cache.exists():
        configured = dict(re.findall(r"^(\w+):\w+=(.*)$", cache.read_text(encoding="utf-8", errors="replace"), re.M))
        if all(configured.get(name) == value for name, value in wanted.items()):
            return
    print(f"Configuring {relative(build)} (once; {first_time})...", flush=True)
    # Ninja, where installed, checks an unchanged build in milliseconds where make takes
    # a second or two; a build folder keeps its generator.
    generator = ["-G", "Ninja"] if not cache.exists() and shutil.which("ninja") else []
    result = run_quietly(["cmake", "-S", str(ROOT), "-B", str(build), *generator,
                          *(f"-D{name}={value}" for name, value in wanted.items())])
    if result.returncode != 0:
        raise BuildFailed("CMake could not configure the build", result.stdout)


def copy_sources(workspace, sources, stubbed=()):
    """The workspace as the build sees it: the files in `stubbed` as their stubs, the others as
    the learner wrote them. Only changed files are written, so only they are rebuilt."""
    for name, parts in exercise_files().items():
        text = stub_text(parts) if name in stubbed else (workspace / name).read_text(encoding="utf-8")
        write_if_changed(sources / name, text)


def build_workspace(workspace, build, targets, jobs, sources=None):
    """Build `targets` from the workspace. A file that does not compile is built as its stubs
    instead, so that it fails only the checks that need it. Returns (the files that did not
    compile, the compiler's errors with the learner's paths); raises BuildFailed if even
    that does not build."""
    sources = sources or build / "sources"
    broken, errors = [], ""
    while True:
        copy_sources(workspace, sources, broken)
        configure(sources, build)
        result = run_quietly(["cmake", "--build", str(build), "--parallel", str(jobs), "--target", *targets])
        output = result.stdout.replace(str(sources.resolve()) + "/", relative(workspace) + "/")
        if result.returncode == 0:
            return broken, errors
        errors = errors or first_errors(output)
        failed = set(re.findall(re.escape(relative(workspace)) + r"/([\w.-]+\.cpp):\d+:(?:\d+:)? (?:fatal )?error",
                                output)) - set(broken)
        if not failed:
            raise BuildFailed("the build failed", errors if broken else first_errors(output))
        broken += sorted(failed)


# --------------------------------------------------------------------------------------
# Running the checks: CTest runs each Catch2 test case in a process of its own, with a
# time limit; Catch2 writes an XML report for each (catch_discover_tests REPORTER xml in
# the root CMakeLists.txt, in BOOK_WORKSPACE mode), and the grader reads the reports.

# A test case of a chapter file that checks the book's support code (random numbers, the
# experiment's statistics) rather than a step the learner writes is tagged [support]: it
# runs in CTest like any other, but the grader gives it no points.
UNGRADED_TAG = "[support]"
SLOW = 2.0  # seconds after which a running check is named, so that a hang is never silent
SLOW_TAG, SLOW_FACTOR = "[slow]", 4  # a check tagged [slow] may run 4 times as long as the others


def list_cases(executable, spec=""):
    """The names of the graded test cases (those matching a Catch2 test spec such as "[slow]"),
    in the order the file declares them."""
    result = run_quietly([str(executable), f"~{UNGRADED_TAG}{spec}", "--list-test-names-only"], timeout=60)
    if result.returncode < 0:
        raise BuildFailed(f"{executable.name} crashed while listing its tests", result.stdout[-2000:])
    return [line for line in result.stdout.splitlines() if line.strip()]


def report_paths(build):
    """{(test file stem, case name): (CTest test name, the path of the XML report its Catch2 run writes)}."""
    shown = run_quietly(["ctest", "--test-dir", str(build), "-N", "--show-only=json-v1"])
    paths = {}
    for test in json.loads(shown.stdout or "{}").get("tests", []):
        stem, _colon, case = test["name"].partition(":")  # catch_discover_tests' TEST_PREFIX "stem: "
        for argument in test.get("command") or []:
            if argument.startswith("--out "):
                paths[(stem, case.strip())] = (test["name"], Path(argument[len("--out "):]))
    return paths


def shown(test):
    """A CTest test name as the learner knows it: "chapter 2: Scores of the worked example"."""
    stem, _colon, case = test.partition(":")
    return f"chapter {int(stem[2:4])}: {case.strip()}" if re.match(r"ch\d\d_", stem) else test


def ctest_regex(tests):
    """A CTest regular expression that matches exactly these test names."""
    return "^(" + "|".join(re.sub(r"([][\\^$.*+?()|])", r"\\\1", test) for test in tests) + ")$"


def run_ctest(build, tests, timeout, jobs):
    """Run the named CTest tests; returns {CTest name: how it ended}, where "timeout" and
    "crashed" are what CTest saw, and prints progress while it runs."""
    if not tests:
        return {}
    command = ["ctest", "--test-dir", str(build), "-R", ctest_regex(tests), "--timeout", f"{timeout:g}",
               "-j", str(jobs)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] + [lines.put(None)],
                     daemon=True).start()
    names, running, ended, named = {}, {}, {}, set()
    while True:
        try:
            line = lines.get(timeout=0.25)
        except queue.Empty:
            line = ""
        if line is None:
            break
        started = re.match(r"^\s*Start\s+(\d+): (.*?)\s*$", line)
        finished = re.match(r"^\s*\d+/\d+ Test\s+#(\d+): ", line)
        if started:
            names[started[1]] = started[2]
            running[started[1]] = time.monotonic()
        elif finished:
            running.pop(finished[1], None)
            name = names.get(finished[1], "")
            ended[name] = "timeout" if "Timeout" in line else "crashed" if re.search(r"Exception|aborted", line) \
                else "ran"
            if ended[name] == "timeout":
                print(f"  stopped after {timeout:g} s (an endless loop?): {shown(name)}", flush=True)
        for number, since in running.items():  # with a long time limit, a hang is named before it ends
            if timeout > 2 * SLOW and number not in named and time.monotonic() - since > SLOW:
                named.add(number)
                print(f"  still running after {SLOW:g} s (stops at {timeout:g} s): {shown(names[number])}", flush=True)
    process.wait()
    return ended


def read_report(path):
    """The root of Catch2's XML report, even when a crash cut the file short."""
    try:
        data = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parser = ElementTree.XMLPullParser(events=("start",))
    root = None
    try:
        parser.feed(data)
    except ElementTree.ParseError:
        pass
    try:
        for _event, element in parser.read_events():
            root = element if root is None else root
    except ElementTree.ParseError:
        pass
    return root


def number(text, digits=6):
    """Catch2 prints doubles with 17 digits; show them as a person would write them."""
    try:
        value = float(text.strip())
    except ValueError:
        return text.strip()
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "inf", "-inf": "-inf"}[str(value)]
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{digits}g}"


def numbers(expected, got):
    """Both numbers with as few digits as it takes to tell them apart."""
    for digits in (6, 9, 12, 17):
        shown = number(expected, digits), number(got, digits)
        if shown[0] != shown[1]:
            break
    return shown


def matrix_block(text):
    """A matrix as Catch2 shows it (tests/catch_matrix.hpp: its shape, then its rows), indented
    under the hint; any other value as it is."""
    lines = text.strip("\n").splitlines()
    return lines[0] if len(lines) < 2 else lines[0] + "".join(f"\n          {line}" for line in lines[1:])


# Catch2's words for its string matchers, as the rest of a sentence "expected ... to ...".
MATCHER_WORDS = [("contains: ", "contain "), ("equals: ", "equal "), ("starts with: ", "start with "),
                 ("ends with: ", "end with "), ("matches ", "match ")]


def matcher_sentence(description):
    """'( contains: "a" and contains: "b" )' as 'contain "a" and "b"'."""
    text = re.sub(r"\(\s+|\s+\)", "", description).strip()
    for word, verb in MATCHER_WORDS:
        first = text.find(word)
        if first >= 0:  # the verb once, then only what follows each repeat: contain "a" and "b"
            text = text[:first] + verb + text[first + len(word):].replace(word, "")
    return text


def comparison_sentence(original, expanded, why):
    """'x < y' that failed with '0.73 < 1e-07' as 'x: expected below 1e-07, got 0.73'."""
    negated = original.startswith("!(") and expanded.startswith("!(")
    if negated:  # CHECK_FALSE(x > y)
        original, expanded = original[2:-1], expanded[2:-1]
    found = re.fullmatch(r"(.+?)\s(<=|>=|<|>|!=)\s(.+)", expanded, re.S)
    if not found:
        return None
    got, operator, bound = found.groups()
    subject = re.split(r"\s(?:<=|>=|<|>|!=)\s", original, maxsplit=1)[0]
    if negated:
        operator = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "!=": "=="}[operator]
    wording = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "!=": "anything but",
               "==": "exactly"}[operator]
    if "\n" in got or "\n" in bound:
        return f"{subject}: expected {wording} {matrix_block(bound)}\n        got {matrix_block(got)}" + \
            (f"\n        {why.strip()}" if why else "")
    bound, got = numbers(bound, got)
    return f"{subject}: expected {wording} {bound}, got {got}{why}"


def describe_failure(element, infos):
    """One sentence for a failed check: what was checked, what was expected, what came out, why.
    The last INFO message in scope says why, in the chapter's own words (an INFO stays in
    scope until its block ends, so the earlier ones are about earlier checks)."""
    why = f" ({infos[-1]})" if infos else ""
    original = (element.findtext("Original") or "").strip()
    expanded = (element.findtext("Expanded") or "").strip()
    inner = element.find("Exception")
    if inner is None:
        inner = element.find("FatalErrorCondition")
    if element.tag in ("Exception", "Failure", "FatalErrorCondition"):
        inner = element
    if inner is not None:
        text = (inner.text or "").strip()
        what = "crashed" if inner.tag == "FatalErrorCondition" else "threw"
        macro = element.get("type", "")
        if "THROWS" in macro and inner.tag == "Exception":  # CHECK_THROWS_AS(call, Type), CHECK_NOTHROW(call)
            call, _comma, wanted = original.rpartition(", ") if "THROWS_AS" in macro else (original, "", "")
            wanted = "not throw" if "NOTHROW" in macro else f"throw {wanted}" if wanted else "throw another error"
            return f"{call}: expected to {wanted}{why}, but it threw \"{text}\""
        if text.startswith("matrix index ("):  # sa::Matrix's own message, from a step the test does not wrap
            text += " (a row and a column index swapped, e.g. a missing transpose, or a loop bound from the wrong size)"
        where = f"{original}: " if original and not original.startswith("{Unknown") else ""
        return f"{where}{what} \"{text}\"{why}" if what == "threw" else f"{where}crashed: {text}{why}"
    macro = element.get("type", "")
    actual = re.split(r",\s*(?=\w+\()", original, maxsplit=1)[0] if "THAT" in macro else original
    within = re.fullmatch(r"(.*) is within (.*) of (.*)", expanded)
    relative_match = re.fullmatch(r"(.*) and (.*) are within (.*) of each other", expanded)
    equal = re.fullmatch(r"(.+?)\s==\s(.+)", expanded, re.S) if "==" in original else None
    if within or relative_match or equal:
        got, wanted = (within or relative_match or equal).group(1), (within[3] if within else (
            relative_match or equal).group(2))
        actual = re.sub(r"\s*==.*$", "", actual)
        if "\n" in got or "\n" in wanted:  # matrices: one row per line, as the book prints them
            return f"{actual}: expected {matrix_block(wanted)}\n        got {matrix_block(got)}" + \
                (f"\n        {why.strip()}" if why else "")
        wanted, got = numbers(wanted, got)
        return f"{actual}: expected {wanted}, got {got}{why}"
    matcher = re.fullmatch(r'(".*"|.+?) (\( .* \)|(?:not )?(?:contains: |equals: |starts with: |ends with: |matches ).*)',
                           expanded, re.S)
    if matcher and ("THAT" in macro or "THROWS_WITH" in macro):
        value, description = matcher.groups()
        subject = re.split(r",\s*(?=(?:Catch::Matchers::)?\w+\(|!)", original, maxsplit=1)[0]
        what = "its error message" if "THROWS" in macro else "it"
        return f"{subject}: expected {what} to {matcher_sentence(description)}, but it was {value}{why}"
    if "THROWS" in macro:
        call = re.split(r",\s*(?=(?:Catch::Matchers::)?\w+\(|!)", original, maxsplit=1)[0]
        return f"{call}: expected to throw{why}, but it did not" if expanded in ("", original) else \
            f"{original}: failed, with {expanded}{why}"
    compared = comparison_sentence(original, expanded, why)
    if compared:
        return compared
    if expanded in ("false", "!true") and original:
        return f"{original}: expected it to hold, but it did not{why}"
    return f"{original}: failed{why}" + (f", with {expanded}" if expanded and expanded != original else "")


def first_failure(test_case):
    """(hint, the exercise whose stub it reached or "") for the first failure in a <TestCase>, or None."""
    infos, failures = [], []

    def walk(element):
        for child in element:
            if child.tag == "Info":
                infos.append((child.text or "").strip())
            elif child.tag == "Section":
                walk(child)
            elif child.tag in ("Expression", "Exception", "Failure", "FatalErrorCondition"):
                if child.tag != "Expression" or child.get("success") == "false":
                    failures.append((child, list(infos)))
                infos.clear()

    walk(test_case)
    if not failures:
        return None
    texts = [" ".join(element.itertext()) for element, _infos in failures]
    stub = re.search(re.escape(NOT_IMPLEMENTED) + r" (\w+)[^\n]*", texts[0])
    if stub and all(NOT_IMPLEMENTED in text for text in texts):
        return stub[0].strip(), stub[1]
    return describe_failure(*failures[0]), ""


@dataclass
class Check:
    name: str
    passed: bool = False
    hint: str = ""
    stub: str = ""  # the exercise whose stub it reached ("not implemented yet")


def grade_check(name, report, ended, timeout):
    check = Check(name)
    if ended == "timeout":
        check.hint = f"did not finish within {timeout:g} s (an endless loop?)"
        return check
    root = read_report(report) if report else None
    test_case = root.find(".//TestCase") if root is not None else None
    overall = test_case.find("OverallResult") if test_case is not None else None
    if overall is not None and overall.get("success") == "true" and ended == "ran":
        check.passed = True
        return check
    failure = first_failure(test_case) if test_case is not None else None
    check.hint, check.stub = failure or ("crashed" if ended == "crashed" else "did not run (no report)", "")
    if ended == "crashed" and "crashed" not in check.hint:
        check.hint, check.stub = f"{check.hint}; then the process crashed", ""
    return check


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


def grade_once(args):
    workspace, build = args.workspace.resolve(), args.build.resolve()
    if not workspace.exists():
        raise LearnError("there is no workspace yet. Create it with: tools/learn init")
    add_missing_stubs(workspace, quiet=True)
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
        print(f"\n{', '.join(broken)} does not compile, so its stubs stand in for it: the chapters that need it fail, "
              f"the others are graded. The first errors:\n\n{errors}\n")
    built = time.monotonic()
    results = [ChapterResult(chapter) for chapter in graded]
    names = {result.chapter.tests: list_cases(build / "bin" / f"test_{result.chapter.tests}") for result in results}
    reports = report_paths(build)
    for _test, path in reports.values():
        path.unlink(missing_ok=True)
    print(f"Running {sum(map(len, names.values()))} checks (each stops after {args.timeout:g} s)...", flush=True)
    # A check tagged [slow] (an experiment of many random draws) gets a longer time limit.
    slow = {reports.get((stem, name), ("",))[0] for stem in names
            for name in list_cases(build / "bin" / f"test_{stem}", SLOW_TAG)}
    chosen = {reports.get((stem, name), ("",))[0] for stem in names for name in names[stem]} - slow - {""}
    ended = run_ctest(build, sorted(slow - {""}), args.timeout * SLOW_FACTOR, args.jobs)
    ended.update(run_ctest(build, sorted(chosen), args.timeout, args.jobs))
    broken_stubs = {exercise.name: exercise.file for exercise in exercises() if exercise.file in broken}
    for result in results:
        for name in names[result.chapter.tests]:
            test, report = reports.get((result.chapter.tests, name), ("", None))
            check = grade_check(name, report, ended.get(test, "not run"),
                                args.timeout * (SLOW_FACTOR if test in slow else 1))
            if check.stub in broken_stubs:
                check.hint = f"does not build: {relative(workspace / broken_stubs[check.stub])} has errors (above)"
            result.checks.append(check)
    save_results(build, results)
    print()
    print_table(results, args)
    if args.verbose:
        print(f"(built in {built - started:.1f} s, ran the checks in {time.monotonic() - built:.1f} s)")
    return 0 if all(result.status == "passed" for result in results) else 1


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
        for exercise, body in (part for part in parts if isinstance(part, tuple)):
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
        used = sorted(chapters_used(chapter) & unfinished) if result.status == "failing" else []
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


# --------------------------------------------------------------------------------------
# Running a chapter program against the workspace


def find_chapter(text):
    match = re.fullmatch(r"(?:ch)?0*(\d+)(?:[-_].*)?", text)
    found = chapters().get(int(match[1])) if match else None
    if found and found.folder:
        return found
    names = ", ".join(chapter.program for chapter in chapters().values() if chapter.folder)
    raise LearnError(f"no chapter program \"{text}\". Programs: {names}")


def borrow_solutions(workspace, target):
    """Copy the workspace into target, with each exercise that is still a stub replaced by
    the book's solution, so a chapter program runs the learner's steps and the book's for
    the ones not written yet. Returns the names of the exercises that use the book's version."""
    borrowed = []
    for name, parts in exercise_files().items():
        lines = (workspace / name).read_text(encoding="utf-8").splitlines(keepends=True)
        for exercise, body in (part for part in parts if isinstance(part, tuple)):
            region = find_exercise_region(lines, exercise.name)
            if region and lines[region[0]:region[1] + 1] == exercise.stub_lines():
                lines[region[0]:region[1] + 1] = [lines[region[0]], *body, lines[region[1]]]
                borrowed.append(exercise.name)
        write_if_changed(target / name, "".join(lines))
    order = [exercise.name for exercise in exercises()]
    return sorted(borrowed, key=order.index)


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
    add_missing_stubs(workspace, quiet=True)
    chapter = find_chapter(args.program)
    build = args.build.resolve().parent / "run"  # a build of its own: grading must see the stubs as they are
    borrowed = borrow_solutions(workspace, build / "borrowed")
    try:
        configure(build / "borrowed", build, first_time="the first build compiles the library")
        result = run_quietly(["cmake", "--build", str(build), "--parallel", str(args.jobs), "--target", chapter.program])
        if result.returncode != 0:
            raise BuildFailed("the build failed", first_errors(
                result.stdout.replace(str(build / "borrowed") + "/", relative(workspace) + "/")))
    except BuildFailed as failure:
        print(f"Your code does not build yet ({failure.summary}). The first errors:\n\n{failure.output}")
        return 1
    extra = args.arguments[1:] if args.arguments[:1] == ["--"] else list(args.arguments)
    print(f"$ {chapter.program} {shlex.join(extra)}".rstrip() + "   (built from your workspace)", flush=True)
    if borrowed:
        print(f"(not written yet, so the book's version runs instead: {', '.join(borrowed)})", flush=True)
    result = subprocess.run([str(build / "bin" / chapter.program), *extra], stdout=subprocess.PIPE, text=True,
                            errors="replace")
    sys.stdout.write(result.stdout)
    if result.returncode < 0:
        print(f"{chapter.program} crashed ({signal.Signals(-result.returncode).name})")
        return 1
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


# --------------------------------------------------------------------------------------
# Points: one per test case; the table in docs/how-to-use.rst is generated from the tests


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


# --------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tools/learn",
        description="Work through the book's exercises: implement each step in your workspace and let "
                    "the tests grade it.")
    parser.add_argument("--workspace", type=Path, default=DEFAULT_WORKSPACE,
                        help="your workspace folder (default: workspace/)")
    parser.add_argument("--build", type=Path, default=DEFAULT_GRADE_BUILD,
                        help="the build folder for grading (default: build/grade/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel jobs (default: all cores)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = commands.add_parser("init", help="create the workspace, or add the files it lacks; keeps yours")
    init.add_argument("--solutions", action="store_true",
                      help="write the reference solutions instead of stubs (for testing the grader)")
    init.set_defaults(handler=command_init)

    reset = commands.add_parser("reset", help="put one exercise (a function, or a whole file) back to its stub")
    reset.add_argument("exercise", help="a function such as scores, or a file such as masking.cpp")
    reset.set_defaults(handler=command_reset)

    grade = commands.add_parser("grade", help="build your library, run every chapter's checks, print the table")
    grade.add_argument("--watch", action="store_true", help="grade again every time you save a file")
    grade.add_argument("--chapter", type=int, action="append", metavar="N",
                       help="grade only chapter N (repeatable); one chapter shows every failing check")
    grade.add_argument("--all", action="store_true", help="show every failing check with its hint, not only the first")
    grade.add_argument("--timeout", type=float, default=3.0, help="seconds one check may run (default: 3)")
    grade.add_argument("--verbose", action="store_true", help="also print how long building and checking took")
    grade.set_defaults(handler=command_grade)

    run = commands.add_parser("run", help="build a chapter program against your workspace and run it, and show "
                                          "where its output differs from the book's (steps still stubs use the "
                                          "book's version)")
    run.add_argument("program", help="the chapter: 2, ch02 or ch02-scores")
    run.add_argument("arguments", nargs=argparse.REMAINDER, help="options for the program, e.g. --causal")
    run.set_defaults(handler=command_run)

    listing = commands.add_parser("list", help="list the exercises, their state, and every check with its points "
                                               "and its result in the last grade")
    listing.set_defaults(handler=command_list)

    points = commands.add_parser("points", help="print, check or write the book's points table")
    points.add_argument("--bin", type=Path, help="the folder of built test programs (default: <build>/bin)")
    mode = points.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if docs/how-to-use.rst differs from the tests")
    mode.add_argument("--write", action="store_true", help="write the table into docs/how-to-use.rst")
    points.set_defaults(handler=command_points)

    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `tools/learn list | head` ends quietly
    try:
        return args.handler(args)
    except LearnError as error:
        print(f"learn: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
