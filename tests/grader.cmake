# The grader's own tests (tools/learn, label "grader"): the untouched stubs score 0, the
# reference solutions score full marks (graded chapter by chapter and together), a seeded bug
# fails the chapters of its steps (and, graded together, every chapter that reaches them),
# a learner who starts at chapter 9 gets its full points and a NaN bug in softmax costs
# chapter 5 alone, an old workspace gets the stubs it lacks with its code kept byte for byte,
# hints name matrices and tokens, crashes, endless loops and compile errors fail only what
# they reach, init keeps the learner's work (and moves it with a step the book moved to another
# file), run shows where the output differs, the points table in docs/how-to-use.rst matches the
# tests, one module reads the exercise markers, the programs of chapters 14 to 16 run on the
# learner's code, an exercise's check demands no wording its documentation does not give, and the
# grader's code fits on a screen (tools/test_grader.py lists the scenarios).
# The grading scenarios share one workspace and one build folder (the first one builds
# the tests, the others rebuild only what they change and rerun only the chapters whose
# steps changed), so they never run at the same time.
# Not in a learner's grading build, and not in the sanitizers' build either: the grader's grading
# builds take their own flags (tools/learning/build.py's GRADE_SETTINGS), never the sanitizers', so
# there its scenarios would run the very programs the book's build ran them on, 4 minutes again.
if(BOOK_WORKSPACE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  return()
endif()
set(grader_dir "${CMAKE_BINARY_DIR}/grader")
foreach(scenario IN ITEMS stubs solutions seeded-bug one-chapter old-workspace hints crash compile-error run-mixed)
  book_test(NAME grader.${scenario} LABELS grader
            PROPERTIES RESOURCE_LOCK grader-build TIMEOUT 1800 COST 500  # one after another: start early
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" ${scenario}
                    --workspace "${grader_dir}/workspace" --build "${grader_dir}/build")
endforeach()
# Chapters 14 to 16 run on the learner's code with the text and the models this build made (where it
# made them: the sanitizers' build trains none).
if(TARGET ch15-run AND TARGET ch16-run)
  book_test(NAME grader.run-part-three LABELS grader
            PROPERTIES RESOURCE_LOCK grader-build TIMEOUT 1800 COST 500
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" run-part-three
                    --workspace "${grader_dir}/workspace" --build "${grader_dir}/build"
                    --book-build "${CMAKE_BINARY_DIR}")
endif()
book_test(NAME grader.path-free LABELS grader  # no build
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" path-free
                  --workspace "${grader_dir}/path-free-workspace" --build "${grader_dir}/path-free-build"
                  --book-build "${CMAKE_BINARY_DIR}")
foreach(scenario IN ITEMS init-keeps-work moved-step hint-sentences code-size error-wording ctest-list)  # no build
  book_test(NAME grader.${scenario} LABELS grader
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/test_grader.py" ${scenario}
                    --workspace "${grader_dir}/${scenario}-workspace" --build "${grader_dir}/${scenario}-build")
endforeach()
book_test(NAME grader.points-table LABELS grader
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/learn.py" points --check --bin "${CMAKE_BINARY_DIR}/bin")
book_test(NAME grader.one-marker-reader LABELS grader
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/exercises.py" check-one-reader)
