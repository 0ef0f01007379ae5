// Linked into every test program (CMakeLists.txt; tools/learning/grading.cmake for a learner's
// grading build): before Catch2's main runs, the program keeps the memory it frees, as every
// chapter program does (sa::keep_freed_memory(), src/present/cli.hpp, which run_program() calls).
// The checks that run chapter 15's saved models window by window make and drop matrices of
// megabytes: the copying models' check took 14.70 s without it and 8.09 s with it in CTest (one run
// each on a 2-core virtual machine; docs/contributing.md, "Memory kept with every program"), and
// every number it checks is the same.
#include "cli.hpp"

namespace {

[[maybe_unused]] const bool kept = (sa::keep_freed_memory(), true);

}  // namespace
