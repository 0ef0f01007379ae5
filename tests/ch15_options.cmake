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
