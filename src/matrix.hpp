/// \file matrix.hpp
/// \brief The book's dense matrix: row-major doubles, bounds-checked access, and
///        the fixed-precision formatting that every chapter prints with (scientific
///        notation only for magnitudes far outside the book's, see format_number()).
///
/// A Matrix can also be formatted with {fmt}: `fmt::format("{}", m)` prints it the
/// way the book shows it, one row per line with every entry at three decimals, as
/// format_table() does without labels; `fmt::format("{:.1}", m)` takes one decimal
/// (0 to 17). Use format_table() or the chapter programs' Report for labelled tables.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace sa {

/// \brief Thrown when an operation receives matrices whose shapes do not fit together.
///
/// The message names the operation and both shapes, for example
/// "scores: Q is 3×2 but K is 3×4; their columns must match".
class ShapeError : public std::invalid_argument {
public:
    /// \brief Builds the error from a complete, human-readable message.
    /// \param message what went wrong, naming the operation and the shapes
    explicit ShapeError(const std::string& message);
};

/// \brief A dense matrix of doubles stored row by row.
///
/// A matrix of n tokens with d features is n×d: each row is one token's vector.
/// Every element access is bounds-checked in every build type, so a wrong index
/// raises std::out_of_range instead of reading outside the matrix.
class Matrix {
public:
    /// \brief An empty 0×0 matrix.
    Matrix() = default;

    /// \brief A rows×cols matrix with every entry set to \p fill.
    ///
    /// A matrix with no entries is always 0×0: `Matrix(0, 3)` and `Matrix(3, 0)` report
    /// 0 rows and 0 columns, like `Matrix()`, so that every empty matrix equals every
    /// other one and no loop over a dimension runs on a matrix without entries.
    /// \param rows number of rows
    /// \param cols number of columns
    /// \param fill the value of every entry
    Matrix(std::size_t rows, std::size_t cols, double fill = 0.0);

    /// \brief A matrix written row by row: `Matrix{{2, 0}, {1, 2}, {2, 0}}` is 3×2.
    /// \param rows the rows; all must have the same length
    /// \throws ShapeError if the rows have different lengths
    Matrix(std::initializer_list<std::initializer_list<double>> rows);

    /// \brief Builds a matrix from a vector of rows.
    /// \param rows the rows; all must have the same length
    /// \return the matrix; 0×0 when there are no rows or the rows are all empty
    /// \throws ShapeError if the rows have different lengths
    static Matrix from_rows(const std::vector<std::vector<double>>& rows);

    /// \brief Number of rows (tokens).
    [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
    /// \brief Number of columns (features).
    [[nodiscard]] std::size_t cols() const noexcept { return cols_; }
    /// \brief True for a matrix with no entries.
    [[nodiscard]] bool empty() const noexcept { return values_.empty(); }

    /// \brief The entry in row \p row and column \p col, both counted from 0.
    /// \throws std::out_of_range if the index lies outside the matrix: from
    ///         row == rows() or col == cols() on, the first index past the end
    [[nodiscard]] double& operator()(std::size_t row, std::size_t col)
    {
        check_index(row, col);
        return values_[row * cols_ + col];
    }
    /// \brief The entry in row \p row and column \p col.
    /// \throws std::out_of_range if the index lies outside the matrix
    [[nodiscard]] double operator()(std::size_t row, std::size_t col) const
    {
        check_index(row, col);
        return values_[row * cols_ + col];
    }

    /// \brief The entries row by row, contiguous: entry (r, c) is data()[r · cols() + c].
    ///
    /// For the fast loops of chapter 14, which walk whole rows without a bounds check
    /// per entry; every other step uses operator().
    [[nodiscard]] double* data() noexcept { return values_.data(); }
    /// \brief The entries row by row, contiguous, read-only.
    [[nodiscard]] const double* data() const noexcept { return values_.data(); }
    /// \brief Entry-by-entry equality; NaN is never equal to anything.
    friend bool operator==(const Matrix& lhs, const Matrix& rhs) = default;

private:
    // In the header, so that the compiler can inline each access and its check into the
    // loops that use it; the message is built out of line, only when an index is outside.
    void check_index(std::size_t row, std::size_t col) const
    {
        if (row >= rows_ || col >= cols_) {
            throw_outside(row, col);
        }
    }
    [[noreturn]] void throw_outside(std::size_t row, std::size_t col) const;

    std::size_t rows_ = 0;
    std::size_t cols_ = 0;
    std::vector<double> values_;
};

/// \brief True if two matrices have the same shape and every entry the same bits.
///
/// The shape counts, not only the entries: a 1×2 and a 2×1 matrix holding the same
/// two numbers in the same order are not identical, since one is a row and the
/// other a column.
///
/// Stricter than `==` in one way and kinder in another: 0.0 and -0.0 differ, and a
/// NaN equals a NaN with the same bits, so two runs of the same computation on
/// input holding NaN still compare identical ("bit for bit").
/// \param lhs a matrix
/// \param rhs another matrix
/// \return whether the two are the same to the last bit
[[nodiscard]] bool identical(const Matrix& lhs, const Matrix& rhs);

/// \brief How close two matrices are: the largest entry-by-entry difference
///        \f$ \max_{i,j} |A_{ij} - B_{ij}| \f$, the book's one closeness measure.
///
/// NaN in either matrix gives NaN, so a broken result never passes for a small difference.
/// Divided by largest_magnitude() of the reference it is the relative difference of the
/// gradient checks (chapter 11) and of the kernels (chapter 13).
/// \param lhs A, n×d
/// \param rhs B, n×d
/// \return the largest absolute difference; 0 for two empty matrices
/// \throws ShapeError if the shapes differ, naming both
[[nodiscard]] double largest_difference(const Matrix& lhs, const Matrix& rhs);

/// \brief The largest size of an entry, \f$ \max_{i,j} |A_{ij}| \f$: the scale that
///        largest_difference() is measured against.
///
/// NaN entries are passed over; an infinite entry gives \f$ +\infty \f$.
/// \param matrix A
/// \return the largest absolute entry; 0 for an empty matrix
[[nodiscard]] double largest_magnitude(const Matrix& matrix);

/// \brief The shape as the book writes it, e.g. "3×2".
/// \param matrix any matrix
/// \return rows, the sign ×, then columns
[[nodiscard]] std::string shape(const Matrix& matrix);

/// \brief Transposes a matrix: an n×m matrix becomes m×n, with entry (i, j) moved to (j, i).
/// \param matrix any matrix
/// \return the transposed matrix
[[nodiscard]] Matrix transpose(const Matrix& matrix);

/// \brief Prints a matrix as a table with row and column labels.
///
/// Every entry is written as format_number() writes it: \p precision decimals, in
/// scientific notation beyond its threshold, so the text is the same on every machine.
/// Infinities print as `-inf`/`inf` and NaN as `nan`.
/// \param matrix the matrix to print
/// \param row_labels one label per row (usually token names), or empty for none
/// \param col_labels one label per column, or empty for none
/// \param precision number of decimals
/// \return the table, one line per row, each line ending in a newline
/// \throws ShapeError if a non-empty label list does not match the matrix
[[nodiscard]] std::string format_table(const Matrix& matrix,
                                       const std::vector<std::string>& row_labels,
                                       const std::vector<std::string>& col_labels,
                                       int precision = 3);

/// \brief One number as the book prints it: fixed-point with \p precision decimals,
///        or scientific notation for a magnitude far outside the book's.
///
/// The text is the same on every machine: NaN prints as `nan` whatever its sign
/// bit, infinities as `inf` and `-inf`, and a value that rounds to zero prints
/// without a minus sign (`0.000`, never `-0.000`).
///
/// The threshold rule: a finite \f$ x \f$ with \f$ |x| \ge 10^{15} \f$ or
/// \f$ 0 < |x| < 10^{-100} \f$ prints in scientific notation with \p precision
/// decimals in its mantissa, the same digits after the point as fixed-point:
/// `1.000e+200`, `-2.500e-150`. From \f$ 10^{15} \f$ on, fixed-point would print more
/// digits before the point than a double holds (15) and grow without bound (1e200 has
/// 201). Below \f$ 10^{-100} \f$ it would show 0, hiding a reader's 1e-200 or an
/// exponential near underflow; the bound sits far below the rounding residues that the
/// chapters' tables hold (the smallest, about \f$ 3 \cdot 10^{-33} \f$, a residue of a
/// residue), which stay 0.000. Everything in between prints fixed-point.
/// \param value the number
/// \param precision number of decimals
/// \return the printed number
[[nodiscard]] std::string format_number(double value, int precision);

/// \brief Column labels for feature columns: "f1", "f2", ...
/// \param count number of labels
/// \return the labels
[[nodiscard]] std::vector<std::string> feature_labels(std::size_t count);

/// \brief Labels numbered in order: the prefix, then the number, e.g. "s1", "s2", "s3"
///        or "pos 0", "pos 1".
/// \param prefix the text before each number, e.g. "s" or "pos "
/// \param count number of labels
/// \param first the first number; 1 unless given
/// \return the labels \f$ \text{prefix} + \text{first}, \dots, \text{prefix} + (\text{first} + \text{count} - 1) \f$
[[nodiscard]] std::vector<std::string> numbered_labels(const std::string& prefix, std::size_t count,
                                                       std::size_t first = 1);

/// \brief The identity matrix \f$ I \f$: \f$ I_{ij} = 1 \f$ for \f$ i = j \f$, else 0.
/// Multiplying by it changes nothing, bit for bit (for finite numbers).
/// Shapes: the result is size×size; size 0 gives a 0×0 matrix.
/// \param size the number of rows and of columns
/// \return \f$ I \f$
[[nodiscard]] Matrix identity(std::size_t size);

/// \brief The identity of another shape: ones on the diagonal, zeros elsewhere, rows×cols,
///        so it need not be square (the default projection of an option left out).
/// \param rows the number of rows
/// \param cols the number of columns
/// \return \f$ I \f$, rows×cols
[[nodiscard]] Matrix identity(std::size_t rows, std::size_t cols);

/// \brief One row of a matrix, as a 1×d matrix (a row vector).
/// \param matrix the matrix, n×d
/// \param row which row, counted from 0
/// \return row \p row, 1×d
/// \throws std::out_of_range if \p row is not below n
[[nodiscard]] Matrix row_vector(const Matrix& matrix, std::size_t row);

/// \brief Matrices one under another: the rows of the first, then those of the second, and so on.
/// Shapes: every part is n_i×d; the result is (n_0 + n_1 + ...)×d. No part gives a 0×0 matrix.
/// \param parts the matrices, top first
/// \return the stacked matrix
/// \throws ShapeError if the parts have different numbers of columns, naming both shapes
[[nodiscard]] Matrix stack_rows(const std::vector<Matrix>& parts);

/// \brief The length of a row vector: \f$ \|x\| = \sqrt{x \cdot x} = \sqrt{\sum_j x_j^2} \f$.
/// The sum runs from the first entry to the last, as in a score (chapter 2).
/// \param vector x, 1×d; d = 0 gives 0
/// \return \f$ \|x\| \f$
/// \throws ShapeError if \p vector does not have exactly one row
[[nodiscard]] double vector_length(const Matrix& vector);

}  // namespace sa

/// \cond
// {fmt} support (see the file comment): a Doxygen block here would trip over the
// specialisation of a class from another library, so it is documented above.
template <>
struct fmt::formatter<sa::Matrix> {
    int precision = 3;

    // An optional ".N" with N from 0 to 17 (a double has no more decimals worth printing).
    constexpr auto parse(format_parse_context& ctx) -> decltype(ctx.begin())
    {
        auto it = ctx.begin();
        if (it != ctx.end() && *it == '.') {
            ++it;
            int value = 0;
            int digits = 0;
            while (it != ctx.end() && *it >= '0' && *it <= '9' && digits < 3) {
                value = value * 10 + (*it - '0');
                ++it;
                ++digits;
            }
            if (digits == 0 || value > 17) {
                throw format_error("invalid precision for sa::Matrix; use {:.N} with N from 0 to 17");
            }
            precision = value;
        }
        if (it != ctx.end() && *it != '}') {
            throw format_error("invalid format for sa::Matrix; use {} or {:.N}");
        }
        return it;
    }

    // The book's table without labels: the same cells and spacing as format_table.
    template <typename FormatContext>
    auto format(const sa::Matrix& matrix, FormatContext& ctx) const -> decltype(ctx.out())
    {
        std::string table = sa::format_table(matrix, {}, {}, precision);
        if (!table.empty()) {
            table.pop_back();  // no newline after the last row, as for any formatted value
        }
        return fmt::format_to(ctx.out(), "{}", table);
    }
};
/// \endcond
