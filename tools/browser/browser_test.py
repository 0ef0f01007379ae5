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
pass has not taken yet, the largest first. A page with a panel or an explorer loads
once per width (at 390 pixels from file://); any other page loads once, and is
checked at 390 pixels where it is open at 1280, laid out again (run_checks()).

It saves screenshots of the front page, of the Softmax chapter and of chapter 7's
panel at desktop width and at 390 pixels into the screenshots folder, each taken
from its page as the check left it. The JavaScript it runs in the pages is in
tools/browser/, one program per .js file.

With --cache DIR, a page that passed at a width is not checked again at that width
while nothing it depended on has changed (PageCache, in page_cache.py, says what that
is); the figures, the search and the front door are checked on every run. --profile
prints where each page's time went.

The checks live beside this file, in modules by what they check, each a class of the one
checker (Check, below): page_checks.py (each page at both widths, its audit, the figures, the
front door, the search), panel_checks.py (the panels against the native programs),
explorer_numbers.py and explorer_checks.py (the attention explorer and chapter 7's stepper),
screenshots.py; what they all stand on (the shared state, opening a page, its logs, a failure,
the native runs) is check_core.py, and the cache page_cache.py. This file runs the two passes.

    /usr/bin/python3 tools/browser/browser_test.py --book build/book --screenshots build/screenshots
"""
import argparse
import contextlib
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The browser and the book's server (browser_session.py, which also says what to install when
# selenium is missing); the keyboard and contrast audit (accessibility.py), which uses them too;
# the checks, each module a class of the checker (Check).
from browser_session import CHROMEDRIVER, CHROMIUM, DESKTOP, Server, book_pages  # noqa: E402
import accessibility  # noqa: E402
from check_core import PHONE, PLAYGROUND_RUN, Shared, solution_bodies  # noqa: E402
from explorer_checks import ExplorerChecks  # noqa: E402
from page_cache import PageCache, checker_key  # noqa: E402
from page_checks import FRONT_PAGE, PageChecks  # noqa: E402
from panel_checks import PanelChecks  # noqa: E402
from screenshots import Screenshots  # noqa: E402

SOFTMAX_PAGE = "chapters/05-softmax/softmax.html"
PLAYGROUND_PAGE = "chapters/07-attention/attention.html"  # its panel is shown in use in the screenshots
PANEL_GOAL_MS = 3000  # each panel's first result on the book's example, on a quiet 2-core machine


class Check(PageChecks, PanelChecks, ExplorerChecks, Screenshots):
    """One browser's checker: each page with all its checks, and the desktop and the phone pass."""

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
        if panel is not None and page in self.shared.in_place and not self.passed_before("phone", page):
            with self.phone_width():
                self.check_phone_layout(page)
            self.end_visit(page, "desktop", "phone")
        else:
            self.end_visit(page, "desktop")

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
            self.end_visit(page, "phone")
        finally:
            self.file_mode = False

    @contextlib.contextmanager
    def phone_width(self):
        """The browser at 390 pixels, as a phone shows a page, then back at 1280 (the open page is laid out
        again, not loaded again)."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": PHONE, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        try:
            yield
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            self.driver.set_window_size(*DESKTOP)

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
                elif page in self.shared.in_place and not self.passed_before("phone", page):
                    with self.phone_width():  # passed at desktop width before, not at phone width
                        self.check_phone_page(page)

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
        with self.phone_width(), self.timed("pages at phone width"):
            for page in pages:
                if self.out_of_time(page):
                    return
                if page not in self.shared.in_place and not self.passed_before("phone", page):
                    self.check_phone_page(page)
        # Then, at desktop width, the pages the desktop pass has not taken yet.
        self.desktop_pages()


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
    # A page with no panel, no explorer and no screenshot is checked at phone width where it is open at desktop
    # width, laid out again at 390 pixels: the same layout, to a tenth of a pixel, as a load at 390 on every such
    # page (its scroll size and the boxes of its paragraphs, headings, lists, tables, listings, images and formulas,
    # and what the width checks find), and the API page's second load saved (11.4 s of loading, 2.5 s in place).
    # Each page with a panel or an explorer opens at phone width from file://, which proves the book without a server.
    shared.in_place = {page for page in pages if page not in panels and page not in shared.explorer_pages
                       and page not in shared.screenshot_pages}
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
