# Chapter 14's own options (--text, --load, --eval, --heads, --steps): each bad file or value is one
# line on stderr naming the problem, exit status 2 and nothing on stdout, like every other bad
# input (tools/check_bad_input.py checks the common options only). The script writes each bad
# file itself into a temporary folder.
if(BOOK_WORKSPACE OR NOT TARGET ch14-next-character)  # a learner's build does not build the programs' checks
  return()
endif()
set(ch14_option_check [=[
import os, subprocess, sys, tempfile
from one_line_refusal import verdict  # tools/, on PYTHONPATH
program, case = sys.argv[1:]
folder = tempfile.mkdtemp()
def path(name, data):
    full = os.path.join(folder, name)
    with open(full, "wb") as out:
        out.write(data)
    return full
lines = b"the quick brown fox jumps over the lazy dog\n" * 20
own = path("own.txt", lines)
if case in ("wrong-vocabulary", "truncated-model", "corrupt-model", "eval-outside"):
    subprocess.run([program, "--text", own, "--steps", "1", "--save", path("own.safetensors", b"")],
                   capture_output=True, check=True, timeout=120)
model = os.path.join(folder, "own.safetensors")
saved = open(model, "rb").read() if os.path.exists(model) else b""
arguments, fragment = {
    "empty": (["--text", path("empty.txt", b"")], "the file is empty"),
    "one-character": (["--text", path("a.txt", b"a" * 500)], "holds one distinct character ('a')"),
    "not-text": (["--text", path("b.bin", bytes(range(256)) * 4)], "is not text; the model reads plain ASCII"),
    "few-lines": (["--text", path("short.txt", b"ab\ncd\n")], "the text has 2 lines; it needs at least 10"),
    "held-out-outside": (["--text", path("z.txt", lines[:9 * 44] + b"Zhe" + lines[9 * 44 + 3:])],
                         "holds 'Z' on its line 1, which the training text never uses"),
    "no-file": (["--text", os.path.join(folder, "missing.txt")], "--text: cannot read the file"),
    "wrong-vocabulary": (["--load", model], "the model's vocabulary has"),
    "truncated-model": (["--text", own, "--load", path("cut.safetensors", saved[:-100])],
                        "bytes of data after the header, but its tensors need"),
    "corrupt-model": (["--text", own, "--load", path("bad.safetensors", saved[:8] + b"!" + saved[9:])],
                      "the header is not valid JSON"),
    "eval-outside": (["--text", own, "--load", model, "--eval", path("e.txt", b"Zebra")],
                     "'Z' on line 1 is not in the vocabulary"),
    "heads": (["--heads", "3"], "--heads: 3 heads do not cut d = 64 into slices of an even width"),
    "steps": (["--steps", "6000"], "--steps: expected a whole number from 0 to 5000"),
}[case]
sys.exit(verdict(program, arguments, fragment))
]=])
foreach(case IN ITEMS empty one-character not-text few-lines held-out-outside no-file wrong-vocabulary
                      truncated-model corrupt-model eval-outside heads steps)
  add_test(NAME ch14-next-character.option-${case}
           COMMAND "${BOOK_PYTHON}" -c "${ch14_option_check}" "$<TARGET_FILE:ch14-next-character>" "${case}")
  set_tests_properties(ch14-next-character.option-${case} PROPERTIES LABELS "ch14;bad-input"
                        ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools")
endforeach()
