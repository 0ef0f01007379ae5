// How Catch2 shows a sa::Matrix in a failed check, and so in the grader's hints: as the
// book prints it, its shape and then one row per line, small matrices in full. Every
// test file gets it (the tests' CMake build includes it first), so no check shows {?}.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "matrix.hpp"

namespace Catch {

template <>
struct StringMaker<sa::Matrix> {
    static constexpr std::size_t shown = 8;  // rows and columns in full up to this many

    // The book's three decimals when they hold every entry exactly, else six.
    static int decimals(const sa::Matrix& matrix)
    {
        for (const int digits : {3}) {
            bool exact = true;
            for (std::size_t r = 0; r < matrix.rows() && exact; ++r) {
                for (std::size_t c = 0; c < matrix.cols() && exact; ++c) {
                    const double value = matrix(r, c);
                    const std::string text = fmt::format("{:.{}f}", value, digits);
                    double back = 0.0;
                    std::from_chars(text.data(), text.data() + text.size(), back);
                    exact = value != value || back == value;
                }
            }
            if (exact) {
                return digits;
            }
        }
        return 6;
    }

    static std::string convert(const sa::Matrix& matrix)
    {
        if (matrix.empty()) {
            return "0×0 (empty)";
        }
        const std::size_t rows = std::min(matrix.rows(), shown);
        const std::size_t cols = std::min(matrix.cols(), shown);
        sa::Matrix corner(rows, cols);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
                corner(r, c) = matrix(r, c);
            }
        }
        const bool whole = rows == matrix.rows() && cols == matrix.cols();
        return fmt::format("{}{}:\n{}", sa::shape(matrix), whole ? "" : fmt::format(", its top-left {}×{}", rows, cols),
                           fmt::format(fmt::runtime(fmt::format("{{:.{}}}", decimals(corner))), corner));
    }
};

}  // namespace Catch
