#!/usr/bin/env python3
"""A copied build works on its own files, whose original is gone (issue 37).

The programs of chapters 14 to 16 read what the build made: the King James text and the models
chapters 14 and 15 save. They find each in the build folder they run from, the folder above
their bin/ (sa::book_file()), never in the folder they were built in. This check copies that
part of the build (five programs, text/, ch14/ and ch15/) into a temporary folder, copies
that copy again and deletes the first, and then in the second:

- no program's --help shows a path of the machine: nothing of the build folder's or the
  first copy's absolute path, and no default that starts with '/';
- chapter 16's two programs with their defaults print what the build's own runs printed (outputs/);
- chapter 14 trains 0 steps on the copy's text, and chapter 15's circuit (ch15-circuit) reads
  the copy's chapter 15 models and finds the copy's chapter 14 model (its one-layer control);
- with the copy's own model or text removed, each program says it cannot read the copy's
  file, by its path in the copy: it never falls back on the build it came from.

Usage: check_moved_build.py --build DIR   (DIR: the book's build, with its trained models)
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = ("ch14-next-character", "ch15-induction-head", "ch15-circuit", "ch16-generating-text", "ch16-names")
PRODUCTS = ("text/kjv-training.txt", "text/kjv-held-out.txt", "ch14/model.safetensors",
            *(f"ch15/model.safetensors{suffix}" for suffix in ("", ".without-mix", ".copying", ".copying-control",
                                                                ".one-layer", ".run")))
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


def copy_build(build, into):
    """The part of the build the programs need, copied into `into`."""
    for name in [f"bin/{program}" for program in PROGRAMS] + list(PRODUCTS):
        os.makedirs(os.path.dirname(os.path.join(into, name)), exist_ok=True)
        shutil.copy2(os.path.join(build, name), os.path.join(into, name))


def run(copy, program, *arguments):
    """One program of the copy, run from a folder of its own (not the copy, not the build)."""
    elsewhere = tempfile.mkdtemp(prefix="elsewhere-")
    try:
        return subprocess.run([os.path.join(copy, "bin", program), *arguments], capture_output=True, text=True,
                              errors="replace", timeout=600, check=False, cwd=elsewhere)
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


def check_help(copy, forbidden):
    for program in PROGRAMS:
        usage = run(copy, program, "--help").stdout
        for path in forbidden:
            expect(path not in usage, f"{program} --help shows the path {path}")
        expect("(default /" not in usage, f"{program} --help shows an absolute default: {usage!r}")


def check_runs(build, copy):
    for program, output in (("ch16-generating-text", "output.txt"), ("ch16-names", "names-output.txt")):
        printed = os.path.join(build, "outputs", "16-generating-text", output)
        generated = run(copy, program)
        expect(generated.returncode == 0, f"{program} in the copy: exit {generated.returncode}: "
               f"{generated.stderr.strip()}")
        with open(printed, encoding="utf-8") as expected:
            expect(generated.stdout == expected.read(), f"{program} in the copy does not print what the build's "
                   "run printed")
    trained = run(copy, "ch14-next-character", "--steps", "0")
    expect(trained.returncode == 0 and "Training text:" in trained.stdout,
           f"ch14 --steps 0 in the copy: exit {trained.returncode}: {trained.stderr.strip()}")
    control = run(copy, "ch15-circuit")
    expect(control.returncode == 0 and "The one-layer control, chapter 14's saved model (text alone):" in control.stdout,
           f"ch15-circuit in the copy does not find the copy's chapter 14 model: {control.stderr.strip()}")


def check_own_files(copy):
    """Without its own file, a program of the copy says so, by the copy's path."""
    model = os.path.join(copy, "ch14", "model.safetensors")
    os.remove(model)
    missing = run(copy, "ch16-generating-text")
    expect(missing.returncode == 2 and f"--load: cannot read the file {model}" in missing.stderr,
           f"ch16 without the copy's model: exit {missing.returncode}, {missing.stderr.strip()!r}; expected it "
           f"to name {model}")
    control = run(copy, "ch15-circuit")
    expect("The one-layer control, chapter 14's saved model: not here" in control.stdout,
           "ch15-circuit without the copy's chapter 14 model found another one")
    induction = os.path.join(copy, "ch15", "model.safetensors")
    os.remove(induction)
    no_induction = run(copy, "ch16-names")
    expect(no_induction.returncode == 2 and f"--load: cannot read the file {induction}" in no_induction.stderr,
           f"ch16-names without the copy's chapter 15 model: exit {no_induction.returncode}, "
           f"{no_induction.stderr.strip()!r}; expected it to name {induction}")
    text = os.path.join(copy, "text", "kjv-training.txt")
    os.remove(text)
    no_text = run(copy, "ch14-next-character", "--steps", "0")
    expect(no_text.returncode == 2 and f"cannot read the file {text}" in no_text.stderr,
           f"ch14 without the copy's text: exit {no_text.returncode}, {no_text.stderr.strip()!r}; expected it to "
           f"name {text}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="the book's build folder")
    args = parser.parse_args()
    build = os.path.realpath(args.build)
    scratch = tempfile.mkdtemp(prefix="moved-build-")
    try:
        first, second = os.path.join(scratch, "first"), os.path.join(scratch, "second")
        copy_build(build, first)
        shutil.copytree(first, second, symlinks=True)
        shutil.rmtree(first)  # the original of the copy is gone
        check_help(second, [build, first])
        check_runs(build, second)
        check_own_files(second)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if failures:
        print(f"{len(failures)} problem(s) with a copied build")
        return 1
    print("A copied build whose original is deleted reads its own files, and --help names no path of the machine.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
