#!/usr/bin/env python3
"""Every symbol in the glossary of symbols is defined once.

A term of a `.. glossary::` block may name several symbols (":math:`W_Q`, :math:`W_K`");
each one counts. The check fails, naming both lines, when a symbol appears in two terms
or twice in one: one letter with two meanings is what the glossary exists to prevent.
With --self-test it first checks itself on a glossary that defines a symbol twice.
"""
import argparse
import pathlib
import re
import sys

GLOSSARY = re.compile(r"^(\s*)\.\. glossary::\s*$")
MATH = re.compile(r":math:`([^`]+)`")


def symbols(text):
    """[(symbol, line number)] of every symbol named by a term of every glossary block."""
    found = []
    block_indent = None  # inside a glossary block: the indent of its directive
    term_indent = None   # the indent of its terms, set by the first one
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
        if indent != term_indent:
            continue  # a definition, indented under its term
        names = MATH.findall(line) or [line.strip()]
        found.extend((" ".join(name.split()), number) for name in names)
    return found


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
    parser.add_argument("--self-test", action="store_true", help="first check that a symbol defined twice is caught")
    args = parser.parse_args()
    if args.self_test:
        caught = duplicates(SELF_TEST)
        if caught != ["the symbol m is defined on line 6 and again on line 9"]:
            print(f"self-test: a glossary that defines m twice gave {caught!r}")
            return 1
    text = args.glossary.read_text(encoding="utf-8")
    problems = duplicates(text)
    for problem in problems:
        print(f"{args.glossary.name}: {problem}")
    if problems:
        return 1
    print(f"{args.glossary.name}: {len(symbols(text))} symbols, each defined once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
