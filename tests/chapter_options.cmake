# The chapters' own options (chapters 11, 14, 15 and 16, and chapter 16's ch16-names): each bad value or file is one line on
# stderr naming the problem, exit status 2 and nothing on stdout, like every other bad input
# (tools/checks/check_bad_input.py checks the common options, and every FILE or DIR option for a path it
# cannot use, before the run); a default that no longer fits the reader's numbers is no error but
# one note line. tools/checks/check_options.py holds the cases, writes each bad file itself into a
# temporary folder and gives the verdict (tools/checks/one_line_refusal.py).
if(BOOK_WORKSPACE)
  return()  # a learner's build does not build the programs' checks
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/tools/checks/check_options.py")
foreach(program IN ITEMS ch11-gradients ch14-next-character ch15-induction-head ch16-generating-text ch16-names)
  string(SUBSTRING "${program}" 2 2 chapter)
  set(label ${chapter})
  if(program STREQUAL "ch16-names")
    set(chapter 16-names)
  endif()
  if(NOT TARGET ${program} OR (chapter STREQUAL "16" AND NOT TARGET ch16-run)
     OR (chapter STREQUAL "16-names" AND NOT TARGET ch15-run))
    continue()  # chapter 16's cases damage the models chapters 14 and 15 save at build time
  endif()
  execute_process(COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_options.py" --chapter ${chapter} --list
                  OUTPUT_VARIABLE cases RESULT_VARIABLE listed)
  if(NOT listed EQUAL 0)
    message(FATAL_ERROR "tools/checks/check_options.py --chapter ${chapter} --list failed")
  endif()
  set(kind option)
  if(chapter STREQUAL "11")
    set(kind upstream)  # chapter 11's one option, --upstream
  endif()
  set(model "${CMAKE_BINARY_DIR}/ch14/model.safetensors")
  if(chapter MATCHES "^(15|16-names)$")
    set(model "${CMAKE_BINARY_DIR}/ch15/model.safetensors")
  endif()
  foreach(case IN LISTS cases)
    if(case MATCHES "^sequence-" AND NOT TARGET ch15-run)
      continue()  # no model saved at build time to score (the sanitizer build)
    endif()
    book_test(NAME ${program}.${kind}-${case} LABELS "ch${label};bad-input"
              COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_options.py" --chapter ${chapter}
                      --program "$<TARGET_FILE:${program}>" --model "${model}"
                      --case "${case}")
  endforeach()
endforeach()
