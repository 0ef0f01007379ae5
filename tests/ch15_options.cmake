# Chapter 15's own options (--layers, --heads, --steps, --text, --load): each bad value or file is
# one line on stderr naming the problem, exit status 2 and nothing on stdout.
if(BOOK_WORKSPACE OR NOT TARGET ch15-induction-head)  # a learner's build does not build the programs' checks
  return()
endif()
set(ch15_option_check [=[
import os, sys, tempfile
from one_line_refusal import verdict  # tools/, on PYTHONPATH
program, case = sys.argv[1:]
folder = tempfile.mkdtemp()
def path(name, data):
    full = os.path.join(folder, name)
    with open(full, "wb") as out:
        out.write(data)
    return full
arguments, fragment = {
    "layers-zero": (["--layers", "0"], "--layers: expected a whole number from 1 to 4"),
    "layers-many": (["--layers", "9"], "--layers: expected a whole number from 1 to 4"),
    "heads": (["--heads", "3"], "--heads: 3 heads do not cut d = 64 into slices of an even width"),
    "steps": (["--steps", "6000"], "--steps: expected a whole number from 0 to 5000"),
    "few-letters": (["--text", path("abc.txt", b"abc abc abc, cab bac\n" * 200)],
                    "distinct letters (A-Z, a-z); the test sequences need 32"),
    "no-file": (["--load", os.path.join(folder, "missing.safetensors")], "--load: cannot read the file"),
    "not-a-model": (["--load", path("bad.safetensors", b"12345678{not json")], "--load"),
}[case]
sys.exit(verdict(program, arguments, fragment))
]=])
foreach(case IN ITEMS layers-zero layers-many heads steps few-letters no-file not-a-model)
  add_test(NAME ch15-induction-head.option-${case}
           COMMAND "${BOOK_PYTHON}" -c "${ch15_option_check}" "$<TARGET_FILE:ch15-induction-head>" "${case}")
  set_tests_properties(ch15-induction-head.option-${case} PROPERTIES LABELS "ch15;bad-input"
                        ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools")
endforeach()

# --sequence TEXT with --load (the chapter page's panel): the saved model scored on the reader's
# characters repeated once. Each bad value is one line and exit 2; a good one prints a score per
# head of every layer, between 0 and 1, and the sequence as given.
if(NOT TARGET ch15-run)
  return()
endif()
set(ch15_sequence_check [=[
import re, subprocess, sys
from one_line_refusal import verdict  # tools/, on PYTHONPATH
program, model, case = sys.argv[1:]
if case == "sequence-scored":
    run = subprocess.run([program, "--load", model, "--sequence", "Mouse eats cheese"], capture_output=True, text=True)
    rows = re.findall(r"^layer \d((?:\s+\d\.\d+)+)$", run.stdout, re.M)
    shape = re.search(r"(\d+) layers, d = \d+, h = (\d+)", run.stdout)
    layers, heads = (int(shape.group(1)), int(shape.group(2))) if shape else (0, 0)
    scores = [float(x) for row in rows for x in row.split()]
    problems = [what for what, bad in [
        (f"exit status {run.returncode}: {run.stderr.strip()}", run.returncode != 0),
        (f"the induction table is not {layers} layers by {heads} heads", not layers or len(scores) != layers * heads
                                                                          or len(rows) != layers),
        (f"an induction score outside 0 to 1: {scores}", any(not 0 <= s <= 1 for s in scores)),
        ("the sequence is not shown as given", 'The second copy:           "Mouse eats cheese"' not in run.stdout)] if bad]
    print("\n".join(problems) or "scored")
    sys.exit(1 if problems else 0)
arguments, fragment = {
    "sequence-without-model": (["--sequence", "abc"], "--sequence: needs --load FILE"),
    "sequence-short": (["--load", model, "--sequence", "a"], "--sequence: expected 2 to 32 characters"),
    "sequence-long": (["--load", model, "--sequence", "a" * 33], "--sequence: expected 2 to 32 characters"),
    "sequence-outside": (["--load", model, "--sequence", "Xerxes @ home"],
                         "the characters 'X', '@' are not in the model's vocabulary"),
}[case]
sys.exit(verdict(program, arguments, fragment))
]=])
foreach(case IN ITEMS sequence-without-model sequence-short sequence-long sequence-outside sequence-scored)
  add_test(NAME ch15-induction-head.option-${case}
           COMMAND "${BOOK_PYTHON}" -c "${ch15_sequence_check}" "$<TARGET_FILE:ch15-induction-head>"
                   "${CMAKE_BINARY_DIR}/ch15/model.safetensors" "${case}")
  set_tests_properties(ch15-induction-head.option-${case} PROPERTIES LABELS "ch15;bad-input"
                        ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools")
endforeach()
