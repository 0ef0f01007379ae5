# Every chapter program over a grid of valid inputs (label "valid-input"): 1, 2, 3 and 5
# tokens, 1 to 5 features, each choice of a chapter's own options. None may be refused;
# a default that does not fit becomes what the numbers need, and a note line says so.
if(BOOK_WORKSPACE)
  return()  # a learner's build (tools/learn) does not build the programs' checks
endif()
book_test(NAME support.valid-input LABELS "valid-input" PROPERTIES TIMEOUT 120
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/check_valid_input.py"
                  --bin "$<TARGET_FILE_DIR:ch01-projection>")
