"""Configuring and building the grading build (CMake's BOOK_WORKSPACE mode, in build/grade/)."""
import os
import re
import shutil

from .book import DEFAULT_BOOK_BUILD, ROOT, exercise_files, relative, run_quietly
from .sources import write_sources


class BuildFailed(Exception):
    def __init__(self, summary, output):
        super().__init__(summary)
        self.summary = summary
        self.output = output


def book_paths(output, build):
    """The compiler's output with each path in the book's folder relative to that folder, as the
    learner sees it. With ccache's base folder (use_ccache()) the compiler is given, and names, paths
    relative to the grading build (../../src/matrix.hpp, sources/scores.cpp); the learner's own lines
    are already named from the book's folder (workspace/scores.cpp, tools/learning/sources.py)."""
    def mapped(match):
        path = match.group(0)
        if not path.startswith("/"):
            found = os.path.normpath(os.path.join(build, path))
            if not path.startswith("../") and not os.path.exists(found):
                return path  # not a path relative to the build (workspace/scores.cpp)
            path = found
        return relative(path)
    return re.sub(r"(?<![\w.+/-])(?:/|\.\./|[\w.+-]+/)[\w.+/-]*[\w+-](?=[:\s'\"),]|$)", mapped, output, flags=re.M)


def first_errors(output, build, limit=25):
    """The compiler's (or CMake's) first errors, with their context lines, paths made relative to the book's folder."""
    lines = book_paths(output, build).splitlines()
    picked = []
    for index, line in enumerate(lines):
        if re.search(r"(: error:|: fatal error:|undefined reference|CMake Error|No rule to make target)", line):
            picked.append(line)
            for follow in lines[index + 1:index + 8]:
                if not re.match(r"^(\s|\d+\s*\|)", follow) or "***" in follow:
                    break
                picked.append(follow)
        if len(picked) >= limit:
            break
    return "\n".join((picked or [line for line in lines if "***" not in line][-limit:])[:limit])


# The book's own build's settings (a Debug build), so that the tests compile exactly as there
# and ccache finds them; the library itself is optimized, with assert() still on for learners
# who use it (tools/learning/grading.cmake).
GRADE_SETTINGS = {"BOOK_DOCS": "OFF", "BOOK_WERROR": "ON", "CMAKE_BUILD_TYPE": "Debug", "CMAKE_CXX_FLAGS_DEBUG": "-g"}


def use_ccache():
    """ccache, where installed: a build folder made afresh, a file put back as it was, and the
    tests the book's own build compiled, compile from its cache."""
    if not shutil.which("ccache"):
        return False
    # Paths in the book's folder, relative on the compiler's command line: a copy or a move of the book
    # finds what the original compiled (the grading sources name no path either); first_errors() shows
    # the compiler's messages with paths from the book's folder.
    os.environ["CCACHE_BASEDIR"] = str(ROOT)
    os.environ["CCACHE_NOHASHDIR"] = "1"  # the same test compiled in build/ and in build/grade/ is one entry
    os.environ["CCACHE_DEPEND"] = "1"  # as in the book's build (tools/build.sh): a new compilation runs once
    os.environ.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros")  # the library's precompiled headers
    # ...whose checksum tools/learning/ccache_pch.sh writes beside them: ccache hashes it in their place.
    os.environ.setdefault("CCACHE_PCH_EXTSUM", "1")
    return True


def book_test_debug_info():
    """The test programs' debug information in the book's own build (BOOK_TEST_DEBUG_INFO, -g1 unless
    it was configured with another), for the grading build to compile the tests alike."""
    cache = DEFAULT_BOOK_BUILD / "CMakeCache.txt"
    found = re.search(r"^BOOK_TEST_DEBUG_INFO:\w+=(.*)$", cache.read_text(encoding="utf-8", errors="replace"),
                      re.M) if cache.exists() else None
    return found.group(1) if found else "-g1"


def same_folder(path, folder):
    """Whether `path` is `folder` itself (through any symbolic link), not a folder elsewhere."""
    try:
        return os.path.samefile(path, folder)
    except OSError:
        return False


def configure(sources, build, first_time="the first build compiles the tests, which takes a while"):
    """Configure a build of the library from `sources` once; CMake notices later changes itself."""
    wanted = dict(GRADE_SETTINGS, BOOK_WORKSPACE=str(sources.resolve()), BOOK_TEST_DEBUG_INFO=book_test_debug_info())
    if use_ccache():
        wanted["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
        wanted["BOOK_OWN_BUILD"] = str(DEFAULT_BOOK_BUILD.resolve())
    cache = build / "CMakeCache.txt"
    if cache.exists():
        configured = dict(re.findall(r"^(\w+):\w+=(.*)$", cache.read_text(encoding="utf-8", errors="replace"), re.M))
        made_at = configured.get("CMAKE_CACHEFILE_DIR")
        if made_at and not same_folder(made_at, build):
            # Copied or moved with the book: CMake refuses a cache made at another path. The grading
            # build's CMake state is made afresh; the workspace and the last grade's results stay.
            print(f"{relative(build)} was made at {made_at}: configuring it afresh here.", flush=True)
            cache.unlink()
            shutil.rmtree(build / "CMakeFiles", ignore_errors=True)
        elif all(configured.get(name) == value for name, value in wanted.items()):
            return
    print(f"Configuring {relative(build)} (once; {first_time})...", flush=True)
    # Ninja, where installed, checks an unchanged build in milliseconds where make takes
    # a second or two; a build folder keeps its generator.
    generator = ["-G", "Ninja"] if not cache.exists() and shutil.which("ninja") else []
    result = run_quietly(["cmake", "-S", str(ROOT), "-B", str(build), *generator,
                          *(f"-D{name}={value}" for name, value in wanted.items())])
    if result.returncode != 0:
        raise BuildFailed("CMake could not configure the build", result.stdout)


def failed_files(output, broken):
    """The exercise files whose grading source did not compile (the build's FAILED lines)."""
    names = set(exercise_files())
    failed = {found for found in re.findall(r"^FAILED: .*?/sources/([\w.-]+\.cpp)\.o\b", output, re.M)}
    failed |= set(re.findall(r"/sources/([\w.-]+\.cpp)\.o\] Error", output))  # make's way of saying it
    return sorted((failed & names) - set(broken))


def build_workspace(workspace, build, targets, jobs):
    """Build `targets` from the workspace. A file that does not compile is built as its stubs
    instead, so that it fails only the checks of its own steps. Returns (the files that did
    not compile, the compiler's errors with the learner's paths); raises BuildFailed if even
    that does not build."""
    sources = build / "sources"
    broken, errors = [], ""
    while True:
        write_sources(workspace, sources, broken)
        configure(sources, build)
        result = run_quietly(["cmake", "--build", str(build), "--parallel", str(jobs), "--target", *targets])
        if result.returncode == 0:
            return broken, errors
        errors = errors or first_errors(result.stdout, build)
        failed = failed_files(result.stdout, broken)
        if not failed:
            raise BuildFailed("the build failed", errors if broken else first_errors(result.stdout, build))
        broken += failed
