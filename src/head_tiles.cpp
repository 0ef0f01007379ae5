#include "head_tiles.hpp"

#include "dense.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

namespace sa {

namespace {

using Lanes = double __attribute__((vector_size(64)));  // eight doubles: one 512-bit register
constexpr std::size_t lanes = 8;

std::size_t round_up(std::size_t count, std::size_t step)
{
    return (count + step - 1) / step * step;
}

// The sums of one tile of R rows and W·8 columns: acc[r][w] = 0 + L(r, p)·B(p, 8w …) over p from
// first[r] to end[r] − 1, in order, one rounding per multiplication and per addition. From the
// latest first to the earliest end every row takes its term; before and after, a row whose range
// does not hold p keeps its sums as they are (a select, not a branch, so that they stay in registers).
template <std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void tile_sums(const Left& left, const double* b, std::size_t ldb,
                                             const std::size_t (&first)[R], const std::size_t (&end)[R],
                                             Lanes (&acc)[R][W])
{
    // Over all R rows alike: p runs from the earliest first to the latest end, and every row's
    // range holds [latest first, earliest end).
    // (std::min_element, not std::ranges::min: the WebAssembly build's library has no ranges.)
    const std::size_t low = *std::min_element(std::begin(first), std::end(first));
    const std::size_t high = *std::max_element(std::begin(end), std::end(end));
    const std::size_t all_from = *std::max_element(std::begin(first), std::end(first));
    const std::size_t all_to = *std::min_element(std::begin(end), std::end(end));
    Lanes sums[R][W] = {};  // local, so that they live in registers
    const auto add = [&](std::size_t p, bool checked) {
        Lanes row[W];
        std::memcpy(&row, b + p * ldb, sizeof(row));
        for (std::size_t r = 0; r < R; ++r) {
            const bool on = !checked || (p >= first[r] && p < end[r]);
            const double l = on ? left(r, p) : 0.0;
            for (std::size_t w = 0; w < W; ++w) {
                const Lanes sum = sums[r][w] + l * row[w];
                sums[r][w] = on ? sum : sums[r][w];
            }
        }
    };
    const std::size_t from = std::clamp(all_from, low, high);
    const std::size_t to = std::clamp(all_to, from, high);
    for (std::size_t p = low; p < from; ++p) {
        add(p, true);
    }
    for (std::size_t p = from; p < to; ++p) {
        add(p, false);
    }
    for (std::size_t p = to; p < high; ++p) {
        add(p, true);
    }
    std::memcpy(&acc, &sums, sizeof(sums));
}

// Rows [row, row + R) ∩ [0, rows) and columns [column, column + W·8) ∩ [0, cols) of a tile into
// c (rows ldc apart). A whole tile is stored register by register; only a cut one is copied
// entry by entry (a copy of a length known only at run time is a call).
template <std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void store_tile(const Lanes (&acc)[R][W], std::size_t row, std::size_t rows,
                                              std::size_t column, std::size_t cols, double* c, std::size_t ldc)
{
    if (row + R <= rows && column + W * lanes <= cols) {
        for (std::size_t r = 0; r < R; ++r) {
            std::memcpy(c + (row + r) * ldc + column, &acc[r], sizeof(acc[r]));
        }
        return;
    }
    for (std::size_t r = 0; r < R && row + r < rows; ++r) {
        double sums[W * lanes];
        std::memcpy(sums, &acc[r], sizeof(sums));
        std::copy(sums, sums + std::min(W * lanes, cols - column), c + (row + r) * ldc + column);
    }
}

// rows×cols at a (rows stride apart), copied into `width` columns padded with zeros; transposed,
// entry (c, j) is a[j · stride + c], in `width` ≥ rows columns. Only the padding is zeroed.
void pack(const double* a, std::size_t stride, std::size_t rows, std::size_t cols, std::size_t width,
          std::vector<double>& out)
{
    out.resize(rows * width);
    for (std::size_t i = 0; i < rows; ++i) {
        double* row = out.data() + i * width;
        std::copy(a + i * stride, a + i * stride + cols, row);
        std::fill(row + cols, row + width, 0.0);
    }
}

void pack_transposed(const double* a, std::size_t stride, std::size_t rows, std::size_t cols, std::size_t width,
                     std::vector<double>& out)
{
    out.resize(cols * width);
    for (std::size_t j = 0; j < rows; ++j) {
        for (std::size_t c = 0; c < cols; ++c) {
            out[c * width + j] = a[j * stride + c];
        }
    }
    for (std::size_t c = 0; c < cols; ++c) {
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(c * width + rows),
                  out.begin() + static_cast<std::ptrdiff_t>((c + 1) * width), 0.0);
    }
}

// The buffers of one thread, kept from call to call.
struct Scratch {
    std::vector<double> transposed;  // Kᵀ or Vᵀ, head_dim × (n rounded up)
    std::vector<double> right;       // V, K or Q packed, n × (head_dim rounded up)
    std::vector<double> more;        // dC or Q packed
    std::vector<double> sums;        // scores or dA, n × (n rounded up)
    std::vector<double> d_scores;    // dS, n × n
};

Scratch& scratch()
{
    thread_local Scratch buffers;
    return buffers;
}

// Row tiles of L·B: rows i of L (row_step apart) over depth p in [first(i), end(i)), B with
// `cols` columns (ldb apart, readable to a multiple of W·8), into c (ldc apart).
template <std::size_t R, std::size_t W, class Range>
[[gnu::always_inline]] inline void row_tiles(const double* l, std::size_t row_step, std::size_t depth_step,
                                             std::size_t rows, const Range& range, const double* b,
                                             std::size_t ldb, std::size_t cols, double* c, std::size_t ldc)
{
    for (std::size_t i = 0; i < rows; i += R) {
        std::size_t first[R];
        std::size_t end[R];
        for (std::size_t r = 0; r < R; ++r) {
            first[r] = i + r < rows ? range(i + r).first : 0;
            end[r] = i + r < rows ? range(i + r).second : 0;
        }
        const Left left{l + i * row_step, row_step, depth_step};
        for (std::size_t column = 0; column < cols; column += W * lanes) {
            Lanes acc[R][W];
            tile_sums<R, W>(left, b + column, ldb, first, end, acc);
            store_tile<R, W>(acc, i, rows, column, cols, c, ldc);
        }
    }
}

// Row i's weights from its scores s (j ≤ i): divided by √(d/h), less their largest, through exp,
// divided by their sum, each sum over j in order. The largest is std::fmax's (a NaN score is
// passed over) save for the sign of a zero largest, which no difference a − largest, and so no
// weight, can see; taken as eight running maxima, merged, it is the same number, with no call
// and no chain of dependent comparisons.
void softmax_row(const double* s, std::size_t i, double root, double* a)
{
    for (std::size_t j = 0; j <= i; ++j) {
        a[j] = s[j] / root;
    }
    constexpr double none = -std::numeric_limits<double>::infinity();
    double largest[lanes] = {none, none, none, none, none, none, none, none};
    std::size_t j = 0;
    for (; j + lanes <= i + 1; j += lanes) {
        for (std::size_t l = 0; l < lanes; ++l) {
            largest[l] = a[j + l] > largest[l] ? a[j + l] : largest[l];
        }
    }
    for (; j <= i; ++j) {
        largest[0] = a[j] > largest[0] ? a[j] : largest[0];
    }
    for (std::size_t l = 1; l < lanes; ++l) {
        largest[0] = largest[l] > largest[0] ? largest[l] : largest[0];
    }
    double total = 0.0;
    for (j = 0; j <= i; ++j) {
        a[j] = std::exp(a[j] - largest[0]);
        total += a[j];
    }
    for (j = 0; j <= i; ++j) {
        a[j] /= total;
    }
}

using Range = std::pair<std::size_t, std::size_t>;

template <std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void forward_body(const HeadWindow& h, double* weights, double* out)
{
    Scratch& s = scratch();
    const std::size_t n = h.rows;
    const std::size_t wide_n = round_up(n, W * lanes);
    const std::size_t wide_d = round_up(h.head_dim, W * lanes);
    pack_transposed(h.keys, h.stride, n, h.head_dim, wide_n, s.transposed);
    pack(h.values, h.stride, n, h.head_dim, wide_d, s.right);
    s.sums.resize(n * wide_n);  // every entry read is written first
    // S = Q Kᵀ: each score over the features c in order; only the columns up to the tile's last row.
    const auto features = [&](std::size_t) { return Range{0, h.head_dim}; };
    for (std::size_t i = 0; i < n; i += R) {
        const std::size_t rows = std::min(R, n - i);
        row_tiles<R, W>(h.queries + i * h.stride, h.stride, 1, rows, features, s.transposed.data(), wide_n,
                        i + rows, s.sums.data() + i * wide_n, wide_n);
    }
    const double root = std::sqrt(static_cast<double>(h.head_dim));
    for (std::size_t i = 0; i < n; ++i) {
        softmax_row(s.sums.data() + i * wide_n, i, root, weights + i * n);
    }
    // C = A V: each output over the keys j ≤ i in order.
    const auto keys = [](std::size_t i) { return Range{0, i + 1}; };
    row_tiles<R, W>(weights, n, 1, n, keys, s.right.data(), wide_d, h.head_dim, out, h.stride);
}

// dA = dC Vᵀ, then dS = A ∘ (dA − rowsum(dA ∘ A)) / √(d/h), row by row, into s.d_scores (n × n).
template <std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void score_gradients(const HeadWindow& h, const double* weights, const double* d_out,
                                                   Scratch& s)
{
    const std::size_t n = h.rows;
    const std::size_t wide_n = round_up(n, W * lanes);
    pack_transposed(h.values, h.stride, n, h.head_dim, wide_n, s.transposed);
    s.sums.resize(n * wide_n);  // every entry read is written first
    const auto features = [&](std::size_t) { return Range{0, h.head_dim}; };
    for (std::size_t i = 0; i < n; i += R) {
        const std::size_t rows = std::min(R, n - i);
        row_tiles<R, W>(d_out + i * h.stride, h.stride, 1, rows, features, s.transposed.data(), wide_n, i + rows,
                        s.sums.data() + i * wide_n, wide_n);
    }
    const double root = std::sqrt(static_cast<double>(h.head_dim));
    s.d_scores.resize(n * n);  // every entry read (j ≤ i) is written first
    for (std::size_t i = 0; i < n; i += lanes) {
        const std::size_t rows = std::min(lanes, n - i);
        double weighted[lanes] = {};  // rowsum(dA ∘ A) of rows i … i+7, each over j in order;
        for (std::size_t j = 0; j < i + rows; ++j) {  // the eight sums advance side by side
            for (std::size_t r = 0; r < rows; ++r) {
                if (j <= i + r) {
                    weighted[r] += weights[(i + r) * n + j] * s.sums[(i + r) * wide_n + j];
                }
            }
        }
        for (std::size_t r = 0; r < rows; ++r) {
            const double* a = weights + (i + r) * n;
            const double* d_a = s.sums.data() + (i + r) * wide_n;
            for (std::size_t j = 0; j <= i + r; ++j) {
                s.d_scores[(i + r) * n + j] = a[j] * (d_a[j] - weighted[r]) / root;
            }
        }
    }
}

template <std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void backward_body(const HeadWindow& h, const double* weights, const double* d_out,
                                                 const HeadGradients& g)
{
    Scratch& s = scratch();
    score_gradients<R, W>(h, weights, d_out, s);
    const std::size_t n = h.rows;
    const std::size_t wide_d = round_up(h.head_dim, W * lanes);
    // dQ = dS K: each row over the keys j ≤ i in order.
    pack(h.keys, h.stride, n, h.head_dim, wide_d, s.right);
    const auto keys = [](std::size_t i) { return Range{0, i + 1}; };
    row_tiles<R, W>(s.d_scores.data(), n, 1, n, keys, s.right.data(), wide_d, h.head_dim, g.d_queries, h.stride);
    // dK = dSᵀ Q and dV = Aᵀ dC: row j over the queries i ≥ j in order (Sᵀ's row j is S's column j).
    const auto queries = [n](std::size_t j) { return Range{j, n}; };
    pack(h.queries, h.stride, n, h.head_dim, wide_d, s.right);
    row_tiles<R, W>(s.d_scores.data(), 1, n, n, queries, s.right.data(), wide_d, h.head_dim, g.d_keys, h.stride);
    pack(d_out, h.stride, n, h.head_dim, wide_d, s.more);
    row_tiles<R, W>(weights, 1, n, n, queries, s.more.data(), wide_d, h.head_dim, g.d_values, h.stride);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BOOK_WIDE_TILES 1
// 512-bit registers: 8 rows × 16 columns, 16 registers of sums; 256-bit: 4 rows × 8 columns.
__attribute__((target("avx512f"))) void forward_512(const HeadWindow& h, double* weights, double* out)
{
    forward_body<8, 2>(h, weights, out);
}

__attribute__((target("avx2"))) void forward_256(const HeadWindow& h, double* weights, double* out)
{
    forward_body<4, 1>(h, weights, out);
}

__attribute__((target("avx512f"))) void backward_512(const HeadWindow& h, const double* weights,
                                                     const double* d_out, const HeadGradients& g)
{
    backward_body<8, 2>(h, weights, d_out, g);
}

__attribute__((target("avx2"))) void backward_256(const HeadWindow& h, const double* weights, const double* d_out,
                                                  const HeadGradients& g)
{
    backward_body<4, 1>(h, weights, d_out, g);
}
#endif

}  // namespace

void head_forward_tiled(const HeadWindow& head, double* weights, double* out)
{
#ifdef BOOK_WIDE_TILES
    if (__builtin_cpu_supports("avx512f")) {
        forward_512(head, weights, out);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        forward_256(head, weights, out);
        return;
    }
#endif
    forward_body<4, 1>(head, weights, out);
}

void head_backward_tiled(const HeadWindow& head, const double* weights, const double* d_out,
                         const HeadGradients& grads)
{
#ifdef BOOK_WIDE_TILES
    if (__builtin_cpu_supports("avx512f")) {
        backward_512(head, weights, d_out, grads);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        backward_256(head, weights, d_out, grads);
        return;
    }
#endif
    backward_body<4, 1>(head, weights, d_out, grads);
}

}  // namespace sa
