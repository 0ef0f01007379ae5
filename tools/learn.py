"""The book's exercises: a workspace of stubs, a grader with hints, a watch mode.

Every step function in src/ holds its reference solution between two markers:

    // BEGIN SOLUTION scores: chapter 2, Scores
    ...the reference code...
    // END SOLUTION

`init` copies each such file into workspace/ with every solution region replaced by a
stub that throws sa::NotImplemented("not implemented yet: scores, see chapter 2,
Scores"), so the stubs are generated from the reference and cannot drift from it.
`grade` builds the library from the workspace (CMake's BOOK_WORKSPACE mode, in a build
folder of its own, so only what changed is rebuilt), runs every Catch2 test case in a
process of its own (a crash or an endless loop fails that check and nothing else) and
prints one row per chapter with points, a status and a hint for the first failing check.

Run it as tools/learn COMMAND; tools/learn --help lists the commands.
"""
import argparse
import concurrent.futures
import datetime
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
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
                if re.match(r"^(\s|\d+\s*\|)", follow) and "***" not in follow:
                    picked.append(follow)
                else:
                    break
        if len(picked) >= limit:
            break
    if not picked:
        picked = [line for line in lines if "***" not in line][-limit:]
    return "\n".join(picked[:limit])


# Optimized, so that the experiments in the tests run in about a second, but with
# assert() still on for learners who use it.
GRADE_SETTINGS = {"BOOK_DOCS": "OFF", "BOOK_WERROR": "ON", "CMAKE_BUILD_TYPE": "Release",
                  "CMAKE_CXX_FLAGS_RELEASE": "-O2"}


def configure(workspace, build, first_time="the first build compiles the tests, which takes a few minutes"):
    """Configure the grading build once; CMake itself notices later changes to the sources."""
    workspace = workspace.resolve()
    wanted = dict(GRADE_SETTINGS, BOOK_WORKSPACE=str(workspace))
    cache = build / "CMakeCache.txt"
    if cache.exists():
        text = cache.read_text(encoding="utf-8", errors="replace")
        configured = dict(re.findall(r"^(\w+):\w+=(.*)$", text, re.M))
        if all(configured.get(name) == value for name, value in wanted.items()):
            return
    print(f"Configuring {relative(build)} for {relative(workspace)} (once; {first_time})...", flush=True)
    # Ninja (Debian's ninja-build), where installed, checks an unchanged build in
    # milliseconds where make takes a second or two; a build folder keeps its generator.
    generator = ["-G", "Ninja"] if not cache.exists() and shutil.which("ninja") else []
    result = run_quietly(["cmake", "-S", str(ROOT), "-B", str(build), *generator,
                          *(f"-D{name}={value}" for name, value in wanted.items())])
    if result.returncode != 0:
        raise BuildFailed("CMake could not configure the build", first_errors(result.stdout))


class BuildFailed(Exception):
    def __init__(self, summary, details):
        super().__init__(summary)
        self.summary = summary
        self.details = details


def build_targets(build, targets, jobs):
    command = ["cmake", "--build", str(build), "--parallel", str(jobs), "--target", *targets]
    result = run_quietly(command)
    if result.returncode != 0:
        raise BuildFailed("the build failed", first_errors(result.stdout))


# --------------------------------------------------------------------------------------
# Running the checks


def catch_escape(name):
    """A test case name as a Catch2 test spec that matches exactly that name."""
    return "".join("\\" + ch if ch in '\\,[]"~*' else ch for ch in name)


def signal_name(code):
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


# A test case of a chapter file that checks the book's support code (random numbers, the
# experiment's statistics) rather than a step the learner writes is tagged [support]: it
# runs in CTest like any other, but the grader gives it no points.
UNGRADED_TAG = "[support]"


def list_cases(executable):
    """The names of the graded test cases, in the order the file declares them."""
    result = run_quietly([str(executable), "~" + UNGRADED_TAG, "--list-test-names-only"], timeout=60)
    if result.returncode < 0:
        raise BuildFailed(f"{executable.name} crashed while listing its tests", result.stdout[-2000:])
    return [line for line in result.stdout.splitlines() if line.strip()]


@dataclass
class Check:
    name: str
    passed: bool = False
    not_implemented: bool = False
    hint: str = ""


def number(text, digits=6):
    """Catch2 prints doubles with 17 digits; show them as a person would write them."""
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        return text
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


def top_level_split(text):
    """Split "a(1, 2), Matcher(x, y)" at its first comma outside brackets."""
    depth = 0
    quoted = False
    for index, ch in enumerate(text):
        if ch == '"' and (index == 0 or text[index - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "([{<":
            depth += 1
        elif not quoted and ch in ")]}>" and depth:
            depth -= 1
        elif not quoted and ch == "," and depth == 0:
            return text[:index].strip(), text[index + 1:].strip()
    return text.strip(), ""


def describe_failure(element, infos):
    """One sentence for a failed <Expression>, <Exception>, <Failure> or <FatalErrorCondition>."""
    # INFO messages stay in scope until their block ends; the last one is about this check.
    why = f" ({infos[-1]})" if infos else ""
    tag = element.tag
    if tag == "FatalErrorCondition":
        return f"crashed: {(element.text or '').strip()}{why}"
    if tag in ("Exception", "Failure"):
        return f"threw an exception: {(element.text or '').strip()}{why}"
    macro = element.get("type", "")
    original = (element.findtext("Original") or "").strip()
    expanded = (element.findtext("Expanded") or "").strip()
    exception = element.find("Exception")
    fatal = element.find("FatalErrorCondition")
    if fatal is not None:
        where = "" if original.startswith("{Unknown") else f" in {original}"
        return f"crashed{where}: {(fatal.text or '').strip()}{why}"
    if "THROWS" in macro:
        call, expected = top_level_split(original)
        if exception is not None:
            got = f"it threw \"{(exception.text or '').strip()}\""
        elif "THROWS_WITH" in macro:
            got = f"got {expanded}"
        else:
            got = "it did not throw"
        wanted = f"throw {expected}" if "THROWS_AS" in macro else (
            f"throw an error matching {expected}" if expected else "throw")
        if "NOTHROW" in macro:
            wanted, got = "not throw", f"it threw \"{(exception.text or '').strip()}\"" if exception is not None else got
        return f"{call}: expected to {wanted}{why}, but {got}"
    if exception is not None:
        return f"{original}: threw an exception: {(exception.text or '').strip()}{why}"
    if "THAT" in macro:
        actual, _matcher = top_level_split(original)
        within = re.fullmatch(r"(.*) is within (.*) of (.*)", expanded)
        relative_match = re.fullmatch(r"(.*) and (.*) are within (.*) of each other", expanded)
        if within or relative_match:
            expected, got = numbers(within.group(3), within.group(1)) if within else numbers(
                relative_match.group(2), relative_match.group(1))
            return f"{actual}: expected {expected}{why}, got {got}"
        return f"{actual}: expected it to match {_matcher}{why}, got {expanded}"
    compared = re.fullmatch(r"(.+?) == (.+)", original)
    values = re.fullmatch(r"(.+?) == (.+)", expanded)
    if compared and values:
        expected, got = numbers(values.group(2), values.group(1))
        return f"{compared.group(1)}: expected {expected}{why}, got {got}"
    if expanded and expanded != original:
        return f"{original}: failed, with {expanded}{why}"
    return f"{original}: failed{why}"


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
        for _event, element in parser.read_events():
            if root is None:
                root = element
    except ElementTree.ParseError:
        pass
    if root is None:
        try:
            for _event, element in parser.read_events():
                root = element
                break
        except ElementTree.ParseError:
            pass
    return root


def first_failure(test_case):
    """(description, is_not_implemented) of the first failure in a <TestCase>, or None."""
    infos = []
    failures = []

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
    texts = []
    for element, _infos in failures:
        texts.append(" ".join(element.itertext()))
    not_implemented = all(NOT_IMPLEMENTED in text for text in texts)
    element, element_infos = failures[0]
    if not_implemented:
        message = next(line.strip() for line in texts[0].splitlines() if NOT_IMPLEMENTED in line)
        message = message[message.index(NOT_IMPLEMENTED):]
        return message, True
    return describe_failure(element, element_infos), False


def run_case(executable, index, name, timeout, scratch):
    """Run one test case in its own process and grade it from Catch2's XML report."""
    report = Path(scratch) / f"{executable.name}-{index}.xml"
    command = [str(executable), catch_escape(name), "-r", "xml", "-o", str(report)]
    check = Check(name)
    try:
        # What the learner's code prints is dropped: an endless loop that prints must
        # not fill the memory before its time is up.
        result = subprocess.run(command, timeout=timeout, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        check.hint = f"did not finish within {number(str(timeout))} s (an endless loop?)"
        return check
    root = read_report(report)
    test_case = root.find(".//TestCase") if root is not None else None
    try:
        failure = first_failure(test_case) if test_case is not None else None
    except Exception as error:  # a report this grader cannot read must not stop the grading
        failure = (f"failed (the grader could not read the report: {error!r})", False)
    overall = test_case.find("OverallResult") if test_case is not None else None
    if result.returncode == 0 and overall is not None and overall.get("success") == "true":
        check.passed = True
        return check
    if failure:
        check.hint, check.not_implemented = failure
        if result.returncode < 0 and "crashed" not in check.hint:
            check.hint += f"; then the process crashed ({signal_name(-result.returncode)})"
            check.not_implemented = False
        return check
    if result.returncode < 0:
        check.hint = f"crashed ({signal_name(-result.returncode)})"
    elif test_case is None:
        check.hint = f"the test did not run (exit status {result.returncode}, no report)"
    else:
        check.hint = f"failed (exit status {result.returncode})"
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
    def status(self):
        if self.error:
            return "failing"
        if self.checks and all(check.passed for check in self.checks):
            return "passed"
        failed = [check for check in self.checks if not check.passed]
        if self.points == 0 and failed and all(check.not_implemented for check in failed):
            return "not started"
        return "failing" if self.checks else "no checks"


def test_executable(build, chapter):
    return build / "bin" / f"test_{chapter.tests}"


def grade_once(args):
    workspace, build = args.workspace.resolve(), args.build.resolve()
    if not workspace.exists():
        raise LearnError(f"there is no workspace yet. Create it with: tools/learn init")
    add_missing_stubs(workspace, quiet=True)
    graded = graded_chapters(args.chapter)
    started = time.monotonic()
    try:
        configure(workspace, build)
        build_targets(build, [f"test_{chapter.tests}" for chapter in graded], args.jobs)
    except BuildFailed as failure:
        print(f"Your code does not build yet ({failure.summary}). The compiler's first errors:\n")
        print(failure.details)
        print()
        results = [ChapterResult(chapter, error="does not build") for chapter in graded]
        for result in results:
            try:  # the checks of the last build that worked, to show the points possible
                names = list_cases(test_executable(build, result.chapter))
            except (BuildFailed, OSError, subprocess.TimeoutExpired):
                continue
            result.checks = [Check(name, hint="does not build") for name in names]
        print_table(results, build_failed=True)
        return 1
    built = time.monotonic()

    results = [ChapterResult(chapter) for chapter in graded]
    jobs = []
    with tempfile.TemporaryDirectory(prefix="learn-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in results:
            executable = test_executable(build, result.chapter)
            try:
                names = list_cases(executable)
            except (BuildFailed, OSError, subprocess.TimeoutExpired) as error:
                result.error = f"could not list the checks of {executable.name}: {error}"
                continue
            result.checks = [None] * len(names)
            for index, name in enumerate(names):
                jobs.append((result, index, pool.submit(run_case, executable, index, name, args.timeout, scratch)))
        for result, index, future in jobs:
            result.checks[index] = future.result()
    print_table(results)
    if args.verbose:
        print(f"(built in {built - started:.1f} s, ran the checks in {time.monotonic() - built:.1f} s)")
    passed = sum(result.points for result in results)
    total = sum(result.possible for result in results)
    return 0 if passed == total and not any(result.error for result in results) else 1


def calls(text, names, prefix=r"\b"):
    return {name for name in names if re.search(prefix + re.escape(name) + r"\s*\(", text)}


def chapters_used(chapter):
    """The chapters whose steps this chapter's tests call, directly or through another step."""
    steps = {exercise.name: exercise for exercise in exercises()}
    bodies = {}
    for parts in exercise_files().values():
        for part in parts:
            if isinstance(part, tuple):
                bodies[part[0].name] = "".join(part[1])
    tests = (TESTS / f"{chapter.tests}.cpp").read_text(encoding="utf-8", errors="replace")
    used, todo = set(), calls(tests, steps, prefix=r"\bsa::")  # the tests name the library's functions sa::f
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo |= calls(bodies.get(name, ""), steps) - used
    return {steps[name].chapter for name in used} - {chapter.number}


def print_table(results, build_failed=False):
    width = max([len(result.chapter.title) for result in results] + [5])
    print(f"{'Chapter':<{width + 4}}  {'Points':>7}  Status")
    unfinished = {result.chapter.number for result in results if result.status != "passed"}
    for result in results:
        chapter = result.chapter
        points = f"{result.points}/{result.possible}" if result.checks or not result.error else "0/?"
        print(f"{chapter.number:>2}  {chapter.title:<{width}}  {points:>7}  {result.status}")
        if result.error and not build_failed:
            print(f"      {result.error}")
        failing = [check for check in result.checks if check and not check.passed]
        if failing and not build_failed:
            first = failing[0]
            hint = first.hint
            if not first.not_implemented:
                hint = f"{hint.rstrip('.')}. Read {chapter.label}."
            print(f"      first failing check: {first.name}")
            print(f"      {hint}")
            used = sorted(chapters_used(chapter) & unfinished) if not first.not_implemented else []
            if used:
                earlier = f"chapter {used[0]}" if len(used) == 1 else \
                    f"chapters {', '.join(map(str, used[:-1]))} and {used[-1]}"
                print(f"      (these checks also use the steps of {earlier}, which {'does' if len(used) == 1 else 'do'} "
                      "not pass yet)")
    passed = sum(result.points for result in results)
    failed = sum(result.possible - result.points for result in results)
    total = sum(result.possible for result in results)
    if build_failed:
        print("Fix the first error above, save, and grade again.")
    else:
        print(f"Total: {passed}/{total} points")
    print(f"{passed} passed, {failed} failed")


def snapshot(workspace):
    state = {}
    for path in sorted(workspace.rglob("*")):
        if path.is_file() and BACKUP_FOLDER not in path.relative_to(workspace).parts:
            stat = path.stat()
            state[str(path)] = (stat.st_mtime_ns, stat.st_size)
    return state


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
            while True:
                time.sleep(0.5)
                now = snapshot(workspace) if workspace.exists() else {}
                if now != before:
                    changed = sorted(set(now.items()) ^ set(before.items()))
                    time.sleep(0.2)  # let the editor finish writing
                    names = sorted({Path(path).name for path, _ in changed})
                    stamp = datetime.datetime.now().strftime("%H:%M:%S")
                    print(f"\n--- {stamp}: {', '.join(names)} changed; grading again ---\n", flush=True)
                    break
    except KeyboardInterrupt:
        print()
        return 0


# --------------------------------------------------------------------------------------
# Running a chapter program against the workspace


def find_chapter(text):
    match = re.fullmatch(r"(?:ch)?0*(\d+)(?:[-_].*)?", text)
    if match:
        number = int(match.group(1))
        found = chapters().get(number)
        if found and found.folder:
            return found
    names = ", ".join(chapter.program for chapter in chapters().values() if chapter.folder)
    raise LearnError(f"no chapter program \"{text}\". Programs: {names}")


def run_sources(workspace, target):
    """Copy the workspace into target, with each exercise that is still a stub replaced by
    the book's solution, so a chapter program runs the learner's steps and the book's for
    the ones not written yet. Returns the names of the exercises that use the book's version."""
    borrowed = []
    for name, parts in exercise_files().items():
        lines = (workspace / name).read_text(encoding="utf-8").splitlines(keepends=True)
        for part in parts:
            if not isinstance(part, tuple):
                continue
            exercise, body = part
            region = find_exercise_region(lines, exercise.name)
            if region and lines[region[0]:region[1] + 1] == exercise.stub_lines():
                lines[region[0]:region[1] + 1] = [lines[region[0]], *body, lines[region[1]]]
                borrowed.append(exercise.name)
        write_if_changed(target / name, "".join(lines))
    order = [exercise.name for exercise in exercises()]
    return sorted(borrowed, key=order.index)


def command_run(args):
    workspace = args.workspace.resolve()
    if not workspace.exists():
        raise LearnError("there is no workspace yet. Create it with: tools/learn init")
    add_missing_stubs(workspace, quiet=True)
    chapter = find_chapter(args.program)
    # A build of its own: the grading build must see the stubs as they are.
    build = args.build.resolve().parent / "run"
    borrowed = run_sources(workspace, build / "sources")
    try:
        configure(build / "sources", build, first_time="the first build compiles the library")
        build_targets(build, [chapter.program], args.jobs)
    except BuildFailed as failure:
        print(f"Your code does not build yet ({failure.summary}). The compiler's first errors:\n")
        print(failure.details)
        return 1
    program = build / "bin" / chapter.program
    extra = list(args.arguments)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    print(f"$ {chapter.program} {shlex.join(extra)}".rstrip() + "   (built from your workspace)", flush=True)
    if borrowed:
        print(f"(not written yet, so the book's version runs instead: {', '.join(borrowed)})", flush=True)
    result = subprocess.run([str(program), *extra], stdout=subprocess.PIPE, text=True, errors="replace")
    sys.stdout.write(result.stdout)
    expected = CHAPTERS / chapter.folder / "output.txt"
    if not extra and expected.exists():
        book = expected.read_text(encoding="utf-8")
        if result.returncode == 0 and result.stdout == book:
            print(f"\nSame as the book's output ({relative(expected)}).")
        else:
            print(f"\nThe book prints ({relative(expected)}):\n")
            sys.stdout.write(book)
    if result.returncode < 0:
        print(f"{chapter.program} crashed ({signal_name(-result.returncode)})")
        return 1
    return result.returncode


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
    rows = []
    total = 0
    for chapter in graded_chapters():
        count = len(case_names(bin_folder, chapter))
        total += count
        rows.append((f"{chapter.number}\\. {chapter.title}", ", ".join(by_chapter.get(chapter.number, [])) or "(nothing new: the steps above)",
                     str(count)))
    rows.append(("Total", "", str(total)))
    lines = [POINTS_BEGIN + " (tools/learn points --write generates it; a test checks it)", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 40 40 20", "",
             "   * - Chapter", "     - You write", "     - Points"]
    for chapter, functions, points in rows:
        lines += [f"   * - {chapter}", f"     - {functions}" if functions else "     -", f"     - {points}"]
    lines += ["", POINTS_END]
    return "\n".join(lines) + "\n"


def command_points(args):
    bin_folder = args.bin.resolve() if args.bin else (args.build.resolve() / "bin")
    table = points_table(bin_folder)
    text = HOW_TO_USE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(POINTS_BEGIN) + r".*?" + re.escape(POINTS_END) + r"\n", re.S)
    if not pattern.search(text):
        raise LearnError(f"{relative(HOW_TO_USE)} has no \"{POINTS_BEGIN}\" ... \"{POINTS_END}\" block")
    updated = pattern.sub(lambda _match: table, text, count=1)
    if args.write:
        if write_if_changed(HOW_TO_USE, updated):
            print(f"Updated the points table in {relative(HOW_TO_USE)}.")
        else:
            print(f"The points table in {relative(HOW_TO_USE)} is up to date.")
        return 0
    if args.check:
        if updated != text:
            print(f"The points table in {relative(HOW_TO_USE)} does not match the tests. It should read:\n")
            print(table)
            print("Run: tools/learn points --write --bin <build>/bin")
            return 1
        print(f"The points table in {relative(HOW_TO_USE)} matches the tests.")
        return 0
    sys.stdout.write(table)
    return 0


# --------------------------------------------------------------------------------------
# Listing


def command_list(args):
    workspace = args.workspace.resolve()
    bin_folder = args.build.resolve() / "bin"
    by_chapter = {}
    for exercise in exercises():
        by_chapter.setdefault(exercise.chapter, []).append(exercise)
    for chapter in chapters().values():
        print(f"Chapter {chapter.number}, {chapter.title}")
        for exercise in by_chapter.get(chapter.number, []):
            state = exercise_state(workspace, exercise) if workspace.exists() else "no workspace yet"
            print(f"  exercise  {exercise.name:<14} in {relative(workspace / exercise.file):<28} {state}")
        if chapter.tests:
            executable = bin_folder / f"test_{chapter.tests}"
            if executable.exists():
                for name in list_cases(executable):
                    print(f"  1 point   {name}")
            else:
                print(f"  checks    in tests/{chapter.tests}.cpp (grade once to list them here)")
    return 0


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
    grade.add_argument("--chapter", type=int, action="append", metavar="N", help="grade only chapter N (repeatable)")
    grade.add_argument("--timeout", type=float, default=10.0, help="seconds one check may run (default: 10)")
    grade.add_argument("--verbose", action="store_true", help="also print how long building and checking took")
    grade.set_defaults(handler=command_grade)

    run = commands.add_parser("run", help="build a chapter program against your workspace and run it "
                                          "(steps still stubs use the book's version)")
    run.add_argument("program", help="the chapter: 2, ch02 or ch02-scores")
    run.add_argument("arguments", nargs=argparse.REMAINDER, help="options for the program, e.g. --causal")
    run.set_defaults(handler=command_run)

    listing = commands.add_parser("list", help="list the exercises, their state, and every check with its points")
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
