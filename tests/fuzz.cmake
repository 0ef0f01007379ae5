# The command-line fuzzer (label "fuzz"): tools/fuzz.sh builds tests/fuzz/parse_fuzz.cpp
# with clang's libFuzzer and the sanitizers, and runs it for 10 seconds from the seed
# corpus, beside the model loader's fuzzer; any crash or broken one-line error fails the test.
# The seeds hold what five minutes of fuzzing found: each run starts with more coverage (1,025
# edges of the command line's code, 489 of the loader's) than 20 seconds from the hand-written
# seeds alone ended with (1,004 to 1,006 and 478 to 479), in half the time. The fuzzer carries its
# own sanitizers, so a build that already has them (tools/sanitize.sh) skips it, and a
# learner's grading build does too.
if(BOOK_WORKSPACE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  return()
endif()
# The fuzzers are built with the book (again only when a source is newer), so the test's
# time is the fuzzing itself.
find_program(BOOK_CLANG_FOR_FUZZING clang++-14)
if(BOOK_CLANG_FOR_FUZZING)
  add_custom_target(book-fuzzers ALL COMMAND bash "${CMAKE_SOURCE_DIR}/tools/fuzz.sh" "${CMAKE_BINARY_DIR}/fuzz" build
                    COMMENT "The fuzzers (tools/fuzz.sh), if a source changed" VERBATIM)
endif()
book_test(NAME support.fuzz-command-line LABELS fuzz PROPERTIES TIMEOUT 900 COST 400
          COMMAND bash "${CMAKE_SOURCE_DIR}/tools/fuzz.sh" "${CMAKE_BINARY_DIR}/fuzz" 10)
