# Chapter 11's own option, --upstream M (the gradient dO at the outputs): a wrong shape
# the reader gave is one line on stderr naming the shapes, exit status 2 and nothing on
# stdout, like every other bad input (tools/check_bad_input.py checks the common options
# only). A default that no longer fits the reader's numbers is no error: it becomes the
# same loss in their shape, the run succeeds and one note line on stderr says so.
if(BOOK_WORKSPACE OR NOT TARGET ch11-gradients)  # a learner's build does not build the programs' checks
  return()
endif()
set(upstream_check [=[
import sys
from one_line_refusal import verdict  # tools/, on PYTHONPATH
program, status, fragment, *arguments = sys.argv[1:]
fragment, *arguments = [text.replace("/", ";") for text in [fragment, *arguments]]  # CMake lists split at ";"
sys.exit(verdict(program, arguments, fragment, status=int(status), timeout=60))
]=])
foreach(case IN ITEMS
    "wrong-shape|2|dO must have the shape of the outputs O, 3×2 (one row per token, one column per value feature), got 3×3|--upstream|1,0,0/0,0,0/0,0,0"
    "default-no-longer-fits|0|note: using --upstream 0,1/0,0, as its default does not fit your numbers|--tokens|A,B|--embeddings|1,0/0,1"
    "default-one-feature|0|note: using the identity for W_Q (1×1), W_K (1×1) and W_V (1×1), and --upstream 1/0, as their defaults do not fit your numbers|--embeddings|1/2"
    "not-a-matrix|2|--upstream row 2: \"0,y\": \"y\" is not a number|--upstream|0,1/0,y/0,0")
  string(REPLACE "|" ";" fields "${case}")
  list(POP_FRONT fields name status fragment)
  add_test(NAME ch11-gradients.upstream-${name}
           COMMAND "${BOOK_PYTHON}" -c "${upstream_check}" "$<TARGET_FILE:ch11-gradients>" "${status}" "${fragment}"
                   ${fields})
  set_tests_properties(ch11-gradients.upstream-${name} PROPERTIES LABELS "ch11;bad-input"
                       ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools")
endforeach()
