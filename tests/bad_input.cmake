# Every chapter program on each kind of malformed input: exit status 2, one line on
# stderr naming the problem, nothing on stdout.
if(BOOK_WORKSPACE)
  return()  # a learner's build (tools/learn) does not build the programs' checks
endif()
foreach(chapter IN LISTS BOOK_CHAPTERS)
  string(SUBSTRING "${chapter}" 0 2 chapter_number)
  book_test(NAME ch${chapter}.bad-input LABELS "ch${chapter_number};bad-input"
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_bad_input.py" --program "$<TARGET_FILE:ch${chapter}>")
endforeach()
