"""Where things are, the chapters and their tests, the exercises, small file helpers."""
import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import exercises as markers  # noqa: E402  (the one reader of the exercise markers)

SRC = ROOT / "src"
TESTS = ROOT / "tests"
CHAPTERS = ROOT / "chapters"
HOW_TO_USE = ROOT / "docs" / "how-to-use.rst"
DEFAULT_WORKSPACE = ROOT / "workspace"
DEFAULT_GRADE_BUILD = ROOT / "build" / "grade"
# The book's own build (tools/build.sh), whose King James text and saved models `run` reuses.
DEFAULT_BOOK_BUILD = Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "build"))
BACKUP_FOLDER = ".backup"
RESULTS_FILE = "last-grade.json"  # in the grading build: what `list` shows for each check
NOT_IMPLEMENTED = markers.NOT_IMPLEMENTED


class LearnError(Exception):
    """A problem to report in one message, without a traceback."""


@functools.lru_cache(maxsize=1)
def exercise_files():
    """{file name: parts} for every src/*.cpp that holds a solution region (read once; not to be changed)."""
    try:
        return markers.exercise_files(SRC)
    except markers.MarkerError as error:
        raise LearnError(str(error)) from None


def exercises():
    """Every exercise, in chapter order."""
    found = [exercise for parts in exercise_files().values() for exercise, _body in markers.regions(parts)]
    return sorted(found, key=lambda exercise: (exercise.chapter, exercise.file, exercise.name))


@dataclass
class Chapter:
    number: int
    folder: str = ""      # e.g. "01-projection"
    title: str = ""       # e.g. "Projection"
    tests: str = ""       # e.g. "ch01_projection", the test file's stem

    @property
    def label(self):
        return f"chapter {self.number}, {self.title}" if self.title else f"chapter {self.number}"

    @property
    def program(self):
        return f"ch{self.folder}"


def rst_title(path):
    """The first section heading of a reStructuredText file, without its number or subtitle."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for index in range(len(lines) - 1):
        text, under = lines[index].strip(), lines[index + 1].strip()
        if (text and not text.startswith("..") and len(under) >= len(text)
                and re.fullmatch(r"([=\-~^\"'`#*+<>_:.])\1*", under)):
            text = re.sub(r"^\d+\.\s*", "", text)
            return text.split(":")[0].strip()
    return ""


def chapters():
    """{number: Chapter} for every chapter folder and every tests/chNN_*.cpp."""
    found = {}
    for folder in sorted(CHAPTERS.glob("[0-9][0-9]-*")):
        if folder.is_dir():
            number = int(folder.name[:2])
            titles = [rst_title(rst) for rst in sorted(folder.glob("*.rst"))]
            title = next((t for t in titles if t), folder.name[3:].replace("-", " ").capitalize())
            found[number] = Chapter(number, folder.name, title)
    for test in sorted(TESTS.glob("ch[0-9][0-9]_*.cpp")):
        number = int(test.name[2:4])
        found.setdefault(number, Chapter(number)).tests = test.stem
    return dict(sorted(found.items()))


def graded_chapters(only=None):
    graded = [chapter for chapter in chapters().values() if chapter.tests]
    if only:
        unknown = sorted(set(only) - {chapter.number for chapter in graded})
        if unknown:
            raise LearnError(f"no tests for chapter {', '.join(map(str, unknown))}; "
                             f"chapters with tests: {', '.join(str(c.number) for c in graded)}")
        graded = [chapter for chapter in graded if chapter.number in only]
    return graded


def relative(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def write_if_changed(path, text):
    """Write only when the content differs, so the build sees no change otherwise."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def run_quietly(command, **kwargs):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", **kwargs)
