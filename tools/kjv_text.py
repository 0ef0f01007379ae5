#!/usr/bin/python3
"""Turn the King James Bible printed by Debian's bible-kjv into the plain text of chapter 14.

`bible -l100000 gen1:1-rev22:21` prints each chapter under a heading ("Genesis 1") and each
verse on one line after its number ("  1 In the beginning ..."). This keeps the verses alone,
one per line, without headings or numbers, and splits them by chapter: every tenth chapter
(the 10th, 20th, ... of the 1,189 in the book's order) is held out, the rest is for training.
The two files' SHA-256 sums are pinned, so a different text fails here, in one line, instead of
changing the book's numbers quietly.

Usage: kjv_text.py --training OUT --held-out OUT
"""
import argparse
import hashlib
import re
import subprocess
import sys

# The sums of the two texts made from bible-kjv 4.38 (Debian 12).
TRAINING_SHA256 = "a0cda2c6786e9678187f7c4cdba54abfbe05922db45af6ff8a6b16924ceef62b"
HELD_OUT_SHA256 = "63f5bddf027c30bf638b79357be48a6ce5e12f67832d26fda53e41c915ccaa7c"

VERSE = re.compile(r"^ +[0-9]+ (.*)$")


def split_verses(printed):
    """The verses of each chapter, in order: a list of chapters, each a list of verse lines."""
    chapters = []
    for line in printed.splitlines():
        verse = VERSE.match(line)
        if verse:
            if not chapters:
                raise ValueError("a verse came before the first chapter heading")
            chapters[-1].append(verse.group(1).rstrip())
        elif line.strip():
            chapters.append([])
    return chapters


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--training", required=True)
    parser.add_argument("--held-out", required=True)
    args = parser.parse_args()
    try:
        printed = subprocess.run(["bible", "-l100000", "gen1:1-rev22:21"], check=True, capture_output=True,
                                 text=True, encoding="utf-8").stdout
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"kjv_text.py: could not run the program bible ({error}). "
              "Install the Debian package: apt-get install bible-kjv", file=sys.stderr)
        return 1
    chapters = split_verses(printed)
    training = "".join(verse + "\n" for number, chapter in enumerate(chapters, 1) if number % 10 != 0
                       for verse in chapter)
    held_out = "".join(verse + "\n" for number, chapter in enumerate(chapters, 1) if number % 10 == 0
                       for verse in chapter)
    for name, text, pinned in (("training", training, TRAINING_SHA256), ("held-out", held_out, HELD_OUT_SHA256)):
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest != pinned:
            print(f"kjv_text.py: the {name} text made from bible-kjv ({len(chapters)} chapters) has SHA-256 "
                  f"{digest}, but the book's numbers were made from {pinned} (bible-kjv 4.38, Debian 12); "
                  "install that version", file=sys.stderr)
            return 1
    with open(args.training, "w", encoding="utf-8", newline="\n") as out:
        out.write(training)
    with open(args.held_out, "w", encoding="utf-8", newline="\n") as out:
        out.write(held_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
