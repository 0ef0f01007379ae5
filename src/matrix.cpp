#include "matrix.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>

namespace sa {

ShapeError::ShapeError(const std::string& message) : std::invalid_argument(message) {}

Matrix::Matrix(std::size_t rows, std::size_t cols, double fill)
    : rows_(rows), cols_(cols), values_(rows * cols, fill)
{
    if (rows == 0 || cols == 0) {
        rows_ = 0;
        cols_ = 0;
        values_.clear();
    }
}

Matrix::Matrix(std::initializer_list<std::initializer_list<double>> rows)
{
    std::vector<std::vector<double>> copy;
    for (const auto& row : rows) {
        copy.emplace_back(row);
    }
    *this = from_rows(copy);
}

Matrix Matrix::from_rows(const std::vector<std::vector<double>>& rows)
{
    if (std::all_of(rows.begin(), rows.end(), [](const auto& row) { return row.empty(); })) {
        return {};
    }
    Matrix result(rows.size(), rows.front().size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].size() != result.cols_) {
            throw ShapeError(fmt::format("matrix: row {} has {} entries but row 1 has {}; every row needs the same number",
                                         r + 1, rows[r].size(), result.cols_));
        }
        std::copy(rows[r].begin(), rows[r].end(), result.values_.begin() + static_cast<std::ptrdiff_t>(r * result.cols_));
    }
    return result;
}

void Matrix::throw_outside(std::size_t row, std::size_t col) const
{
    throw std::out_of_range(fmt::format("matrix index ({}, {}) is outside a {}×{} matrix", row, col, rows_, cols_));
}

bool identical(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.rows() != rhs.rows() || lhs.cols() != rhs.cols()) {
        return false;
    }
    for (std::size_t r = 0; r < lhs.rows(); ++r) {
        for (std::size_t c = 0; c < lhs.cols(); ++c) {
            if (std::bit_cast<std::uint64_t>(lhs(r, c)) != std::bit_cast<std::uint64_t>(rhs(r, c))) {
                return false;
            }
        }
    }
    return true;
}

double largest_difference(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.rows() != rhs.rows() || lhs.cols() != rhs.cols()) {
        throw ShapeError(fmt::format("largest_difference: A is {} but B is {}; they need the same shape", shape(lhs),
                                     shape(rhs)));
    }
    double largest = 0.0;
    for (std::size_t i = 0; i < lhs.rows(); ++i) {
        for (std::size_t j = 0; j < lhs.cols(); ++j) {
            const double difference = std::abs(lhs(i, j) - rhs(i, j));
            if (std::isnan(difference)) {
                return difference;
            }
            largest = std::max(largest, difference);
        }
    }
    return largest;
}

double largest_magnitude(const Matrix& matrix)
{
    double largest = 0.0;
    for (std::size_t i = 0; i < matrix.rows(); ++i) {
        for (std::size_t j = 0; j < matrix.cols(); ++j) {
            largest = std::fmax(largest, std::fabs(matrix(i, j)));
        }
    }
    return largest;
}

std::string shape(const Matrix& matrix)
{
    return fmt::format("{}×{}", matrix.rows(), matrix.cols());
}

Matrix transpose(const Matrix& matrix)
{
    Matrix result(matrix.cols(), matrix.rows());
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            result(c, r) = matrix(r, c);
        }
    }
    return result;
}

std::string format_number(double value, int precision)
{
    if (std::isnan(value)) {
        return "nan";  // x86 gives 0/0 and inf/inf the sign bit; the book shows no sign
    }
    // Fixed notation would print more digits before the point than a double holds (15), or
    // show as 0 a number far below any rounding residue of the book's numbers: 1e200 as
    // 201 digits, 1e-200 as 0.000. Those print in scientific notation, 1.000e+200.
    constexpr double largest_fixed = 1e15;
    constexpr double smallest_fixed = 1e-100;
    const double magnitude = std::fabs(value);
    if (std::isfinite(value) && (magnitude >= largest_fixed || (magnitude != 0.0 && magnitude < smallest_fixed))) {
        return fmt::format("{:.{}e}", value, precision);
    }
    std::string text = fmt::format("{:.{}f}", value, precision);
    if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) {
        text.erase(0, 1);
    }
    return text;
}

std::vector<std::string> feature_labels(std::size_t count)
{
    std::vector<std::string> labels;
    for (std::size_t i = 1; i <= count; ++i) {
        labels.push_back(fmt::format("f{}", i));
    }
    return labels;
}

std::vector<std::string> numbered_labels(const std::string& prefix, std::size_t count, std::size_t first)
{
    std::vector<std::string> labels;
    for (std::size_t i = first; i < first + count; ++i) {
        labels.push_back(fmt::format("{}{}", prefix, i));
    }
    return labels;
}

Matrix identity(std::size_t size)
{
    return identity(size, size);
}

Matrix identity(std::size_t rows, std::size_t cols)
{
    Matrix result(rows, cols, 0.0);
    for (std::size_t i = 0; i < std::min(rows, cols); ++i) {
        result(i, i) = 1.0;
    }
    return result;
}

Matrix row_vector(const Matrix& matrix, std::size_t row)
{
    if (row >= matrix.rows()) {
        throw std::out_of_range(fmt::format("row_vector: row {} of a {} matrix", row, shape(matrix)));
    }
    Matrix result(1, matrix.cols());
    for (std::size_t c = 0; c < matrix.cols(); ++c) {
        result(0, c) = matrix(row, c);
    }
    return result;
}

Matrix stack_rows(const std::vector<Matrix>& parts)
{
    if (parts.empty()) {
        return {};
    }
    std::size_t rows = 0;
    for (const Matrix& part : parts) {
        if (part.cols() != parts[0].cols()) {
            throw ShapeError(fmt::format("stack_rows: a part is {} but the first is {}; their columns must match",
                                         shape(part), shape(parts[0])));
        }
        rows += part.rows();
    }
    Matrix result(rows, parts[0].cols());
    std::size_t row = 0;
    for (const Matrix& part : parts) {
        for (std::size_t r = 0; r < part.rows(); ++r, ++row) {
            for (std::size_t c = 0; c < part.cols(); ++c) {
                result(row, c) = part(r, c);
            }
        }
    }
    return result;
}

double vector_length(const Matrix& vector)
{
    if (vector.rows() != 1) {
        throw ShapeError(fmt::format("vector_length: the vector is {}; it must be one row", shape(vector)));
    }
    double sum = 0.0;
    for (std::size_t c = 0; c < vector.cols(); ++c) {
        sum += vector(0, c) * vector(0, c);
    }
    return std::sqrt(sum);
}

namespace {

// Display width in terminal columns: count UTF-8 code points, not bytes, so
// labels such as "−∞" line up.
std::size_t display_width(const std::string& text)
{
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(),
                                                  [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0U) != 0x80U; }));
}

std::string pad_left(const std::string& text, std::size_t width)
{
    const std::size_t shown = display_width(text);
    return std::string(width > shown ? width - shown : 0, ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width)
{
    const std::size_t shown = display_width(text);
    return text + std::string(width > shown ? width - shown : 0, ' ');
}

}  // namespace

std::string format_table(const Matrix& matrix, const std::vector<std::string>& row_labels,
                         const std::vector<std::string>& col_labels, int precision)
{
    if (!row_labels.empty() && row_labels.size() != matrix.rows()) {
        throw ShapeError(fmt::format("format_table: {} row labels for a {} matrix", row_labels.size(), shape(matrix)));
    }
    if (!col_labels.empty() && col_labels.size() != matrix.cols()) {
        throw ShapeError(fmt::format("format_table: {} column labels for a {} matrix", col_labels.size(), shape(matrix)));
    }
    std::vector<std::vector<std::string>> cells(matrix.rows());
    std::size_t cell_width = 0;
    for (const auto& label : col_labels) {
        cell_width = std::max(cell_width, display_width(label));
    }
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            cells[r].push_back(format_number(matrix(r, c), precision));
            cell_width = std::max(cell_width, display_width(cells[r].back()));
        }
    }
    std::size_t label_width = 0;
    for (const auto& label : row_labels) {
        label_width = std::max(label_width, display_width(label));
    }
    // Two spaces of indent, then the row label (if any), then each cell after two spaces.
    const std::string indent = row_labels.empty() ? "" : "  ";
    std::string out;
    if (!col_labels.empty()) {
        out += indent + std::string(label_width, ' ');
        for (const auto& label : col_labels) {
            out += "  " + pad_left(label, cell_width);
        }
        out += '\n';
    }
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        out += indent + pad_right(row_labels.empty() ? std::string() : row_labels[r], label_width);
        for (const auto& cell : cells[r]) {
            out += "  " + pad_left(cell, cell_width);
        }
        out += '\n';
    }
    return out;
}

}  // namespace sa
