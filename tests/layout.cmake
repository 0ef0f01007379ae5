# The book's layout (label "layout"): the maths apart from the presentation, and nothing
# too long to see at once.
if(BOOK_WORKSPACE)
  return()  # a learner's grading build checks the steps, not the book's layout
endif()
# The maths (src/) includes no presentation header (src/present/), and its include path
# cannot reach one: such an include does not compile.
add_test(NAME support.maths-apart
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/check_maths_apart.py" --root "${CMAKE_SOURCE_DIR}"
                 --compiler "${CMAKE_CXX_COMPILER}"
                 --include-dirs "$<JOIN:$<TARGET_PROPERTY:selfattention,INCLUDE_DIRECTORIES>,|>")
set_tests_properties(support.maths-apart PROPERTIES LABELS "layout")
# No function over 60 lines: C++ in src/ and chapters/, Python in tools/.
add_test(NAME support.function-length
         COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/check_function_length.py" --root "${CMAKE_SOURCE_DIR}"
                 --limit 60)
set_tests_properties(support.function-length PROPERTIES LABELS "layout")
