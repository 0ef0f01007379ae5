# The book's layout (label "layout"): the maths apart from the presentation, and nothing
# too long to see at once.
if(BOOK_WORKSPACE)
  return()  # a learner's grading build checks the steps, not the book's layout
endif()
# The maths (src/) includes no presentation header (src/present/), and its include path
# cannot reach one: such an include does not compile.
book_test(NAME support.maths-apart LABELS "layout"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_maths_apart.py" --root "${CMAKE_SOURCE_DIR}"
                  --compiler "${CMAKE_CXX_COMPILER}"
                  --include-dirs "$<JOIN:$<TARGET_PROPERTY:selfattention,INCLUDE_DIRECTORIES>,|>")
# No function over 60 lines: C++ in src/ and chapters/, Python in tools/.
book_test(NAME support.function-length LABELS "layout"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_function_length.py" --root "${CMAKE_SOURCE_DIR}"
                  --limit 60)
# Every test through book_test(), and no Python program kept in a CMake string.
book_test(NAME support.one-test-site LABELS "layout"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_test_sites.py" --root "${CMAKE_SOURCE_DIR}")
# No circle of imports among the modules of tools/: what two modules share lives in a third
# that both import (the check first finds the circles it plants itself).
book_test(NAME support.no-import-circle LABELS "layout"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_import_cycles.py" --self-test
                  --tools "${CMAKE_SOURCE_DIR}/tools")
# Every mutant of tools/mutation/mutants.txt finds its line: a change to src/ that moves or rewrites
# one is caught when it is made, not when the mutants next run.
book_test(NAME support.mutant-list LABELS "layout"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/mutation/mutate.py" --check)
