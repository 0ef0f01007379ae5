#include "dense.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace sa {

namespace {

// Where entry (i, p) of the left factor lies: at a[i · row_step + p · depth_step]. For A that is
// (k, 1); for Aᵀ, read from A, it is (1, k).
struct Left {
    const double* a;
    std::size_t row_step;
    std::size_t depth_step;
    [[gnu::always_inline]] double operator()(std::size_t i, std::size_t p) const
    {
        return a[i * row_step + p * depth_step];
    }
};

//> product-rows
// C = L · B, n×m, into a C of zeros: row i of C gathers L(i, p) · row p of B for p = 0, 1, …, so
// entry (i, j) is 0 + L(i,0)·B(0,j) + L(i,1)·B(1,j) + …, one rounding per multiplication and per
// addition, and the loop over j runs along contiguous rows, which the compiler vectorises. When L
// is Aᵀ (its depth runs down A's rows), p is the outer loop, so that A and B are read front to
// back once; each entry's sum keeps its order.
void product_rows(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m)
{
    if (left.depth_step == 1) {
        for (std::size_t i = 0; i < n; ++i) {
            double* c_row = c + i * m;
            for (std::size_t p = 0; p < k; ++p) {
                const double l_ip = left.a[i * left.row_step + p];
                const double* b_row = b + p * m;
                for (std::size_t j = 0; j < m; ++j) {
                    c_row[j] += l_ip * b_row[j];
                }
            }
        }
        return;
    }
    for (std::size_t p = 0; p < k; ++p) {
        const double* b_row = b + p * m;
        for (std::size_t i = 0; i < n; ++i) {
            const double l_ip = left(i, p);
            double* c_row = c + i * m;
            for (std::size_t j = 0; j < m; ++j) {
                c_row[j] += l_ip * b_row[j];
            }
        }
    }
}
//< product-rows

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BOOK_WIDE_PRODUCT 1
//> product-tile
// The same product on processors with 256-bit registers (AVX2), in tiles of 4 rows × 8 columns:
// the 32 sums of a tile stay in eight registers of four doubles while p runs from 0 to k − 1, and
// each row of B loaded serves four rows of C. Every entry is the same sum in the same order as
// product_rows() gives it, so the bits are the same; only several sums advance at once.
using Lanes = double __attribute__((vector_size(32)));

// Rows i … i+3 of C, in its columns 0 … 7 at c (rows ldc apart), from columns 0 … 7 of B at b
// (rows ldb apart).
__attribute__((target("avx2"))) void product_tile(const Left& left, std::size_t i, std::size_t k, const double* b,
                                                  std::size_t ldb, double* c, std::size_t ldc)
{
    Lanes low[4] = {};   // columns 0 … 3 of rows i … i+3
    Lanes high[4] = {};  // columns 4 … 7
    for (std::size_t p = 0; p < k; ++p) {
        Lanes b_low;
        Lanes b_high;
        std::memcpy(&b_low, b + p * ldb, sizeof(Lanes));
        std::memcpy(&b_high, b + p * ldb + 4, sizeof(Lanes));
        for (std::size_t r = 0; r < 4; ++r) {
            const double l_ip = left(i + r, p);
            low[r] += l_ip * b_low;
            high[r] += l_ip * b_high;
        }
    }
    for (std::size_t r = 0; r < 4; ++r) {
        std::memcpy(c + r * ldc, &low[r], sizeof(Lanes));
        std::memcpy(c + r * ldc + 4, &high[r], sizeof(Lanes));
    }
}
//< product-tile

// Tiles where they fit. The last columns, fewer than 8, are copied into a panel of 8 padded with
// zeros, whose tile is computed whole and cut; the rows past the last group of four go by
// product_rows(). Every entry is summed in the same order.
__attribute__((target("avx2"))) void product_tiles(const Left& left, const double* b, double* c, std::size_t n,
                                                   std::size_t k, std::size_t m)
{
    const std::size_t full_rows = n - n % 4;
    const std::size_t full_cols = m - m % 8;
    std::vector<double> panel(full_cols < m ? k * 8 : 0, 0.0);
    for (std::size_t p = 0; p < panel.size() / 8; ++p) {
        std::copy(b + p * m + full_cols, b + (p + 1) * m, panel.begin() + static_cast<std::ptrdiff_t>(p * 8));
    }
    double edge[4 * 8];
    for (std::size_t i = 0; i < full_rows; i += 4) {
        for (std::size_t j = 0; j < full_cols; j += 8) {
            product_tile(left, i, k, b + j, m, c + i * m + j, m);
        }
        if (!panel.empty()) {
            product_tile(left, i, k, panel.data(), 8, edge, 8);
            for (std::size_t r = 0; r < 4; ++r) {
                std::copy(edge + r * 8, edge + r * 8 + (m - full_cols), c + (i + r) * m + full_cols);
            }
        }
    }
    // Leave the upper halves of the registers clean: code built for the plain 128-bit registers
    // (the mathematics library's exp, for one) runs slowly after 256-bit code that does not.
    __builtin_ia32_vzeroupper();
    product_rows({left.a + full_rows * left.row_step, left.row_step, left.depth_step}, b, c + full_rows * m,
                 n - full_rows, k, m);
}
#endif

// C = L · B into a C of zeros, by whichever of the two loops the processor runs faster.
void product(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m)
{
#ifdef BOOK_WIDE_PRODUCT
    if (__builtin_cpu_supports("avx2")) {
        product_tiles(left, b, c, n, k, m);
        return;
    }
#endif
    product_rows(left, b, c, n, k, m);
}

}  // namespace

Matrix multiply(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.cols() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply: A is {} and B is {}; the columns of A must be the rows of B",
                                     shape(lhs), shape(rhs)));
    }
    Matrix result(lhs.rows(), rhs.cols());
    if (!result.empty()) {
        product({lhs.data(), lhs.cols(), 1}, rhs.data(), result.data(), lhs.rows(), lhs.cols(), rhs.cols());
    }
    return result;
}

Matrix multiply_transposed_lhs(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.rows() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply_transposed_lhs: A is {} and B is {}; they need the same rows",
                                     shape(lhs), shape(rhs)));
    }
    Matrix result(lhs.cols(), rhs.cols());
    if (!result.empty()) {  // entry (i, p) of Aᵀ is A(p, i): rows of Aᵀ step by 1, its depth by A's width
        product({lhs.data(), 1, lhs.cols()}, rhs.data(), result.data(), lhs.cols(), lhs.rows(), rhs.cols());
    }
    return result;
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
