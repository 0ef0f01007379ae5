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
set(emscripten_env "${CMAKE_COMMAND}" -E env "NODE_PATH=/usr/share/nodejs")
set(emxx ${emscripten_env} "${BOOK_EMXX}")
# -fwasm-exceptions: WebAssembly's own exceptions, which the browser unwinds itself. Without
# exceptions a thrown sa::UsageError escapes as a bare number; with emscripten's default
# (-fexceptions, done in JavaScript) every call that may throw goes out to JavaScript and
# back, which made chapter 3's experiment take half a minute instead of a second.
set(playground_exceptions -fwasm-exceptions)
# -msimd128: WebAssembly's 128-bit vector instructions, which every current browser runs. The loops
# along a row (the matrix products above all) then take two doubles at a time; each addition and
# multiplication is still one correctly rounded operation, in the same order, so every number is the
# native program's, bit for bit (the browser check compares them). Chapter 16's panel example ran
# in 2.5 s instead of 4.2 s (Node.js, the same machine, one run each, the outputs identical).
set(playground_simd -msimd128)
# {fmt} is compiled once, in fmt_once.cpp; every other file includes its headers only.
set(playground_flags -std=c++20 -O2 ${playground_exceptions} ${playground_simd} -ffp-contract=off)
set(playground_warnings -Wall -Wextra -Wpedantic)
if(BOOK_WERROR)
  list(APPEND playground_warnings -Werror)
endif()
set(playground_includes "-I${CMAKE_SOURCE_DIR}/src" "-I${CMAKE_SOURCE_DIR}/src/present" "-I${playground_dir}/include")
file(GLOB playground_headers CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/*.hpp" "${CMAKE_SOURCE_DIR}/src/present/*.hpp")

# The compiles run emscripten's clang directly, with the arguments em++ would give it: `em++ --cflags`
# prints them for the code-generation options above (emscripten documents it for this; it tries them
# on a C file of its own, hence no -Werror there), and em-config names the clang it runs. em++ itself
# is a Python program, and starting it cost more than compiling a small file: a one-line file took
# 0.52 to 0.62 s through em++, 0.10 to 0.13 s by its clang alone. The 85 objects and their
# precompiled header, ninja -j 2 on the 2-core machine, em++ and clang alternately twice: 76.3 and
# 71.4 s of wall time (146.7 and 138.4 s of CPU time) through em++, 42.2 and 42.3 s (82.2 and
# 82.6 s) by clang, every object byte for byte the same (cmp). The links still go through em++,
# which does far more than compile.
execute_process(COMMAND ${emxx} ${playground_flags} --cflags OUTPUT_VARIABLE playground_cflags
                RESULT_VARIABLE cflags_status OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(emscripten_bin "${BOOK_EMXX}" DIRECTORY)
find_program(BOOK_EM_CONFIG em-config HINTS "${emscripten_bin}")
foreach(setting LLVM_ROOT CLANG_ADD_VERSION)
  execute_process(COMMAND ${emscripten_env} "${BOOK_EM_CONFIG}" ${setting}
                  OUTPUT_VARIABLE emscripten_${setting} RESULT_VARIABLE config_status OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT config_status EQUAL 0)
    set(cflags_status 1)
  endif()
endforeach()
set(emscripten_clang "${emscripten_LLVM_ROOT}/clang++")
if(emscripten_CLANG_ADD_VERSION)
  string(APPEND emscripten_clang "-${emscripten_CLANG_ADD_VERSION}")
endif()
if(NOT cflags_status EQUAL 0 OR NOT EXISTS "${emscripten_clang}" OR NOT playground_cflags MATCHES "wasm32")
  message(FATAL_ERROR "em++ --cflags and em-config did not name emscripten's clang and its arguments "
                      "(got \"${emscripten_clang}\" and \"${playground_cflags}\"): is emscripten installed whole? "
                      "apt-get install emscripten (or configure with -DBOOK_PLAYGROUND=OFF)")
endif()
separate_arguments(playground_cflags UNIX_COMMAND "${playground_cflags}")
set(playground_compile "${emscripten_clang}" ${playground_cflags} ${playground_warnings} ${playground_includes})

# The headers every file starts with (common.hpp: compat.hpp, the standard headers, {fmt}'s and the
# matrix), parsed once into a precompiled header that each file reads (-include-pch, with the same
# flags). Parsing them was most of a file's compile: the playground's 85 objects took 89 s of CPU
# time (46 s of wall time) with it against 144 s (73 s) without, ninja -j 2 on the objects alone on
# the 2-core machine, twice each; every object comes out byte for byte the same (compared with cmp).
set(playground_pch "${playground_dir}/obj/common.hpp.pch")
add_custom_command(
  OUTPUT "${playground_pch}"
  COMMAND ${playground_compile} -x c++-header "${CMAKE_CURRENT_SOURCE_DIR}/playground/common.hpp"
          -o "${playground_pch}"
  DEPENDS ${playground_headers} "${CMAKE_CURRENT_SOURCE_DIR}/playground/common.hpp"
          "${CMAKE_CURRENT_SOURCE_DIR}/playground/compat.hpp"
  COMMENT "WebAssembly: the playground's precompiled header"
  VERBATIM)

# book_playground_compile(<object> <source> [flags...])
function(book_playground_compile object source)
  add_custom_command(
    OUTPUT "${object}"
    COMMAND ${playground_compile} -include-pch "${playground_pch}" ${ARGN} -c "${source}" -o "${object}"
    DEPENDS "${source}" ${playground_headers} "${playground_pch}"
    COMMENT "WebAssembly: ${source}"
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
set(fmt_object "${playground_dir}/obj/library/fmt_once.o")
book_playground_compile("${fmt_object}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/fmt_once.cpp")
list(APPEND playground_library_objects "${fmt_object}")
set(entry_object "${playground_dir}/obj/playground.o")
book_playground_compile("${entry_object}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/playground.cpp")
# The attention explorer's entry point (explorer.cpp), linked only into the modules of the chapters
# whose page shows the explorer (docs/_static/explorer.js).
set(explorer_object "${playground_dir}/obj/explorer.o")
book_playground_compile("${explorer_object}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/explorer.cpp")
set(playground_explorer_ch14-next-character ON)
set(playground_explorer_ch15-induction-head ON)  # also the front page's (docs/index.rst)
set(playground_explorer_ch16-generating-text ON)
# The stepper's entry point (stepper.cpp): chapter 7's worked example, step by step (docs/_static/stepper.js).
set(stepper_object "${playground_dir}/obj/stepper.o")
book_playground_compile("${stepper_object}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/stepper.cpp")
set(playground_stepper_ch07-attention ON)

# The files a chapter program reads that the build made: the macro its main.cpp names the
# file by, the path the WebAssembly program reads it at (from the in-memory root, where a
# relative path starts too), the file itself and the name of its script, NAME.data.js (a page
# opened from file:// may load a script, never fetch a file). A model is named by a path
# relative to the repository's folder, as the panel's command line shows it; the browser
# check runs the native program where build/ is the build folder.
set(playground_files
    "BOOK_KJV_TRAINING|/build/text/kjv-training.txt|${BOOK_KJV_TRAINING}|kjv-training"
    "BOOK_KJV_HELD_OUT|/build/text/kjv-held-out.txt|${BOOK_KJV_HELD_OUT}|kjv-held-out"
    "BOOK_CH14_MODEL|build/ch14/model.safetensors|${CMAKE_BINARY_DIR}/ch14/model.safetensors|ch14-model"
    "BOOK_CH15_MODEL|build/ch15/model.safetensors|${CMAKE_BINARY_DIR}/ch15/model.safetensors|ch15-model"
    "BOOK_CH15_COPYING|build/ch15/model.safetensors.copying|${CMAKE_BINARY_DIR}/ch15/model.safetensors.copying|ch15-copying")
# A chapter's panel, where it is not the program's defaults on every option: the values its
# fields start with (the panel's example), the only options of its own it shows, and the
# files above it reads that its main.cpp does not name.
set(playground_start_ch14-next-character --steps 50 --heads 2 --seed 7)  # its try.cmd
set(playground_fields_ch14-next-character --steps --heads)
set(playground_reads_ch14-next-character BOOK_CH14_MODEL)  # for the explorer
set(playground_start_ch15-induction-head --load build/ch15/model.safetensors --sequence "qzkvbjwmtfyhdgsp")
set(playground_fields_ch15-induction-head --load --sequence)
set(playground_reads_ch15-induction-head BOOK_CH15_MODEL BOOK_CH15_COPYING)  # the second for the explorer
set(playground_fields_ch16-generating-text --prompt --length --temperature --top-k --greedy --uncropped)
# Chapter 17 simulates its ranks in one process (no MPI in the page): G, the layout and the length.
set(playground_fields_ch17-ring-attention --ranks --layout --length)
# Chapter 19's panel reads 2 of the 16 held-out windows, so that its first result comes quickly, and
# shows the window, the cache, its sinks and that count. It runs ch19-window-and-sinks, the page's
# first program; ALiBi's, ch19-alibi, has no panel, as chapter 15's and 16's other programs have none.
set(playground_start_ch19-window-and-sinks --windows 2)
set(playground_fields_ch19-window-and-sinks --window --cache --sinks --windows)

# book_playground_files(<chapter> <defines-var> <scripts-var>): the -D flags and the file
# scripts a chapter needs, from the macros its main.cpp names and its playground_reads_.
function(book_playground_files chapter defines_var scripts_var)
  file(READ "${CMAKE_SOURCE_DIR}/chapters/${chapter}/main.cpp" source)
  set(defines "")
  set(scripts "")
  foreach(entry IN LISTS playground_files)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 macro)
    list(GET entry 1 path)
    list(GET entry 2 made)
    list(GET entry 3 name)
    string(FIND "${source}" "${macro}" at)
    if(at LESS 0 AND NOT macro IN_LIST playground_reads_ch${chapter})
      continue()
    endif()
    list(APPEND defines "-D${macro}=\"${path}\"")
    list(APPEND scripts "${name}")
    set(script "${BOOK_PLAYGROUND_DIR}/playground/${name}.data.js")
    get_property(made_scripts GLOBAL PROPERTY book_playground_file_scripts)
    if(NOT script IN_LIST made_scripts)
      string(REGEX REPLACE "^build/" "/build/" memory_path "${path}")
      add_custom_command(
        OUTPUT "${script}"
        COMMAND "${BOOK_PYTHON}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/file_script.py"
                --input "${made}" --path "${memory_path}" --output "${script}"
        DEPENDS "${made}" "${CMAKE_CURRENT_SOURCE_DIR}/playground/file_script.py"
        COMMENT "The playground's copy of ${name}"
        VERBATIM)
      set_property(GLOBAL APPEND PROPERTY book_playground_file_scripts "${script}")
    endif()
  endforeach()
  set(${defines_var} "${defines}" PARENT_SCOPE)
  set(${scripts_var} "${scripts}" PARENT_SCOPE)
endfunction()

# JSON of a list of strings, or of a list of option/value pairs.
function(book_json_list out)
  set(text "")
  set(comma "")
  foreach(item IN LISTS ARGN)
    string(REPLACE "\\" "\\\\" item "${item}")
    string(REPLACE "\"" "\\\"" item "${item}")
    string(APPEND text "${comma}\"${item}\"")
    set(comma ", ")
  endforeach()
  set(${out} "[${text}]" PARENT_SCOPE)
endfunction()

# Each chapter's main.cpp, unchanged: its main() is renamed so that the entry point
# calls it, and its sa::run_program call goes through the entry point, which keeps
# the program's options for the page and then runs the real sa::run_program.
foreach(chapter IN LISTS BOOK_CHAPTERS)
  set(program "ch${chapter}")
  if(DEFINED BOOK_BUILT_OUTPUT_${program} AND BOOK_BUILT_OUTPUT_${program} STREQUAL "")
    continue()  # a training chapter with no build-time run (the sanitizers' build): nothing to read
  endif()
  book_playground_files("${chapter}" file_defines file_scripts)
  set(object "${playground_dir}/obj/ch${chapter}.o")
  book_playground_compile("${object}" "${CMAKE_SOURCE_DIR}/chapters/${chapter}/main.cpp"
                          -Dmain=book_chapter_main -Drun_program=book_playground_run_program ${file_defines})
  # The panel's setup, read by playground.js from the module: the file scripts to load first,
  # the fields' starting values and the chapter's own options shown.
  book_json_list(files_json ${file_scripts})
  book_json_list(start_json ${playground_start_${program}})
  set(setup "Module['bookSetup'] = {files: ${files_json}, start: ${start_json}")
  if(DEFINED playground_fields_${program})
    book_json_list(fields_json ${playground_fields_${program}})
    string(APPEND setup ", fields: ${fields_json}")
  endif()
  set(setup_script "${playground_dir}/obj/ch${chapter}-setup.js")
  file(CONFIGURE OUTPUT "${setup_script}" CONTENT "// The panel's setup (docs/playground/playground.cmake).\n${setup}};\n")
  set(module "${BOOK_PLAYGROUND_DIR}/playground/ch${chapter}.js")
  set(entry_objects "${entry_object}")
  if(playground_explorer_${program})
    list(APPEND entry_objects "${explorer_object}")
  endif()
  if(playground_stepper_${program})
    list(APPEND entry_objects "${stepper_object}")
  endif()
  # The link runs at -O1: every object was compiled at -O2 already, and -O2 here only adds binaryen's
  # passes over the whole module (about 3 s of a link's 3.4, 5 s of CPU time on two threads, for each
  # of the 21 modules). Without them a module is about a quarter larger and runs as fast (chapter 14's
  # training of 100 steps in Node.js: 4.03 to 4.15 s against 4.30 to 4.46 s, the same output).
  add_custom_command(
    OUTPUT "${module}"
    COMMAND ${emxx} -O1 ${playground_exceptions} ${playground_simd} --bind ${entry_objects} "${object}" ${playground_library_objects}
            -sSINGLE_FILE=1 -sMODULARIZE=1 -sEXPORT_NAME=BookProgram -sALLOW_MEMORY_GROWTH=1
            -sENVIRONMENT=web,worker,node --pre-js "${setup_script}" -o "${module}"
    DEPENDS ${entry_objects} "${object}" ${playground_library_objects} "${setup_script}"
    COMMENT "em++: linking the playground module ch${chapter}.js"
    VERBATIM)
  list(APPEND playground_modules "${module}")
endforeach()
# The file scripts go where the modules go (_static/playground/NAME.data.js).
get_property(playground_file_scripts GLOBAL PROPERTY book_playground_file_scripts)
list(APPEND playground_modules ${playground_file_scripts})
