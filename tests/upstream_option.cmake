# Chapter 11's own option, --upstream M (the gradient dO at the outputs): a wrong shape,
# given or left over from the default, is one line on stderr naming the shapes, exit
# status 2 and nothing on stdout, like every other bad input (tools/check_bad_input.py
# checks the common options only).
if(BOOK_WORKSPACE OR NOT TARGET ch11-gradients)  # a learner's build does not build the programs' checks
  return()
endif()
set(upstream_check [=[
import subprocess, sys
program, fragment, *arguments = sys.argv[1:]
arguments = [argument.replace("/", ";") for argument in arguments]  # CMake lists split at ";"
run = subprocess.run([program, *arguments], capture_output=True, text=True, timeout=60)
lines = run.stderr.splitlines()
problems = [text for bad, text in [
    (run.returncode != 2, f"exit status {run.returncode}, expected 2"),
    (run.stdout != "", "something was printed on stdout"),
    (len(lines) != 1, f"{len(lines)} lines on stderr, expected 1"),
    (fragment not in run.stderr, f"stderr does not contain {fragment!r}")] if bad]
print(run.stderr, end="")
for problem in problems:
    print("FAIL:", problem)
sys.exit(1 if problems else 0)
]=])
foreach(case IN ITEMS
    "wrong-shape|dO must have the shape of the outputs O, 3×2 (one row per token, one column per value feature), got 3×3|--upstream|1,0,0/0,0,0/0,0,0"
    "default-no-longer-fits|but the default is 3×2|--tokens|A,B|--embeddings|1,0/0,1"
    "not-a-matrix|--upstream row 2: \"0,y\": \"y\" is not a number|--upstream|0,1/0,y/0,0")
  string(REPLACE "|" ";" fields "${case}")
  list(POP_FRONT fields name fragment)
  add_test(NAME ch11-gradients.upstream-${name}
           COMMAND "${BOOK_PYTHON}" -c "${upstream_check}" "$<TARGET_FILE:ch11-gradients>" "${fragment}" ${fields})
  set_tests_properties(ch11-gradients.upstream-${name} PROPERTIES LABELS "ch11;bad-input")
endforeach()
