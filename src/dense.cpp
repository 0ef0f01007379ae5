#include "dense.hpp"

#include <cstddef>

#include <fmt/format.h>

namespace sa {

namespace {

// Row i of C gathers A(i, p) · row p of B for p = 0, 1, ...: entry (i, j) is summed over p in
// increasing order, and the loop over j runs along contiguous rows.
void accumulate_product(const double* a, const double* b, double* c, std::size_t n, std::size_t k,
                        std::size_t m)
{
    for (std::size_t i = 0; i < n; ++i) {
        double* c_row = c + i * m;
        for (std::size_t p = 0; p < k; ++p) {
            const double a_ip = a[i * k + p];
            const double* b_row = b + p * m;
            for (std::size_t j = 0; j < m; ++j) {
                c_row[j] += a_ip * b_row[j];
            }
        }
    }
}

}  // namespace

//> multiply
Matrix multiply(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.cols() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply: A is {} and B is {}; the columns of A must be the rows of B",
                                     shape(lhs), shape(rhs)));
    }
    Matrix product(lhs.rows(), rhs.cols());
    if (!product.empty()) {
        accumulate_product(lhs.data(), rhs.data(), product.data(), lhs.rows(), lhs.cols(), rhs.cols());
    }
    return product;
}
//< multiply

Matrix multiply_transposed_lhs(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.rows() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply_transposed_lhs: A is {} and B is {}; they need the same rows",
                                     shape(lhs), shape(rhs)));
    }
    Matrix product(lhs.cols(), rhs.cols());
    if (product.empty()) {
        return product;
    }
    const std::size_t k = lhs.cols();
    const std::size_t m = rhs.cols();
    const double* a = lhs.data();
    const double* b = rhs.data();
    double* c = product.data();
    // Entry (i, j) is summed over the rows p in increasing order.
    for (std::size_t p = 0; p < lhs.rows(); ++p) {
        const double* b_row = b + p * m;
        for (std::size_t i = 0; i < k; ++i) {
            const double a_pi = a[p * k + i];
            double* c_row = c + i * m;
            for (std::size_t j = 0; j < m; ++j) {
                c_row[j] += a_pi * b_row[j];
            }
        }
    }
    return product;
}

Matrix multiply_transposed_rhs(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.cols() != rhs.cols()) {
        throw ShapeError(fmt::format("multiply_transposed_rhs: A is {} and B is {}; they need the same columns",
                                     shape(lhs), shape(rhs)));
    }
    return multiply(lhs, transpose(rhs));
}

void add_in_place(Matrix& sum, const Matrix& term)
{
    if (sum.rows() != term.rows() || sum.cols() != term.cols()) {
        throw ShapeError(fmt::format("add_in_place: A is {} and B is {}; they need the same shape", shape(sum),
                                     shape(term)));
    }
    double* a = sum.data();
    const double* b = term.data();
    const std::size_t count = sum.rows() * sum.cols();
    for (std::size_t i = 0; i < count; ++i) {
        a[i] += b[i];
    }
}

}  // namespace sa
