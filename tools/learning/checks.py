"""Running the checks: each chapter's test program first runs all its checks in one process;
those that pass there within the time limit stand. Every other check (one that failed, every
check of a run that crashed or ran out of time, and the slow ones) runs again alone: CTest runs
each Catch2 test case in a process of its own, with a time limit; Catch2 writes an XML report
for each (catch_discover_tests REPORTER xml in tools/learning/grading.cmake), and the grader
reads the reports and their hints."""
import concurrent.futures
import hashlib
import json
import os
import queue
import re
import subprocess
import threading
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from .book import run_quietly
from .build import BuildFailed
from .hints import first_failure


# A test case of a chapter file that checks the book's support code (random numbers, the
# experiment's statistics) rather than a step the learner writes is tagged [support]: it
# runs in CTest like any other, but the grader gives it no points.
UNGRADED_TAG = "[support]"
SLOW = 2.0  # seconds after which a running check is named, so that a hang is never silent
SLOW_TAG, SLOW_FACTOR = "[slow]", 4  # a check tagged [slow] may run 4 times as long as the others


CASE_LISTS = ".case-lists.json"  # next to the test programs: each one's cases, until it is linked again


def list_cases(executable, spec=""):
    """The names of the graded test cases (those matching a Catch2 test spec such as "[slow]"),
    in the order the file declares them. A test program that was not linked again since the
    last grade (a changed step relinks only the library) is not asked again."""
    stat = executable.stat()
    key, stamp = f"{executable.name} {spec}", [stat.st_mtime_ns, stat.st_size]
    cache_path = executable.parent / CASE_LISTS
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    if cache.get(key, {}).get("stamp") == stamp:
        return cache[key]["cases"]
    result = run_quietly([str(executable), f"~{UNGRADED_TAG}{spec}", "--list-test-names-only"], timeout=60)
    if result.returncode < 0:
        raise BuildFailed(f"{executable.name} crashed while listing its tests", result.stdout[-2000:])
    cases = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode >= 0:  # Catch2 exits with the number of cases it listed
        cache[key] = {"stamp": stamp, "cases": cases}
        cache_path.write_text(json.dumps(cache, ensure_ascii=False), encoding="utf-8")
    return cases


CTEST_LIST = ".ctest-list.json"  # in the build folder: CTest's list of the checks, until a file it reads changes


def ctest_inputs(build):
    """What `ctest -N` reads in this build folder: its CTestTestfile.cmake, those of the folders it names
    (subdirs) and every file they include (catch_discover_tests' lists of cases), each as [path, SHA-256
    of its bytes] ([path] where missing), by content, since CMake writes its test files again, unchanged,
    whenever it configures; with the build folder's own path, which the list's paths start with."""
    files, seen, pending = [], set(), [build / "CTestTestfile.cmake"]
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            data = path.read_bytes()
        except OSError:
            files.append([str(path)])
            continue
        files.append([str(path), hashlib.sha256(data).hexdigest()])
        text = data.decode("utf-8", errors="replace")
        for command, name in re.findall(r'\b(include|subdirs)\("([^"]+)"\)', text):
            pending.append(path.parent / name / "CTestTestfile.cmake" if command == "subdirs" else path.parent / name)
    return [str(build.resolve()), files]


def listed_tests(build):
    """The tests of `ctest -N --show-only=json-v1`, kept in CTEST_LIST with ctest_inputs() and used again
    while none of those files changed: a regrade that links no test program again asks CTest nothing."""
    key, cache_path = ctest_inputs(build), build / CTEST_LIST
    try:
        kept = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    if kept.get("key") == key:
        return kept["tests"]
    shown = run_quietly(["ctest", "--test-dir", str(build), "-N", "--show-only=json-v1"])
    tests = json.loads(shown.stdout or "{}").get("tests", [])
    if shown.returncode == 0:
        cache_path.write_text(json.dumps({"key": key, "tests": tests}, ensure_ascii=False), encoding="utf-8")
    return tests


def report_paths(build):
    """{(test file stem, case name): (CTest test name, the path of the XML report its Catch2 run writes)},
    and {test file stem: (the environment, the working folder)} that CTest runs its checks with."""
    paths, settings = {}, {}
    for test in listed_tests(build):
        stem, _colon, case = test["name"].partition(":")  # catch_discover_tests' TEST_PREFIX "stem: "
        for argument in test.get("command") or []:
            if argument.startswith("--out "):
                paths[(stem, case.strip())] = (test["name"], Path(argument[len("--out "):]))
        found = {item["name"]: item["value"] for item in test.get("properties") or []}
        settings[stem] = (found.get("ENVIRONMENT", []), found.get("WORKING_DIRECTORY", str(build)))
    return paths, settings


ONE_RUN = f"~{UNGRADED_TAG}~{SLOW_TAG}"  # the checks a test program runs in one process: graded, not slow


def passed_in_one_run(executable, stem, setting, timeout):
    """The checks of one test program that pass when it runs them all in one process (ONE_RUN), each
    within `timeout` seconds. None pass if the run crashed or took longer than `timeout` altogether:
    then every check runs alone, and says how it ended."""
    environment, folder = setting
    report = Path(folder) / "catch-reports" / f"{stem.replace(' ', '-')}-in-one-run.xml"
    report.unlink(missing_ok=True)
    try:
        result = subprocess.run([str(executable), ONE_RUN, "--reporter", "xml", "--out", str(report), "--durations",
                                 "yes", "--warn", "NoTests"], cwd=folder, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, timeout=timeout,
                                env=dict(os.environ, **dict(item.split("=", 1) for item in environment)))
        root = ElementTree.parse(report).getroot() if result.returncode >= 0 else None
    except (subprocess.TimeoutExpired, OSError, ElementTree.ParseError):
        root = None
    if root is None:
        print(f"  {shown(stem + ':').rstrip(': ')}: its checks crashed or did not finish within {timeout:g} s "
              "in one run; each runs alone", flush=True)
        return set()
    return {case.get("name") for case in root.iter("TestCase")
            if (overall := case.find("OverallResult")) is not None and overall.get("success") == "true"
            and float(overall.get("durationInSeconds", "inf")) <= timeout}


def run_in_one_process(build, programs, settings, timeout, jobs):
    """{stem: the checks that passed} for {stem: test program}, `jobs` programs at a time."""
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        runs = {stem: pool.submit(passed_in_one_run, program, stem, settings.get(stem, ([], str(build))), timeout)
                for stem, program in programs.items()}
        return {stem: run.result() for stem, run in runs.items()}


def shown(test):
    """A CTest test name as the learner knows it: "chapter 2: Scores of the worked example"."""
    stem, _colon, case = test.partition(":")
    together = re.match(r"(together )?ch(\d\d)_", stem)
    if not together:
        return test
    return f"{'together, ' if together[1] else ''}chapter {int(together[2])}: {case.strip()}"


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

