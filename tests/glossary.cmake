# The glossary of symbols defines each symbol once (tools/check_glossary.py), and the
# check itself catches a symbol defined twice (--self-test).
if(BOOK_WORKSPACE)
  return()
endif()
book_test(NAME support.glossary-symbols-once LABELS "prose"
          COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/check_glossary.py" --self-test
                  --glossary "${CMAKE_SOURCE_DIR}/docs/glossary.rst")
