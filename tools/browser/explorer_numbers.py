"""The attention explorer's numbers against the native programs and the chapters' figures.

Chapter 15's explorer: for each model it offers, its weights on the panel's sequence repeated once
give the induction scores and first choices the native program prints (check_explorer_numbers,
compare_explorer). Chapter 16's sampler: its bars under each rule, and its draws with the program's
seed, are the program's one-step tables and generated text (check_explorer_sampling,
sampling_tables()). Elsewhere (chapter 14's page, the front page), its first view: every head on the
last character, weights that sum to 1, and on chapter 14's page the weights of the chapter's
heatmaps (check_explorer_first_view, heatmap_rows()).
"""
import os
import re
import time
import xml.etree.ElementTree as ElementTree

from browser_session import browser_script
from check_core import EXPLORER_STATE, CheckCore
from page_cache import native_inputs
from selenium.webdriver.support.ui import Select

EXPLORER_ROWS = browser_script("explorer_rows")
EXPLORER_SAMPLE = browser_script("explorer_sample")
EXPLORER_DRAW = browser_script("explorer_draw")
# The attention explorer of a chapter page is checked against the native program on its panel's example
# sequence, repeated once, as the program's --sequence repeats it.
EXPLORER_SEQUENCES = {"ch15-induction-head": "qzkvbjwmtfyhdgsp"}
# The chapter whose build-time run drew its heads' heatmaps on the explorer's text (head-H.svg in the build's
# figures): the explorer's first view is checked against the heatmaps' last row.
EXPLORER_HEATMAPS = {"ch14-next-character": "14-next-character"}


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


class ExplorerNumbers(CheckCore):
    """The numbers the attention explorer shows, against the native programs' and the chapters' own."""

    def explorer_state(self, after=None):
        """What the explorer shows now; with `after`, once it has finished more runs than that."""
        return self.driver.execute_async_script(EXPLORER_STATE, after)

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
