# A copied build whose original is deleted (issue 37): the programs of chapters 14 to 16 find the
# text and the models in the build folder they run from, never in the one they were built in, and
# --help names no path of the machine (tools/checks/check_moved_build.py copies what they need).
if(BOOK_WORKSPACE OR NOT TARGET ch15-run OR NOT TARGET ch16-run)
  return()  # a learner's build, or the sanitizers' build, which trains no model to copy
endif()
book_test(NAME support.moved-build LABELS "ch14;ch15;ch16;moved-build" PROPERTIES TIMEOUT 600
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_moved_build.py" --build "${CMAKE_BINARY_DIR}")
