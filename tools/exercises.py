"""The one reader of the exercise markers: every tool that needs them imports this module.

In the book's library (src/*.cpp) each step function holds its reference solution as
its whole body, between two markers:

    Matrix scores(const Matrix& queries, const Matrix& keys)
    {
        // BEGIN SOLUTION scores: chapter 2, Scores
        ...the reference code...
        // END SOLUTION
    }

In a learner's workspace (tools/learn) the same body is an exercise:

        // BEGIN EXERCISE scores: chapter 2, Scores
        ...the learner's code, or the stub that throws "not implemented yet"...
        // END EXERCISE

The build (CMake, in a learner's grading build), tools/learn, the book's conf.py (which
hides the markers in listings) and the browser check (which looks for each answer in the
rendered page) all read the markers through this module.

    exercises.py files --src DIR   one line per file with exercises: "FILE CHAPTER..." (for CMake)
    exercises.py check-one-reader  fail if another tool reads the markers itself (a CTest test)
"""
import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTION_BEGIN = re.compile(
    r"^(?P<indent>[ \t]*)//\s*BEGIN SOLUTION\s+(?P<name>[A-Za-z_]\w*)\s*:\s*"
    r"(?P<where>chapter\s+(?P<chapter>\d+)\s*,\s*(?P<section>.*?))\s*$")
SOLUTION_END = re.compile(r"^[ \t]*//\s*END SOLUTION\s*$")
EXERCISE_BEGIN = re.compile(r"^[ \t]*//\s*BEGIN EXERCISE\s+(?P<name>[A-Za-z_]\w*)\b")
EXERCISE_END = re.compile(r"^[ \t]*//\s*END EXERCISE\s*$")
ANY_MARKER = re.compile(r"^\s*//\s*(BEGIN|END) (SOLUTION|EXERCISE)\b")
NOT_IMPLEMENTED = "not implemented yet:"


class MarkerError(Exception):
    """A region that is not closed, nested, or not the whole body of a function."""


@dataclass
class Exercise:
    name: str       # the function, e.g. "scores"
    file: str       # the source file, e.g. "scores.cpp"
    chapter: int
    section: str    # e.g. "Scores"
    indent: str
    signature: list = field(default_factory=list)  # the lines that declare the function, before its "{"
    line: int = 0   # the line of the BEGIN SOLUTION marker in the book's file

    @property
    def where(self):
        return f"chapter {self.chapter}, {self.section}"

    @property
    def returns(self):
        """The function's return type, as its signature writes it (e.g. "std::vector<Matrix>")."""
        text = " ".join(line.strip() for line in self.signature)
        found = re.match(r"^(.*?)\b" + re.escape(self.name) + r"\s*\(", text)
        return re.sub(r"^(?:(?:static|inline|constexpr)\s+|\[\[\w+\]\]\s*)*", "", found[1]).strip() if found else ""

    def begin_line(self):
        return f"{self.indent}// BEGIN EXERCISE {self.name}: {self.where}\n"

    def end_line(self):
        return f"{self.indent}// END EXERCISE\n"

    def stub_body(self):
        """What stands between the exercise markers until the learner writes the step."""
        return [f"{self.indent}// Write this step (read {self.where}), then delete the line below.\n",
                f'{self.indent}throw sa::NotImplemented("{NOT_IMPLEMENTED} {self.name}, see {self.where}");\n']

    def stub_lines(self):
        return [self.begin_line(), *self.stub_body(), self.end_line()]


def signature_before(path, number, plain):
    """The signature of the function whose body starts after `plain` (the lines read so far):
    the line just before a region is the body's "{", and the declaration lines precede it."""
    if not plain or plain[-1].strip() != "{":
        raise MarkerError(f"{path}:{number}: an exercise region must be a whole function body, "
                          "right after the line with its \"{\"")
    lines = []
    for line in reversed(plain[:-1]):
        if not isinstance(line, str) or not line.strip() or line.startswith(("//", "}", "#")):
            break
        lines.insert(0, line)
    return lines


def split_regions(path, lines):
    """The book's file as a list of plain lines and (Exercise, solution lines) regions."""
    parts, region = [], None
    for number, line in enumerate(lines, start=1):
        begin = SOLUTION_BEGIN.match(line)
        if begin:
            if region:
                raise MarkerError(f"{path}:{number}: BEGIN SOLUTION inside the region of {region[0].name}")
            exercise = Exercise(begin["name"], Path(path).name, int(begin["chapter"]), begin["section"],
                                begin["indent"], signature_before(path, number, parts), number)
            region = (exercise, [])
        elif SOLUTION_END.match(line):
            if not region:
                raise MarkerError(f"{path}:{number}: END SOLUTION without a BEGIN SOLUTION")
            parts.append(region)
            region = None
        elif region:
            region[1].append(line)
        else:
            parts.append(line)
    if region:
        raise MarkerError(f"{path}: the region of {region[0].name} has no END SOLUTION")
    return parts


def exercise_files(src):
    """{file name: parts} for every *.cpp in src that holds a solution region."""
    files = {}
    for path in sorted(Path(src).glob("*.cpp")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if any(SOLUTION_BEGIN.match(line) for line in lines):
            files[path.name] = split_regions(path, lines)
    return files


def regions(parts):
    """The (Exercise, solution lines) regions of a file's parts."""
    return [part for part in parts if isinstance(part, tuple)]


def exercises(src):
    """Every exercise, in chapter order."""
    found = [exercise for parts in exercise_files(src).values() for exercise, _body in regions(parts)]
    return sorted(found, key=lambda exercise: (exercise.chapter, exercise.file, exercise.name))


def solution_bodies(src):
    """{exercise name: its reference code} for the browser check."""
    return {exercise.name: "".join(body) for parts in exercise_files(src).values()
            for exercise, body in regions(parts)}


def without_markers(lines):
    """A listing's lines without the marker lines, and the markers' "name: chapter N, section"
    texts of the solutions it holds (the book's listings hide the markers)."""
    kept = [line for line in lines if not ANY_MARKER.match(line)]
    held = [SOLUTION_BEGIN.match(line) for line in lines]
    return kept, [f"{match['name']}: {match['where']}" for match in held if match]


def workspace_regions(lines):
    """{name: (index of BEGIN EXERCISE, index of END EXERCISE)} in a learner's file."""
    found, first = {}, None
    for index, line in enumerate(lines):
        begin = EXERCISE_BEGIN.match(line)
        if begin:
            first = (begin["name"], index)
        elif first is not None and EXERCISE_END.match(line):
            found.setdefault(first[0], (first[1], index))
            first = None
    return found


def include_lines(lines):
    """The #include lines of a file, as written."""
    return [line for line in lines if re.match(r"^\s*#\s*include\b", line)]


# --------------------------------------------------------------------------------------
# The checks and the build's questions


def check_one_reader(root):
    """Problems: a tool (Python, CMake, JavaScript or shell) other than this module that holds the
    marker words in its code, where it would be reading the markers itself."""
    words = re.compile(r"(BEGIN|END)[ _](SOLUTION|EXERCISE)")
    this = Path(__file__).resolve()
    problems = []
    candidates = [*root.glob("tools/**/*.py"), *root.glob("tools/**/*.js"), *root.glob("tools/**/*.sh"),
                  *root.glob("docs/**/*.js"), *root.glob("docs/**/*.py"), root / "conf.py",
                  *root.glob("**/CMakeLists.txt"), *root.glob("**/*.cmake")]
    for path in sorted(set(candidates)):
        if path.resolve() == this or "node_modules" in path.parts or not path.is_file() \
                or path.relative_to(root).parts[0].startswith(("build", "workspace")):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if words.search(line) and not line.lstrip().startswith(("#", "//")):
                problems.append(f"{path.relative_to(root)}:{number}: reads the exercise markers itself; "
                                f"use tools/exercises.py: {line.strip()}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    files = commands.add_parser("files", help="one line per source with exercises: FILE CHAPTER...")
    files.add_argument("--src", type=Path, default=ROOT / "src")
    commands.add_parser("check-one-reader", help="fail if another tool reads the markers itself")
    args = parser.parse_args(argv)
    try:
        if args.command == "files":
            for name, parts in exercise_files(args.src).items():
                chapters = sorted({exercise.chapter for exercise, _body in regions(parts)})
                print(name, *chapters)
            return 0
    except MarkerError as error:
        print(f"exercises.py: {error}", file=sys.stderr)
        return 2
    problems = check_one_reader(ROOT)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} other reader(s) of the exercise markers" if problems
          else "One reader of the exercise markers: tools/exercises.py.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
