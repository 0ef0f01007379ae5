#!/usr/bin/python3
"""Mutation testing of the library: does some test fail when one line of src/ is changed?

Each mutant is one replacement on one line of a library source: `<` for `<=`, `||` for `&&`, a
bound off by one. For each mutant in turn this script applies it and runs the test programs that
link the changed file (the Catch2 binaries, not the chapters' output checks, which retrain models):
those whose source includes the changed file's header first, then the fastest, each built only
when the ones before it passed, stopping at the first that fails. Then it
restores the file and prints

    killed    NAME  by test_chNN_...: "the first failing test case"
    survived  NAME
    no build  NAME  (the mutant does not compile: not scored)

and at the end the score, killed / (killed + survived), leaving out the mutants the list marks
equivalent (they behave as the book's code does, for a reason the list gives).

The list (default tools/mutation/mutants.txt) has one mutant a line, fields separated by " | ":

    NAME | FILE[:LINE] | FROM | TO [| equivalent: WHY]

FROM must occur exactly once in FILE, or on line LINE when it is given. '#' starts a comment line.
The file is restored even when the script is interrupted; a test program that runs longer than
ten times its time on the book's code (at least 60 s) is stopped, and its mutant counts as killed.

Usage: tools/mutation/mutate.py [--build build] [--list tools/mutation/mutants.txt] [--only NAME ...]
                       [--program test_chNN_... [--test "CASE NAME" ...]]
       tools/mutation/mutate.py --check   (only that every mutant of the list applies: CTest's
                                           support.mutant-list, so that a change to src/ that moves
                                           or rewrites a mutant's line is caught when it is made)
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


class Mutant:
    """One line of the list."""

    def __init__(self, line_number, text):
        fields = [field.strip() for field in text.split(" | ")]
        if len(fields) not in (4, 5):
            raise ValueError(f"line {line_number}: expected NAME | FILE[:LINE] | FROM | TO [| equivalent: WHY]")
        self.name, where, self.before, self.after = fields[:4]
        self.equivalent = fields[4] if len(fields) == 5 else ""
        file, _, line = where.partition(":")
        self.file = file
        self.line = int(line) if line else None

    def apply(self, text):
        """The file's text with the mutant applied; ValueError unless FROM is found exactly once."""
        lines = text.split("\n")
        if self.line is not None:
            index = self.line - 1
            if index >= len(lines) or lines[index].count(self.before) != 1:
                raise ValueError(f"{self.name}: '{self.before}' is not found once on {self.file}:{self.line}")
            lines[index] = lines[index].replace(self.before, self.after)
            return "\n".join(lines)
        if text.count(self.before) != 1:
            raise ValueError(f"{self.name}: '{self.before}' occurs {text.count(self.before)} times in {self.file}; "
                             "give its line as FILE:LINE")
        return text.replace(self.before, self.after)


def read_list(path):
    mutants = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            mutants.append(Mutant(number, line))
    return mutants


def defined_symbols(path):
    """The strong functions a file of machine code defines."""
    result = subprocess.run(["nm", "--defined-only", "-g", "--format=posix", str(path)], capture_output=True,
                            text=True, check=True)
    return {fields[0] for fields in (line.split() for line in result.stdout.splitlines())
            if len(fields) >= 2 and fields[1] == "T"}


def test_programs(build):
    """The Catch2 test programs (chapter 17's runs its ranks in one process, through the
    in-process communicator: it needs no mpirun)."""
    ninja = subprocess.run(["ninja", "-C", str(build), "-t", "targets", "all"], capture_output=True, text=True,
                           check=True)
    return sorted({match.group(1) for match in re.finditer(r"^(test_[a-z0-9_]+):", ninja.stdout, re.M)})


def users(build, programs, source):
    """The test programs that link the library's object of source."""
    object_file = build / "CMakeFiles" / "selfattention.dir" / (source + ".o")
    wanted = defined_symbols(object_file)
    return [program for program in programs if wanted & defined_symbols(build / "bin" / program)]


def test_source(program):
    """The text of a test program's source, tests/NAME.cpp for the program test_NAME."""
    return (ROOT / "tests" / (program.removeprefix("test_") + ".cpp")).read_text()


def first_failure(output):
    """The name of the first failing test case in Catch2's console output (a long name is wrapped
    over several lines between two lines of dashes)."""
    lines = output.splitlines()
    rule = re.compile(r"-{20,}")
    for index, line in enumerate(lines):
        if rule.fullmatch(line):
            name = []
            for following in lines[index + 1:]:
                if rule.fullmatch(following):
                    if name:
                        return " ".join(name)
                    break
                name.append(following.strip())
    return "(no test case named: the program stopped)"


def run_program(build, program, limit, tests=()):
    """None when the program passes (its test cases named by tests, or all), else why it failed."""
    try:
        selected = [",".join(tests)] if tests else []  # Catch2 runs the cases a comma-separated list names
        result = subprocess.run([str(build / "bin" / program), "--abort", *selected], cwd=build, capture_output=True,
                                text=True, errors="replace", timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return f"{program} ran past {limit:.0f} s"
    if result.returncode == 0:
        return None
    return f'{program}: "{first_failure(result.stdout)}"'


def build_programs(build, programs):
    result = subprocess.run(["cmake", "--build", str(build), "--target", *programs], capture_output=True,
                            text=True, check=False)
    return result.returncode == 0, result.stdout[-3000:]


def baseline_times(build, programs):
    """Each program's time on the book's code, measured once and kept in the build folder."""
    cache = build / "mutate-times.json"
    times = json.loads(cache.read_text()) if cache.exists() else {}
    missing = [program for program in programs if program not in times]
    if missing:
        built, log = build_programs(build, missing)
        if not built:
            sys.exit("error: the test programs do not build on the book's code:\n" + log)
        for program in missing:
            start = time.monotonic()
            failure = run_program(build, program, None)
            if failure:
                sys.exit(f"error: {failure} fails on the book's code; mutation testing needs a passing suite")
            times[program] = time.monotonic() - start
        cache.write_text(json.dumps(times, indent=1))
    return times


def try_mutant(build, mutant, programs, times, tests=()):
    """(verdict, detail) for one mutant; the source is restored before returning."""
    path = ROOT / mutant.file
    original = path.read_text()
    mutated = mutant.apply(original)
    header = '#include "' + pathlib.Path(mutant.file).with_suffix(".hpp").name + '"'
    affected = sorted(users(build, programs, mutant.file),
                      key=lambda program: (header not in test_source(program), times[program]))
    if not affected:
        return "survived", "no test program links this file"
    try:
        path.write_text(mutated)
        for index, program in enumerate(affected):  # each built only when the ones before it passed
            built, _ = build_programs(build, [program])
            if not built:
                if index == 0:
                    return "no build", ""
                raise RuntimeError(f"{program} does not build with {mutant.name} though another program did")
            failure = run_program(build, program, max(60.0, 10 * times[program]), tests)
            if failure:
                return "killed", "by " + failure
        return "survived", ""
    finally:
        path.write_text(original)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"), help="a configured build folder")
    parser.add_argument("--list", default=str(ROOT / "tools" / "mutation" / "mutants.txt"), help="the mutants")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants alone")
    parser.add_argument("--program", help="run this test program alone (e.g. test_ch14_next_character)")
    parser.add_argument("--test", action="append", default=[], metavar="CASE",
                        help="run this Catch2 test case alone (repeatable): does this test kill the mutant?")
    parser.add_argument("--check", action="store_true", help="only check that every mutant applies, and stop")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    try:
        mutants = read_list(pathlib.Path(args.list))
        for mutant in mutants:  # every mutant applies, before any is built
            mutant.apply((ROOT / mutant.file).read_text())
    except (OSError, ValueError) as error:
        sys.exit(f"error: {error}")
    names = [mutant.name for mutant in mutants]
    if len(set(names)) != len(names):
        sys.exit(f"error: a name is given twice in {args.list}: "
                 f"{', '.join(sorted({name for name in names if names.count(name) > 1}))}")
    if args.check:
        print(f"{len(mutants)} mutants, each found where {args.list} says")
        return 0
    if args.only:
        unknown = set(args.only) - {mutant.name for mutant in mutants}
        if unknown:
            sys.exit(f"error: no mutant named {', '.join(sorted(unknown))} in {args.list}")
        mutants = [mutant for mutant in mutants if mutant.name in args.only]
    programs = test_programs(build)
    if args.program:
        if args.program not in programs:
            sys.exit(f"error: no test program {args.program}; expected one of {', '.join(programs)}")
        programs = [args.program]
    times = baseline_times(build, programs)
    counts = {"killed": 0, "survived": 0, "no build": 0, "equivalent": 0}
    for mutant in mutants:
        verdict, detail = try_mutant(build, mutant, programs, times, args.test)
        if verdict == "survived" and mutant.equivalent:
            counts["equivalent"] += 1
            detail = (detail + " " if detail else "") + f"({mutant.equivalent})"
        else:
            counts[verdict] += 1
        print(f"{verdict:9} {mutant.name}  {detail}".rstrip(), flush=True)
    build_programs(build, programs)  # the programs of the book's code again
    scored = counts["killed"] + counts["survived"]
    score = f"{100.0 * counts['killed'] / scored:.1f} %" if scored else "nothing scored"
    print(f"{counts['killed']} killed, {counts['survived']} survived, {counts['equivalent']} equivalent "
          f"(not scored), {counts['no build']} not built: {score} killed")
    return 0 if counts["survived"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
