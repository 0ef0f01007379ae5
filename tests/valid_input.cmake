# Every chapter program over a grid of valid inputs (label "valid-input"): 1, 2, 3 and 5
# tokens, 1 to 5 features, each choice of a chapter's own options. None may be refused;
# a default that does not fit becomes what the numbers need, and a note line says so.
if(BOOK_WORKSPACE)
  return()  # a learner's build (tools/learn) does not build the programs' checks
endif()
# The time limit is a guard against a program that hangs, not a speed goal: the grid takes about
# 10 s in the normal build and 50 s under the sanitizers on a quiet 2-core machine, and more than
# twice that while the grader's builds compile beside it. It runs two programs at a time, so
# CTest counts it as two of its parallel slots (PROCESSORS 2) and starts nothing else beside it.
book_test(NAME support.valid-input LABELS "valid-input" PROPERTIES TIMEOUT 360 PROCESSORS 2
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/check_valid_input.py"
                  --bin "$<TARGET_FILE_DIR:ch01-projection>")
