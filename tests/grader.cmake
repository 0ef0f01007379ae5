# The grader's own tests (tools/learn, label "grader"): the untouched stubs score 0, the
# reference solutions score full marks, a seeded bug fails exactly the chapters that
# depend on it and every failing check can be seen with its hint, hints name matrices and
# tokens, crashes, endless loops and compile errors fail only what they reach, init keeps
# the learner's work, run shows where the output differs, and the points table in
# docs/how-to-use.rst matches the tests (tools/test_grader.py lists the scenarios).
# The grading scenarios share one workspace and one build folder (the first one builds
# the tests, the others rebuild only what they change), so they never run at the same time.
if(BOOK_WORKSPACE)
  return()  # a learner's grading build does not test the grader
endif()
set(grader_dir "${CMAKE_BINARY_DIR}/grader")
foreach(scenario IN ITEMS stubs solutions seeded-bug hints crash compile-error)
  add_test(NAME grader.${scenario}
           COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" ${scenario}
                   --workspace "${grader_dir}/workspace" --build "${grader_dir}/build")
  set_tests_properties(grader.${scenario} PROPERTIES LABELS grader RESOURCE_LOCK grader-build TIMEOUT 1800)
endforeach()
add_test(NAME grader.init-keeps-work
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" init-keeps-work
                 --workspace "${grader_dir}/init-workspace" --build "${grader_dir}/init-build")
set_tests_properties(grader.init-keeps-work PROPERTIES LABELS grader)
add_test(NAME grader.run-mixed
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" run-mixed
                 --workspace "${grader_dir}/run-workspace" --build "${grader_dir}/run-build/grade")
set_tests_properties(grader.run-mixed PROPERTIES LABELS grader TIMEOUT 600)
add_test(NAME grader.hint-sentences
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" hint-sentences
                 --workspace "${grader_dir}/hint-workspace" --build "${grader_dir}/hint-build")
set_tests_properties(grader.hint-sentences PROPERTIES LABELS grader)
add_test(NAME grader.points-table
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/learn.py" points --check --bin "${CMAKE_BINARY_DIR}/bin")
set_tests_properties(grader.points-table PROPERTIES LABELS grader)
