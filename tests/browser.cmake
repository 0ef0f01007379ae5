# The browser check (label browser): every page of the built book in headless
# Chromium, served from 127.0.0.1 only. It needs the rendered book, which the
# default build makes when BOOK_DOCS is ON; the screenshots land in screenshots/.
# The "Try it here" panels (BOOK_PLAYGROUND) are compared with the native programs in bin/.
# Each page, as it opens at desktop width, is also audited by axe-core against WCAG 2.1 AA
# in the light and the dark colour scheme, and chapter 7's panel is walked with the keyboard
# alone (tools/browser/accessibility.py; axe-core comes from tools/setup.sh, pinned, and is injected
# from that local file): one load of each page serves both checks.
# browser-check/ keeps, per page and width, the pages that passed and the SHA-256 of every
# file each one depended on (the page, what it loaded, the native programs and their inputs
# its panel was compared with, the pages it links to, its screenshots) and of the checker
# itself (its sources, axe-core, Chromium): a run checks again only the pages whose key
# changed, and always the figures, the search and the front door. A page that failed is
# never kept. `tools/browser/browser_test.py ... --no-cache` checks every page.
if(BOOK_DOCS AND NOT BOOK_WORKSPACE)
  # Not alone, though its two browsers keep both cores busy (alone on the 2-core machine, with
  # --no-cache: 134.8 to 151.4 s of wall time on 7 December, 178 to 194 s on an earlier, quieter one
  # when every page loaded at both widths; the contributor's guide has each measurement), so that
  # the grader's chain and the short tests share the cores with it.
  # CTest starts the costliest tests first: with the suite's highest COST it runs at the start, beside
  # the grader's chain (COST 500), and the short tests fill the gaps.
  book_test(NAME browser.book LABELS "browser" PROPERTIES TIMEOUT 720 COST 1000
            COMMAND "${BOOK_PYTHON}" "${CMAKE_SOURCE_DIR}/tools/browser/browser_test.py"
                    --book "${CMAKE_BINARY_DIR}/book"
                    --screenshots "${CMAKE_BINARY_DIR}/screenshots"
                    --programs "${CMAKE_BINARY_DIR}/bin"
                    --axe "${CMAKE_SOURCE_DIR}/tools/node_modules/axe-core/axe.min.js"
                    --cache "${CMAKE_BINARY_DIR}/browser-check"
                    --time-limit 600)
endif()
