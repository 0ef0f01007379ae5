"""The book's exercises: a workspace of stubs, a grader with hints, a watch mode.

Every step function in src/ holds its reference solution as its body, between two marker
lines (tools/exercises.py reads them). `init` makes workspace/, one file per such source
with the includes and each step's function as a stub that throws sa::NotImplemented("not
implemented yet: scores, see chapter 2, Scores"), and later adds the stub of every exercise
the book gains, keeping the learner's code byte for byte. `grade` splices the learner's
steps into the book's files (tools/learning/sources.py), builds the tests once (CMake's
BOOK_WORKSPACE mode, in build/grade/), runs each chapter's checks with that chapter's steps
as the learner wrote them and the book's version of every other step, reads each check's
result from the XML report Catch2 writes, and prints one row per chapter with points, a
status and a hint for each failing check; `grade --together` runs the learner's whole
library. The code is the package tools/learning/ (its __init__ lists the modules).

Run it as tools/learn COMMAND; tools/learn --help lists the commands.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
