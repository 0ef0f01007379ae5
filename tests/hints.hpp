// Hints for the learner: an index outside one of a step's input matrices is reported with
// the matrix's name and what its rows and columns hold, not only as an index and a shape.
#pragma once

#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "matrix.hpp"

namespace hints {

// One input of a step, as its chapter names it: "K", one row per key, one column per feature.
struct Input {
    const char* name = "";
    const sa::Matrix* matrix = nullptr;
    const char* rows = "";  // what a row is, e.g. "one row per key"
    const char* cols = "";  // what a column is, e.g. "one column per feature (d_k)"
};

inline std::string describe(const Input& input)
{
    return fmt::format("{} is {}: {}, {}", input.name, sa::shape(*input.matrix), input.rows, input.cols);
}

// An index is a std::size_t, which has no negative numbers: i − 1 at i = 0 wraps around to
// 18446744073709551615. The sentence that says so, or "" for an index that did not wrap.
inline std::string wrapped(std::size_t index)
{
    if (index <= std::numeric_limits<std::size_t>::max() / 2) {
        return "";
    }
    const std::size_t below = std::numeric_limits<std::size_t>::max() - index + 1;  // index = 0 − below
    return fmt::format("{} is 0 − {} wrapped around: an index is a std::size_t, which has no negative numbers, so "
                       "{} went below 0 (check the first {}, where i − {} has nothing to read)", index, below,
                       below == 1 ? "i − 1 at i = 0" : fmt::format("i − {} at some i below {}", below, below),
                       below == 1 ? "position" : "positions", below);
}

// "matrix index (0, 2) is outside a 3×2 matrix" (from sa::Matrix) becomes, for scores with a
// missing transpose: "scores read index (0, 2) of a 3×2 matrix, but column 2 does not exist.
// That matrix is Q or K: Q is 3×2: one row per query, ...; K is 3×2: one row per key, ..."
// A missing transpose is named only where it fits: the index is inside the other axis. An index
// that wrapped below 0 is named as such.
inline std::string explain(const std::string& step, std::initializer_list<Input> inputs, const std::string& what)
{
    std::size_t row = 0;
    std::size_t col = 0;
    std::size_t rows = 0;
    std::size_t cols = 0;
    const std::size_t times = what.find("×");
    if (std::sscanf(what.c_str(), "matrix index (%zu, %zu) is outside a %zu", &row, &col, &rows) != 3 ||
        times == std::string::npos || std::sscanf(what.c_str() + times + 2, "%zu", &cols) != 1) {
        return what;
    }
    const bool row_outside = row >= rows;
    std::string missing = row_outside ? fmt::format("row {} does not exist (rows 0 to {})", row, rows - 1)
                                      : fmt::format("column {} does not exist (columns 0 to {})", col, cols - 1);
    if (const std::string wrap = wrapped(row_outside ? row : col); !wrap.empty()) {
        missing = fmt::format("the {} index {}", row_outside ? "row" : "column", wrap);
    }
    std::vector<std::string> names;
    std::vector<std::string> meanings;
    std::vector<std::string> others;
    for (const Input& input : inputs) {
        if (input.matrix->rows() == rows && input.matrix->cols() == cols) {
            names.emplace_back(input.name);
            meanings.push_back(describe(input));
        } else {
            others.push_back(describe(input));
        }
    }
    std::string text = fmt::format("{} read index ({}, {}) of a {}×{} matrix, but {}. ", step, row, col, rows, cols,
                                   missing);
    if (names.empty()) {
        return text + fmt::format("No input of {} is {}×{}, so it is a matrix the step made itself. Its inputs: {}",
                                  step, rows, cols, fmt::join(others, "; "));
    }
    text += names.size() == 1 ? fmt::format("That matrix is {}. ", names.front())
                              : fmt::format("That matrix is {} ({} {}×{}). ", fmt::join(names, " or "),
                                                          names.size() == 2 ? "both" : "all", rows, cols);
    const bool fits_other_axis = row_outside ? row < cols : col < rows;
    if (!wrapped(row_outside ? row : col).empty()) {
        return text + fmt::format("{}.", fmt::join(meanings, "; "));
    }
    return text + fmt::format("{}. {}", fmt::join(meanings, "; "),
                              fits_other_axis ? "A row index used as a column index (a missing transpose) reads past "
                                                "the end"
                                              : "The index is past both of its sizes: a loop bound taken from another "
                                                "size reads past the end");
}

// Calls a step; if it reads outside a matrix, the error names the input it read and what its
// shape means. The step's own result and errors are passed through unchanged.
template <typename Step>
auto reading(const std::string& step, std::initializer_list<Input> inputs, Step&& run) -> decltype(run())
{
    try {
        return run();
    } catch (const std::out_of_range& error) {
        throw std::out_of_range(explain(step, inputs, error.what()));
    }
}

}  // namespace hints
