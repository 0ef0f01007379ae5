#!/usr/bin/env python3
"""The accessibility check: every page of the built book through axe-core 4.

The browser check (tools/browser/browser_test.py --axe, the test browser.book) runs audit() and
keyboard_walk() on each page as it opens it; run on its own, this script opens the pages
itself (--page for one page).

The book is checked against WCAG 2.1 level AA (axe-core's tags wcag2a, wcag2aa,
wcag21a and wcag21aa) plus axe's best practices. Each page is opened once in
headless Chromium, served from 127.0.0.1 only, with its math typeset and its
"Try it here" panel showing its first result; axe-core (installed by
tools/setup.sh from the npm registry, pinned to AXE_VERSION, and injected from
the local file, never from a network) then audits it in the light colour scheme
and again in the dark one: there with the rules that look at colours alone, since
the others find the same in both wherever both show the same elements
(audit_schemes()).

The colour contrast of the text is checked apart. axe-core's color-contrast rule composes
each element's stack of backgrounds over a grid it lays over the whole page, and is the
slowest part of the audit; tools/browser/text_contrast.js checks every text of the page
in the same colour scheme instead, before axe-core runs: each element with text of its
own that is shown, and each form field that shows a value, its text colour over its
background colour (the nearest one that is not transparent, semi-transparent ones laid
over those below), each combination of colour, background, font size and weight once,
against WCAG 2.1's contrast ratio (4.5:1, or 3:1 for large text: 24 px, or 18.66 px
bold, rounded as axe-core rounds it). It is stricter than axe-core: it also checks
punctuation, which axe-core skips, a single character, which axe-core leaves undecided
when it fails, and text beside a large pseudo-element (::before, ::after) with a
background, where axe-core gives up (neither counts that background as behind the text).
An element it cannot judge that simply (a background image or gradient, opacity, a
filter or blend mode, a text shadow or stroke, a colour it cannot read, SVG text, or a
line of text that a box laid out of the flow, absolute, fixed or sticky and not its own,
lies over or under) is audited by axe-core's color-contrast rule after all, on those
elements alone and in the same run, so nothing is left out; on a page with none the rule
does not run. The one box the book lays over text on purpose, a listing's copy button,
must not cover a character of it (the browser check's code_layout.js).

The other colour rule, link-in-text-block, passes a link inside text when its style sets
it apart from the text around it (an underline, a border, a weight...) or when its colour
does. axe-core runs both checks on every link, and the colour's lays the same grid over the
page, so the rule looks only at the links whose style does not already pass, found with
axe-core's own function for that check (tools/browser/run_axe.js); a page's underlined
links cost it nothing.

The check fails (exit status 1, one line per problem)

* on every critical or serious violation, naming the rule, the page, the colour
  scheme and the elements;
* on text whose contrast is too low (text-contrast), naming the page, the colour
  scheme, the colours, their ratio and one of the elements;
* on a moderate or minor finding that is not in ACCEPTED below with its reason;
* when the keyboard walk through chapter 7's panel fails: Tab must reach every
  field, the Run and reset buttons and the output; Enter in a field runs the
  program; the result is announced through a live region; a refused field is
  marked invalid and described by the error text.

    /usr/bin/python3 tools/browser/accessibility.py --book build/book --axe build/node_modules/axe-core/axe.min.js
"""
import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_session import Server, book_pages, browser_script, start_browser  # noqa: E402

WAIT_FOR_MATH = browser_script("wait_for_math")
WAIT_FOR_PLAYGROUND = browser_script("wait_for_playground")

AXE_VERSION = "4.10.2"
STANDARD = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
FAILING_IMPACTS = ("critical", "serious")
KEYBOARD_PAGE = "chapters/07-attention/attention.html"

# Findings below "serious" that stay, each with the reason it stays.
# (rule, page): reason. A finding not listed here fails the check.
ACCEPTED = {
}

TEXT_CONTRAST = "text-contrast"  # the name text_contrast.js's findings are reported under
# Elements shown in one colour scheme only, besides the theme button's icons (audit_schemes()).
SCHEME_ONLY = ".only-light, .only-dark"

RUN_AXE = browser_script("run_axe")
TEXT_CONTRAST_CHECK = browser_script("text_contrast")
FOCUSED = browser_script("focused")
PANEL_PARTS = browser_script("panel_parts")
WAIT_FOR_RUN = browser_script("wait_for_run")
PANEL_STATE = browser_script("panel_state")


def audit(driver, page, scheme, colour_rules_only=False):
    """The problems axe-core and the text contrast check find on the open page in one colour scheme, as lines.

    With colour_rules_only, axe-core runs only its rules whose result can depend on colours (its tag
    cat.color: color-contrast and link-in-text-block), for a page already audited whole in the other
    scheme whose shown elements are the same in both (see audit_schemes())."""
    driver.execute_script("document.body.dataset.theme = arguments[0]", scheme)
    text = driver.execute_script(TEXT_CONTRAST_CHECK)
    problems = []
    for kind in text["failures"]:
        weight = ", bold" if kind["bold"] else ""
        problems.append(f"{page} [{scheme}]: {TEXT_CONTRAST} (serious): text must have a contrast ratio of at "
                        f"least {kind['required']}:1 with its background: {kind['fg']} on {kind['bg']} has "
                        f"{kind['ratio']}:1 ({kind['fontSize']:g} px{weight}), {kind['count']} element(s): "
                        f"{kind['where']} \"{kind['text']}\"")
    found = driver.execute_async_script(RUN_AXE, scheme, STANDARD, text["undecided"], colour_rules_only)
    if isinstance(found, dict):
        return problems + [f"{page} [{scheme}]: axe-core could not run: {found['error']}"]
    for violation in found:
        if violation["impact"] not in FAILING_IMPACTS and (violation["id"], page) in ACCEPTED:
            continue
        where = "; ".join(violation["nodes"]) + (" ..." if violation["count"] > len(violation["nodes"]) else "")
        problems.append(f"{page} [{scheme}]: {violation['id']} ({violation['impact']}): {violation['help']}, "
                        f"{violation['count']} element(s): {where}")
    return problems


def audit_schemes(driver, page, lap=None):
    """The problems of the open page in the light scheme, audited whole, and then in the dark one.

    The theme (furo's body[data-theme]) changes colours, and what is shown in one scheme only:
    the theme button's three icons, one shown in each scheme, and any element of the classes
    only-light or only-dark. Every rule of axe-core that does not look at colours (names, roles,
    landmarks, headings, ids, alternative text...) reads the shown elements, not their colours, so
    it finds the same in both schemes wherever they show the same elements: on such a page the dark
    scheme is audited by the colour rules alone (and the code contrast check); a page with elements
    of one scheme only (SCHEME_ONLY) is audited whole in both. `lap(name)`, if given, is called
    after each scheme (the browser check's --profile)."""
    problems = audit(driver, page, "light")
    if lap:
        lap("axe light")
    whole = driver.execute_script("return document.querySelectorAll(arguments[0]).length > 0", SCHEME_ONLY)
    problems += audit(driver, page, "dark", colour_rules_only=not whole)
    if lap:
        lap("axe dark" if whole else "axe dark (colour rules)")
    return problems


def keyboard_walk(driver):
    """Tab through chapter 7's panel from its first field, then run and refuse from the keyboard."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    problems = []
    parts = driver.execute_script(PANEL_PARTS)
    first = driver.find_element(By.CSS_SELECTOR, ".playground[data-program] input[name]:not([disabled])")
    driver.execute_script("arguments[0].focus()", first)
    reached = []
    for _ in range(len(parts["fields"]) + len(parts["buttons"]) + 8):
        focused = driver.execute_script(FOCUSED)
        if not focused["inPanel"]:
            break
        reached.append(focused)
        ActionChains(driver).send_keys(Keys.TAB).perform()
    names = {f["name"] for f in reached}
    ids = {f["id"] for f in reached}
    for field in parts["fields"]:
        if field not in names:
            problems.append(f"{KEYBOARD_PAGE}: keyboard: Tab never reaches the field {field}")
    for button in parts["buttons"]:
        if button not in names:
            problems.append(f"{KEYBOARD_PAGE}: keyboard: Tab never reaches the button {button}")
    if parts["output"] not in ids:
        problems.append(f"{KEYBOARD_PAGE}: keyboard: Tab never reaches the program's output")
    if not parts["live"]:
        problems.append(f"{KEYBOARD_PAGE}: keyboard: the panel's status line is not a live region")

    # Enter in a field runs the program; a refusal marks that field and is announced.
    runs = int(driver.execute_script("return document.querySelector('.playground').dataset.runs || '0'"))
    tokens = driver.find_element(By.CSS_SELECTOR, ".playground input[name='--tokens']")
    tokens.clear()
    tokens.send_keys("A,,B", Keys.ENTER)
    driver.execute_async_script(WAIT_FOR_RUN, runs)
    state = driver.execute_script(PANEL_STATE)
    if state["runs"] <= runs:
        problems.append(f"{KEYBOARD_PAGE}: keyboard: Enter in the Tokens field did not run the program")
    if "--tokens" not in state["status"]:
        problems.append(f"{KEYBOARD_PAGE}: keyboard: the refusal is not announced in the status line "
                        f"(it says {state['status']!r})")
    if state["invalid"] != "true" or state["describedby"] != state["output"]:
        problems.append(f"{KEYBOARD_PAGE}: keyboard: the refused Tokens field is not marked invalid "
                        f"and described by the error")
    return problems


def audit_page(driver, port, axe_source, page):
    """The problems on one page: axe-core in both colour schemes, and the keyboard walk on its page."""
    driver.get(f"http://127.0.0.1:{port}/{page}")
    driver.execute_async_script(WAIT_FOR_MATH)
    driver.execute_async_script(WAIT_FOR_PLAYGROUND)
    driver.execute_script(axe_source)
    found = audit_schemes(driver, page)
    if page == KEYBOARD_PAGE:
        driver.execute_script("document.body.dataset.theme = 'light'")
        found += keyboard_walk(driver)
    return found


def audit_pages(port, axe_source, queue, problems):
    """Audits pages from `queue` in a headless Chromium of its own until none is left."""
    from selenium.common.exceptions import WebDriverException

    profile = tempfile.mkdtemp(prefix="book-a11y-")
    try:
        driver = start_browser(profile)
    except WebDriverException as error:
        problems.append(f"browser: Chromium did not start: {str(error).strip().splitlines()[0]}")
        shutil.rmtree(profile, ignore_errors=True)
        return
    try:
        while queue:
            try:
                page = queue.pop(0)
            except IndexError:  # the other browser took the last one
                return
            started = time.monotonic()
            try:
                problems.extend(audit_page(driver, port, axe_source, page))
            except WebDriverException as error:
                problems.append(f"{page}: the page could not be audited: {str(error).strip().splitlines()[0]}")
            print(f"{page}: {time.monotonic() - started:.1f} s", flush=True)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", required=True, help="the rendered book's folder")
    parser.add_argument("--axe", required=True, help="axe-core's axe.min.js")
    parser.add_argument("--page", action="append", help="check only this page (repeatable), e.g. docs/index.html")
    parser.add_argument("--browsers", type=int, choices=(1, 2), default=2,
                        help="audit in two browsers at once (2, the default) or in one")
    arguments = parser.parse_args()
    if not os.path.isfile(arguments.axe):
        sys.exit(f"accessibility check: {arguments.axe} is missing; tools/setup.sh installs axe-core@{AXE_VERSION}")
    with open(arguments.axe, encoding="utf-8") as file:
        axe_source = file.read()
    pages = arguments.page or book_pages(arguments.book)
    # The largest pages first, so that the two browsers finish at about the same time.
    queue = sorted(pages, key=lambda page: -os.path.getsize(os.path.join(arguments.book, page)))
    problems = []
    started = time.monotonic()
    with Server(arguments.book) as server:
        threads = [threading.Thread(target=audit_pages, args=(server.port, axe_source, queue, problems))
                   for _ in range(arguments.browsers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for problem in problems:
        print(problem)
    print(f"accessibility check: {len(pages)} pages, light and dark, against WCAG 2.1 AA (axe-core {AXE_VERSION}): "
          f"{len(problems)} problem(s) ({time.monotonic() - started:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
