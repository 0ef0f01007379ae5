#include "dense.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace sa {

namespace {

thread_local std::size_t threads_here = 1;  // this thread's count, set by ProductThreads

//> product-rows
// C = L · B, n×m, its entries set to zero first: row i of C gathers L(i, p) · row p of B for p = 0, 1, …, so
// entry (i, j) is 0 + L(i,0)·B(0,j) + L(i,1)·B(1,j) + …, one rounding per multiplication and per
// addition, and the loop over j runs along contiguous rows, which the compiler vectorises. When L
// is Aᵀ (its depth runs down A's rows), p is the outer loop, so that A and B are read front to
// back once; each entry's sum keeps its order.
void product_rows(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m)
{
    std::fill(c, c + n * m, 0.0);  // every sum starts from zero, whatever C held before
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

// The same, C = D + L·B where d is not null (D's rows m apart, d may be c): the product's rows are
// summed apart, then each entry takes one more addition.
void product_rows_added(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m,
                        const double* d)
{
    if (d == nullptr) {
        product_rows(left, b, c, n, k, m);
        return;
    }
    thread_local std::vector<double> sums;
    sums.resize(n * m);
    product_rows(left, b, sums.data(), n, k, m);
    for (std::size_t x = 0; x < n * m; ++x) {
        c[x] = d[x] + sums[x];
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BOOK_WIDE_PRODUCT 1
//> product-tile
// The same product on processors with wide registers, in tiles of Rows rows × two registers of
// columns: with 256-bit registers (AVX2) 6 rows × 8 columns, with 512-bit ones (AVX-512) 8 rows ×
// 16 columns. The sums of a tile stay in registers while p runs from 0 to k − 1, and each row of
// B loaded serves every row of the tile. Every entry is the same sum in the same order as
// product_rows() gives it, so the bits are the same; only several sums advance at once.
using Lanes4 = double __attribute__((vector_size(32)));  // four doubles: one 256-bit register
using Lanes8 = double __attribute__((vector_size(64)));  // eight doubles: one 512-bit register

// Rows i … i+Rows−1 of C, in its first 2·width columns at c (rows ldc apart), from the same
// columns of B at b (rows ldb apart); where d is not null, C = D + L·B, D's rows at d ldc apart
// (d may be c). Where `resume` is true, each sum goes on from the value C holds (a sum over the
// first part of the depth, stored there by the call before: a double stored and read back is the
// same double, so the additions and their order are those of one call over the whole depth).
template <class Lanes, std::size_t Rows>
[[gnu::always_inline]] inline void product_tile(const Left& left, std::size_t i, std::size_t k, const double* b,
                                                std::size_t ldb, double* c, std::size_t ldc, const double* d,
                                                bool resume = false)
{
    constexpr std::size_t width = sizeof(Lanes) / sizeof(double);
    Lanes low[Rows];   // columns 0 … width−1 of rows i … i+Rows−1
    Lanes high[Rows];  // columns width … 2·width−1
    for (std::size_t r = 0; r < Rows; ++r) {  // each sum starts from zero (a loop, which stays in registers)
        low[r] = Lanes{};
        high[r] = Lanes{};
        if (resume) {
            std::memcpy(&low[r], c + r * ldc, sizeof(Lanes));
            std::memcpy(&high[r], c + r * ldc + width, sizeof(Lanes));
        }
    }
    for (std::size_t p = 0; p < k; ++p) {
        Lanes b_low;
        Lanes b_high;
        std::memcpy(&b_low, b + p * ldb, sizeof(Lanes));
        std::memcpy(&b_high, b + p * ldb + width, sizeof(Lanes));
        for (std::size_t r = 0; r < Rows; ++r) {
            const double l_ip = left(i + r, p);
            low[r] += l_ip * b_low;
            high[r] += l_ip * b_high;
        }
    }
    // Unrolled, so that each sum is stored from its register (GCC keeps this loop, and with it the
    // sums, in memory otherwise: 5 to 7 % of a product's time, 234 → 223 µs for 1024×64 by 64×64).
#pragma GCC unroll 8
    for (std::size_t r = 0; r < Rows; ++r) {
        if (d != nullptr) {  // one more addition per entry, as add_in_place() makes it
            Lanes d_low;
            Lanes d_high;
            std::memcpy(&d_low, d + r * ldc, sizeof(Lanes));
            std::memcpy(&d_high, d + r * ldc + width, sizeof(Lanes));
            low[r] = d_low + low[r];
            high[r] = d_high + high[r];
        }
        std::memcpy(c + r * ldc, &low[r], sizeof(Lanes));
        std::memcpy(c + r * ldc + width, &high[r], sizeof(Lanes));
    }
}
//< product-tile

// Leaves the upper halves of the registers clean: code built for the plain 128-bit registers (the
// mathematics library's exp, for one) runs slowly after wide code that does not.
__attribute__((target("avx"))) inline void clean_upper_halves()
{
    __builtin_ia32_vzeroupper();
}

// The depth of a transposed left factor (Aᵀ, its depth running down A's rows) is taken in parts of
// this many: a weight's gradient, Xᵀ dQ, sums over all 1024 rows of chapter 15's step, and its two
// factors (512 KiB each) do not fit in a core's cache together, while a part of each (128 KiB) does.
constexpr std::size_t depth_part = 256;

// Tiles where they fit. The last columns, fewer than a tile's, are copied into a panel as wide as
// a tile, padded with zeros, whose tile is computed whole and cut; the rows past the last whole
// tile go by product_rows(). Every entry is summed in the same order. With a transposed left
// factor and no D, the depth goes in parts (depth_part), each tile's sums kept in C in between.
// With `pack` as well (a product shared among threads), each part of B is first copied, row by
// row, into one strip per tile's columns: B is then the gradient another core has just written
// half of (the heads share the windows between the threads), and read once in order it comes
// across faster than by the tiles' columns (chapter 15's step on 2 threads, the minimum of three
// runs of 300: 9.11 → 8.74 ms; on one thread the copy cost more than it saved, 12.32 → 12.55 ms,
// so it is not made there).
template <class Lanes, std::size_t Rows>
[[gnu::always_inline]] inline void product_tiles(const Left& left, const double* b, double* c, std::size_t n,
                                                 std::size_t k, std::size_t m, const double* d, bool pack = false)
{
    constexpr std::size_t cols = 2 * sizeof(Lanes) / sizeof(double);
    const std::size_t full_rows = n - n % Rows;
    const std::size_t full_cols = m - m % cols;
    thread_local std::vector<double> panel;  // kept from call to call, so never asked for again
    panel.resize(full_cols < m ? k * cols : 0);
    for (std::size_t p = 0; p < panel.size() / cols; ++p) {
        double* row = panel.data() + p * cols;
        std::fill(std::copy(b + p * m + full_cols, b + (p + 1) * m, row), row + cols, 0.0);
    }
    const bool in_parts = left.depth_step != 1 && d == nullptr;
    const std::size_t part = in_parts ? depth_part : std::max<std::size_t>(k, 1);
    thread_local std::vector<double> strips;  // strip j/cols: rows p of the part, columns j … j+cols−1
    double edge[Rows * cols];
    for (std::size_t first = 0; first == 0 || first < k; first += part) {
        const std::size_t depth = std::min(part, k - first);
        const Left rest{left.a + first * left.depth_step, left.row_step, left.depth_step};
        const bool resume = first > 0;
        const bool packed = in_parts && pack && full_rows > 0;
        if (packed) {
            strips.resize(full_cols * depth);
            for (std::size_t p = 0; p < depth; ++p) {
                const double* row = b + (first + p) * m;
                for (std::size_t j = 0; j < full_cols; j += cols) {
                    std::memcpy(strips.data() + j * depth + p * cols, row + j, sizeof(double) * cols);
                }
            }
        }
        for (std::size_t i = 0; i < full_rows; i += Rows) {
            for (std::size_t j = 0; j < full_cols; j += cols) {
                product_tile<Lanes, Rows>(rest, i, depth, packed ? strips.data() + j * depth : b + first * m + j,
                                          packed ? cols : m, c + i * m + j, m, d == nullptr ? nullptr : d + i * m + j,
                                          resume);
            }
            if (!panel.empty()) {
                std::fill(edge, edge + Rows * cols, 0.0);
                for (std::size_t r = 0; resume && r < Rows; ++r) {  // the sums so far, where they are kept
                    std::copy(c + (i + r) * m + full_cols, c + (i + r + 1) * m, edge + r * cols);
                }
                product_tile<Lanes, Rows>(rest, i, depth, panel.data() + first * cols, cols, edge, cols, nullptr,
                                          resume);
                for (std::size_t r = 0; r < Rows; ++r) {
                    for (std::size_t j = full_cols; j < m; ++j) {
                        const double sum = edge[r * cols + (j - full_cols)];
                        c[(i + r) * m + j] = d == nullptr ? sum : d[(i + r) * m + j] + sum;
                    }
                }
            }
        }
    }
    clean_upper_halves();
    product_rows_added({left.a + full_rows * left.row_step, left.row_step, left.depth_step}, b, c + full_rows * m,
                       n - full_rows, k, m, d == nullptr ? nullptr : d + full_rows * m);
}

__attribute__((target("avx512f"))) void product_tiles_512(const Left& left, const double* b, double* c,
                                                          std::size_t n, std::size_t k, std::size_t m, const double* d,
                                                          bool pack)
{
    product_tiles<Lanes8, 8>(left, b, c, n, k, m, d, pack);
}

__attribute__((target("avx2"))) void product_tiles_256(const Left& left, const double* b, double* c,
                                                       std::size_t n, std::size_t k, std::size_t m, const double* d,
                                                       bool pack)
{
    // Tiles of 6 rows, then of 2 for the rest (a thread's share of rows is a multiple of 8; those
    // few rows read B as it is).
    const std::size_t sixes = n - n % 6;
    product_tiles<Lanes4, 6>(left, b, c, sixes, k, m, d, pack);
    product_tiles<Lanes4, 2>({left.a + sixes * left.row_step, left.row_step, left.depth_step}, b, c + sixes * m,
                             n - sixes, k, m, d == nullptr ? nullptr : d + sixes * m);
}
#endif

// C = L · B, or C = D + L · B where d is not null, every entry written (C may hold anything before),
// by whichever of the loops the processor runs faster; `shared`: one of the threads' shares.
void product_here(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m,
                  const double* d, bool shared = false)
{
#ifdef BOOK_WIDE_PRODUCT
    if (__builtin_cpu_supports("avx512f")) {
        product_tiles_512(left, b, c, n, k, m, d, shared);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        product_tiles_256(left, b, c, n, k, m, d, shared);
        return;
    }
#else
    static_cast<void>(shared);
#endif
    product_rows_added(left, b, c, n, k, m, d);
}

// The same, its rows shared among product_threads() threads in runs of a multiple of 8 rows:
// each entry is computed by one thread, in the same order.
void product(const Left& left, const double* b, double* c, std::size_t n, std::size_t k, std::size_t m,
             const double* d = nullptr)
{
    const std::size_t threads = std::min(product_threads(), (n + 7) / 8);
    if (threads <= 1) {
        product_here(left, b, c, n, k, m, d);
        return;
    }
    const std::size_t run = (n + threads * 8 - 1) / (threads * 8) * 8;
#pragma omp parallel for num_threads(static_cast<int>(threads)) schedule(static)
    for (std::ptrdiff_t t = 0; t < static_cast<std::ptrdiff_t>(threads); ++t) {
        const std::size_t first = std::min(n, static_cast<std::size_t>(t) * run);
        const std::size_t rows = std::min(n - first, run);
        if (rows > 0) {
            product_here({left.a + first * left.row_step, left.row_step, left.depth_step}, b, c + first * m, rows, k,
                         m, d == nullptr ? nullptr : d + first * m, true);
        }
    }
}

}  // namespace

ProductThreads::ProductThreads(std::size_t threads) : before_(threads_here)
{
    threads_here = std::max<std::size_t>(threads, 1);
}

ProductThreads::~ProductThreads()
{
    threads_here = before_;
}

std::size_t product_threads()
{
    return threads_here;
}

namespace {

// A result matrix of this shape: the one given, its storage kept, where its shape is already
// this one (its entries are then all overwritten by the product), else a new one.
void shape_result(Matrix& result, std::size_t rows, std::size_t cols)
{
    if (result.rows() != rows || result.cols() != cols || result.empty()) {
        result = Matrix(rows, cols);
    }
}

}  // namespace

void multiply_into(const Matrix& lhs, const Matrix& rhs, Matrix& result)
{
    if (lhs.cols() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply: A is {} and B is {}; the columns of A must be the rows of B",
                                     shape(lhs), shape(rhs)));
    }
    shape_result(result, lhs.rows(), rhs.cols());
    if (!result.empty()) {
        product({lhs.data(), lhs.cols(), 1}, rhs.data(), result.data(), lhs.rows(), lhs.cols(), rhs.cols());
    }
}

Matrix multiply(const Matrix& lhs, const Matrix& rhs)
{
    Matrix result;
    multiply_into(lhs, rhs, result);
    return result;
}

void multiply_transposed_lhs_into(const Matrix& lhs, const Matrix& rhs, Matrix& result)
{
    if (lhs.rows() != rhs.rows()) {
        throw ShapeError(fmt::format("multiply_transposed_lhs: A is {} and B is {}; they need the same rows",
                                     shape(lhs), shape(rhs)));
    }
    shape_result(result, lhs.cols(), rhs.cols());
    if (!result.empty()) {  // entry (i, p) of Aᵀ is A(p, i): rows of Aᵀ step by 1, its depth by A's width
        product({lhs.data(), 1, lhs.cols()}, rhs.data(), result.data(), lhs.cols(), lhs.rows(), rhs.cols());
    }
}

Matrix multiply_transposed_lhs(const Matrix& lhs, const Matrix& rhs)
{
    Matrix result;
    multiply_transposed_lhs_into(lhs, rhs, result);
    return result;
}

void multiply_transposed_rhs_into(const Matrix& lhs, const Matrix& rhs, Matrix& result)
{
    if (lhs.cols() != rhs.cols()) {
        throw ShapeError(fmt::format("multiply_transposed_rhs: A is {} and B is {}; they need the same columns",
                                     shape(lhs), shape(rhs)));
    }
    multiply_into(lhs, transpose(rhs), result);
}

Matrix multiply_transposed_rhs(const Matrix& lhs, const Matrix& rhs)
{
    Matrix result;
    multiply_transposed_rhs_into(lhs, rhs, result);
    return result;
}

void multiply_add_into(const Matrix& lhs, const Matrix& rhs, const Matrix& addend, Matrix& result)
{
    if (lhs.cols() != rhs.rows() || addend.rows() != lhs.rows() || addend.cols() != rhs.cols()) {
        throw ShapeError(fmt::format("multiply_add: A is {}, B is {} and D is {}; the columns of A must be the rows "
                                     "of B, and D must be A's rows by B's columns",
                                     shape(lhs), shape(rhs), shape(addend)));
    }
    if (&result != &addend) {
        shape_result(result, addend.rows(), addend.cols());
    }
    if (!result.empty()) {
        product({lhs.data(), lhs.cols(), 1}, rhs.data(), result.data(), lhs.rows(), lhs.cols(), rhs.cols(),
                addend.data());
    }
}

void add_in_place(Matrix& sum, const Matrix& term)
{
    if (sum.rows() != term.rows() || sum.cols() != term.cols()) {
        throw ShapeError(fmt::format("add_in_place: A is {} and B is {}; they need the same shape", shape(sum),
                                     shape(term)));
    }
    double* a = sum.data();
    const double* b = term.data();
    const auto count = static_cast<std::ptrdiff_t>(sum.rows() * sum.cols());
    // Each entry is one addition, so the entries may be shared among the threads of the products.
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t i = 0; i < count; ++i) {
        a[i] += b[i];
    }
}

}  // namespace sa
