"""The learner's workspace: one file per book source with exercises, holding the includes
and, for each step, the function with its exercise region; nothing else of the book's file
(no option readers, tables or plots), which the grading build takes from src/ itself.

`init` makes the files the workspace lacks and adds the stub of every exercise a file lacks
(the book gained an exercise since the file was made), never changing the learner's bytes."""
import datetime
import re
import shutil

from .book import (BACKUP_FOLDER, LearnError, exercise_files, exercises, markers, relative,
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


def file_text(name, parts, solved=False, only=None):
    """A new workspace file: the book's includes and each exercise's function, as a stub
    (or, for the grader's own tests, `solved`: True, or which exercises are). `only` limits
    it to those exercises."""
    is_solved = solved if callable(solved) else (lambda _exercise: solved)
    lines = [HEADER.format(name=name), "\n", *markers.include_lines(parts_text(parts))]
    namespace = namespace_of(parts)
    lines += ["\n", f"namespace {namespace} {{\n"] if namespace else []
    for exercise, solution in markers.regions(parts):
        if only is None or exercise.name in only:
            lines += function_block(exercise, solution if is_solved(exercise) else exercise.stub_body())
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


def add_missing(workspace, quiet=False):
    """Create the workspace, the files it lacks and the stubs its files lack; returns
    [(file name, [exercise names], whether the file was new)]."""
    workspace.mkdir(parents=True, exist_ok=True)
    files, added = exercise_files(), []
    for name, absent in missing(workspace).items():
        path = workspace / name
        names, new = [exercise.name for exercise in absent], not path.exists()
        if new:
            path.write_text(file_text(name, files[name]), encoding="utf-8")
        else:
            blocks = [line for exercise in absent for line in function_block(exercise, exercise.stub_body())]
            path.write_text(insert_blocks(path.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        added.append((name, names, new))
        if not quiet:
            print(f"  added  {', '.join(names)} {'in a new file' if new else 'to'} {relative(path)}")
    return added


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
    stubs = sum(len(names) for _name, names, _new in added)
    kept = sorted(before)
    for name in kept:
        print(f"  kept   your code in {relative(workspace / name)} (`tools/learn reset` puts back a stub)")
    print(f"{'Updated' if existed else 'Created'} {relative(workspace)}/: {stubs} stub(s) added, "
          f"{len(kept)} file(s) of yours kept byte for byte apart from the stubs added.")
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
    if not region:
        add_missing(workspace, quiet=True)
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
