# Every chapter program over a grid of valid inputs (label "valid-input"): 1, 2, 3 and 5
# tokens, 1 to 5 features, each choice of a chapter's own options. None may be refused;
# a default that does not fit becomes what the numbers need, and a note line says so.
if(BOOK_WORKSPACE)
  return()  # a learner's build (tools/learn) does not build the programs' checks
endif()
# It runs two programs at a time, but between them it reads each program's options and makes a
# model, one thing at a time, so it keeps the two cores busy only part of the time: alone at the
# end of the suite (where PROCESSORS 2 put it, after everything else had finished) it left them
# idle a third of its 9 s. Counted as one slot and started before the short tests (COST 300:
# after the browser check and the grader's chain, which start first), it shares the cores with
# them. The time limit guards against a program that hangs, not a speed goal: the grid took 5 s
# in the normal build and 24 to 34 s under the sanitizers on the 2-core machine, and its 120 s
# limit once ran out there while the grader's builds compiled beside it.
book_test(NAME support.valid-input LABELS "valid-input" PROPERTIES TIMEOUT 360 COST 300
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_valid_input.py"
                  --bin "$<TARGET_FILE_DIR:ch01-projection>")
