# book_test(NAME <name> COMMAND <command>... [LABELS <label>...] [PROPERTIES <property> <value>...])
#
# The one place the book registers a CTest test: every test of the project, whatever its
# group, goes through this function (support.one-test-site counts the add_test calls).
# LABELS are the test's labels; PROPERTIES are passed to set_tests_properties as they are.
include_guard(GLOBAL)
function(book_test)
  cmake_parse_arguments(PARSE_ARGV 0 test "" "NAME" "COMMAND;LABELS;PROPERTIES")
  if(NOT test_NAME OR NOT test_COMMAND)
    message(FATAL_ERROR "book_test: needs NAME and COMMAND")
  endif()
  add_test(NAME "${test_NAME}" COMMAND ${test_COMMAND})
  if(test_LABELS)
    # PARSE_ARGV keeps a quoted "ch14;bad-input" as one element; the labels are its parts.
    string(REPLACE "\\;" ";" labels "${test_LABELS}")
    set_tests_properties("${test_NAME}" PROPERTIES LABELS "${labels}")
  endif()
  if(test_PROPERTIES)
    set_tests_properties("${test_NAME}" PROPERTIES ${test_PROPERTIES})
  endif()
endfunction()
