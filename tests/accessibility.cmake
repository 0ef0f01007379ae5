# The accessibility check (label browser): every page of the rendered book through
# axe-core against WCAG 2.1 AA, in the light and the dark colour scheme, and a
# keyboard-only walk through chapter 7's "Try it here" panel (tools/accessibility.py).
# axe-core comes from tools/setup.sh, pinned; it is injected from that local file.
if(BOOK_DOCS AND NOT BOOK_WORKSPACE)
  book_test(NAME browser.accessibility LABELS "browser" PROPERTIES TIMEOUT 600
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/accessibility.py"
                    --book "${CMAKE_BINARY_DIR}/book"
                    --axe "${CMAKE_SOURCE_DIR}/tools/node_modules/axe-core/axe.min.js")
endif()
