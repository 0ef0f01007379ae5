"""What every check of the browser check stands on: the state the two browsers share (Shared), and
the core of a browser's checker (CheckCore), which the checks' classes (page_checks.py,
panel_checks.py, explorer_numbers.py, explorer_checks.py, screenshots.py) build on. CheckCore
opens a page and waits for its math, images, panel, explorer and stepper; fails a page on a console
error or a request that leaves localhost (drain_logs); records a failure (fail) and where the time
went (timed, lap); notes what a page depended on, for the page cache (start_visit, end_visit); runs
the native programs that the panels and the explorer are compared with (native), once for both
browsers; and runs a pass in a Chromium of its own (in_browser).
"""
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tools/, for exercises.py
import exercises as exercise_markers  # noqa: E402  (the one reader of the exercise markers)
# The browser (browser_session.py, which also says what to install when selenium is missing).
from browser_session import browser_script, start_browser  # noqa: E402
from page_cache import PageCache  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402

PHONE = 390
# Schemes that never reach a network: inline data, and Chromium's own pages
# (its start page loads chrome:// resources before the first book page opens).
INSIDE_THE_BROWSER = ("data", "about", "blob", "chrome", "chrome-extension", "chrome-untrusted", "devtools")

# What open() runs on every page, and the panel's run, which the panels, the keyboard walk and the
# screenshots all use.
WAIT_FOR_MATH = browser_script("wait_for_math")
WAIT_FOR_IMAGES = browser_script("wait_for_images")
WAIT_FOR_PLAYGROUND = browser_script("wait_for_playground")
PLAYGROUND_RUN = browser_script("playground_run")
EXPLORER_STATE = browser_script("explorer_state")
STEPPER_STATE = browser_script("stepper_state")
# Chapter 7's stepper is checked in explorer_checks.py; what it may show is read here, once for both
# browsers (Shared).
# Every number chapter 7's stepper shows must be one that these programs print (their output.txt).
STEPPER_PRINTED_BY = [f"{n:02d}" for n in range(1, 8)]
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.]*\d)")  # as tools/checks/check_prose_numbers.py reads a number


def printed_numbers(chapters):
    """The decimal numbers, as printed, in the output.txt of the chapters numbered `chapters`, and those files."""
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chapters"))
    paths = [os.path.join(root, folder, "output.txt") for folder in sorted(os.listdir(root))
             if folder[:2] in chapters and os.path.isfile(os.path.join(root, folder, "output.txt"))]
    found = set()
    for path in paths:
        with open(path, encoding="utf-8") as file:
            found.update(DECIMAL.findall(file.read()))
    return found, paths


def solution_bodies(source):
    """The answer of each exercise, from the solution regions of the library, whitespace collapsed."""
    if not os.path.isdir(source):
        return {}
    return {name: " ".join(body.split()) for name, body in exercise_markers.solution_bodies(source).items()}


class Shared:
    """What the two browsers share: the failures, the playground facts and the native runs."""

    def __init__(self):
        self.lock = threading.Lock()
        self.failures = []
        self.playground_facts = []
        self.first_results = []  # (milliseconds, how, program): each panel's first result on its default input
        self.native_runs = {}  # (program, args): a future of the native program's result, run once for both browsers
        self.native_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)  # native runs, while the browsers work
        self.seconds = {}  # (pass, part): seconds spent, for the report of where the check's time goes
        self.css_imports = []  # what the book's style sheets @import, relative to the sheet
        self.figures = set()  # the SVG figures the pages show
        self.desktop_queue = []  # the pages still to check at desktop width, the largest first
        self.in_place = set()  # the pages checked at phone width as they are open at desktop width (run_checks())
        self.helper_done = threading.Event()  # set when the phone pass takes no more desktop pages
        self.axe_requests = set()  # paths that axe-core asked for itself (css_imports resolved against a page)
        self.page_seconds = {}  # (page, "pass: part"): seconds spent, for --profile
        self.cache = PageCache(None, "")  # the pages that passed before (--cache)
        self.screenshot_pages = {}  # page: the names of the screenshots taken of it as it is open
        self.explorer_pages = []  # the pages with an attention explorer
        self.stepper_printed = printed_numbers(STEPPER_PRINTED_BY)  # the numbers chapter 7's stepper may show


class CheckCore:
    """One browser's checker, without its checks: what every check uses."""

    def __init__(self, book, port, screenshots, deadline, programs=None, shared=None, panel_pages=(), name="desktop",
                 axe_source=None):
        self.name = name  # the pass: desktop or phone
        self.axe_source = axe_source  # axe.min.js, for the accessibility audit of each page (the desktop pass)
        self.book = book
        self.programs = programs
        self.shared = shared or Shared()
        self.failures = self.shared.failures
        self.panel_pages = list(panel_pages)  # the pages with a "Try it here" panel
        self.origin = f"http://127.0.0.1:{port}"
        self.screenshots = screenshots
        self.deadline = deadline
        self.driver = None
        self.mark = time.monotonic()  # the last lap's end (lap())
        self.file_mode = False
        self.opened = {}  # what open() said of the page open now
        self.visit = None  # what the page being checked depends on, and its failures (the cache)
        self.figures = self.shared.figures  # the SVG figures the pages show, checked at the end
        self.solutions = solution_bodies(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))

    @contextlib.contextmanager
    def timed(self, part):
        """Adds the time spent in the block to this pass's part (the report at the end)."""
        started = time.monotonic()
        try:
            yield
        finally:
            key = (self.name, part)
            with self.shared.lock:
                self.shared.seconds[key] = self.shared.seconds.get(key, 0.0) + time.monotonic() - started

    def lap(self, page, part):
        """Adds the time since the last lap to the page's part (the report of --profile)."""
        now = time.monotonic()
        key = (page, f"{self.name}: {part}")
        with self.shared.lock:
            self.shared.page_seconds[key] = self.shared.page_seconds.get(key, 0.0) + now - self.mark
        self.mark = now

    def fail(self, page, reason):
        line = f"FAIL {page}: {reason}"
        if self.visit is not None:
            self.visit["failures"] += 1
        with self.shared.lock:
            if line in self.failures:
                return
            self.failures.append(line)
        print(line, flush=True)

    def start_visit(self, page):
        """The page's check begins: what it loads, links to and is compared with is noted from here on."""
        self.mark = time.monotonic()
        self.visit = {"files": {os.path.join(self.book, page)}, "links": set(), "figures": set(),
                      "screenshots": [], "failures": 0}

    def end_visit(self, page, *widths):
        """The page's check ends: its last log entries, and the cache keeps it if it passed, at each of the
        widths it was checked at (both, for a page checked at both in one load)."""
        self.drain_logs(page, settle=True)
        self.lap(page, "logs")
        with self.shared.lock:  # axe-core's own requests for @import addresses are no file of the page's
            self.visit["files"] -= {os.path.join(self.book, path.lstrip("/")) for path in self.shared.axe_requests}
        # A file it asked for that is missing fails the check at the end, outside the page: not kept either.
        if self.visit["failures"] == 0 and time.monotonic() < self.deadline and \
                all(os.path.isfile(path) for path in self.visit["files"]):
            for width in widths:
                self.shared.cache.passed(width, page, self.visit)
        self.visit = None

    def passed_before(self, width, page):
        """Whether the page passed at this width before and nothing it depends on changed since
        (its figures are checked again, with the others)."""
        entry = self.shared.cache.passed_before(width, page)
        if entry is None:
            return False
        self.figures.update(self.url(figure) for figure in entry["figures"])
        return True

    def note_request(self, parsed):
        """A file of the book that the page asked for (served or file://): what the page depends on."""
        if self.visit is None or parsed.scheme not in ("http", "https", "file"):
            return
        path = urllib.parse.unquote(parsed.path)
        path = os.path.abspath(path if parsed.scheme == "file" else os.path.join(self.book, path.lstrip("/")))
        if path.startswith(self.book + os.sep):
            self.visit["files"].add(path)

    def url(self, page):
        return f"{self.origin}/{page}"

    def drain_logs(self, page, ignore=None, settle=False):
        """Console errors and requests that left localhost since the last call (a console message that
        holds `ignore`, a text or a tuple of texts, does not count). With `settle`, before the page is left:
        first a moment for the page's last log entries to arrive."""
        if settle:
            time.sleep(0.15)
        ignored = (ignore,) if isinstance(ignore, str) else ignore or ()
        for entry in self.driver.get_log("browser"):
            if any(text in entry.get("message", "") for text in ignored):
                continue
            if entry.get("level") == "SEVERE":
                self.fail(page, f"JavaScript console error: {entry.get('message', '').strip()}")
        for entry in self.driver.get_log("performance"):
            try:
                message = json.loads(entry["message"])["message"]
            except (KeyError, ValueError):
                continue
            if message.get("method") != "Network.requestWillBeSent":
                continue
            url = message["params"]["request"]["url"]
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme in INSIDE_THE_BROWSER:
                continue
            self.note_request(parsed)
            if self.file_mode and parsed.scheme == "file" and \
                    os.path.abspath(urllib.parse.unquote(parsed.path)).startswith(self.book + os.sep):
                continue
            if parsed.scheme not in ("http", "https") or parsed.hostname not in ("127.0.0.1", "localhost"):
                self.fail(page, f"requested something outside localhost: {url[:200]}")

    def open(self, page, address=None):
        """Opens the page (served, or at `address`) and waits for its math, its images and its panel's first result."""
        self.driver.get(address or self.url(page))
        math = self.driver.execute_async_script(WAIT_FOR_MATH)
        self.driver.execute_async_script(WAIT_FOR_IMAGES)
        math["panel"] = self.driver.execute_async_script(WAIT_FOR_PLAYGROUND)
        math["explorer"] = self.driver.execute_async_script(EXPLORER_STATE)  # its first view, before the audit
        math["stepper"] = self.driver.execute_async_script(STEPPER_STATE)  # chapter 7's stepper, on its first step
        self.opened = math
        return math

    def native(self, program, args):
        """The native program's run on these arguments, started at most once for both browsers: a future of
        (exit status, its stdout (status 0) or its stderr, its figures)."""
        key = (program, tuple(args))
        with self.shared.lock:
            if key not in self.shared.native_runs:
                self.shared.native_runs[key] = self.shared.native_pool.submit(self.run_native, program, args)
            return self.shared.native_runs[key]

    def run_native(self, program, args):
        """The program as the panel's command line shows it (build/bin/PROGRAM ARGS), run in a folder where
        build/ is the build folder, so that a path such as build/ch15/model.safetensors names the build's file.
        It runs twice at once: as the reader's command, and with --figures for the figures."""
        with tempfile.TemporaryDirectory(prefix="book-native-") as folder:
            os.symlink(os.path.dirname(self.programs), os.path.join(folder, "build"))
            figures_folder = os.path.join(folder, "figures")
            os.mkdir(figures_folder)
            command = [os.path.join(self.programs, program), *args]
            runs = [subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE),
                    subprocess.Popen(command + ["--figures", figures_folder], cwd=folder, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)]
            stdout, stderr = runs[0].communicate(timeout=120)
            drew = runs[1].wait(timeout=120)
            figures = {}
            if runs[0].returncode == 0 and drew == 0:
                for name in os.listdir(figures_folder):
                    with open(os.path.join(figures_folder, name), encoding="utf-8") as file:
                        figures[name] = file.read()
        text = (stdout if runs[0].returncode == 0 else stderr).decode("utf-8")
        return runs[0].returncode, text, figures

    def out_of_time(self, what):
        if time.monotonic() > self.deadline:
            self.fail(what, "the browser check ran out of time before it got here")
            return True
        return False

    def in_browser(self, work):
        """Run `work()` in a headless Chromium of its own."""
        profile = tempfile.mkdtemp(prefix="book-browser-")
        try:
            self.driver = start_browser(profile)
            try:
                self.driver.get_log("browser")  # what Chromium logged before the first page is not the book's
                self.driver.get_log("performance")
                with self.timed("the whole pass"):
                    work()
            finally:
                self.driver.quit()
        except WebDriverException as error:
            self.fail("browser", f"Chromium failed: {str(error).strip().splitlines()[0]}")
        finally:
            shutil.rmtree(profile, ignore_errors=True)
