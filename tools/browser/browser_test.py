#!/usr/bin/env python3
"""The browser check: opens every page of the built book in headless Chromium.

It serves the book from 127.0.0.1 on a free port, drives Debian's chromium
through chromedriver and python3-selenium, and fails (exit status 1, one line
per problem, naming the page) when

* a page requests anything that is not on localhost (a CDN, a font service, ...),
  or a file of the book that does not exist;
* math is left untypeset (a raw \\( \\) \\[ \\] or $$ in the rendered text) or
  MathJax could not parse a formula;
* an image (or an <object> figure) does not load, or a text of an SVG figure
  runs outside the figure;
* the JavaScript console shows an error;
* a page is wider than a 390-pixel phone screen;
* a listing is cut off (at 1280 pixels none may be; at 390 only program output
  may scroll sideways), or a copy button covers a character of a listing;
* a heading shows a raw underscore (d_k instead of typeset math);
* an exercise's solution is visible before the reader opens it, a folded block
  holds something else, or it does not open on a click; a chapter shows no listing;
* the front page's first paragraph does not link to "How to use this book", or
  the book's own index.html does not lead to the front page;
* a link points to a page of the book that does not exist;
* the book's search finds nothing for "softmax";
* a "Try it here" panel's text, exit status or figures differ from the native
  program's on the same options: on its example and readers' inputs served at 1280
  pixels, on its example and a malformed input from file:// at 390;
* chapter 7's stepper does not show its first step, Next does not go through every step (each with
  its own text) or Back does not go back, or a step shows a number that chapters 1 to 7's
  output.txt never prints (every step served, the first from file://);
* the attention explorer (chapters 15 and 16) does not answer a hover, a click that locks and one
  that unlocks, the arrow keys, Enter and Escape, its layer selector, its ablation or its head
  selector as it should, or a character that comes under the pointer at rest (the page scrolled, or
  a rerun drew the characters anew) takes the focus, or its saved SVG file is not well-formed or
  holds other weights than the page; or (chapter 15) its weights on the panel's --sequence text, repeated once, give other
  induction scores or first choices than the native program prints (to the printed digits), or
  (chapter 16) its sampler's bars and draws differ from the native program's one-step table and
  generated text on the panel's example, served and from file://; or its first view elsewhere
  (chapter 14's page and the front page, served and from file://) shows no head on the last
  character, weights that do not sum to 1, or (chapter 14) other weights than the chapter's heatmaps
  of the same verse print;
* with --axe, axe-core finds an accessibility problem on a page as it opens, or the
  keyboard walk through chapter 7's panel fails (tools/browser/accessibility.py).

Two browsers share the work: the phone pass, then the desktop pages the desktop
pass has not taken yet, the largest first; each page loads once per width.

It saves screenshots of the front page, of the Softmax chapter and of chapter 7's
panel at desktop width and at 390 pixels into the screenshots folder, each taken
from its page as the check left it. The JavaScript it runs in the pages is in
tools/browser/, one program per .js file.

With --cache DIR, a page that passed at a width is not checked again at that width
while nothing it depended on has changed (PageCache says what that is); the figures,
the search and the front door are checked on every run. --profile prints where each
page's time went.

    /usr/bin/python3 tools/browser/browser_test.py --book build/book --screenshots build/screenshots
"""
import argparse
import base64
import concurrent.futures
import contextlib
import hashlib
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
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tools/, for exercises.py
import exercises as exercise_markers  # noqa: E402  (the one reader of the exercise markers)

PHONE = 390
SEARCH_TERM = "softmax"
SOFTMAX_PAGE = "chapters/05-softmax/softmax.html"
FRONT_PAGE = "docs/index.html"
FIGURE_FRAMES_PAGE = "genindex.html"  # a small page of the book, whose frames show the figures one by one
PLAYGROUND_PAGE = "chapters/07-attention/attention.html"  # its panel is shown in use in the screenshots
PANEL_GOAL_MS = 3000  # each panel's first result on the book's example, on a quiet 2-core machine
PLAYGROUND_EXAMPLE = {"--tokens": "The,cat,sat,down", "--embeddings": "1,0;0,1;1,1;2,0", "--causal": True}
# Schemes that never reach a network: inline data, and Chromium's own pages
# (its start page loads chrome:// resources before the first book page opens).
INSIDE_THE_BROWSER = ("data", "about", "blob", "chrome", "chrome-extension", "chrome-untrusted", "devtools")

# The browser and the book's server (browser_session.py, which also says what to install when
# selenium is missing); the keyboard and contrast audit (accessibility.py), which uses them too.
from browser_session import (CHROMEDRIVER, CHROMIUM, DESKTOP, SCRIPTS, Server, book_pages, browser_script,  # noqa: E402
                             start_browser)
import accessibility  # noqa: E402
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


WAIT_FOR_MATH = browser_script("wait_for_math")
WAIT_FOR_IMAGES = browser_script("wait_for_images")
PAGE_FACTS = browser_script("page_facts")
TOO_WIDE = browser_script("too_wide")
TEXT_OUTSIDE = browser_script("text_outside")
CODE_LAYOUT = browser_script("code_layout")
HANGING_INDENT = browser_script("hanging_indent")
MATH_CLIPPED = browser_script("math_clipped")
PAGE_SHAPE = browser_script("page_shape")
OPEN_SOLUTIONS = browser_script("open_solutions")
WAIT_FOR_PLAYGROUND = browser_script("wait_for_playground")
PLAYGROUND_RUN = browser_script("playground_run")
WAIT_FOR_FRONT_PAGE = browser_script("wait_for_front_page")
WAIT_FOR_SEARCH = browser_script("wait_for_search")
FIGURES_TEXT_OUTSIDE = browser_script("figures_text_outside")
EXPLORER_STATE = browser_script("explorer_state")
EXPLORER_ROWS = browser_script("explorer_rows")
EXPLORER_SAMPLE = browser_script("explorer_sample")
EXPLORER_DRAW = browser_script("explorer_draw")
# The attention explorer of a chapter page is checked against the native program on its panel's example
# sequence, repeated once, as the program's --sequence repeats it.
EXPLORER_SEQUENCES = {"ch15-induction-head": "qzkvbjwmtfyhdgsp"}
# The chapter whose build-time run drew its heads' heatmaps on the explorer's text (head-H.svg in the build's
# figures): the explorer's first view is checked against the heatmaps' last row.
EXPLORER_HEATMAPS = {"ch14-next-character": "14-next-character"}
STEPPER_STATE = browser_script("stepper_state")
STEPPER_WALK = browser_script("stepper_walk")
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


def heatmap_rows(path):
    """The entries of a heatmap SVG written by the library, as printed in it: {(row, column): text}."""
    cells = {}
    last = None
    for node in ElementTree.parse(path).getroot().iter():
        tag = node.tag.rsplit("}", 1)[-1]
        if tag == "rect" and (node.get("class") or "").startswith("cell"):
            last = (int(node.get("data-row")), int(node.get("data-col")))
            title = node.find("{http://www.w3.org/2000/svg}title")
            if title is not None:  # a compact cell: its value is its tooltip, "row → column: value"
                cells[last] = title.text.rsplit(": ", 1)[1]
        elif tag == "text" and node.get("class") == "cell-value" and last is not None:
            cells[last] = node.text
    return cells


def solution_bodies(source):
    """The answer of each exercise, from the solution regions of the library, whitespace collapsed."""
    if not os.path.isdir(source):
        return {}
    return {name: " ".join(body.split()) for name, body in exercise_markers.solution_bodies(source).items()}



def first_difference(shown, expected):
    """Where two texts first differ, with a little context."""
    at = next((i for i, (a, b) in enumerate(zip(shown, expected)) if a != b), min(len(shown), len(expected)))
    return f"at character {at}: page {shown[max(0, at - 20):at + 20]!r}, native {expected[max(0, at - 20):at + 20]!r}"


def shifted(matrix, by):
    """The matrix text "2,0;1,2" with every entry moved by `by`: the same shape, other numbers."""
    rows = [[float(entry) + by for entry in row.split(",")] for row in matrix.split(";")]
    return ";".join(",".join(f"{entry:g}" for entry in row) for row in rows)


# A chapter's own options, in the readers' inputs: (option, the value tried, how it is named).
# A training chapter trains for a few steps only in the other inputs; its panel's own
# example (the first result) is the shortened training the page shows.
OWN_INPUTS = {"first": [("--steps", "3", "3 steps"), ("--greedy", True, "greedy")],
              "other": [("--steps", "3", "3 steps"), ("--heads", "2", "2 heads"),
                        ("--sequence", "Mouse eats cheese", "a sequence"), ("--prompt", "In the beginning", "a prompt"),
                        ("--temperature", "0.5", "τ = 0.5")]}


MALFORMED = "malformed"  # the last case of playground_inputs(): an input the program must refuse


def playground_inputs(defaults):
    """Three readers' inputs and one malformed one, for whatever fields the chapter's panel has."""
    cases = []
    first = {}
    if "--causal" in defaults:
        first["--causal"] = not defaults["--causal"]
    if "--precision" in defaults:
        first["--precision"] = "5"
    first_name = ["causal"] * ("--causal" in first) + ["5 decimals"]
    for option, value, name in OWN_INPUTS["first"]:
        if option in defaults:
            first[option] = value
            first_name.append(name)
    cases.append((", ".join(first_name), first))
    if "--embeddings" in defaults:
        shape = {"--tokens": "Ant,Bee,Cat,Dog", "--embeddings": "1,0,2;0,1,-1;2,2,0;-1,0.5,1",
                 "--wq": "1,0,0,1;0,1,1,0;1,1,0,0", "--wk": "0,1,0,1;1,0,1,0;0.5,0,0,1",
                 "--wv": "1,2,0,0;0,1,0,-1;1,0,1,0"}
        cases.append(("4 tokens, 3 features, d_k = d_v = 4", {k: v for k, v in shape.items() if k in defaults}))
    other = {}
    other_name = []
    for option, by in (("--wq", 0.5), ("--wv", -0.25)):
        if option in defaults:
            other[option] = shifted(defaults[option], by)
            other_name = ["other weights"]
    if "--seed" in defaults:
        other["--seed"] = "7"
        other_name.append("seed 7")
    for option, value, name in OWN_INPUTS["other"]:
        if option in defaults:
            other[option] = value
            other_name.append(name)
    cases.append((", ".join(other_name) or "other values", other))
    malformed = {"--embeddings": "2,0;1,x"} if "--embeddings" in defaults else {"--precision": "eleven"}
    cases.append((MALFORMED, malformed))
    return cases


CACHE_FILE = "browser-check.json"  # in the --cache folder
# What the check itself is made of: a change to any of these redoes every page.
CHECKER_SOURCES = ["browser_test.py", "browser_session.py", "accessibility.py", os.path.join("..", "exercises.py")]


def file_digest(path):
    """The SHA-256 of a file's bytes, or None when there is no such file."""
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return None


def checker_key(axe_source, programs, solutions):
    """One digest of everything that every page's result depends on: the checker's own sources (its widths,
    rules and scripts), the JavaScript it runs in the pages, axe-core, the browser, the folder of the native
    programs and the exercises' answers (a page must never show one unasked)."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    names = [os.path.join(here, name) for name in CHECKER_SOURCES]
    names += sorted(os.path.join(SCRIPTS, name) for name in os.listdir(SCRIPTS) if name.endswith(".js"))
    for name in names:
        digest.update(f"{os.path.basename(name)} {file_digest(name)}\n".encode())
    digest.update(hashlib.sha256((axe_source or "no audit").encode()).hexdigest().encode())
    try:
        version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        version = "unknown"
    digest.update(f"{version.strip()} {programs} {json.dumps(solutions, sort_keys=True)}".encode())
    return digest.hexdigest()


def native_inputs(programs, program, args):
    """The files a native program's run depends on: its binary, the files of the build folder whose paths
    it has compiled in (the corpus, a saved model), and those its arguments name as build/..."""
    binary = os.path.join(programs, program)
    build = os.path.dirname(programs)
    found = {binary}
    try:
        with open(binary, "rb") as file:
            text = file.read()
    except OSError:
        return found
    for match in re.findall(re.escape(build.encode()) + rb"/[\x21-\x7e]+", text):
        found.add(match.decode("ascii", "replace"))
    for value in args:
        if isinstance(value, str) and value.startswith("build/"):
            found.add(os.path.join(build, value[len("build/"):]))
    return {path for path in found if os.path.isfile(path)}


class PageCache:
    """The pages that passed, per width, with what each result depended on: the files the page loaded (the
    page itself, its _static files, figures, the panel's JavaScript, WebAssembly and data), the native
    programs and their inputs it was compared with, the pages it links to (they must still exist) and the
    screenshots it saved. A page whose every such file is unchanged (same SHA-256) since it passed is not
    checked again; the figures it shows are (with every other page's, at the end). A page that failed
    is never kept; --no-cache checks every page and keeps the new results."""

    def __init__(self, folder, key, read=True):
        self.path = os.path.join(folder, CACHE_FILE) if folder else None
        self.key = key
        self.lock = threading.Lock()
        self.digests = {}
        self.old = {}
        self.new = {}
        self.unchanged = {"desktop": [], "phone": []}
        if self.path and read:
            try:
                with open(self.path, encoding="utf-8") as file:
                    stored = json.load(file)
                if stored.get("checker") == key:
                    self.old = stored.get("pages", {})
            except (OSError, ValueError):
                pass

    def digest(self, path):
        with self.lock:
            if path not in self.digests:
                self.digests[path] = file_digest(path)
            return self.digests[path]

    def passed_before(self, width, page):
        """The entry of a page that passed at this width and whose inputs are all unchanged, or None."""
        entry = self.old.get(f"{width} {page}")
        if entry is None or not all(self.digest(path) == digest for path, digest in entry["files"].items()):
            return None
        if not all(os.path.isfile(path) for path in entry["links"] + entry["screenshots"]):
            return None
        with self.lock:
            self.new[f"{width} {page}"] = entry
            self.unchanged[width].append(page)
        return entry

    def passed(self, width, page, visit):
        """Keeps the result of a page that passed at this width."""
        files = {path: self.digest(path) for path in sorted(visit["files"])}
        with self.lock:
            self.new[f"{width} {page}"] = {"files": files, "links": sorted(visit["links"]),
                                           "screenshots": sorted(visit["screenshots"]),
                                           "figures": sorted(visit["figures"])}

    def save(self):
        if not self.path:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path + ".new", "w", encoding="utf-8") as file:
            json.dump({"checker": self.key, "pages": self.new}, file, indent=1, sort_keys=True)
        os.replace(self.path + ".new", self.path)



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
        self.helper_done = threading.Event()  # set when the phone pass takes no more desktop pages
        self.axe_requests = set()  # paths that axe-core asked for itself (css_imports resolved against a page)
        self.page_seconds = {}  # (page, "pass: part"): seconds spent, for --profile
        self.cache = PageCache(None, "")  # the pages that passed before (--cache)
        self.screenshot_pages = {}  # page: the names of the screenshots taken of it as it is open
        self.explorer_pages = []  # the pages with an attention explorer
        self.stepper_printed = printed_numbers(STEPPER_PRINTED_BY)  # the numbers chapter 7's stepper may show


class Check:
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

    def end_visit(self, width, page):
        """The page's check ends: its last log entries, and the cache keeps it if it passed."""
        self.drain_logs(page, settle=True)
        self.lap(page, "logs")
        with self.shared.lock:  # axe-core's own requests for @import addresses are no file of the page's
            self.visit["files"] -= {os.path.join(self.book, path.lstrip("/")) for path in self.shared.axe_requests}
        # A file it asked for that is missing fails the check at the end, outside the page: not kept either.
        if self.visit["failures"] == 0 and time.monotonic() < self.deadline and \
                all(os.path.isfile(path) for path in self.visit["files"]):
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

    def check_page(self, page):
        """At 1280 pixels: the page, its audit, its panel served, the keyboard walk and its screenshots."""
        self.start_visit(page)
        panel = self.check_desktop_width(page)
        if panel is not None and page in self.panel_pages and panel and panel["state"] == "done":
            # The served panel, on the page as it is open: no second load.
            with self.timed("served panels"):
                self.check_playground(page, None, "served", panel)
                self.drain_logs(page)
            self.lap(page, "panel")
        if panel is not None and page in self.shared.explorer_pages:
            with self.timed("explorers"):
                self.check_explorer(page, "served", interactions=True)
                self.drain_logs(page)
            self.lap(page, "explorer")
        if panel is not None and self.opened.get("stepper") is not None:
            with self.timed("stepper"):
                self.check_stepper(page, "served", self.opened["stepper"], walk=True)
                self.drain_logs(page)
            self.lap(page, "stepper")
        if panel is not None:
            self.screenshots_of(page, phone=False)
        if panel is not None and self.axe_source and page == accessibility.KEYBOARD_PAGE:
            self.driver.execute_async_script(PLAYGROUND_RUN, {})  # the panel's example again, after the inputs
            self.driver.execute_script("document.body.dataset.theme = 'light'")
            for problem in accessibility.keyboard_walk(self.driver):
                self.fail(page, "accessibility: " + problem[len(page) + 2:])
            self.lap(page, "keyboard walk")
        self.end_visit("desktop", page)

    def check_desktop_width(self, page):
        """The page's own checks at 1280 pixels and its audit; returns its panel's state (False without a
        panel), or None when the page did not load."""
        try:
            math = self.open(page)
        except (TimeoutException, WebDriverException) as error:
            self.fail(page, f"the page did not load: {str(error).splitlines()[0]}")
            return None
        self.lap(page, "load")
        for tex in math["errors"]:
            self.fail(page, f"MathJax could not typeset: {tex}")
        panel = math["panel"]
        if panel and panel["state"] != "done":
            self.fail(page, f"the Try it here panel did not show a result (it stays {panel['state']})")
        elif page in self.panel_pages and not panel:
            self.fail(page, "the Try it here panel did not start")
        facts = self.driver.execute_script(PAGE_FACTS)
        for raw in facts["raw"]:
            self.fail(page, f"math left untypeset: {raw}")
        for src in facts["broken"]:
            self.fail(page, f"image did not load: {src}")
        for src in facts["svgs"]:
            figure = urllib.parse.urljoin(self.url(page), src)
            self.figures.add(figure)
            self.visit["figures"].add(urllib.parse.urlsplit(figure).path.lstrip("/"))
        for data in facts["objects"]:
            self.fail(page, f"figure (<object>) did not load: {data}")
        for link in facts["links"]:
            path = urllib.parse.unquote(urllib.parse.urlsplit(link).path).lstrip("/")
            target = os.path.join(self.book, path)
            if os.path.isfile(os.path.join(target, "index.html")):
                target = os.path.join(target, "index.html")
            if os.path.isfile(target):
                self.visit["links"].add(target)
            else:
                self.fail(page, f"link to a page that does not exist: {path}")
        for problem in self.driver.execute_script(CODE_LAYOUT, False):
            self.fail(page, f"at {DESKTOP[0]} px, {problem}")
        for problem in self.driver.execute_script(HANGING_INDENT):
            self.fail(page, f"at {DESKTOP[0]} px, {problem}")
        self.lap(page, "page checks")
        self.check_accessibility(page)
        self.check_shape(page)
        self.lap(page, "page checks")
        return panel or False

    def check_accessibility(self, page):
        """With --axe: axe-core on the page as it opened (its panel showing its first result, every answer
        folded), in the light and the dark colour scheme (tools/browser/accessibility.py), then the page's own scheme."""
        if not self.axe_source:
            return
        with self.timed("accessibility"):
            self.drain_logs(page)  # the page's own, before axe-core's requests
            self.lap(page, "logs")
            scheme = self.driver.execute_script("return document.body.dataset.theme || ''")
            self.driver.execute_script(self.axe_source)
            for problem in accessibility.audit_schemes(self.driver, page, lambda part: self.lap(page, part)):
                self.fail(page, "accessibility: " + problem[len(page) + 1:])
            self.driver.execute_script("document.body.dataset.theme = arguments[0]", scheme)
            # axe-core reads the style sheets itself and resolves a sheet's @import against the page, not
            # the sheet: those addresses are its, never the book's.
            stray = [urllib.parse.urljoin(self.url(page), name) for name in self.shared.css_imports]
            with self.shared.lock:
                self.shared.axe_requests.update(urllib.parse.urlsplit(address).path for address in stray)
            self.drain_logs(page, ignore=tuple(stray))
            self.lap(page, "logs")

    def check_shape(self, page):
        shape = self.driver.execute_script(PAGE_SHAPE)
        for heading in shape["headings"]:
            self.fail(page, f"a heading shows a raw underscore (write math as :math:): {heading}")
        if page == FRONT_PAGE and not any(h.endswith("how-to-use.html") for h in shape["first_paragraph_links"]):
            self.fail(page, "the first paragraph does not link to How to use this book (docs/how-to-use.html)")
        for exercise, body in self.solutions.items():
            if any(body in shown for shown in shape["shown"]):
                self.fail(page, f"the solution of the exercise {exercise} is shown before the reader asks for it")
        for folded in shape["folded"]:
            if folded["open"]:
                self.fail(page, f"a folded solution is open when the page loads: {folded['summary']}")
            if not any(body in folded["text"] for body in self.solutions.values()):
                self.fail(page, f"a listing that is no exercise's solution is folded away: {folded['summary']}")
        if shape["folded"] and not all(self.driver.execute_script(OPEN_SOLUTIONS)):
            self.fail(page, "a folded solution does not open when its summary is clicked")
        if page.startswith("chapters/") and not shape["shown"]:
            self.fail(page, "the chapter shows no listing before a click (the chapter program must stay visible)")

    def check_phone_page(self, page):
        """At 390 pixels, the page fits. A page with a panel is opened from file://, and its panel is checked
        there too: one load proves both the narrow screen and the book opened without a server."""
        self.file_mode = page in self.panel_pages or page in self.shared.explorer_pages
        self.start_visit(page)
        try:
            opened = self.check_phone_width(page, "file://" + os.path.join(self.book, page) if self.file_mode else None)
            if self.file_mode and opened is not None and page in self.panel_pages:
                with self.timed("file:// panels"):
                    self.check_playground(page, None, "file://", opened["panel"])
                    self.drain_logs(page)
                self.lap(page, "panel")
            if self.file_mode and opened is not None and page in self.shared.explorer_pages:
                with self.timed("explorers"):
                    self.check_explorer(page, "file://", interactions=False)
                    self.drain_logs(page)
                self.lap(page, "explorer")
            if self.file_mode and opened is not None and opened.get("stepper") is not None:
                with self.timed("stepper"):
                    self.check_stepper(page, "file://", opened["stepper"], walk=False)
                    self.drain_logs(page)
                self.lap(page, "stepper")
            if opened is not None:
                self.screenshots_of(page, phone=True)
            self.end_visit("phone", page)
        finally:
            self.file_mode = False

    def check_phone_width(self, page, address=None):
        """The open page's width checks at 390 pixels; returns what open() said, or None if it did not load."""
        try:
            opened = self.open(page, address)
            self.lap(page, "load")
            culprits = self.driver.execute_script(TOO_WIDE)
        except (TimeoutException, WebDriverException) as error:
            self.fail(page, f"the page did not load at {PHONE} px: {str(error).splitlines()[0]}")
            return None
        if culprits:
            self.fail(page, f"content runs off a {PHONE}-pixel phone screen: {'; '.join(culprits)}")
        for problem in self.driver.execute_script(CODE_LAYOUT, True):
            self.fail(page, f"at {PHONE} px, {problem}")
        for problem in self.driver.execute_script(MATH_CLIPPED) + self.driver.execute_script(HANGING_INDENT):
            self.fail(page, f"at {PHONE} px, {problem}")
        self.lap(page, "page checks")
        return opened

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

    def open_panel(self, page, address, how, panel):
        """Opens the page at `address` unless `panel` (the page is open) and waits for its panel's first
        result; returns what WAIT_FOR_PLAYGROUND said, or None after naming the problem."""
        if panel is None:
            try:
                self.driver.get(address)
                panel = self.driver.execute_async_script(WAIT_FOR_PLAYGROUND)
            except (TimeoutException, WebDriverException) as error:
                self.fail(page, f"({how}) the page did not load: {str(error).splitlines()[0]}")
                return None
        if not panel or panel["state"] != "done":
            self.fail(page, f"({how}) the Try it here panel did not show a result ({panel and panel['state']})")
            return None
        if not os.access(os.path.join(self.programs, panel["program"]), os.X_OK):
            self.fail(page, f"({how}) the native program {panel['program']} is not in {self.programs} to compare with")
            return None
        return panel

    def check_playground(self, page, address, how, panel=None):
        """The page's panel against the native program, on its own example and the readers' inputs.
        With `panel`, the page is already open and its panel has shown its first result."""
        panel = self.open_panel(page, address, how, panel)
        if panel is None:
            return
        program = panel["program"]
        first = self.driver.execute_async_script(PLAYGROUND_RUN, None)
        self.check_panel_fields(page, how, first["labels"])
        size = os.path.getsize(os.path.join(self.book, "_static", "playground", program + ".js"))
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: {program}: {size / 1024:.0f} KiB, first result after "
                                                f"{panel['firstResultMs']} ms")
            self.shared.first_results.append((panel["firstResultMs"], how, program))
        inputs = playground_inputs(first["defaults"])
        if how == "file://":
            # From file:// only the loading can differ (the module and its files come from the disk, as
            # scripts, and the worker from a blob, as served): the example proves it. Every input then
            # runs through the same fields and worker as served, so of the readers' inputs only the
            # malformed one runs again (the error's way back); the others would compute the same
            # numbers a second time.
            inputs = [(name, values) for name, values in inputs if name == MALFORMED]
        cases = []
        for name, values in [("the panel's example", None)] + inputs:
            # Every field as the case leaves it, against the program's own defaults: the reader's command.
            final = {**first["defaults"], **(values or {})}
            args = [a for option, value in final.items() if value != first["programDefaults"].get(option)
                    for a in ([option] if value is True else [] if value is False else [option, value])]
            cases.append((name, values, args, self.native(program, args)))  # the native runs start now
            self.visit["files"].update(native_inputs(self.programs, program, args))
        for name, values, args, native in cases:
            shown = self.driver.execute_async_script(PLAYGROUND_RUN, values)
            where = f"({how}) the panel, {name}"
            if shown["state"] != "done" or (values and shown["runs"] < 1):
                self.fail(page, f"{where}: no result ({shown['state']})")
                continue
            if shown["missing"]:
                self.fail(page, f"{where}: the panel has no field {', '.join(shown['missing'])}")
            if sorted(shown["args"]) != sorted(args):
                self.fail(page, f"{where}: the fields became {shown['args']}, expected {args}")
            with self.timed("waiting for the native programs"):
                status, text, figures = native.result()
            if shown["status"] != status:
                self.fail(page, f"{where}: exit status {shown['status']}, the native program gives {status}")
            if shown["text"] != text:
                self.fail(page, f"{where}: the text differs from the native program's "
                                f"{'stdout' if status == 0 else 'stderr'}: {first_difference(shown['text'], text)}")
            if name == MALFORMED and status == 0:
                self.fail(page, f"{where}: the native program accepted {values}")
            self.check_panel_figures(page, where, shown, status, figures)

    def explorer_state(self, after=None):
        """What the explorer shows now; with `after`, once it has finished more runs than that."""
        return self.driver.execute_async_script(EXPLORER_STATE, after)

    def check_explorer(self, page, how, interactions):
        """The attention explorer: its first view, then (served) each interaction, and its numbers against the
        native program's, with the time a hover takes to show new weights."""
        state = self.explorer_state()
        if state["state"] != "done":
            self.fail(page, f"({how}) the attention explorer shows no result (it stays {state['state']}: "
                            f"{state.get('status')})")
            return
        started = time.monotonic()
        sampling = self.driver.find_elements("css selector", ".explorer[data-sampling]")
        program = self.driver.find_element("css selector", ".explorer[data-program]").get_attribute("data-program")
        # Every page's explorer is the same explorer.js: its hover, keyboard and selectors are checked on
        # chapter 15's page (two layers, an ablation that changes the second), not again on chapter 16's;
        # on another page (chapter 14's, the front page) only its first view is.
        full = page.startswith(f"chapters/{program[2:]}/") and (sampling or program in EXPLORER_SEQUENCES)
        if interactions and full and not sampling:
            self.check_explorer_mouse(page, how)
            self.check_explorer_keyboard(page, how)
            self.check_explorer_selectors(page, how)
        if not full:
            self.check_explorer_first_view(page, how, state, program)
        elif sampling:
            self.check_explorer_sampling(page, how)
        else:
            self.check_explorer_numbers(page, how)
        if interactions and full:  # on the view the numbers' check left, focused far into the text
            self.check_explorer_enlarge(page, how)
            self.check_explorer_svg(page, how)
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: the explorer on {page}: its checks took "
                                                f"{time.monotonic() - started:.1f} s")

    def check_explorer_first_view(self, page, how, state, program):
        """The explorer's first view on a page where its interactions are not checked again: every head's
        weights on the last character (a softmax row: they sum to 1) and the bars of the next character;
        where the chapter drew its heads on the same text, the weights are the heatmaps' last row."""
        where = f"({how}) the explorer's first view"
        text = self.driver.find_element("css selector", ".explorer[data-program]").get_attribute("data-text")
        if not state["heads"] or not state["bars"] or state["focus"] != len(text) - 1:
            self.fail(page, f"{where}: expected every head and the bars on the last of {len(text)} characters, got "
                            f"{len(state['heads'])} heads, {len(state['bars'])} bars, focus {state['focus']}")
            return
        for head in state["heads"]:
            total = sum(float(weight) for weight in head["weights"])
            if len(head["weights"]) != len(text) or abs(total - 1.0) > 1e-9:
                self.fail(page, f"{where}: {head['name']} has {len(head['weights'])} weights summing to {total} "
                                f"(expected {len(text)}, summing to 1)")
        folder = EXPLORER_HEATMAPS.get(program)
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: the explorer on {page}: its first view checked" +
                                                (" against the chapter's heatmaps" if folder else ""))
        if folder is None or not self.programs:
            return
        figures = os.path.join(os.path.dirname(self.programs), "figures", folder)
        for head in state["heads"]:
            path = os.path.join(figures, f"head-{head['name'].split('H')[1]}.svg")
            if not os.path.isfile(path):
                self.fail(page, f"{where}: the heatmap {path} to compare {head['name']} with is missing")
                continue
            self.visit["files"].add(path)
            cells = heatmap_rows(path)
            last = len(text) - 1
            printed = [cells.get((last, j)) for j in range(len(text))]
            if None in printed or len(cells) != len(text) ** 2:
                self.fail(page, f"{where}: {os.path.basename(path)} is not drawn on the explorer's text {text!r}")
                continue
            shown = [f"{float(weight):.{len(printed[0].split('.')[1])}f}" for weight in head["weights"]]
            if shown != printed:
                self.fail(page, f"{where}: {head['name']}'s weights on the last character {shown}, the chapter's "
                                f"heatmap prints {printed}")

    def check_stepper(self, page, how, first, walk):
        """Chapter 7's stepper: it shows its first step, every number it shows is one that chapters 1 to 7
        print, and (with `walk`) Next goes through every step, each with its own text, and Back goes back."""
        where = f"({how}) the stepper"
        if first["state"] != "done" or first["steps"] < 2 or first["step"] != 0:
            self.fail(page, f"{where} shows no first step (it stays {first['state']}: {first['status']!r})")
            return
        printed, outputs = self.shared.stepper_printed
        self.visit["files"].update(outputs)
        texts = [(1, first["text"])]
        if walk:
            shown = self.driver.execute_script(STEPPER_WALK)
            steps = [entry["step"] for entry in shown["shown"]]
            if steps != list(range(first["steps"])):
                self.fail(page, f"{where}: Next showed the steps {steps}, expected 0 to {first['steps'] - 1}")
            for before, after in zip(shown["shown"], shown["shown"][1:]):
                if before["text"] == after["text"]:
                    self.fail(page, f"{where}: step {after['step'] + 1} shows the same as step {before['step'] + 1}")
            if shown["afterLast"] != first["steps"] - 1 or shown["afterBack"] != first["steps"] - 2 or \
                    shown["backText"] != shown["shown"][-2]["text"]:
                self.fail(page, f"{where}: Next at the last step and then Back gave the steps {shown['afterLast']} "
                                f"and {shown['afterBack']}, expected {first['steps'] - 1} and {first['steps'] - 2}")
            if not shown["announce"].startswith(f"Step {first['steps'] - 1} of {first['steps']}:"):
                self.fail(page, f"{where}: the live region does not announce the step: {shown['announce'][:80]!r}")
            texts = [(entry["step"] + 1, entry["text"]) for entry in shown["shown"]]
        for step, text in texts:
            stray = sorted(set(DECIMAL.findall(text)) - printed)
            if stray:
                self.fail(page, f"{where}, step {step}: shows {', '.join(stray)}, which chapters 1 to 7 never print")
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: the stepper on {page}: {len(texts)} of its {first['steps']} "
                                                f"steps checked against chapters 1 to 7's output.txt")

    def explorer_expect(self, page, where, shown, **expected):
        """Fails for each field of what the explorer shows that is not as expected; returns whether all were."""
        wrong = [f"{key} {shown.get(key)!r} (expected {value!r})" for key, value in expected.items()
                 if shown.get(key) != value]
        for problem in wrong:
            self.fail(page, f"{where}: {problem}")
        return not wrong

    def check_explorer_mouse(self, page, how):
        """Hover focuses a character, a click locks it (a hover elsewhere then changes nothing), a second
        click unlocks it. The time each hover took to show the new weights is kept for the report."""
        buttons = self.driver.find_elements("css selector", ".explorer .explorer-character")
        where = f"({how}) the explorer"
        before = self.explorer_state()
        hover_ms = []
        for position in (5, 9):
            ActionChains(self.driver, duration=0).move_to_element(buttons[position]).perform()
            shown = self.explorer_state()
            hover_ms.append(shown["renderMs"])
            if self.explorer_expect(page, f"{where}, hovering character {position}", shown, focus=position) and \
                    [len(head["weights"]) for head in shown["heads"]] != [position + 1] * len(shown["heads"]):
                self.fail(page, f"{where}, hovering character {position}: the heads do not show {position + 1} weights")
        if shown["heads"] == before["heads"]:
            self.fail(page, f"{where}: hovering a character does not change what the heads show")
        buttons[20].click()
        self.explorer_expect(page, f"{where}, after a click on character 20", self.explorer_state(), focus=20,
                             locked="true", pressed=[20])
        ActionChains(self.driver, duration=0).move_to_element(buttons[3]).perform()
        self.explorer_expect(page, f"{where}, locked, hovering character 3", self.explorer_state(), focus=20)
        buttons[20].click()
        self.explorer_expect(page, f"{where}, after a second click on character 20", self.explorer_state(),
                             locked="false", pressed=[])
        ActionChains(self.driver, duration=0).move_to_element(buttons[3]).perform()
        self.explorer_expect(page, f"{where}, unlocked, hovering character 3", self.explorer_state(), focus=3)
        self.check_explorer_pointer_at_rest(page, where, buttons)
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: the explorer on {page}: a hover shows new weights in "
                                                f"{max(hover_ms):.1f} ms at most; the model's run took "
                                                f"{before['runMs']} ms")

    def check_explorer_pointer_at_rest(self, page, where, buttons):
        """A character that comes under a pointer at rest does not take the focus: the page scrolls by a row of
        characters under the pointer resting on character 3 (as when the arrow keys move the focus out of view),
        and the focus stays on 3."""
        row = self.driver.execute_script("return arguments[1].getBoundingClientRect().top - "
                                         "arguments[0].getBoundingClientRect().top", buttons[3], buttons[-1])
        if row <= 0:
            self.fail(page, f"{where}: the characters fit one row, so no scroll can bring another under the pointer")
            return
        self.driver.execute_script("window.scrollBy(0, arguments[0])", row)
        time.sleep(0.5)  # the browser updates what is under the pointer a frame or two after the scroll
        self.explorer_expect(page, f"{where}, the page scrolled a row under the pointer at rest on character 3",
                             self.explorer_state(), focus=3)

    def check_explorer_keyboard(self, page, how):
        """The arrow keys, Home and End move the focus (and the keyboard focus with it), Enter locks, Escape
        unlocks, and the live region says each: the character, its top weights and the next characters."""
        where = f"({how}) the explorer, keyboard"
        button = self.driver.find_elements("css selector", ".explorer .explorer-character")[3]
        steps = [(Keys.ARROW_RIGHT, {"focus": 4, "active": "4", "locked": "false"}),
                 (Keys.ARROW_LEFT, {"focus": 3, "active": "3"}),
                 (Keys.END, {"focus": len(self.driver.find_elements("css selector", ".explorer .explorer-character"))
                             - 1}),
                 (Keys.HOME, {"focus": 0, "active": "0"}),
                 (Keys.ARROW_RIGHT, {"focus": 1}),
                 (Keys.ENTER, {"focus": 1, "locked": "true", "pressed": [1]}),
                 (Keys.ESCAPE, {"focus": 1, "locked": "false", "pressed": []})]
        self.driver.execute_script("arguments[0].focus()", button)
        for key, expected in steps:
            self.driver.switch_to.active_element.send_keys(key)
            shown = self.explorer_state()
            name = {Keys.ARROW_RIGHT: "ArrowRight", Keys.ARROW_LEFT: "ArrowLeft", Keys.END: "End", Keys.HOME: "Home",
                    Keys.ENTER: "Enter", Keys.ESCAPE: "Escape"}[key]
            self.explorer_expect(page, f"{where}, {name}", shown, **expected)
            said = shown["announce"] or ""
            heads = [head["name"] for head in shown["heads"]]
            if not said.startswith(f"Character {expected['focus']},") or not all(h in said for h in heads) or \
                    "Next: " not in said or ("locked" in said) != (shown["locked"] == "true"):
                self.fail(page, f"{where}, {name}: the live region says {said[:160]!r}")

    def check_explorer_selectors(self, page, how):
        """The layer selector shows the other layer's heads; zeroing a head reruns the model and changes the
        last layer's weights, and choosing none again gives the first weights back."""
        where = f"({how}) the explorer"
        root = ".explorer select[id$='-{}']"
        layers = Select(self.driver.find_element("css selector", root.format("layer")))
        last = layers.first_selected_option.get_attribute("value")
        before = self.explorer_state()
        layers.select_by_value("0")
        shown = self.explorer_state()
        if not self.explorer_expect(page, f"{where}, layer 0 chosen", shown, layer="0") or \
                not all(head["name"].startswith("L0H") for head in shown["heads"]) or shown["heads"] == before["heads"]:
            self.fail(page, f"{where}, layer 0 chosen: the heads shown are {[h['name'] for h in shown['heads']]}")
        layers.select_by_value(last)
        ablation = Select(self.driver.find_element("css selector", root.format("ablation")))
        whole = self.explorer_state()
        ablation.select_by_value("0,0")
        cut = self.explorer_state(whole["runs"])
        if cut["state"] != "done" or "zeroed" not in (cut["status"] or "") or cut["heads"] == whole["heads"]:
            self.fail(page, f"{where}: zeroing L0H0 does not change layer {last}'s weights ({cut['status']})")
        ablation.select_by_value("")
        again = self.explorer_state(cut["runs"])
        if again["heads"] != whole["heads"]:
            self.fail(page, f"{where}: with no head zeroed again, the weights differ from the first run's "
                            f"(focus {again['focus']} and {whole['focus']}, status {again['status']!r})")

    def check_explorer_enlarge(self, page, how):
        """The head selector enlarges one head (its cells wider than every other head's), and none again
        gives every head the same size."""
        where = f"({how}) the explorer's head selector"
        # The choice as a reader's change event: a click on the option could land on the page's header, which
        # covers the top of the window when the page has scrolled.
        choose = ("const select = document.querySelector(\".explorer select[id$='-enlarge']\");"
                  "select.value = arguments[0]; select.dispatchEvent(new Event('change', {bubbles: true}))")
        measure = ("return Array.from(document.querySelectorAll('.explorer .explorer-head')).map(head => ["
                   "head.dataset.head, head.classList.contains('explorer-enlarged'), "
                   "head.querySelector('.explorer-cell').getBoundingClientRect().width])")
        self.driver.execute_script(choose, "1")
        heads = self.driver.execute_script(measure)
        enlarged = [head for head in heads if head[1]]
        others = [head[2] for head in heads if not head[1]]
        if len(enlarged) != 1 or not enlarged[0][0].endswith("H1") or not others or \
                not all(enlarged[0][2] > width for width in others):
            self.fail(page, f"{where}: head 1 chosen, the heads are [name, enlarged, cell width] {heads}")
        self.driver.execute_script(choose, "")
        heads = self.driver.execute_script(measure)
        if any(head[1] for head in heads) or len({round(head[2], 1) for head in heads}) != 1:
            self.fail(page, f"{where}: none chosen, the heads are [name, enlarged, cell width] {heads}")

    def check_explorer_svg(self, page, how):
        """"Save this view as SVG" writes a well-formed SVG file that holds each head's cells with the
        weights the page shows."""
        where = f"({how}) the explorer's SVG file"
        folder = tempfile.mkdtemp(prefix="book-explorer-svg-")
        try:
            started = time.monotonic()
            self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
            shown = self.explorer_state()
            # A click of the page's own (the button may lie under the page's header after a scroll).
            self.driver.execute_script("document.querySelector('.explorer .explorer-save').click()")
            name = self.driver.find_element("css selector", ".explorer[data-program]").get_attribute("data-saved")
            path = os.path.join(folder, name or "none")
            while not os.path.isfile(path) and time.monotonic() - started < 10:
                time.sleep(0.05)
            if not os.path.isfile(path):
                self.fail(page, f"{where}: no file {name} arrived within 10 s")
                return
            try:
                svg = ElementTree.parse(path).getroot()
            except ElementTree.ParseError as error:
                self.fail(page, f"{where}: {name} is not well-formed XML: {error}")
                return
            space = "{http://www.w3.org/2000/svg}"
            saved = [{"name": group.get("data-head"),
                      "weights": [cell.get("data-weight") for cell in group.iter(space + "rect")
                                  if cell.get("class") == "cell"]}
                     for group in svg.iter(space + "g") if group.get("class") == "head"]
            page_heads = [{"name": head["name"], "weights": head["weights"]} for head in shown["heads"]]
            if svg.tag != space + "svg" or saved != page_heads:
                self.fail(page, f"{where}: {name} ({svg.tag}) holds the cells {saved}, the page shows {page_heads}")
            with self.shared.lock:
                self.shared.playground_facts.append(
                    f"{how}: the explorer on {page}: saved {name} ({os.path.getsize(path)} bytes, "
                    f"{sum(len(head['weights']) for head in saved)} cells) in {time.monotonic() - started:.2f} s")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def check_explorer_sampling(self, page, how):
        """Chapter 16's sampling view on the panel's example (the program's defaults): the bars after the
        prompt under four rules, and greedy, against the one-step tables the native program prints; then
        the draws with its seed against the first characters of the text it generated."""
        where = f"({how}) the explorer's sampler"
        program = self.driver.find_element("css selector", ".explorer[data-program]").get_attribute("data-program")
        native = self.native(program, [])  # the panel's example: the same run as the panel's check
        self.visit["files"].update(native_inputs(self.programs, program, []))
        with self.timed("waiting for the native programs"):
            status, text, _ = native.result()
        printed = sampling_tables(text)
        if status != 0 or printed is None:
            self.fail(page, f"{where}: the native program printed no one-step tables ({status}): {text[:200]!r}")
            return
        runs = self.explorer_state()["runs"]
        self.driver.execute_script("const input = arguments[0].querySelector('input[id$=\"-text\"]');"
                                   "input.value = arguments[1]; input.dispatchEvent(new Event('input'))",
                                   self.driver.find_element("css selector", ".explorer[data-sampling]"),
                                   printed["prompt"])
        state = self.explorer_state(runs)
        # The focus on the prompt's last character, as a reader's hover puts it there (unlocked first).
        self.driver.execute_script("const root = document.querySelector('.explorer[data-sampling]');"
                                   "const buttons = root.querySelectorAll('.explorer-character');"
                                   "if (root.dataset.locked === 'true') buttons[Number(root.dataset.focus)].click();"
                                   "buttons[buttons.length - 1].dispatchEvent(new MouseEvent('mousemove', "
                                   "{bubbles: true}))")
        state = self.explorer_state()
        if state["state"] != "done" or state["focus"] != len(printed["prompt"]) - 1:
            self.fail(page, f"{where}: the prompt {printed['prompt']!r} gives no result focused on its last "
                            f"character ({state['state']}, focus {state['focus']})")
            return
        started = time.monotonic()
        for rule, column in (({"temperature": printed["temperature"], "topK": "all", "greedy": False}, "p"),
                             ({"temperature": "1", "topK": "all", "greedy": False}, "p (τ = 1)"),
                             ({"temperature": "0.5", "topK": "all", "greedy": False}, "p (τ = 0.5)"),
                             ({"temperature": "1", "topK": "5", "greedy": False}, "p (top-5)")):
            shown = self.driver.execute_async_script(EXPLORER_SAMPLE, rule)
            digits = len(next(iter(printed[column].values())).split(".")[1])
            bars = [(character, f"{p:.{digits}f}") for character, p in shown["bars"]]
            expected = [(character, printed[column].get(character)) for character, _ in shown["bars"]]
            if shown["state"] != "done" or not bars or bars != expected:
                self.fail(page, f"{where}, {rule}: the bars {bars}, the native program prints {expected} ({column})")
        shown = self.driver.execute_async_script(EXPLORER_SAMPLE, {"greedy": True})
        if [bar[0] for bar in shown["bars"][:1]] != [printed["greedy"]] or shown["bars"][0][1] != 1:
            self.fail(page, f"{where}, greedy: the bars {shown['bars']}, the native program's greedy choice is "
                            f"{printed['greedy']!r}")
        bars_seconds = time.monotonic() - started
        self.driver.execute_async_script(EXPLORER_SAMPLE, {"temperature": printed["temperature"], "topK": "all",
                                                           "greedy": False})
        count = 8
        drawn = self.driver.execute_async_script(EXPLORER_DRAW, printed["seed"], count)
        expected = printed["prompt"] + printed["generated"][:count]
        if drawn["drawn"] != count or drawn["text"].replace("\n", "/") != expected or \
                f"{drawn['uniforms'][0]:.{len(printed['u'].split('.')[1])}f}" != printed["u"]:
            self.fail(page, f"{where}: {drawn['drawn']} draws with seed {printed['seed']} give {drawn['text']!r} "
                            f"(first u {drawn['uniforms'][:1]}), the native program {expected!r} (u = {printed['u']})")
        with self.shared.lock:
            self.shared.playground_facts.append(
                f"{how}: the explorer on {page}: the bars of 5 rules in {bars_seconds:.2f} s and {count} draws in "
                f"{drawn['ms'] / 1000:.2f} s, as the native program prints them")

    def check_explorer_numbers(self, page, how):
        """For each model the explorer offers, its weights on the panel's sequence repeated once: each head's
        induction score (the mean, over the second copy's rows i, of the weight on i − p + 1) and the model's
        first choices for the second copy, as the native program prints them for --load MODEL --sequence."""
        where = f"({how}) the explorer's numbers"
        root = self.driver.find_element("css selector", ".explorer[data-program]")
        program = root.get_attribute("data-program")
        sequence = EXPLORER_SEQUENCES.get(program)
        if sequence is None:
            self.fail(page, f"{where}: the check has no sequence for {program} (EXPLORER_SEQUENCES)")
            return
        models = Select(root.find_element("css selector", "select[id$='-model']"))
        paths = [option.get_attribute("value") for option in models.options]
        natives = {path: self.native(program, ["--load", path, "--sequence", sequence]) for path in paths}
        for path in paths:
            self.visit["files"].update(native_inputs(self.programs, program, ["--load", path, "--sequence", sequence]))
        runs = self.explorer_state()["runs"]
        self.driver.execute_script("const input = arguments[0].querySelector('input[type=text]');"
                                   "input.value = arguments[1]; input.dispatchEvent(new Event('input'))",
                                   root, sequence + sequence)
        run_ms = []  # each run after a change of the text or the model: the 1 s, printed, never asserted
        for path in paths:
            if models.first_selected_option.get_attribute("value") != path:
                models.select_by_value(path)
            state = self.explorer_state(runs)
            runs = state["runs"]
            run_ms.append(state["runMs"])
            if state["state"] != "done":
                self.fail(page, f"{where}: no result for {path} on {sequence + sequence!r} ({state['status']})")
                continue
            with self.timed("waiting for the native programs"):
                status, text, _ = natives[path].result()
            self.compare_explorer(page, f"{where}, {path}", sequence, status, text)
        with self.shared.lock:
            self.shared.playground_facts.append(f"{how}: the explorer on {page}: the induction scores and first "
                                                f"choices of {len(paths)} models compared with the native program's; "
                                                f"a new text or model showed its result after "
                                                f"{', '.join(f'{ms} ms' for ms in run_ms)}")

    def compare_explorer(self, page, where, sequence, status, text):
        """The explorer's weights and first bars on the sequence repeated once, against the native --sequence run."""
        printed = {int(m.group(1)): m.group(2).split() for m in re.finditer(r"^layer (\d+)((?:\s+-?\d+\.\d+)+)$",
                                                                               text, re.M)}
        choices = re.search(r'^The model\'s first choices: "(.*)"$', text, re.M)
        if status != 0 or not printed or not choices:
            self.fail(page, f"{where}: the native program gave no induction scores ({status}): {text[:200]!r}")
            return
        p = len(sequence)
        layers = sorted(printed)
        shown = self.driver.execute_script(EXPLORER_ROWS, layers, list(range(p - 1, 2 * p)))
        for layer in layers:
            heads = shown[str(layer)]
            scores = []
            for h in range(len(heads)):
                rows = heads[f"L{layer}H{h}"][1:]  # rows p … 2p − 1 (the first asked for is p − 1)
                total = 0.0
                for k, row in enumerate(rows):  # the order of induction_score()'s sum
                    total += row[k + 1]  # row i = p + k, column i − p + 1 = k + 1
                scores.append(f"{total / p:.{len(printed[layer][0].split('.')[1])}f}")
            if scores != printed[layer]:
                self.fail(page, f"{where}: layer {layer}'s induction scores from the page {scores}, the native "
                                f"program prints {printed[layer]}")
        top = "".join(shown["top"][:p])  # after rows p − 1 … 2p − 2
        if top != choices.group(1):
            self.fail(page, f"{where}: the first choices on the page {top!r}, the native program prints "
                            f"{choices.group(1)!r}")

    def check_panel_figures(self, page, where, shown, status, figures):
        """The panel's figures after a run: the native program's, in the chapter's order, or marked stale."""
        if status != 0:
            if shown["figures"] and not shown["stale"]:
                self.fail(page, f"{where}: after an error the figures are not marked as the last good run's")
            return
        drawn = {figure["name"]: figure["svg"] for figure in shown["figures"]}
        if sorted(drawn) != sorted(figures):
            self.fail(page, f"{where}: figures {sorted(drawn)}, the native program writes {sorted(figures)}")
        for figure in shown["figures"]:
            if not figure["loaded"]:
                self.fail(page, f"{where}: the figure {figure['name']} was not drawn")
            elif figure["name"] in figures and figure["svg"] != figures[figure["name"]]:
                self.fail(page, f"{where}: the figure {figure['name']} differs from the native one: "
                                f"{first_difference(figure['svg'], figures[figure['name']])}")
        if shown["stale"]:
            self.fail(page, f"{where}: the figures are still marked as an earlier run's")
        order = [name for name in drawn if name in shown["pageFigures"]]
        if order != [name for name in shown["pageFigures"] if name in drawn]:
            self.fail(page, f"{where}: the panel shows the figures as {order}, the chapter shows them as "
                            f"{[name for name in shown['pageFigures'] if name in drawn]}")

    def check_panel_fields(self, page, how, labels):
        """Each field is named by its option (never split over two rows) and a short meaning;
        its hint is a phrase, not a bare placeholder such as H or M."""
        for field in labels:
            where = f"({how}) the panel's field {field['name']}"
            if field["code"] != field["name"]:
                self.fail(page, f"{where} is labelled {field['code']!r}, not with its option's name")
            elif field["codeRows"] != 1:
                self.fail(page, f"{where}: the option's name is split over {field['codeRows']} rows")
            if not field["text"] or len(field["text"]) > 40:
                self.fail(page, f"{where}: the label {field['text']!r} is not a short meaning")
            if field["hint"] and (len(field["hint"]) <= 2 or field["hint"] == field["text"]):
                self.fail(page, f"{where}: the hint {field['hint']!r} says nothing the label does not")

    def screenshots_of(self, page, phone):
        """The screenshots of this page, taken as it is open after its checks: the whole page, or its panel
        after a reader's own run (four tokens, causal)."""
        for stem, what in self.shared.screenshot_pages.get(page, []):
            path = os.path.join(self.screenshots, f"{stem}-{PHONE}px.png" if phone else f"{stem}.png")
            try:
                os.makedirs(self.screenshots, exist_ok=True)
                saved = (self.screenshot_panel if what == "panel" else self.screenshot_page)(path, phone)
            except (TimeoutException, WebDriverException) as error:
                self.fail(page, f"the screenshot {os.path.basename(path)} failed: {str(error).splitlines()[0]}")
                continue
            if saved:
                self.visit["screenshots"].append(path)
                print(f"screenshot: {path}", flush=True)
            else:
                self.fail(page, f"could not save the screenshot {path}")
        self.lap(page, "screenshots")

    def screenshot_panel(self, path, phone):
        """The open page's panel after a reader's own run, as a picture of its whole section (taken by
        Chromium itself: an element screenshot through chromedriver cuts a tall one off, and slowly)."""
        self.driver.execute_async_script(PLAYGROUND_RUN, PLAYGROUND_EXAMPLE)
        section = self.driver.find_element("css selector", "section#try-it-here")
        box = self.driver.execute_script("const r = arguments[0].getBoundingClientRect(); "
                                         "return [r.left + scrollX, r.top + scrollY, r.width, r.height]", section)
        if phone:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": PHONE, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}})
        finally:
            if phone:
                self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                            {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        return True

    def screenshot_page(self, path, phone):
        """The whole open page (at most 9000 pixels of it), at the width it is open at, its panel (if it has
        one) showing the panel's example again, as the page opens."""
        if self.driver.execute_script("return !!document.querySelector('.playground[data-program]')"):
            self.driver.execute_async_script(PLAYGROUND_RUN, {})
        self.driver.execute_script("window.scrollTo(0, 0)")
        height = min(self.driver.execute_script("return document.documentElement.scrollHeight"), 9000)
        if phone:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                        {"width": PHONE, "height": height, "deviceScaleFactor": 2, "mobile": True})
        else:
            self.driver.set_window_size(DESKTOP[0], height + (self.driver.get_window_size()["height"]
                                                              - self.driver.execute_script("return window.innerHeight")))
        time.sleep(0.3)
        try:
            return self.driver.save_screenshot(path)
        finally:
            if phone:
                self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                            {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
            else:
                self.driver.set_window_size(*DESKTOP)

    def check_front_door(self):
        """The book's own index.html, at the top of its folder, leads to the front page."""
        try:
            self.driver.get(self.url("index.html"))
            landed = self.driver.execute_async_script(WAIT_FOR_FRONT_PAGE)
        except (TimeoutException, WebDriverException) as error:
            self.fail("index.html", f"the book's index.html did not open: {str(error).splitlines()[0]}")
            return
        if not landed.endswith("/" + FRONT_PAGE):
            self.fail("index.html", f"the book's index.html does not lead to the front page (it stays at {landed})")
        self.drain_logs("index.html", settle=True)

    def check_figures(self):
        """Each SVG figure on its own: every text inside the drawing. The figures open together, each in a
        frame of one page of the book (a figure shown on its own asks for /favicon.ico; in a frame it does not)."""
        if not self.figures or self.out_of_time("the figures"):
            return
        addresses = sorted(self.figures)
        try:
            self.driver.get(self.url(FIGURE_FRAMES_PAGE))
            found = self.driver.execute_async_script(FIGURES_TEXT_OUTSIDE, addresses, TEXT_OUTSIDE)
        except (TimeoutException, WebDriverException) as error:
            self.fail("the figures", f"they did not open: {str(error).splitlines()[0]}")
            return
        for address in addresses:
            name = urllib.parse.urlsplit(address).path.lstrip("/")
            outside = found.get(address)
            if outside is None:
                self.fail(name, "the figure did not open")
            elif outside:
                self.fail(name, f"text runs outside the figure: {', '.join(outside[:4])}")
        self.drain_logs("the figures", settle=True)

    def check_search(self):
        page = f"search.html?q={SEARCH_TERM}"
        try:
            self.driver.get(self.url(page))
            found = self.driver.execute_async_script(WAIT_FOR_SEARCH)
        except (TimeoutException, WebDriverException) as error:
            self.fail(page, f"the search page did not load: {str(error).splitlines()[0]}")
            return
        results, summary = found
        if results == 0:
            self.fail(page, f'the search for "{SEARCH_TERM}" found nothing ({summary or "no summary"})')
        else:
            print(f"search: {results} page(s) found for \"{SEARCH_TERM}\"", flush=True)
        self.drain_logs(page, settle=True)

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

    def desktop_pages(self):
        """Pages at 1280 pixels (each with its panel, served, and its audit) from the queue that both browsers
        take from, until none is left."""
        with self.timed("pages at desktop width"):
            while True:
                with self.shared.lock:
                    page = self.shared.desktop_queue.pop(0) if self.shared.desktop_queue else None
                if page is None or self.out_of_time(page):
                    return
                if not self.passed_before("desktop", page):
                    self.check_page(page)

    def desktop_pass(self):
        """At 1280 pixels: the pages of the queue, then (when the other browser has finished its last one)
        the figures they show, the front door, the search."""
        self.desktop_pages()
        self.shared.helper_done.wait()
        with self.timed("figures"):
            self.check_figures()
        if not self.out_of_time("index.html"):
            self.check_front_door()
        if not self.out_of_time("search.html"):
            self.check_search()

    def phone_pass(self, pages):
        """At 390 pixels: every page must fit without sideways scrolling; every panel from file://."""
        if self.panel_pages and not (self.programs and os.path.isdir(self.programs)):
            self.fail("playground", f"the native programs (--programs {self.programs}) are missing")
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        with self.timed("pages at phone width"):
            for page in pages:
                if self.out_of_time(page):
                    return
                if not self.passed_before("phone", page):
                    self.check_phone_page(page)
        # Then, at desktop width, the pages the desktop pass has not taken yet.
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.set_window_size(*DESKTOP)
        self.desktop_pages()


def sampling_tables(text):
    """What chapter 16's program prints for one step and the generated text: {"prompt", "temperature",
    "seed", "u", "greedy", "generated" (the continuation, "/" for a new verse), "p" (the reader's rule) and
    each column of the book's rules: {character: the printed digits}}, or None."""
    labels = {"␣": " ", "\\n": "\n", "\\t": "\t"}
    prompt = re.search(r"^Prompt: (.*)$", text, re.M)
    rule = re.search(r"^One step with your rule \(τ = ([\d.]+), every character\)", text, re.M)
    u = re.search(r"u = (\d+\.\d+)\.", text)
    greedy = re.search(r"^The greedy choice, the largest logit: '(.+)'\.$", text, re.M)
    continued = re.search(r"^The prompt continued \(.*seed (\d+)\),\n.*\n((?:  .*\n)+)", text, re.M)
    book = re.search(r"^  char   p \(τ = 1\)   F \(τ = 1\)   p \(τ = 0\.5\)   p \(top-5\)\n((?:  .*\n)+)", text, re.M)
    yours = re.search(r"^  char   logit       p       F\n((?:  .*\n)+)", text, re.M)
    if not all((prompt, rule, u, greedy, continued, book, yours)):
        return None
    printed = {"prompt": prompt.group(1), "temperature": rule.group(1), "seed": int(continued.group(1)),
               "u": u.group(1), "greedy": labels.get(greedy.group(1), greedy.group(1)),
               "generated": "".join(line[2:] for line in continued.group(2).splitlines()).split("[", 1)[1]}
    columns = {"p": {}, "p (τ = 1)": {}, "p (τ = 0.5)": {}, "p (top-5)": {}}
    for line in yours.group(1).splitlines():
        character, _, p, _ = line.split()
        columns["p"][labels.get(character, character)] = p
    for line in book.group(1).splitlines():
        character, p1, _, p05, p5 = line.split()
        for name, value in (("p (τ = 1)", p1), ("p (τ = 0.5)", p05), ("p (top-5)", p5)):
            columns[name][labels.get(character, character)] = value
    return {**printed, **columns}


def panel_pages(book, pages, marker='class="playground"'):
    """The pages that hold a "Try it here" panel (or, with another marker, an attention explorer)."""
    found = []
    for page in pages:
        with open(os.path.join(book, page), encoding="utf-8") as file:
            if marker in file.read():
                found.append(page)
    return found


def css_imports(book):
    """The relative addresses that the book's style sheets @import."""
    found = set()
    for folder, _, files in os.walk(os.path.join(book, "_static")):
        for name in files:
            if name.endswith(".css"):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as file:
                    found.update(re.findall(r"""@import\s+(?:url\()?["']?([^"')\s;]+)""", file.read()))
    return sorted(name for name in found if "://" not in name and not name.startswith("/"))


def print_profile(shared):
    """--profile: where each page's time went, the slowest page first."""
    parts = sorted({part for _, part in shared.page_seconds})
    pages = sorted({page for page, _ in shared.page_seconds},
                   key=lambda page: -sum(s for (p, _), s in shared.page_seconds.items() if p == page))
    for page in pages:
        spent = {part: shared.page_seconds.get((page, part), 0.0) for part in parts}
        print(f"profile: {page}: {sum(spent.values()):.1f} s: " +
              ", ".join(f"{part} {seconds:.1f}" for part, seconds in spent.items() if seconds >= 0.05), flush=True)


def run_checks(book, port, screenshots, deadline, programs, pages, browsers, axe_source, cache, profile=False):
    """The desktop pass and the phone pass, in two browsers at once (or one after the other)."""
    shared = Shared()
    shared.cache = cache
    shared.css_imports = css_imports(book)
    chapter = SOFTMAX_PAGE if SOFTMAX_PAGE in pages else next((p for p in pages if p.startswith("chapters/")),
                                                              FRONT_PAGE)
    # The screenshots, each taken from its page as it is open at each width: file names without "-390px.png".
    shared.screenshot_pages = {FRONT_PAGE: [("front-page", "page")],
                               chapter: [("softmax" if chapter == SOFTMAX_PAGE else "chapter", "page")]}
    if PLAYGROUND_PAGE in pages:
        shared.screenshot_pages.setdefault(PLAYGROUND_PAGE, []).append(("playground", "panel"))
    shared.desktop_queue = sorted(pages, key=lambda page: -os.path.getsize(os.path.join(book, page)))
    panels = panel_pages(book, pages)
    shared.explorer_pages = panel_pages(book, pages, 'class="explorer"')
    desktop = Check(book, port, screenshots, deadline, programs, shared, panels, "desktop", axe_source)
    phone = Check(book, port, screenshots, deadline, programs, shared, panels, "phone", axe_source)

    def phone_work():
        try:
            phone.in_browser(lambda: phone.phone_pass(pages))
        finally:
            shared.helper_done.set()

    passes = [lambda: desktop.in_browser(desktop.desktop_pass), phone_work]
    if browsers > 1:
        threads = [threading.Thread(target=work) for work in passes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        shared.helper_done.set()  # one browser: the desktop pass takes every page itself
        for work in passes:
            work()
    shared.native_pool.shutdown(wait=True)
    for fact in shared.playground_facts:
        print(f"playground: {fact}", flush=True)
    for name in ("desktop", "phone"):
        parts = sorted(((seconds, part) for (pass_name, part), seconds in shared.seconds.items() if pass_name == name),
                       reverse=True)
        print(f"time: the {name} pass: " + ", ".join(f"{part} {seconds:.0f} s" for seconds, part in parts), flush=True)
    if profile:
        print_profile(shared)
    if shared.first_results:
        slowest = max(shared.first_results)
        print(f"playground: the slowest panel: {slowest[2]} ({slowest[1]}), first result after {slowest[0]} ms "
              f"(the goal: {PANEL_GOAL_MS} ms on a quiet machine)", flush=True)
    return desktop


def report_cache(cache, pages):
    """Says which pages were not checked again, per width; returns how many, per width."""
    for width, found in cache.unchanged.items():
        checked = sorted(set(pages) - set(found))
        if found:
            print(f"browser check: at {width} width, {len(found)} pages unchanged since they passed (not checked "
                  f"again); checked: {', '.join(checked) or 'none'}", flush=True)
    return {width: len(found) for width, found in cache.unchanged.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", required=True, help="the rendered book (the folder that holds docs/index.html)")
    parser.add_argument("--screenshots", required=True, help="where to save the screenshots")
    parser.add_argument("--programs", help="the native chapter programs, to compare the playground with "
                        "(default: the bin folder next to the book)")
    parser.add_argument("--time-limit", type=float, default=240, help="seconds for the whole check (default 240)")
    parser.add_argument("--axe", help="axe-core's axe.min.js: audit every page's accessibility as it opens at desktop "
                        "width (tools/browser/accessibility.py), and walk chapter 7's panel with the keyboard")
    parser.add_argument("--browsers", type=int, choices=(1, 2), default=2,
                        help="run the desktop and the phone pass in two browsers at once (2, the default) or in one")
    parser.add_argument("--profile", action="store_true", help="print where each page's time went, part by part")
    parser.add_argument("--cache", help="a folder for the results of the pages that passed: a page whose files, "
                        "panel programs and checker are unchanged since it passed is not checked again")
    parser.add_argument("--no-cache", action="store_true", help="check every page (and keep the new results)")
    args = parser.parse_args()

    book = os.path.abspath(args.book)
    if not os.path.isfile(os.path.join(book, "docs", "index.html")):
        print(f"FAIL {args.book}: no built book here (docs/index.html is missing); build the book first")
        return 1
    for program, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(program, os.X_OK):
            print(f"FAIL setup: {program} is missing. Install the Debian package: apt-get install {package}")
            return 1
    if not os.path.isfile(os.path.join(book, "index.html")):
        print(f"FAIL {args.book}: the book has no index.html at the top of its folder")
        return 1
    pages = [page for page in book_pages(book) if page != "index.html"]  # the front door, checked on its own
    axe_source = None
    if args.axe:
        if not os.path.isfile(args.axe):
            print(f"FAIL setup: {args.axe} is missing; tools/setup.sh installs axe-core@{accessibility.AXE_VERSION}")
            return 1
        with open(args.axe, encoding="utf-8") as file:
            axe_source = file.read()
    started = time.monotonic()
    with Server(book) as server:
        programs = os.path.abspath(args.programs or os.path.join(book, "..", "bin"))
        solutions = solution_bodies(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
        cache = PageCache(args.cache and os.path.abspath(args.cache),
                          checker_key(axe_source, programs, solutions) if args.cache else "", not args.no_cache)
        check = run_checks(book, server.port, os.path.abspath(args.screenshots), started + args.time_limit,
                           programs, pages, args.browsers, axe_source, cache, args.profile)
        for path in sorted(set(server.missing) - check.shared.axe_requests):
            check.fail(path, "the browser asked for this file, but the book does not have it")
    cache.save()
    unchanged = report_cache(cache, pages)
    seconds = time.monotonic() - started
    if check.failures:
        print(f"browser check: {len(check.failures)} problem(s) on {len(pages)} pages ({seconds:.0f} s)")
        return 1
    audited = (f", accessibility audited against WCAG 2.1 AA (axe-core {accessibility.AXE_VERSION}, light and "
               f"dark)" if axe_source else "")
    again = (f"; {unchanged['desktop']} at desktop and {unchanged['phone']} at phone width unchanged since they "
             f"passed" if any(unchanged.values()) else "")
    print(f"browser check: all {len(pages)} pages passed{audited}{again} ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
