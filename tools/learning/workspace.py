"""The learner's workspace: one file per book source with exercises, holding the includes
and, for each step, the function with its exercise region; nothing else of the book's file
(no option readers, tables or plots), which the grading build takes from src/ itself.

`init` makes the files the workspace lacks and adds the stub of every exercise a file lacks
(the book gained an exercise since the file was made), never changing the learner's bytes. An
exercise the book has moved to another file (a large file split in two) is moved with the learner's
code: the new file gets the body the learner wrote in the old one, with the #include lines the
learner added there, and the old file is left as it was."""
import datetime
import re
import shutil

from .book import (BACKUP_FOLDER, SRC, LearnError, exercise_files, exercises, markers, relative,
                   write_if_changed)

HEADER = ("// Your steps of the book's src/{name}, made by tools/learn init.\n"
          "// Write each step between the two marker lines of its exercise. Only that code and\n"
          "// the #include lines are graded; the rest of src/{name} comes from the book.\n")


def namespace_of(parts):
    """The name of the book file's first namespace (the library's "sa"), or ""."""
    for part in parts:
        found = isinstance(part, str) and re.match(r"^namespace\s+(\w+)\s*\{", part)
        if found:
            return found[1]
    return ""


def function_block(exercise, body):
    """The exercise's function, its signature as the book declares it and `body` between the markers."""
    return ["\n", *exercise.signature, "{\n", exercise.begin_line(), *body, exercise.end_line(), "}\n"]


def file_text(name, parts, solved=False, only=None, moved=None):
    """A new workspace file: the book's includes and each exercise's function, as a stub
    (or, for the grader's own tests, `solved`: True, or which exercises are). `only` limits
    it to those exercises. `moved`: a Moved, the learner's code of exercises from another file."""
    is_solved = solved if callable(solved) else (lambda _exercise: solved)
    bodies = moved.bodies if moved else {}
    lines = [HEADER.format(name=name), "\n", *markers.include_lines(parts_text(parts)),
             *(moved.includes if moved else [])]
    namespace = namespace_of(parts)
    lines += ["\n", f"namespace {namespace} {{\n"] if namespace else []
    for exercise, solution in markers.regions(parts):
        if only is None or exercise.name in only:
            body = bodies[exercise.name] if exercise.name in bodies else \
                solution if is_solved(exercise) else exercise.stub_body()
            lines += function_block(exercise, body)
    lines += ["\n", f"}}  // namespace {namespace}\n"] if namespace else []
    return "".join(lines)


def parts_text(parts):
    return [part for part in parts if isinstance(part, str)]


def read_lines(path):
    return path.read_text(encoding="utf-8").splitlines(keepends=True) if path.exists() else None


def missing(workspace):
    """{file name: [the exercises it lacks]} for the book's exercise files (a missing file lacks all)."""
    lacking = {}
    for name, parts in exercise_files().items():
        lines = read_lines(workspace / name)
        found = markers.workspace_regions(lines) if lines is not None else {}
        absent = [exercise for exercise, _body in markers.regions(parts) if exercise.name not in found]
        if absent:
            lacking[name] = absent
    return lacking


def insert_blocks(text, blocks):
    """The file with `blocks` inserted before the namespace's closing line (or at the end)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    closing = [index for index, line in enumerate(lines) if re.match(r"^}\s*//\s*namespace\b", line)]
    at = closing[-1] if closing else len(lines)
    while at > 0 and not lines[at - 1].strip() and closing:
        at -= 1  # after the learner's last line, before the blank lines that precede the closing
    return "".join(lines[:at] + blocks + lines[at:])


class Moved:
    """The learner's code of the exercises a file lacks that another workspace file holds (the book
    moved them): {exercise name: body}, where each came from, and the #include lines the learner
    added to those files (neither the book's file of that name nor the new file has them)."""

    def __init__(self, workspace, name, absent):
        self.bodies, self.sources, self.includes = {}, {}, []
        for other in sorted(workspace.glob("*.cpp")):
            lines = [] if other.name == name else read_lines(other)
            for exercise in absent:
                body = learner_body(lines, exercise)  # an untouched stub there is moved as a new stub here
                if not is_stub(body, exercise) and exercise.name not in self.bodies:
                    self.bodies[exercise.name], self.sources[exercise.name] = body, other
        book_lines = read_lines(SRC / name) or []
        carried = set()  # each #include once, however many old files hold it
        for other in sorted(set(self.sources.values())):
            known = {line.strip() for line in markers.include_lines(book_lines + (read_lines(SRC / other.name) or []))}
            for line in markers.include_lines(read_lines(other)):
                if line.strip() not in known | carried:
                    carried.add(line.strip())
                    self.includes.append(line)

    def say(self, name, path):
        for source in sorted(set(self.sources.values())):
            names = [exercise for exercise, found in self.sources.items() if found == source]
            print(f"  moved  your {', '.join(names)} from {relative(source)} to {relative(path)} (the book moved "
                  f"{'them' if len(names) > 1 else 'it'} to src/{name}; {relative(source)} is left as it was and "
                  "no longer graded for them)")


def not_graded(workspace):
    """[(workspace file, [the exercises it holds])] for the files that hold exercises but are no book file's
    with exercises (the book moved their steps to other files): the learner's code there is not graded."""
    files = exercise_files()
    return [(path, sorted(regions)) for path in sorted(workspace.glob("*.cpp")) if path.name not in files
            for regions in [markers.workspace_regions(read_lines(path))] if regions]


def add_missing(workspace, quiet=False):
    """Create the workspace, the files it lacks and the stubs its files lack (or the learner's code of an
    exercise the book moved from another file); returns [(file name, [the stubs added], whether the file
    was new, [the exercises moved])]."""
    workspace.mkdir(parents=True, exist_ok=True)
    files, added = exercise_files(), []
    for name, absent in missing(workspace).items():
        path = workspace / name
        names, new = [exercise.name for exercise in absent], not path.exists()
        moved = Moved(workspace, name, absent)
        if new:
            path.write_text(file_text(name, files[name], moved=moved), encoding="utf-8")
        else:
            blocks = [line for exercise in absent for line in function_block(
                exercise, moved.bodies[exercise.name] if exercise.name in moved.bodies else exercise.stub_body())]
            text = insert_includes(path.read_text(encoding="utf-8"), moved.includes)
            path.write_text(insert_blocks(text, blocks), encoding="utf-8")
        stubs = [exercise for exercise in names if exercise not in moved.bodies]
        added.append((name, stubs, new, sorted(moved.bodies)))
        if not quiet:
            if stubs:
                print(f"  added  {', '.join(stubs)} {'in a new file' if new else 'to'} {relative(path)}")
            moved.say(name, path)
    return added


def insert_includes(text, includes):
    """The file with `includes` after its last #include line (or at the top)."""
    lines = text.splitlines(keepends=True)
    at = max((index + 1 for index, line in enumerate(lines) if line in markers.include_lines([line])), default=0)
    return "".join(lines[:at] + includes + lines[at:])


def backup(workspace, name):
    source = workspace / name
    if not source.exists():
        return None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = workspace / BACKUP_FOLDER / f"{name}.{stamp}"
    counter = 1
    while target.exists():
        counter += 1
        target = workspace / BACKUP_FOLDER / f"{name}.{stamp}-{counter}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return target


def command_init(args):
    workspace = args.workspace
    existed = workspace.exists()
    files = exercise_files()
    if args.solutions:  # for the grader's own tests: a workspace where everything is solved
        workspace.mkdir(parents=True, exist_ok=True)
        for name, parts in files.items():
            write_if_changed(workspace / name, file_text(name, parts, solved=True))
        print(f"Wrote the reference solutions into {relative(workspace)}/")
        return 0
    before = {name for name in files if (workspace / name).exists()}
    added = add_missing(workspace)
    stubs = sum(len(names) for _name, names, _new, _moved in added)
    moved = sum(len(names) for _name, _stubs, _new, names in added)
    kept = sorted(before)
    for name in kept:
        print(f"  kept   your code in {relative(workspace / name)} (`tools/learn reset` puts back a stub)")
    print(f"{'Updated' if existed else 'Created'} {relative(workspace)}/: {stubs} stub(s) added, "
          + (f"{moved} step(s) of yours moved where the book moved them, " if moved else "")
          + f"{len(kept)} file(s) of yours kept byte for byte apart from the lines added.")
    if not kept:
        print("Next: tools/learn grade     (every chapter starts at 0 points)")
    return 0


def reset_file(workspace, target, parts):
    saved = backup(workspace, target)
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / target).write_text(file_text(target, parts), encoding="utf-8")
    print(f"Reset {relative(workspace / target)} to its stubs."
          + (f" Your version is saved as {relative(saved)}." if saved else ""))
    return 0


def command_reset(args):
    workspace, target, files = args.workspace, args.exercise, exercise_files()
    if target in files:
        return reset_file(workspace, target, files[target])
    by_name = {exercise.name: exercise for exercise in exercises()}
    if target not in by_name:
        raise LearnError(f"no exercise named \"{target}\". Exercises: {', '.join(by_name)}; "
                         f"or name a whole file: {', '.join(files)}")
    exercise = by_name[target]
    path = workspace / exercise.file
    lines = read_lines(path)
    region = markers.workspace_regions(lines).get(target) if lines is not None else None
    if not region:  # init's work first: the stubs the workspace lacks, and the steps the book moved
        add_missing(workspace, quiet=True)
        lines = read_lines(path)
        region = markers.workspace_regions(lines).get(target)
        if is_stub(learner_body(lines, exercise), exercise):
            print(f"Reset {target}: {relative(path)} lacked it and now holds its stub.")
            return 0
    saved = backup(workspace, exercise.file)
    first, last = region
    lines[first:last + 1] = exercise.stub_lines()
    path.write_text("".join(lines), encoding="utf-8")
    print(f"Reset {target} in {relative(path)} to its stub; the rest of the file is unchanged. "
          f"Your version is saved as {relative(saved)}.")
    return 0


def learner_body(lines, exercise):
    """The learner's lines between the exercise's markers, or None when the file lacks it."""
    region = markers.workspace_regions(lines or []).get(exercise.name)
    return lines[region[0] + 1:region[1]] if region else None


def is_stub(body, exercise):
    return body is None or [line.strip() for line in body] == [line.strip() for line in exercise.stub_body()]


def exercise_state(workspace, exercise):
    lines = read_lines(workspace / exercise.file)
    if lines is None:
        return "missing (tools/learn init adds it)"
    body = learner_body(lines, exercise)
    if body is None:
        return "missing (tools/learn init adds it)"
    return "stub" if is_stub(body, exercise) else "edited"
