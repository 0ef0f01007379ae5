# The playground: the library and every chapter program compiled to WebAssembly with
# Debian's emscripten (3.1.6, offline, with its prebuilt system libraries). One module
# per chapter, chNN-slug.js, with the WebAssembly inside it (-sSINGLE_FILE=1: a page
# opened from file:// cannot fetch a separate .wasm file). Included from docs/CMakeLists.txt.
if(NOT BOOK_EMXX)
  message(FATAL_ERROR "BOOK_PLAYGROUND is ON but em++ was not found. Install the Debian package: apt-get install emscripten "
                      "(or configure with -DBOOK_PLAYGROUND=OFF)")
endif()
find_path(BOOK_FAST_FLOAT_INCLUDE fast_float/fast_float.h)
if(NOT BOOK_FAST_FLOAT_INCLUDE)
  message(FATAL_ERROR "fast_float was not found (the playground parses numbers with it). "
                      "Install the Debian package: apt-get install libfast-float-dev")
endif()
get_target_property(fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(BOOK_FMT_INCLUDE fmt/format.h HINTS ${fmt_include})

set(playground_dir "${CMAKE_BINARY_DIR}/playground")
set(BOOK_PLAYGROUND_DIR "${playground_dir}/static")
file(MAKE_DIRECTORY "${playground_dir}/obj/library" "${BOOK_PLAYGROUND_DIR}/playground")
# fmt and fast_float get a folder of their own: -I/usr/include would pull glibc's
# headers in front of emscripten's.
file(COPY "${BOOK_FMT_INCLUDE}/fmt" DESTINATION "${playground_dir}/include")
file(COPY "${BOOK_FAST_FLOAT_INCLUDE}/fast_float" DESTINATION "${playground_dir}/include")

# Debian's emscripten runs on Debian's Node.js modules; NODE_PATH finds them when the
# node on PATH is another one.
set(emxx "${CMAKE_COMMAND}" -E env "NODE_PATH=/usr/share/nodejs" "${BOOK_EMXX}")
# -fwasm-exceptions: WebAssembly's own exceptions, which the browser unwinds itself. Without
# exceptions a thrown sa::UsageError escapes as a bare number; with emscripten's default
# (-fexceptions, done in JavaScript) every call that may throw goes out to JavaScript and
# back, which made chapter 3's experiment take half a minute instead of a second.
set(playground_exceptions -fwasm-exceptions)
set(playground_flags -std=c++20 -O2 ${playground_exceptions} -ffp-contract=off -DFMT_HEADER_ONLY
    -Wall -Wextra -Wpedantic
    "-I${CMAKE_SOURCE_DIR}/src" "-I${CMAKE_SOURCE_DIR}/src/present" "-I${playground_dir}/include"
    -include "${CMAKE_CURRENT_SOURCE_DIR}/playground/compat.hpp")
if(BOOK_WERROR)
  list(APPEND playground_flags -Werror)
endif()
file(GLOB playground_headers CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/*.hpp" "${CMAKE_SOURCE_DIR}/src/present/*.hpp")

# book_playground_compile(<object> <source> [flags...])
function(book_playground_compile object source)
  add_custom_command(
    OUTPUT "${object}"
    COMMAND ${emxx} ${playground_flags} ${ARGN} -c "${source}" -o "${object}"
    DEPENDS "${source}" ${playground_headers} "${CMAKE_CURRENT_SOURCE_DIR}/playground/compat.hpp"
    COMMENT "em++: ${source}"
    VERBATIM)
endfunction()

file(GLOB playground_library_sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/*.cpp" "${CMAKE_SOURCE_DIR}/src/present/*.cpp")
set(playground_library_objects "")
foreach(source IN LISTS playground_library_sources)
  get_filename_component(name "${source}" NAME_WE)
  set(object "${playground_dir}/obj/library/${name}.o")
  book_playground_compile("${object}" "${source}")
  list(APPEND playground_library_objects "${object}")
endforeach()
set(entry_object "${playground_dir}/obj/playground.o")
book_playground_compile("${entry_object}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/playground.cpp")

# Each chapter's main.cpp, unchanged: its main() is renamed so that the entry point
# calls it, and its sa::run_program call goes through the entry point, which keeps
# the program's options for the page and then runs the real sa::run_program.
foreach(chapter IN LISTS BOOK_CHAPTERS)
  if(DEFINED BOOK_BUILT_OUTPUT_ch${chapter})
    continue()  # a chapter that trains on a text made at build time has no panel yet
  endif()
  set(object "${playground_dir}/obj/ch${chapter}.o")
  book_playground_compile("${object}" "${CMAKE_SOURCE_DIR}/chapters/${chapter}/main.cpp"
                          -Dmain=book_chapter_main -Drun_program=book_playground_run_program)
  set(module "${BOOK_PLAYGROUND_DIR}/playground/ch${chapter}.js")
  add_custom_command(
    OUTPUT "${module}"
    COMMAND ${emxx} -O2 ${playground_exceptions} --bind "${entry_object}" "${object}" ${playground_library_objects}
            -sSINGLE_FILE=1 -sMODULARIZE=1 -sEXPORT_NAME=BookProgram -sALLOW_MEMORY_GROWTH=1
            -sENVIRONMENT=web,worker,node -o "${module}"
    DEPENDS "${entry_object}" "${object}" ${playground_library_objects}
    COMMENT "em++: linking the playground module ch${chapter}.js"
    VERBATIM)
  list(APPEND playground_modules "${module}")
endforeach()
