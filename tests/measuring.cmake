# The measured figures of chapters 13 and 17 (docs/CMakeLists.txt) are timed one at a time: every
# command that writes one is in Ninja's pool book_measuring, of one job
# (tools/checks/check_measured_alone.py reads build.ninja).
if(BOOK_WORKSPACE OR NOT BOOK_DOCS OR NOT CMAKE_GENERATOR STREQUAL "Ninja")
  return()
endif()
book_test(NAME support.measured-alone LABELS "support"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_measured_alone.py"
                  --ninja "${CMAKE_BINARY_DIR}/build.ninja")
