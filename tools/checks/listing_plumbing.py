#!/usr/bin/env python3
"""How much of each chapter page's code is plumbing: a measure, not a check.

Reads the rendered book and counts, per chapter page, the lines of its C++ listings
(the chapter program and the library, not program output), and among them the lines
that hold plumbing rather than the step the chapter explains: a `throw`, an
`fmt::format` call (with its continuation lines, up to the parenthesis that closes it),
a thread, an `exception_ptr`, a `catch`, a `join` or a preprocessor branch. It counts the
listings a reader sees on the page, and apart from them the exercise solutions folded in
"Show the solution" blocks, which stay whole: the learner's code has the same checks.

    /usr/bin/python3 tools/checks/listing_plumbing.py --book build/book
"""
import argparse
import pathlib
import re
import sys
from html.parser import HTMLParser

PLUMBING = re.compile(r"\bthrow\b|\bstd::j?thread\b|\bexception_ptr\b|\bcatch\b|\.join\(|"
                      r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
FORMAT = "fmt::format("


class Listings(HTMLParser):
    """The text of every C++ listing of a page (a <pre> inside a div.highlight-cpp), and
    whether it is folded in a solution block."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.inside, self.folded, self.texts = 0, None, 0, []

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "details":
            self.folded += 1
        elif tag == "div":
            self.depth += 1
            if "highlight-cpp" in classes and self.inside is None:
                self.inside = self.depth
        elif tag == "pre" and self.inside is not None:
            self.texts.append([self.folded > 0, ""])

    def handle_endtag(self, tag):
        if tag == "details":
            self.folded -= 1
        elif tag == "div":
            if self.inside == self.depth:
                self.inside = None
            self.depth -= 1

    def handle_data(self, data):
        if self.inside is not None and self.texts:
            self.texts[-1][1] += data


def plumbing_lines(lines):
    """How many of a listing's lines are plumbing."""
    count, open_parentheses = 0, 0
    for line in lines:
        if open_parentheses > 0:
            count += 1
            open_parentheses += line.count("(") - line.count(")")
            continue
        if FORMAT in line:
            tail = line[line.index(FORMAT) + len(FORMAT) - 1:]
            open_parentheses = max(tail.count("(") - tail.count(")"), 0)
            count += 1
        elif PLUMBING.search(line):
            count += 1
    return count


def page_counts(path):
    """{False: [plumbing lines, listing lines] of the listings shown, True: ... of those folded}."""
    parser = Listings()
    parser.feed(path.read_text(encoding="utf-8"))
    counts = {False: [0, 0], True: [0, 0]}
    for folded, text in parser.texts:
        lines = text.rstrip("\n").split("\n")
        counts[folded][0] += plumbing_lines(lines)
        counts[folded][1] += len(lines)
    return counts


def row(name, counts):
    """One line of the table: shown, folded and all listings, each as plumbing / lines (share)."""
    cells = []
    for plumbing, total in (counts[False], counts[True], [a + b for a, b in zip(counts[False], counts[True])]):
        cells.append(f"{plumbing} / {total} ({100 * plumbing / max(total, 1):.1f} %)")
    return f"| {name} | " + " | ".join(cells) + " |"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--book", required=True, help="the rendered book (build/book)")
    book = pathlib.Path(parser.parse_args().book)
    pages = sorted(book.glob("chapters/*/*.html"))
    if not pages:
        print(f"no chapter pages under {book}", file=sys.stderr)
        return 2
    book = {False: [0, 0], True: [0, 0]}
    print("| page | shown listings | folded solutions | all listings |\n|---|---:|---:|---:|")
    for page in pages:
        counts = page_counts(page)
        for folded in book:
            book[folded] = [a + b for a, b in zip(book[folded], counts[folded])]
        print(row(page.parent.name, counts))
    print(row("the book", book))
    return 0


if __name__ == "__main__":
    sys.exit(main())
