# The glossary of symbols defines each symbol once, and every chapter's tables name a symbol
# for what the glossary says it is (tools/checks/check_glossary.py); the check itself catches a
# symbol defined twice, a table that calls the mask "the weights" and a formula of the prose
# that ends in an operator, "g \bmod (the number of processes)" (--self-test).
if(BOOK_WORKSPACE)
  return()
endif()
file(GLOB book_chapter_pages "${CMAKE_SOURCE_DIR}/chapters/[0-9][0-9]-*/*.rst")
book_test(NAME support.glossary-symbols-once LABELS "prose"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_glossary.py" --self-test
                  --glossary "${CMAKE_SOURCE_DIR}/docs/glossary.rst" --chapters ${book_chapter_pages})
