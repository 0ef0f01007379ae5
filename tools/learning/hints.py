"""A failed check as one sentence: what was checked, what was expected, what came out, why
(in the chapter's own words, from the check's INFO message)."""
import re
from pathlib import Path

from .book import NOT_IMPLEMENTED, TESTS


def number(text, digits=6):
    """Catch2 prints doubles with 17 digits; show them as a person would write them."""
    try:
        value = float(text.strip())
    except ValueError:
        return text.strip()
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


def matrix_block(text):
    """A matrix as Catch2 shows it (tests/catch_matrix.hpp: its shape, then its rows), indented
    under the hint; any other value as it is."""
    lines = text.strip("\n").splitlines()
    return lines[0] if len(lines) < 2 else lines[0] + "".join(f"\n          {line}" for line in lines[1:])


# Catch2's words for its string matchers, as the rest of a sentence "expected ... to ...".
MATCHER_WORDS = [("contains: ", "contain "), ("equals: ", "equal "), ("starts with: ", "start with "),
                 ("ends with: ", "end with "), ("matches ", "match ")]


def matcher_sentence(description):
    """'( contains: "a" and contains: "b" )' as 'contain "a" and "b"'."""
    text = re.sub(r"\(\s+|\s+\)", "", description).strip()
    for word, verb in MATCHER_WORDS:
        first = text.find(word)
        if first >= 0:  # the verb once, then only what follows each repeat: contain "a" and "b"
            text = text[:first] + verb + text[first + len(word):].replace(word, "")
    return text


def comparison_sentence(original, expanded, why):
    """'x < y' that failed with '0.73 < 1e-07' as 'x: expected below 1e-07, got 0.73'."""
    negated = original.startswith("!(") and expanded.startswith("!(")
    if negated:  # CHECK_FALSE(x > y)
        original, expanded = original[2:-1], expanded[2:-1]
    found = re.fullmatch(r"(.+?)\s(<=|>=|<|>|!=)\s(.+)", expanded, re.S)
    if not found:
        return None
    got, operator, bound = found.groups()
    subject = re.split(r"\s(?:<=|>=|<|>|!=)\s", original, maxsplit=1)[0]
    if negated:
        operator = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "!=": "=="}[operator]
    wording = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "!=": "anything but",
               "==": "exactly"}[operator]
    if "\n" in got or "\n" in bound:
        return f"{subject}: expected {wording} {matrix_block(bound)}\n        got {matrix_block(got)}" + \
            (f"\n        {why.strip()}" if why else "")
    bound, got = numbers(bound, got)
    return f"{subject}: expected {wording} {bound}, got {got}{why}"


WRAPPED = 2 ** 63  # a std::size_t this large went below 0: 0 - 1 is 2**64 - 1


def index_cause(message):
    """The likely cause of sa::Matrix's "matrix index (r, c) is outside a R×C matrix": an index
    that went below 0 and wrapped around, a row and a column swapped (the index fits the other
    axis), or a loop bound from another size."""
    found = re.match(r"matrix index \((\d+), (\d+)\) is outside a (\d+)×(\d+)", message)
    if not found:
        return "a row and a column index swapped, e.g. a missing transpose, or a loop bound from the wrong size"
    row, col, rows, cols = map(int, found.groups())
    index, other = (row, cols) if row >= rows else (col, rows)
    if index >= WRAPPED:
        below = 2 ** 64 - index
        where = "i - 1 went below 0 at i = 0" if below == 1 else f"i - {below} went below 0 at an i below {below}"
        return (f"{index} is 0 - {below} wrapped around: an index is a std::size_t, which has no negative numbers, "
                f"so {where}; check the first positions, which have nothing before them")
    if index < other:
        return "a row and a column index swapped, e.g. a missing transpose"
    return "the index is past both of the matrix's sizes: a loop bound taken from another size"


def own_infos(filename, line):
    """Whether the check at `line` of a test source has an INFO of its own: one written after the
    check before it. Catch2 reports every INFO still in scope, so without one of its own the last
    INFO belongs to an earlier check and says nothing about this one. None if the source cannot
    be read."""
    if not filename:
        return None
    path = Path(filename)
    if not path.is_file():  # a path relative to the folder it was compiled in: the book's tests/
        path = TESTS / path.name
    try:
        lines = SOURCES.setdefault(filename, path.read_text(encoding="utf-8").splitlines())
    except OSError:
        return None
    for text in reversed(lines[:max(line - 1, 0)]):
        stripped = text.strip()
        if re.match(r"(INFO|CAPTURE)\(", stripped):
            return True
        if re.match(r"(CHECK|REQUIRE)\w*\(|(TEST_CASE|SECTION)\(", stripped):
            return False
    return False


SOURCES = {}


def describe_failure(element, infos):
    """One sentence for a failed check: what was checked, what was expected, what came out, why.
    The last INFO message in scope says why, in the chapter's own words (an INFO stays in
    scope until its block ends, so the earlier ones are about earlier checks)."""
    if infos and own_infos(element.get("filename"), int(element.get("line") or 0)) is False:
        infos = []  # the INFO in scope is an earlier check's
    why = f" ({infos[-1]})" if infos else ""
    original = (element.findtext("Original") or "").strip()
    expanded = (element.findtext("Expanded") or "").strip()
    inner = element.find("Exception")
    if inner is None:
        inner = element.find("FatalErrorCondition")
    if element.tag in ("Exception", "Failure", "FatalErrorCondition"):
        inner = element
    if inner is not None:
        text = (inner.text or "").strip()
        what = "crashed" if inner.tag == "FatalErrorCondition" else "threw"
        macro = element.get("type", "")
        if "THROWS" in macro and inner.tag == "Exception":  # CHECK_THROWS_AS(call, Type), CHECK_NOTHROW(call)
            call, _comma, wanted = original.rpartition(", ") if "THROWS_AS" in macro else (original, "", "")
            wanted = "not throw" if "NOTHROW" in macro else f"throw {wanted}" if wanted else "throw another error"
            return f"{call}: expected to {wanted}{why}, but it threw \"{text}\""
        if text.startswith("matrix index ("):  # sa::Matrix's own message, from a step the test does not wrap
            text += f" ({index_cause(text)})"
        where = f"{original}: " if original and not original.startswith("{Unknown") else ""
        return f"{where}{what} \"{text}\"{why}" if what == "threw" else f"{where}crashed: {text}{why}"
    macro = element.get("type", "")
    actual = re.split(r",\s*(?=\w+\()", original, maxsplit=1)[0] if "THAT" in macro else original
    within = re.fullmatch(r"(.*) is within (.*) of (.*)", expanded)
    relative_match = re.fullmatch(r"(.*) and (.*) are within (.*) of each other", expanded)
    equal = re.fullmatch(r"(.+?)\s==\s(.+)", expanded, re.S) if "==" in original else None
    if within or relative_match or equal:
        got, wanted = (within or relative_match or equal).group(1), (within[3] if within else (
            relative_match or equal).group(2))
        actual = re.sub(r"\s*==.*$", "", actual)
        if "\n" in got or "\n" in wanted:  # matrices: one row per line, as the book prints them
            return f"{actual}: expected {matrix_block(wanted)}\n        got {matrix_block(got)}" + \
                (f"\n        {why.strip()}" if why else "")
        wanted, got = numbers(wanted, got)
        return f"{actual}: expected {wanted}, got {got}{why}"
    matcher = re.fullmatch(r'(".*"|.+?) (\( .* \)|(?:not )?(?:contains: |equals: |starts with: |ends with: |matches ).*)',
                           expanded, re.S)
    if matcher and ("THAT" in macro or "THROWS_WITH" in macro):
        value, description = matcher.groups()
        subject = re.split(r",\s*(?=(?:Catch::Matchers::)?\w+\(|!)", original, maxsplit=1)[0]
        what = "its error message" if "THROWS" in macro else "it"
        return f"{subject}: expected {what} to {matcher_sentence(description)}, but it was {value}{why}"
    if "THROWS" in macro:
        call = re.split(r",\s*(?=(?:Catch::Matchers::)?\w+\(|!)", original, maxsplit=1)[0]
        return f"{call}: expected to throw{why}, but it did not" if expanded in ("", original) else \
            f"{original}: failed, with {expanded}{why}"
    compared = comparison_sentence(original, expanded, why)
    if compared:
        return compared
    if expanded in ("false", "!true") and original:
        return f"{original}: expected it to hold, but it did not{why}"
    return f"{original}: failed{why}" + (f", with {expanded}" if expanded and expanded != original else "")


def first_failure(test_case):
    """(hint, the exercise whose stub it reached or "") for the first failure in a <TestCase>, or None."""
    infos, failures = [], []

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
    texts = [" ".join(element.itertext()) for element, _infos in failures]
    stub = re.search(re.escape(NOT_IMPLEMENTED) + r" (\w+)[^\n]*", texts[0])
    if stub and all(NOT_IMPLEMENTED in text for text in texts):
        return stub[0].strip(), stub[1]
    return describe_failure(*failures[0]), ""

