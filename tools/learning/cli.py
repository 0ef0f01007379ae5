"""The command line: tools/learn init | grade | run | reset | list | points (tools/learn --help)."""
import argparse
import os
import signal
import sys
from pathlib import Path

from .book import DEFAULT_BOOK_BUILD, DEFAULT_GRADE_BUILD, DEFAULT_WORKSPACE, LearnError
from .grade import command_grade
from .points import command_list, command_points
from .run import command_run
from .workspace import command_init, command_reset


def add_grade(commands):
    grade = commands.add_parser("grade", help="build your library, run every chapter's checks on that chapter's "
                                              "steps (the book's version of the others), print the table")
    grade.add_argument("--watch", action="store_true", help="grade again every time you save a file")
    grade.add_argument("--chapter", type=int, action="append", metavar="N",
                       help="grade only chapter N (repeatable); one chapter shows every failing check")
    grade.add_argument("--together", action="store_true",
                       help="run every chapter's checks on your whole library, each step as you wrote it")
    grade.add_argument("--all", action="store_true", help="show every failing check with its hint, not only the first")
    grade.add_argument("--timeout", type=float, default=3.0, help="seconds one check may run (default: 3)")
    grade.add_argument("--verbose", action="store_true", help="also print how long building and checking took")
    grade.set_defaults(handler=command_grade)


def add_others(commands):
    init = commands.add_parser("init", help="create the workspace, or add the files and stubs it lacks; keeps "
                                            "your code byte for byte")
    init.add_argument("--solutions", action="store_true",
                      help="write the reference solutions instead of stubs (for testing the grader)")
    init.set_defaults(handler=command_init)
    reset = commands.add_parser("reset", help="put one exercise (a function, or a whole file) back to its stub")
    reset.add_argument("exercise", help="a function such as scores, or a file such as masking.cpp")
    reset.set_defaults(handler=command_reset)
    run = commands.add_parser("run", help="build a chapter program against your workspace and run it, and show "
                                          "where its output differs from the book's (steps still stubs use the "
                                          "book's version)")
    run.add_argument("program", help="the chapter: 2, ch02 or ch02-scores, or a second program such as ch16-names")
    run.add_argument("--book-build", type=Path, default=DEFAULT_BOOK_BUILD,
                     help="the book's build, whose King James text and saved models chapters 14 to 16 read "
                          "(default: build/, or $BOOK_BUILD_DIR; made here when it has none)")
    run.add_argument("arguments", nargs=argparse.REMAINDER, help="options for the program, e.g. --causal")
    run.set_defaults(handler=command_run)
    listing = commands.add_parser("list", help="list the exercises, their state, and every check with its points "
                                               "and its result in the last grade")
    listing.set_defaults(handler=command_list)
    points = commands.add_parser("points", help="print, check or write the book's points table")
    points.add_argument("--bin", type=Path, help="the folder of built test programs (default: <build>/bin)")
    mode = points.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail if docs/how-to-use.rst differs from the tests")
    mode.add_argument("--write", action="store_true", help="write the table into docs/how-to-use.rst")
    points.set_defaults(handler=command_points)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tools/learn",
        description="Work through the book's exercises: implement each step in your workspace and let "
                    "the tests grade it.")
    parser.add_argument("--workspace", type=Path, default=DEFAULT_WORKSPACE,
                        help="your workspace folder (default: workspace/)")
    parser.add_argument("--build", type=Path, default=DEFAULT_GRADE_BUILD,
                        help="the build folder for grading (default: build/grade/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel jobs (default: all cores)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_others(commands)
    add_grade(commands)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `tools/learn list | head` ends quietly
    try:
        return args.handler(args)
    except LearnError as error:
        print(f"learn: {error}", file=sys.stderr)
        return 2
