# Chapter 16's own options (--temperature, --top-k, --prompt, --length, --load): each bad value or
# file is one line on stderr naming the problem, exit status 2 and nothing on stdout. The script
# writes each bad model file itself into a temporary folder, from the model the build saved.
if(BOOK_WORKSPACE OR NOT TARGET ch16-generating-text OR NOT TARGET ch16-run)
  return()
endif()
set(ch16_option_check [=[
import os, sys, tempfile
from one_line_refusal import verdict  # tools/, on PYTHONPATH
program, model, case = sys.argv[1:]
folder = tempfile.mkdtemp()
def path(name, data):
    full = os.path.join(folder, name)
    with open(full, "wb") as out:
        out.write(data)
    return full
saved = open(model, "rb").read()
arguments, fragment = {
    "temperature-zero": (["--temperature", "0"], "--temperature: expected a number above 0"),
    "temperature-negative": (["--temperature", "-1"], "ask for it with --greedy"),
    "temperature-not-a-number": (["--temperature", "warm"], "got 'warm'; T -> 0 is the greedy choice"),
    "temperature-nan": (["--temperature", "nan"], "--temperature: expected a number above 0"),
    "top-k-zero": (["--top-k", "0"], "--top-k: expected a whole number from 1 to d_vocab = 63"),
    "top-k-past-vocabulary": (["--top-k", "64"], "--top-k: expected a whole number from 1 to d_vocab = 63"),
    "prompt-outside": (["--prompt", "Xerxes @ home"], "the characters 'X', '@' are not in the model's vocabulary"),
    "prompt-empty": (["--prompt", ""], "an empty prompt is not in the model's vocabulary"),
    "length-past-maximum": (["--length", "401"], "--length: expected a whole number from 0 to 400"),
    "no-model": (["--load", os.path.join(folder, "missing.safetensors")], "--load: cannot read the file"),
    "truncated-model": (["--load", path("cut.safetensors", saved[:-100])], "bytes of data after the header"),
    "speed-unwritable": (["--length", "5", "--speed", os.path.join(folder, "no", "speed.txt")],
                         "--speed: cannot write the file"),
    "corrupt-model": (["--load", path("bad.safetensors", saved[:8] + b"!" + saved[9:])],
                      "the header is not valid JSON"),
}[case]
sys.exit(verdict(program, arguments, fragment))
]=])
foreach(case IN ITEMS temperature-zero temperature-negative temperature-not-a-number temperature-nan top-k-zero
                      top-k-past-vocabulary prompt-outside prompt-empty length-past-maximum no-model truncated-model
                      corrupt-model speed-unwritable)
  add_test(NAME ch16-generating-text.option-${case}
           COMMAND "${BOOK_PYTHON}" -c "${ch16_option_check}" "$<TARGET_FILE:ch16-generating-text>"
                   "${CMAKE_BINARY_DIR}/ch14/model.safetensors" "${case}")
  set_tests_properties(ch16-generating-text.option-${case} PROPERTIES LABELS "ch16;bad-input"
                        ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools")
endforeach()
