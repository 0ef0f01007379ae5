# A learner's grading build (tools/learn grade): BOOK_WORKSPACE names the grading sources that
# tools/learn writes, one per book file with exercises (tools/learning/sources.py): the book's
# file with the learner's version of each step next to the book's, picked at run time by
# BOOK_GRADE_CHAPTER. Each chapter's checks run with their own chapter's number, so a chapter
# is graded on its own exercises and the book's version of every other step; the same checks
# also run with the learner's whole library ("together" tests, tools/learn grade --together).
#
# Included by the root CMakeLists.txt, after book_sources lists src/*.cpp: book_grading_sources()
# puts the grading sources in the exercise files' place, book_grading_test() makes a chapter's
# test program.

# The files with exercises, from the one reader of the exercise markers.
function(book_grading_sources)
  execute_process(COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/exercises.py" files
                          --src "${CMAKE_SOURCE_DIR}/src"
                  OUTPUT_VARIABLE listing ERROR_VARIABLE problem RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "tools/exercises.py could not read the exercise markers: ${problem}")
  endif()
  set(kept ${book_sources})
  set(grading "")
  string(REPLACE "\n" ";" listing "${listing}")
  foreach(line IN LISTS listing)
    if(line MATCHES "^([^ ]+\\.cpp)")
      set(file "${CMAKE_MATCH_1}")
      if(NOT EXISTS "${BOOK_WORKSPACE}/${file}")
        message(FATAL_ERROR "${BOOK_WORKSPACE} has no ${file}: grade with tools/learn grade, which writes it")
      endif()
      list(REMOVE_ITEM kept "${CMAKE_SOURCE_DIR}/src/${file}")
      list(APPEND grading "${BOOK_WORKSPACE}/${file}")
    endif()
  endforeach()
  # A new exercise in the book changes the list: configure again.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${book_sources} "${CMAKE_SOURCE_DIR}/tools/exercises.py")
  set(book_sources ${kept} ${grading} PARENT_SCOPE)
  set(book_grading_steps ${grading} PARENT_SCOPE)
  set(book_kept_steps ${kept} PARENT_SCOPE)
endfunction()

# The learner's steps, that is the grading sources, optimized (the experiments in the tests run
# in well under a second), without debug information, and their common headers precompiled
# once: a changed step compiles in a third of the time. -O1, not -O2: the grader's scenarios, one
# after another, spent 67.1 and 67.3 s of CPU time at -O1 against 73.8 and 73.9 s at -O2 (their
# compiles are cheaper by more than the experiments slow down), and the numbers are the same (no
# optimization level reorders a sum).
#
# The book's files without exercises compile exactly as in the book's own build (its flags, its
# options per file, no precompiled headers), so with ccache a first grade takes them from the
# book's build instead of compiling them again; their objects go into the same shared library.
function(book_grading_library)
  add_library(selfattention-kept OBJECT ${book_kept_steps})
  book_library_code(selfattention-kept)
  target_link_libraries(selfattention PRIVATE selfattention-kept)
  target_compile_options(selfattention PRIVATE -O1 -g0)
  # Every regrade relinks it, with gold, as every program links (the root CMakeLists.txt).
  # The book's header by its name, as the sources include it, not by its path: the header CMake
  # writes for them then names no path of the machine, and a copy of the book finds its compilation.
  target_precompile_headers(selfattention PRIVATE <cmath> <stdexcept> <string> <vector> <fmt/format.h>
                            [["matrix.hpp"]])
  # ccache hashes every file an object was compiled from at each lookup, this 55 MB header too: 0.2 s
  # of a hit's 0.35 s. Its launcher writes the header's checksum beside it, which ccache reads instead.
  if(CMAKE_CXX_COMPILER_LAUNCHER STREQUAL "ccache")
    set_target_properties(selfattention PROPERTIES
                          CXX_COMPILER_LAUNCHER "sh;${CMAKE_SOURCE_DIR}/tools/learning/ccache_pch.sh")
  endif()
  book_compiled_as_in_the_book(selfattention-kept)
endfunction()

# A target whose files the book's own build compiles too: with ccache, compiled where the book's
# build compiles them, with the book's folder as ccache's base, so that a copy or a move of the book
# (a course that copies one build for each student) takes them from the original's compilations
# (tools/learning/ccache_book.sh). BOOK_OWN_BUILD: the book's build folder, which tools/learn passes.
function(book_compiled_as_in_the_book target)
  if(CMAKE_CXX_COMPILER_LAUNCHER STREQUAL "ccache" AND BOOK_OWN_BUILD)
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
                          "bash;${CMAKE_SOURCE_DIR}/tools/learning/ccache_book.sh;${BOOK_OWN_BUILD}")
  endif()
endfunction()

# The test program of one chapter (tests/chNN_slug.cpp). It links the library as a shared
# library, so a changed step relinks that library alone. The tests compile exactly as in the
# book's own build (tools/learn configures the same flags), so with ccache a learner who has
# built the book compiles none of them again.
function(book_grading_test test_name test_source)
  string(SUBSTRING "${test_name}" 2 2 chapter)
  math(EXPR number "${chapter}")
  set(target test_${test_name})
  add_executable(${target} "${test_source}")
  target_link_libraries(${target} PRIVATE book-test-memory selfattention-present Catch2::Catch2WithMain Eigen3::Eigen
                                          LibXml2::LibXml2)
  target_compile_options(${target} PRIVATE ${book_test_options})  # as in the book's build (CMakeLists.txt)
  book_compiled_as_in_the_book(${target})
  # Each case writes Catch2's XML report, which tools/learn reads; --warn NoTests: a CTest
  # test whose filter selects no test case fails instead of passing.
  catch_discover_tests(${target} TEST_PREFIX "${test_name}: " EXTRA_ARGS --warn NoTests
                       REPORTER xml OUTPUT_DIR catch-reports OUTPUT_PREFIX "${test_name}-" OUTPUT_SUFFIX ".xml"
                       PROPERTIES LABELS "ch${chapter}" ENVIRONMENT "BOOK_GRADE_CHAPTER=${number}")
  catch_discover_tests(${target} TEST_PREFIX "together ${test_name}: " EXTRA_ARGS --warn NoTests
                       REPORTER xml OUTPUT_DIR catch-reports OUTPUT_PREFIX "together-${test_name}-"
                       OUTPUT_SUFFIX ".xml" PROPERTIES LABELS "together" ENVIRONMENT "BOOK_GRADE_CHAPTER=all")
endfunction()
