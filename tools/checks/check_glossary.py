#!/usr/bin/env python3
"""Every symbol in the glossary of symbols is defined once, and the chapters' tables name it as the glossary does.

A term of a `.. glossary::` block may name several symbols (":math:`W_Q`, :math:`W_K`");
each one counts. The check fails, naming both lines, when a symbol appears in two terms
or twice in one: one letter with two meanings is what the glossary exists to prevent.

With --chapters, a table row of a chapter (a `list-table`) whose first cell names a symbol,
":math:`A`, the weights", must use the symbol for what the glossary says it is: the symbol
is in the glossary, and the words after "the" appear in its definition ("The attention
weights, ..."). A row ":math:`M`, the weights" fails, since the glossary's M is the mask.
Also with --chapters, no formula in the prose ends in an operator that the prose after it would
have to finish (":math:`g \\bmod` (the number of processes)"): a formula is whole, and a quantity
it needs has a symbol of its own.

With --self-test it first checks itself on a glossary that defines a symbol twice and on a
table that names a symbol for something else.
"""
import argparse
import pathlib
import re
import sys

GLOSSARY = re.compile(r"^(\s*)\.\. glossary::\s*$")
MATH = re.compile(r":math:`([^`]+)`")


def symbols(text):
    """[(symbol, line number)] of every symbol named by a term of every glossary block."""
    return [(name, number) for name, number, _ in entries(text)]


def entries(text):
    """[(symbol, line number, definition)] of every symbol named by a term of every glossary block;
    the definition is the text indented under the term, on one line."""
    found = []
    block_indent = None  # inside a glossary block: the indent of its directive
    term_indent = None   # the indent of its terms, set by the first one
    term_line = None     # the line of the term whose definition is being read
    for number, line in enumerate(text.split("\n"), start=1):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and line.strip() and indent <= block_indent:
            block_indent = term_indent = None
        match = GLOSSARY.match(line)
        if match:
            block_indent = len(match.group(1))
            continue
        if block_indent is None or not line.strip():
            continue
        option = line.lstrip().startswith(":") and not line.lstrip().startswith(":math:")
        if option and term_indent is None:
            continue  # an option of the directive, such as :sorted:
        if term_indent is None:
            term_indent = indent
        if indent != term_indent:  # a definition, indented under its term: it belongs to the term's symbols
            term_symbols = [entry for entry in found if entry[1] == term_line]
            for entry in term_symbols:
                entry[2] = f"{entry[2]} {line.strip()}".strip()
            continue
        term_line = number
        names = MATH.findall(line) or [line.strip()]
        found.extend([" ".join(name.split()), number, ""] for name in names)
    return [tuple(entry) for entry in found]


def duplicates(text):
    """Lines describing each symbol defined more than once."""
    first = {}
    problems = []
    for name, number in symbols(text):
        if name in first:
            problems.append(f"the symbol {name} is defined on line {first[name]} and again on line {number}")
        else:
            first[name] = number
    return problems


# A table's first cell that names its symbols: ":math:`A`, the weights", ":math:`Q`, :math:`K`, the queries".
NAMED_CELL = re.compile(r"^\s*\* - ((?::math:`[^`]+`,\s*)+)the ([^:`]+?)\s*$")


def misnamed(glossary, chapter_text, chapter):
    """Lines describing each table row of a chapter that names a symbol for what the glossary calls something else."""
    defined = {}
    for name, _, definition in entries(glossary):
        defined.setdefault(name, definition)  # a symbol defined twice is reported by duplicates()
    problems = []
    for number, line in enumerate(chapter_text.split("\n"), start=1):
        match = NAMED_CELL.match(line)
        if not match:
            continue
        words = match.group(2).split()
        for name in (" ".join(found.split()) for found in MATH.findall(match.group(1))):
            if name not in defined:
                problems.append(f"{chapter}:{number}: the table names {name}, which the glossary does not define")
            elif not all(re.search(rf"\b{re.escape(word)}\b", defined[name], re.IGNORECASE) for word in words):
                problems.append(f"{chapter}:{number}: the table calls {name} \"the {match.group(2)}\", but the "
                                f"glossary's {name} is: {defined[name][:60]}...")
    return problems


# A formula whose last token is an operator waiting for its right-hand side.
DANGLING = re.compile(r"(\\bmod|\\cdot|\\times|[-+=<>/]|\\le|\\ge)\s*$")


def dangling(chapter_text, chapter):
    """Lines describing each formula of a chapter's prose that ends in an operator."""
    problems = []
    # Read the prose as one text, so that a formula broken over two lines is still one formula.
    lines = chapter_text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for match in MATH.finditer(chapter_text):
        formula = " ".join(match.group(1).split())
        if DANGLING.search(formula):
            number = next(index for index, start in enumerate(starts) if start > match.start())
            problems.append(f"{chapter}:{number}: the formula {formula!r} ends in an operator the prose "
                            "after it has to finish; write the whole formula, with a symbol for what it needs")
    return problems


SELF_TEST_TABLE = """.. list-table:: Shapes

   * - :math:`m`, the number of keys
     - 1
   * - :math:`m`, the weights
     - 1

Rank :math:`g` runs on process :math:`g \\bmod` (the number of
processes), and :math:`a - b` is whole.
"""

SELF_TEST = """Glossary
========

.. glossary::

   :math:`m`
      The number of keys.

   :math:`\\ell`, :math:`m`
      The running sum and the running maximum.
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--glossary", required=True, type=pathlib.Path, help="docs/glossary.rst")
    parser.add_argument("--chapters", nargs="*", type=pathlib.Path, default=[],
                        help="chapter pages whose tables must name each symbol as the glossary does")
    parser.add_argument("--self-test", action="store_true",
                        help="first check that a symbol defined twice, and one misnamed in a table, are caught")
    args = parser.parse_args()
    if args.self_test:
        caught = duplicates(SELF_TEST)
        if caught != ["the symbol m is defined on line 6 and again on line 9"]:
            print(f"self-test: a glossary that defines m twice gave {caught!r}")
            return 1
        caught = misnamed(SELF_TEST, SELF_TEST_TABLE, "table")
        if len(caught) != 1 or not caught[0].startswith('table:5: the table calls m "the weights"'):
            print(f"self-test: a table that calls m the weights gave {caught!r}")
            return 1
        caught = dangling(SELF_TEST_TABLE, "table")
        if len(caught) != 1 or not caught[0].startswith("table:8: the formula 'g \\\\bmod' ends in an operator"):
            print(f"self-test: a formula that ends in \\bmod gave {caught!r}")
            return 1
    text = args.glossary.read_text(encoding="utf-8")
    problems = duplicates(text)
    for chapter in args.chapters:
        problems += misnamed(text, chapter.read_text(encoding="utf-8"), chapter.name)
        problems += dangling(chapter.read_text(encoding="utf-8"), chapter.name)
    for problem in problems:
        print(f"{args.glossary.name}: {problem}")
    if problems:
        return 1
    print(f"{args.glossary.name}: {len(symbols(text))} symbols, each defined once"
          + (f"; the tables of {len(args.chapters)} pages name them as it does, and no formula of their "
                 "prose ends in an operator" if args.chapters else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
