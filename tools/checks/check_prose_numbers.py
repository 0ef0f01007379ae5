#!/usr/bin/env python3
"""Check that every decimal number written in a chapter's prose appears in its program's output.

A stated number matches a printed one when the two are the same number ("1.5" for a
printed 1.500), never when it is only a rounding of one ("2.83" for a printed 2.828 does
not count: it could as well be a typo for 2.826). Sentences, formulas, figure captions
and alt texts, tables and admonitions are checked; code listings and literal blocks are
skipped, because they are the program's, not the prose's. A miss names the file, the
line and the number.
"""
import argparse
import os
import re
import sys
from decimal import Decimal

NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.]*\d)")
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(.*)$")
# Directives whose body is prose or math (checked); every other directive body is skipped.
CHECKED_BODIES = {"math", "note", "tip", "important", "warning", "admonition", "seealso", "topic", "sidebar",
                  "chapter-figure", "figure", "image", "list-table", "table", "csv-table"}


def prose_lines(path):
    """Yield (line number, text) for the lines of an .rst file that are prose or math."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    skip_indent = None  # inside a skipped block: its body is indented deeper than this
    for number, line in enumerate(lines, start=1):
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not line.strip() or indent > skip_indent:
                continue
            skip_indent = None
        directive = DIRECTIVE.match(line)
        if directive:
            if directive.group(2) not in CHECKED_BODIES:
                skip_indent = indent
            continue
        if line.lstrip().startswith(".. "):  # a comment or a target
            skip_indent = indent
            continue
        if line.rstrip().endswith("::"):
            yield number, line[:-2]
            skip_indent = indent  # a literal block follows
            continue
        yield number, line




def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chapter", required=True)
    parser.add_argument("--prose", nargs="+", required=True, help="the chapter's .rst files")
    parser.add_argument("--output", nargs="+", required=True, help="the chapter's checked output files")
    args = parser.parse_args()

    printed = set()
    for path in args.output:
        with open(path, encoding="utf-8") as handle:
            printed.update(Decimal(value) for value in NUMBER.findall(handle.read()))
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    missing = 0
    checked = 0
    for path in args.prose:
        shown = os.path.relpath(path, root)
        for number, text in prose_lines(path):
            for stated in NUMBER.findall(text):
                checked += 1
                if Decimal(stated) in printed:
                    continue
                missing += 1
                print(f"chapter {args.chapter}: {shown}:{number}: {stated} is not in the program's output")
    if missing:
        print(f"chapter {args.chapter}: {missing} of {checked} decimal numbers in the prose are not printed by the program")
        return 1
    print(f"chapter {args.chapter}: all {checked} decimal numbers in the prose appear in the program's output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
