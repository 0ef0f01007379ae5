# The browser check (label browser): every page of the built book in headless
# Chromium, served from 127.0.0.1 only. It needs the rendered book, which the
# default build makes when BOOK_DOCS is ON; the screenshots land in screenshots/.
# The "Try it here" panels (BOOK_PLAYGROUND) are compared with the native programs in bin/.
if(BOOK_DOCS AND NOT BOOK_WORKSPACE)
  # One Chromium at a time, alone, so that a busy machine cannot make it time out.
  book_test(NAME browser.book LABELS "browser" PROPERTIES TIMEOUT 720 RUN_SERIAL TRUE
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/browser_test.py"
                    --book "${CMAKE_BINARY_DIR}/book"
                    --screenshots "${CMAKE_BINARY_DIR}/screenshots"
                    --programs "${CMAKE_BINARY_DIR}/bin"
                    --time-limit 600)
endif()
