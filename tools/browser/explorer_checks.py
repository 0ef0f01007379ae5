"""The book's interactive figures as a reader uses them: the attention explorer and chapter 7's stepper.

The explorer (check_explorer): on chapter 15's page, a hover, a click that locks and one that
unlocks, a pointer at rest while the page scrolls, the arrow keys, Enter and Escape, the layer
selector, the ablation, the head selector and its saved SVG file; then its numbers, on every page
that has one (explorer_numbers.py). The stepper (check_stepper): its first step, Next through every
step and Back, each number it shows one that chapters 1 to 7 print.
"""
import os
import shutil
import tempfile
import time
import xml.etree.ElementTree as ElementTree

from browser_session import browser_script
from check_core import DECIMAL
from explorer_numbers import EXPLORER_SEQUENCES, ExplorerNumbers
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

STEPPER_WALK = browser_script("stepper_walk")


class ExplorerChecks(ExplorerNumbers):
    """The attention explorer's interactions (its numbers: ExplorerNumbers) and chapter 7's stepper."""

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
