"""The "Try it here" panels against the native programs.

On the panel's own example and on readers' inputs made for its fields (playground_inputs(): other
options, another shape, other values, and a malformed input the program must refuse), the panel's
command (its fields against the program's defaults), text, exit status and figures must be what the
native program gives on the same options (check_playground, check_panel_figures); each field is
labelled with its option and a short meaning (check_panel_fields). Served at 1280 pixels, every
input; from file:// at 390, the example and the malformed input.
"""
import os

from check_core import PLAYGROUND_RUN, WAIT_FOR_PLAYGROUND, CheckCore
from page_cache import native_inputs
from selenium.common.exceptions import TimeoutException, WebDriverException


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


class PanelChecks(CheckCore):
    """A page's "Try it here" panel against the native program."""

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
