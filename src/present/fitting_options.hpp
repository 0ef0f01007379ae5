/// \file fitting_options.hpp
/// \brief Options of chapter 9 that must fit the example: the number of heads, and a matrix
///        with a given number of rows or columns.
#pragma once

#include <cstddef>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "matrix.hpp"

namespace sa {

/// \brief What a matrix option must match: its number of rows or its number of columns.
enum class Along {
    rows,     ///< the matrix needs a given number of rows
    columns,  ///< the matrix needs a given number of columns
};

/// \brief Reads the number of heads h from a chapter option (e.g. `--heads H`), from 1 to 64,
///        and checks that it splits the example's queries and values: h must divide the
///        columns of W_Q (d_k) and of W_V (d_v).
/// \param example the parsed example, with its W_Q, W_V and the option's text
/// \param option the option as the program declares it, with its default
/// \return h
/// \throws UsageError if the text is not a whole number from 1 to 64, or if h does not divide
///         d_k or d_v, e.g. `--heads: 3 does not divide the 4 columns of --wq; choose a divisor of 4`;
///         when the reader kept the default, the message says so and asks for their own value
[[nodiscard]] std::size_t heads_option(const Example& example, const ProgramOption& option);

/// \brief Reads a matrix option that must have \p size rows (or columns) to fit the example,
///        e.g. W_O with one row per column of W_V.
/// \param example the parsed example, with the option's text
/// \param option the option as the program declares it, with its default
/// \param size the number of rows (or columns) the matrix needs
/// \param along whether \p size counts rows or columns
/// \param why what each row (or column) stands for, e.g. `"one per column of --wv"`
/// \return the matrix
/// \throws UsageError if the text is not a matrix, or it has another size, e.g.
///         `--wo: expected 2 rows (one per column of --wv), got 4`; when the reader kept the
///         default (which fitted the book's example, not theirs), the message says so:
///         `--wo: expected 2 rows (one per column of --wv), but the default has 4; pass your own --wo`
[[nodiscard]] Matrix fitting_matrix_option(const Example& example, const ProgramOption& option, std::size_t size,
                                           Along along, const std::string& why);

}  // namespace sa
