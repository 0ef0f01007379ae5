# Chapter 15's own options (--layers, --heads, --steps, --text, --load): each bad value or file is
# one line on stderr naming the problem, exit status 2 and nothing on stdout.
if(BOOK_WORKSPACE OR NOT TARGET ch15-induction-head)  # a learner's build does not build the programs' checks
  return()
endif()
set(ch15_option_check [=[
import os, subprocess, sys, tempfile
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
run = subprocess.run([program, *arguments], capture_output=True, text=True, timeout=120)
lines_out = run.stderr.splitlines()
problems = [text for bad, text in [
    (run.returncode != 2, f"exit status {run.returncode}, expected 2"),
    (run.stdout != "", "something was printed on stdout"),
    (len(lines_out) != 1, f"{len(lines_out)} lines on stderr, expected 1"),
    (fragment not in run.stderr, f"stderr does not contain {fragment!r}")] if bad]
print(run.stderr, end="")
for problem in problems:
    print("FAIL:", problem)
sys.exit(1 if problems else 0)
]=])
foreach(case IN ITEMS layers-zero layers-many heads steps few-letters no-file not-a-model)
  add_test(NAME ch15-induction-head.option-${case}
           COMMAND "${BOOK_PYTHON}" -c "${ch15_option_check}" "$<TARGET_FILE:ch15-induction-head>" "${case}")
  set_tests_properties(ch15-induction-head.option-${case} PROPERTIES LABELS "ch15;bad-input")
endforeach()
