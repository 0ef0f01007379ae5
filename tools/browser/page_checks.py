"""The checks of each page, at both widths, and of the book as a whole.

At 1280 pixels (check_desktop_width): the math is typeset, every image and <object> figure loads,
every link leads to a page of the book, no listing is cut off or covered by its copy button; the
axe-core audit of the page as it opened (check_accessibility, with --axe); headings without a raw
underscore, solutions folded until the reader opens them, the front page's first paragraph
(check_shape). At 390 pixels (check_phone_layout, on a page opened at that width by check_phone_width
or switched to it in place): nothing runs off the screen, and listings and math are not cut off. Once a
run, at the end of the desktop pass: every SVG figure on its own (check_figures), the book's index.html
(check_front_door) and its search (check_search).
"""
import os
import urllib.parse

import accessibility
from browser_session import DESKTOP, browser_script
from check_core import PHONE, CheckCore
from selenium.common.exceptions import TimeoutException, WebDriverException

SEARCH_TERM = "softmax"
FRONT_PAGE = "docs/index.html"
FIGURE_FRAMES_PAGE = "genindex.html"  # a small page of the book, whose frames show the figures one by one

PAGE_FACTS = browser_script("page_facts")
TOO_WIDE = browser_script("too_wide")
TEXT_OUTSIDE = browser_script("text_outside")
CODE_LAYOUT = browser_script("code_layout")
HANGING_INDENT = browser_script("hanging_indent")
MATH_CLIPPED = browser_script("math_clipped")
PAGE_SHAPE = browser_script("page_shape")
OPEN_SOLUTIONS = browser_script("open_solutions")
WAIT_FOR_FRONT_PAGE = browser_script("wait_for_front_page")
WAIT_FOR_SEARCH = browser_script("wait_for_search")
FIGURES_TEXT_OUTSIDE = browser_script("figures_text_outside")


class PageChecks(CheckCore):
    """A page's own checks at each width, and the checks of the book as a whole."""

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

    def check_phone_width(self, page, address=None):
        """The page opened at 390 pixels and its width checks; returns what open() said, or None if it did not load."""
        try:
            opened = self.open(page, address)
            self.lap(page, "load")
        except (TimeoutException, WebDriverException) as error:
            self.fail(page, f"the page did not load at {PHONE} px: {str(error).splitlines()[0]}")
            return None
        self.check_phone_layout(page)
        return opened

    def check_phone_layout(self, page):
        """The open page at 390 pixels: nothing runs off the screen, no listing or formula is cut off."""
        try:
            culprits = self.driver.execute_script(TOO_WIDE)
            if culprits:
                self.fail(page, f"content runs off a {PHONE}-pixel phone screen: {'; '.join(culprits)}")
            for problem in self.driver.execute_script(CODE_LAYOUT, True):
                self.fail(page, f"at {PHONE} px, {problem}")
            for problem in self.driver.execute_script(MATH_CLIPPED) + self.driver.execute_script(HANGING_INDENT):
                self.fail(page, f"at {PHONE} px, {problem}")
        except (TimeoutException, WebDriverException) as error:
            self.fail(page, f"the page could not be checked at {PHONE} px: {str(error).splitlines()[0]}")
        self.lap(page, "page checks")

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
