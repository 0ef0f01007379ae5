# The command-line fuzzer (label "fuzz"): tools/fuzz.sh builds tests/fuzz/parse_fuzz.cpp
# with clang's libFuzzer and the sanitizers, and runs it for 20 seconds from the seed
# corpus; any crash or broken one-line error fails the test. The fuzzer carries its
# own sanitizers, so a build that already has them (tools/sanitize.sh) skips it, and a
# learner's grading build does too.
if(BOOK_WORKSPACE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  return()
endif()
book_test(NAME support.fuzz-command-line LABELS fuzz PROPERTIES TIMEOUT 900
          COMMAND bash "${CMAKE_SOURCE_DIR}/tools/fuzz.sh" "${CMAKE_BINARY_DIR}/fuzz" 20)
