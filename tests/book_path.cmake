# The path the book command prints (label "browser"): tools/book.sh ends with the path of the
# book's front page, which a reader and a headless browser open. It must be the front page, or a
# page that forwards to it at once with a plain meta refresh and no script; so must the
# index.html at the top of the book's folder (tools/checks/check_book_path.py).
if(BOOK_DOCS AND NOT BOOK_WORKSPACE)
  book_test(NAME browser.printed-path LABELS "browser"
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/checks/check_book_path.py"
                    --script "${CMAKE_SOURCE_DIR}/tools/book.sh" --build "${CMAKE_BINARY_DIR}")
endif()
