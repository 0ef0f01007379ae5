#!/usr/bin/python3
"""Check the page whose path the book command prints: the front page itself; and that the book's
top index.html is a redirect that every browser follows at once.

tools/book.sh ends with the line `The book: $build/<path>`. A reader opens that file, and so does
a headless browser taking a screenshot; one such browser once hung on a page that forwarded
elsewhere (a meta refresh with a delay of 0). So the printed path must be the book's front page
itself; and a page of the book that only forwards (the index.html at the top of the book's folder,
for a reader who opens the folder) must do it without a script:
a meta refresh with a delay of 0 to a file that exists, and a link to the same file for a browser
that does not follow it.

Usage: check_book_path.py --script tools/book.sh --build BUILD
"""
import argparse
import html.parser
import os
import re
import sys

FRONT_PAGE = "docs/index.html"  # Sphinx's root document, docs/index, rendered (as in tools/browser/page_checks.py)
PRINTED = re.compile(r'^\s*echo "The book: \$build/([^"$]+)"\s*$')
REFRESH = re.compile(r"^\s*(\d+)\s*;\s*url\s*=\s*(\S+)\s*$", re.I)


class PageParts(html.parser.HTMLParser):
    """What a page holds that decides how a browser leaves it: its refresh, links and scripts."""

    def __init__(self):
        super().__init__()
        self.refresh = None
        self.links = []
        self.scripts = 0
        self.title = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "meta" and (attributes.get("http-equiv") or "").lower() == "refresh":
            self.refresh = attributes.get("content") or ""
        elif tag == "a" and attributes.get("href"):
            self.links.append(attributes["href"])
        elif tag == "script":
            self.scripts += 1
        elif tag == "title":
            self.title = True


def read_page(path):
    parts = PageParts()
    with open(path, encoding="utf-8") as file:
        parts.feed(file.read())
    return parts


def printed_path(script):
    """The path, relative to the build folder, that the book command prints."""
    with open(script, encoding="utf-8") as file:
        found = [match.group(1) for match in map(PRINTED.match, file) if match]
    if len(found) != 1:
        raise ValueError(f"{script} should print the book's path once, as `echo \"The book: $build/PATH\"`; "
                         f"found {len(found)} such lines")
    return found[0]


def redirect_problem(book, page):
    """Why the forwarding page at book/page is not one every browser follows at once, or None."""
    parts = read_page(os.path.join(book, page))
    refresh = REFRESH.match(parts.refresh or "")
    if refresh is None:
        return f"{page} is neither the front page ({FRONT_PAGE}) nor a meta refresh (content=\"0; url=FILE\")"
    delay, target = int(refresh.group(1)), refresh.group(2)
    resolved = os.path.normpath(os.path.join(os.path.dirname(page), target))
    if delay != 0:
        return f"{page} forwards after {delay} s; it must forward at once (a delay of 0)"
    if parts.scripts:
        return f"{page} forwards with {parts.scripts} script(s); a meta refresh alone needs none"
    if not os.path.isfile(os.path.join(book, resolved)):
        return f"{page} forwards to {target}, which is not a file of the book"
    if resolved != FRONT_PAGE:
        return f"{page} forwards to {resolved}, not to the front page {FRONT_PAGE}"
    if target not in parts.links:
        return f"{page} has no link to {target} for a browser that does not follow the refresh"
    return None


def front_page_problem(book, page):
    """Why the page at book/page, which should be the front page, is not, or None."""
    parts = read_page(os.path.join(book, page))
    if parts.refresh is not None:
        return f"{page} is the front page's path but forwards elsewhere ({parts.refresh!r})"
    if not parts.title:
        return f"{page} has no <title>; it is not a page of the book"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True, help="the book command, tools/book.sh")
    parser.add_argument("--build", required=True, help="the build folder the command prints its path in")
    args = parser.parse_args()
    book = os.path.join(args.build, "book")
    try:
        printed = os.path.relpath(os.path.join(args.build, printed_path(args.script)), book)
    except (OSError, ValueError) as error:
        print(f"FAIL {error}")
        return 1
    problems = []
    if not os.path.isfile(os.path.join(book, printed)):
        problems.append(f"the printed path {printed} is not a file of the built book in {book}")
    elif printed != FRONT_PAGE:
        problems.append(f"the printed path {printed} is not the front page; print the front page's own path, "
                        f"{FRONT_PAGE} (a headless browser once hung on a page that forwarded to it)")
    else:
        problems.append(front_page_problem(book, printed))
    if os.path.isfile(os.path.join(book, "index.html")):
        problems.append(redirect_problem(book, "index.html"))  # the front door, for a reader who opens the folder
    problems = [problem for problem in problems if problem]
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"PASS the book command prints the front page, {printed}; index.html forwards to it at once")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
