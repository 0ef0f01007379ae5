// The headers nearly every file of the playground build includes, compiled once into a
// precompiled header (docs/playground/playground.cmake) that each file reads instead of
// parsing them again: compat.hpp first, as every file had it before (em++ -include), then the
// standard headers, {fmt}'s and the matrix type. Reading them from the header changes no
// object: each one comes out byte for byte as it did without it.
#pragma once

#include "compat.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "matrix.hpp"
