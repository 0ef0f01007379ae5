#include "fast_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attention_shapes.hpp"
#include "masking.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sa {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// Arrays that start on a 64-byte boundary: a cache line, and the width of one vector of
// eight doubles, so that no load or store of eight numbers straddles two cache lines.
template <typename T>
struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <typename U>
    explicit CacheLineAllocator(const CacheLineAllocator<U>& /*other*/)
    {
    }
    T* allocate(std::size_t count)
    {
        return static_cast<T*>(::operator new(count * sizeof(T), std::align_val_t{64}));
    }
    void deallocate(T* pointer, std::size_t /*count*/) { ::operator delete(pointer, std::align_val_t{64}); }
    // resize(count) leaves the new numbers unwritten (assign() still fills them): the copies of
    // the inputs write every entry once, on every core, rather than zero it first on one.
    template <typename U, typename... Args>
    void construct(U* pointer, Args&&... args)
    {
        ::new (static_cast<void*>(pointer)) U(std::forward<Args>(args)...);
    }
    template <typename U>
    void construct(U* pointer)
    {
        ::new (static_cast<void*>(pointer)) U;
    }
    friend bool operator==(const CacheLineAllocator& /*a*/, const CacheLineAllocator& /*b*/) { return true; }
};
using Numbers = std::vector<double, CacheLineAllocator<double>>;

//> micro-kernel
// C (R×16) = A (R×depth) · B (depth×16), or C += it (Accumulate), where B is a panel: its 16
// columns stored row after row, so that the loop reads it front to back. The R×16 sums live
// in registers for the whole depth: with 512-bit registers (AVX-512) R = 8 rows of two
// registers of eight doubles, sixteen of its thirty-two registers; with 256-bit ones (AVX2)
// R = 4 rows of four registers of four doubles, its sixteen registers. (Vectors of eight doubles
// on such a processor are two registers each: sixteen of them would not fit, and the sums would
// live in memory.) Each number loaded from B serves R rows, and each number of A sixteen
// columns. Accumulate is a template parameter rather than an argument, so that each version of
// the tile has no branch and keeps its sums in registers to the end.
using Lanes = double __attribute__((vector_size(64)));  // eight doubles: the exponential's width
constexpr std::size_t lanes = 8;
constexpr std::size_t panel_width = 2 * lanes;
#if defined(__AVX512F__)
using Register = double __attribute__((vector_size(64)));  // eight doubles: one 512-bit register
constexpr std::size_t tile_rows = 8;
#elif defined(__AVX__)
using Register = double __attribute__((vector_size(32)));  // four doubles: one 256-bit register
constexpr std::size_t tile_rows = 4;
#else
using Register = double __attribute__((vector_size(16)));  // two doubles: one 128-bit register
constexpr std::size_t tile_rows = 2;
#endif
constexpr std::size_t per_row = panel_width / (sizeof(Register) / sizeof(double));  // registers

template <bool Accumulate>
void multiply_tile(const double* a, std::size_t lda, const double* panel, std::size_t depth, double* c,
                   std::size_t ldc)
{
    Register sums[tile_rows][per_row] = {};
    for (std::size_t k = 0; k < depth; ++k) {
        Register b[per_row];
        std::memcpy(&b, panel + k * panel_width, sizeof(b));
        for (std::size_t r = 0; r < tile_rows; ++r) {
            const double a_rk = a[r * lda + k];
            for (std::size_t w = 0; w < per_row; ++w) {
                sums[r][w] += a_rk * b[w];
            }
        }
    }
    for (std::size_t r = 0; r < tile_rows; ++r) {
        Register old[per_row] = {};
        if constexpr (Accumulate) {
            std::memcpy(&old, c + r * ldc, sizeof(old));
        }
        for (std::size_t w = 0; w < per_row; ++w) {
            old[w] += sums[r][w];
        }
        std::memcpy(c + r * ldc, &old, sizeof(old));
    }
}
//< micro-kernel

// C (rows×16·panels) = or += A (rows×depth) · B, B given as panels of 16 columns each,
// panel_stride numbers apart; rows is a multiple of tile_rows (the arrays are padded).
template <bool Accumulate>
void multiply_panels(std::size_t rows, std::size_t panels, std::size_t depth, const double* a, std::size_t lda,
                     const double* b_panels, std::size_t panel_stride, double* c, std::size_t ldc)
{
    for (std::size_t p = 0; p < panels; ++p) {  // one panel of B stays in the L1 cache while A streams past
        for (std::size_t r = 0; r < rows; r += tile_rows) {
            multiply_tile<Accumulate>(a + r * lda, lda, b_panels + p * panel_stride, depth,
                                      c + r * ldc + p * panel_width, ldc);
        }
    }
}

std::size_t round_up(std::size_t count, std::size_t multiple)
{
    return (count + multiple - 1) / multiple * multiple;
}

//> fast-exp
// e^x for x <= 0 on eight numbers at once, as 2^k · e^r with k = round(x / ln 2) and
// |r| <= ln(2)/2. e^r comes from its Taylor series to r^13/13! (truncated there, it is off
// by less than 1e-17 relative), summed by Estrin's scheme: pairs c_i + c_(i+1)·r, then
// pairs of those with r², r⁴ and r⁸, four short steps instead of thirteen in a row.
// Only arithmetic, comparisons and bit operations, so each line is one vector
// instruction on eight numbers.
using Bits = std::int64_t __attribute__((vector_size(64)));
constexpr double round_shift = 6755399441055744.0;  // 1.5·2^52: adding it rounds to an integer

// (Vectors are taken and given back by reference, so that no 512-bit vector is passed by
// value: that would depend on whether the processor has 512-bit registers.)
// The series e^r, and k + 1.5·2^52 in `shifted` (k in its low bits), for x >= -746.
inline void exp_series(const Lanes& x, Lanes& shifted, Lanes& series)
{
    constexpr double log2e = 1.4426950408889634;
    constexpr double ln2_high = 0.693147180369123816490;  // ln 2 in two parts, so that k·ln2_high is exact
    constexpr double ln2_low = 1.90821492927058770002e-10;
    shifted = x * log2e + round_shift;
    const Lanes k = shifted - round_shift;
    const Lanes r = (x - k * ln2_high) - k * ln2_low;
    constexpr double c[14] = {1.0,          1.0,           1.0 / 2,        1.0 / 6,         1.0 / 24,
                              1.0 / 120,    1.0 / 720,     1.0 / 5040,     1.0 / 40320,     1.0 / 362880,
                              1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800};  // c_i = 1/i!
    const Lanes r2 = r * r;
    const Lanes r4 = r2 * r2;
    const Lanes r8 = r4 * r4;
    const Lanes low = ((c[0] + c[1] * r) + (c[2] + c[3] * r) * r2) + ((c[4] + c[5] * r) + (c[6] + c[7] * r) * r2) * r4;
    const Lanes high = ((c[8] + c[9] * r) + (c[10] + c[11] * r) * r2) + (c[12] + c[13] * r) * r4;
    series = low + high * r8;
}

// Every x <= 0, -inf included. 2^k goes into the exponent bits as 2^h · 2^(k-h) with
// h = k/2, so that both factors are normal numbers even where e^x is subnormal (below
// e^-708). Below -746, -inf included, e^x rounds to 0.
inline void exp_nonpositive(Lanes& x)
{
    const Lanes lowest = Lanes{} - 746.0;
    const Lanes clamped = x < lowest ? lowest : x;
    Lanes shifted;
    Lanes series;
    exp_series(clamped, shifted, series);
    const Bits whole = __builtin_bit_cast(Bits, shifted) - __builtin_bit_cast(Bits, Lanes{} + round_shift);  // k
    const Bits half = whole >> 1;
    const Lanes low_power = __builtin_bit_cast(Lanes, (half + 1023) << 52);  // 2^h: h + 1023 in the exponent
    const Lanes high_power = __builtin_bit_cast(Lanes, (whole - half + 1023) << 52);
    x = series * low_power * high_power;
}

// Only -708 <= x <= 0, where e^x is a normal number: no clamp, and k is added to the
// series' exponent bits in one step (the low 12 bits of `shifted`, moved up to the
// exponent field, add k to it). The same bits as exp_nonpositive: multiplying a normal
// number by a power of 2 that keeps it normal is exact either way.
inline void exp_normal_range(Lanes& x)
{
    Lanes shifted;
    Lanes series;
    exp_series(x, shifted, series);
    x = __builtin_bit_cast(Lanes, __builtin_bit_cast(Bits, series) + (__builtin_bit_cast(Bits, shifted) << 52));
}
//< fast-exp

}  // namespace

double fast_exp(double x)
{
    Lanes eight = Lanes{} + x;
    exp_nonpositive(eight);
    return eight[0];
}

double fast_exp_normal_range(double x)
{
    if (!(x >= fast_exp_normal_floor && x <= 0.0)) {
        throw std::invalid_argument(fmt::format("fast_exp_normal_range: x = {} is outside [{}, 0], where e^x is a "
                                                "normal double; fast_exp takes every x <= 0",
                                                x, fast_exp_normal_floor));
    }
    Lanes eight = Lanes{} + x;
    exp_normal_range(eight);
    return eight[0];
}

namespace {
// The inputs, copied once (through data(), without a bounds check per entry) into the
// layouts the products read front to back: Q divided by √d_k, row after row; Kᵀ and V
// in panels of 16 columns. Every padding entry is 0.
struct Operands {
    std::size_t queries = 0;     // n
    std::size_t keys = 0;        // m
    std::size_t key_dim = 0;     // d_k
    std::size_t value_dim = 0;   // d_v
    std::size_t padded_keys = 0; // m rounded up to a multiple of 16
    std::size_t value_cols = 0;  // d_v rounded up to a multiple of 16
    Numbers q = {};  // (n + tile_rows)×d_k: the last row tile of a block may run past row n
    Numbers k = {};  // panel p: keys 16p to 16p + 15, d_k rows of 16 (Kᵀ, one panel at a time)
    Numbers v = {};  // panel p: value columns 16p to 16p + 15, padded_keys rows of 16
};

// Every entry of the copies, padding included, is written once, the rows (or panels) shared
// among the cores: at n = 4096 a copy on one core took about 6 % of the kernel's time.
Operands copy_operands(const Matrix& queries, const Matrix& keys, const Matrix& values)
{
    Operands ops{queries.rows(), keys.rows(), queries.cols(), values.cols(), round_up(keys.rows(), panel_width),
                 round_up(values.cols(), panel_width)};
    const double scale = 1.0 / std::sqrt(static_cast<double>(ops.key_dim));
    const std::size_t d_k = ops.key_dim;
    const std::size_t d_v = ops.value_dim;
    ops.q.resize((ops.queries + tile_rows) * d_k);
    ops.k.resize(ops.padded_keys * d_k);
    ops.v.resize(ops.padded_keys * ops.value_cols);
    const double* q = queries.data();
    const double* k = keys.data();
    const double* v = values.data();
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t row = 0; row < static_cast<std::ptrdiff_t>(ops.queries + tile_rows); ++row) {
        const auto i = static_cast<std::size_t>(row);
        for (std::size_t d = 0; d < d_k; ++d) {
            ops.q[i * d_k + d] = i < ops.queries ? q[i * d_k + d] * scale : 0.0;
        }
    }
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t key = 0; key < static_cast<std::ptrdiff_t>(ops.padded_keys); ++key) {
        const auto j = static_cast<std::size_t>(key);
        const bool real = j < ops.keys;
        for (std::size_t d = 0; d < d_k; ++d) {  // Kᵀ: key j is column j % 16 of panel j / 16
            ops.k[(j / panel_width * d_k + d) * panel_width + j % panel_width] = real ? k[j * d_k + d] : 0.0;
        }
        for (std::size_t d = 0; d < ops.value_cols; ++d) {
            ops.v[(d / panel_width * ops.padded_keys + j) * panel_width + d % panel_width] =
                real && d < d_v ? v[j * d_v + d] : 0.0;
        }
    }
    return ops;
}

bool all_finite(const Matrix& matrix)
{
    return std::all_of(matrix.data(), matrix.data() + matrix.rows() * matrix.cols(),
                       [](double entry) { return std::isfinite(entry); });
}

// Per core: one block of scores and the state of one block of query rows, its rows
// padded to a multiple of tile_rows and its columns to a multiple of 16.
struct Scratch {
    std::size_t score_cols = 0;            // B_c rounded up to 16, and 16 more for a block that starts mid-panel
    Numbers scores = {};       // rows×score_cols
    Numbers accumulator = {};  // rows×value_cols
    std::vector<double> max = {};          // rows
    std::vector<double> sum = {};          // rows
    std::vector<double> new_max = {};      // rows: the maxima after this block
    std::vector<double> block_sum = {};    // rows: the sums of this block's weights
    std::vector<double> smallest = {};     // rows: the smallest score of this block (NaN if any is NaN)
};

Scratch make_scratch(const Operands& ops, const TileSizes& tiles)
{
    const std::size_t rows = round_up(std::min(tiles.query_block, ops.queries), tile_rows);
    Scratch scratch;
    scratch.score_cols = std::min(round_up(tiles.key_block, panel_width) + panel_width, ops.padded_keys);
    scratch.scores.assign(rows * scratch.score_cols, 0.0);
    scratch.accumulator.assign(rows * ops.value_cols, 0.0);
    scratch.max.assign(rows, minus_infinity);
    scratch.sum.assign(rows, 0.0);
    scratch.new_max.assign(rows, minus_infinity);
    scratch.block_sum.assign(rows, 0.0);
    scratch.smallest.assign(rows, 0.0);
    return scratch;
}

// Which keys each query may use: the explicit mask, or the causal rule, or all.
struct MaskRule {
    Masking masking = Masking::none;
    const Matrix* mask = nullptr;
};

// Sets to -inf the scores of query i (row, which covers keys first_panel_key onwards)
// that it may not use: keys outside [block.first_key, block.last_key) and masked keys.
void hide_keys(const MaskRule& rule, const Block& block, std::size_t i, std::size_t first_panel_key, double* row,
               std::size_t width)
{
    const std::size_t begin = block.first_key - first_panel_key;
    std::size_t end = block.last_key - first_panel_key;
    if (rule.masking == Masking::causal) {
        end = std::min(end, i + 1 > first_panel_key ? i + 1 - first_panel_key : 0);  // keys after query i
    }
    end = std::max(end, begin);
    std::fill(row, row + begin, minus_infinity);
    std::fill(row + end, row + width, minus_infinity);
    for (std::size_t c = begin; rule.mask != nullptr && c < end; ++c) {
        row[c] = (*rule.mask)(i, first_panel_key + c) == 0.0 ? row[c] : minus_infinity;
    }
}

// The largest entry of a row, at least `floor`, and its smallest, NaN if the row holds a
// NaN; the width is a multiple of 16 (whole panels). Each running extreme is kept twice, for
// the even and the odd vectors of the row, so that a comparison waits on the one two
// vectors back rather than on the one just before.
struct RowRange {
    double largest = minus_infinity;
    double smallest = 0.0;
};

RowRange row_range(const double* row, std::size_t width, double floor)
{
    constexpr double infinity = std::numeric_limits<double>::infinity();
    Lanes largest_even = Lanes{} + floor;
    Lanes largest_odd = largest_even;
    Lanes smallest_even = Lanes{} + infinity;
    Lanes smallest_odd = smallest_even;
    Bits nan = {};  // all ones in a lane that has met a NaN
    for (std::size_t c = 0; c < width; c += 2 * lanes) {
        Lanes even;
        Lanes odd;
        std::memcpy(&even, row + c, sizeof(Lanes));
        std::memcpy(&odd, row + c + lanes, sizeof(Lanes));
        largest_even = even > largest_even ? even : largest_even;
        largest_odd = odd > largest_odd ? odd : largest_odd;
        smallest_even = even < smallest_even ? even : smallest_even;
        smallest_odd = odd < smallest_odd ? odd : smallest_odd;
        nan |= (even != even) | (odd != odd);
    }
    RowRange range{floor, infinity};
    bool any_nan = false;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        range.largest = std::max({range.largest, largest_even[lane], largest_odd[lane]});
        range.smallest = std::min({range.smallest, smallest_even[lane], smallest_odd[lane]});
        any_nan = any_nan || nan[lane] != 0;
    }
    range.smallest = any_nan ? std::numeric_limits<double>::quiet_NaN() : range.smallest;
    return range;
}

// Turns a row of scores into weights e^(s - μ) in place and returns their sum; the width
// is a multiple of 8, and a hidden key (-inf) weighs e^-inf = 0. NormalRange: every
// s - μ lies in [-708, 0], so the shorter exponential serves.
template <bool NormalRange>
double exponentiate_row(double* row, std::size_t width, double max)
{
    Lanes sums = {};
    for (std::size_t c = 0; c < width; c += lanes) {
        Lanes eight;
        std::memcpy(&eight, row + c, sizeof(Lanes));
        eight -= max;
        if constexpr (NormalRange) {
            exp_normal_range(eight);
        } else {
            exp_nonpositive(eight);
        }
        std::memcpy(row + c, &eight, sizeof(Lanes));
        sums += eight;
    }
    double sum = 0.0;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        sum += sums[lane];
    }
    return sum;
}

// The online softmax of the block, one pass over all its rows at a time, so that the
// rows' independent exponentials overlap in the processor: the new maxima, then the
// weights, then the state moved onto the new maxima.
void softmax_block(Scratch& scratch, std::size_t rows, std::size_t width, std::size_t value_cols)
{
    for (std::size_t r = 0; r < rows; ++r) {
        const RowRange range = row_range(&scratch.scores[r * scratch.score_cols], width, scratch.max[r]);
        scratch.new_max[r] = range.largest;
        scratch.smallest[r] = range.smallest;
    }
    for (std::size_t r = 0; r < rows; ++r) {
        const double max = scratch.new_max[r] == minus_infinity ? 0.0 : scratch.new_max[r];  // all hidden: weights 0
        // A row with a hidden key (-inf), a NaN or a score more than 708 below the running
        // maximum takes the exponential that handles them; the others, most rows, the shorter one.
        double* row = &scratch.scores[r * scratch.score_cols];
        scratch.block_sum[r] = scratch.smallest[r] - max >= fast_exp_normal_floor
                                   ? exponentiate_row<true>(row, width, max)
                                   : exponentiate_row<false>(row, width, max);
    }
    for (std::size_t r = 0; r < rows; ++r) {
        if (scratch.new_max[r] == scratch.max[r]) {
            scratch.sum[r] += scratch.block_sum[r];  // also a row that has seen nothing yet
            continue;
        }
        const double factor = fast_exp(scratch.max[r] - scratch.new_max[r]);
        scratch.sum[r] = scratch.sum[r] * factor + scratch.block_sum[r];
        scratch.max[r] = scratch.new_max[r];
        for (std::size_t d = 0; d < value_cols; ++d) {
            scratch.accumulator[r * value_cols + d] *= factor;
        }
    }
}

//> fast-block
// One key block for one query block: S = Q_r·K_cᵀ, hide keys, the online softmax, Õ += Ã·V_c.
// The products run over whole panels of 16 keys, from the panel that holds the block's
// first key to the one that holds its last; keys outside the block get weight 0.
void absorb_fast(const Operands& ops, const MaskRule& rule, const Block& block, Scratch& scratch)
{
    const std::size_t rows = round_up(block.last_query - block.first_query, tile_rows);
    const std::size_t first_panel_key = block.first_key / panel_width * panel_width;
    const std::size_t width = round_up(block.last_key, panel_width) - first_panel_key;
    multiply_panels<false>(rows, width / panel_width, ops.key_dim, &ops.q[block.first_query * ops.key_dim],
                           ops.key_dim, &ops.k[first_panel_key * ops.key_dim], ops.key_dim * panel_width,
                           scratch.scores.data(), scratch.score_cols);
    const std::size_t real_rows = block.last_query - block.first_query;  // the padding rows are never read
    // Most blocks hide nothing: no explicit mask, whole panels, and (under the causal rule)
    // every key at or before the block's first query.
    const bool whole_panels = first_panel_key == block.first_key && width == block.last_key - block.first_key;
    const bool all_visible = rule.mask == nullptr && whole_panels &&
                             (rule.masking != Masking::causal || block.last_key <= block.first_query + 1);
    for (std::size_t r = 0; !all_visible && r < real_rows; ++r) {
        hide_keys(rule, block, block.first_query + r, first_panel_key, &scratch.scores[r * scratch.score_cols], width);
    }
    softmax_block(scratch, real_rows, width, ops.value_cols);
    multiply_panels<true>(rows, ops.value_cols / panel_width, width, scratch.scores.data(), scratch.score_cols,
                          &ops.v[first_panel_key * panel_width], ops.padded_keys * panel_width,
                          scratch.accumulator.data(), ops.value_cols);
}
//< fast-block

void check_shapes(const Matrix& queries, const Matrix& keys, const Matrix& values, const TileSizes& tiles)
{
    check_attention_shapes("fast_attention", {.queries = queries, .keys = keys, .values = &values});
    if (tiles.query_block == 0 || tiles.key_block == 0) {
        throw std::invalid_argument(fmt::format("fast_attention: the blocks are {} queries by {} keys; each needs "
                                                "at least 1", tiles.query_block, tiles.key_block));
    }
}

// One query block over all its key blocks, into rows [first_query, last_query) of the outputs.
void attend_query_block(const Operands& ops, const MaskRule& rule, const TileSizes& tiles, std::size_t first_query,
                        std::size_t last_query, Scratch& scratch, Matrix& outputs)
{
    std::fill(scratch.accumulator.begin(), scratch.accumulator.end(), 0.0);
    std::fill(scratch.max.begin(), scratch.max.end(), minus_infinity);
    std::fill(scratch.sum.begin(), scratch.sum.end(), 0.0);
    for (std::size_t first_key = 0; first_key < ops.keys; first_key += tiles.key_block) {
        if (rule.masking == Masking::causal && first_key >= last_query) {
            break;  // every later key comes after every query of the block
        }
        std::size_t last_key = std::min(first_key + tiles.key_block, ops.keys);
        if (rule.masking == Masking::causal) {
            last_key = std::min(last_key, last_query);  // no query of the block sees a later key
        }
        absorb_fast(ops, rule, {first_query, last_query, first_key, last_key}, scratch);
    }
    for (std::size_t i = first_query; i < last_query; ++i) {
        const std::size_t r = i - first_query;
        const double sum = scratch.sum[r];
        double* output = outputs.data() + i * ops.value_dim;
        for (std::size_t d = 0; d < ops.value_dim; ++d) {
            output[d] = sum == 0.0 ? 0.0 : scratch.accumulator[r * ops.value_cols + d] / sum;
        }
    }
}

Matrix run_fast(const Operands& ops, const MaskRule& rule, const TileSizes& tiles)
{
    Matrix outputs(ops.queries, ops.value_dim);
    const auto query_blocks = static_cast<std::ptrdiff_t>((ops.queries + tiles.query_block - 1) / tiles.query_block);
#pragma omp parallel
    {
        Scratch scratch = make_scratch(ops, tiles);
        // Under the causal mask later blocks have more keys to visit, so the blocks are
        // handed out one at a time rather than in two equal halves.
#pragma omp for schedule(dynamic, 1)
        for (std::ptrdiff_t query_block = 0; query_block < query_blocks; ++query_block) {
            const std::size_t first_query = static_cast<std::size_t>(query_block) * tiles.query_block;
            attend_query_block(ops, rule, tiles, first_query, std::min(first_query + tiles.query_block, ops.queries),
                               scratch, outputs);
        }
    }
    return outputs;
}

}  // namespace

namespace {

// The online-softmax state of one decoding step over one slice of the cache.
struct DecodePart {
    double max = minus_infinity;
    double sum = 0.0;
    std::vector<double> accumulator = {};  // d_v
};

//> fast-decode
// One slice [begin, end) of the cache, 16 keys at a time: their scores, the online softmax
// and the weighted values. The query is already divided by √d_k.
void decode_slice(const KvCache& cache, const std::vector<double>& query, std::size_t begin, std::size_t end,
                  DecodePart& part)
{
    constexpr std::size_t chunk = 2 * lanes;
    const std::size_t d_k = cache.key_dim;
    const std::size_t d_v = cache.value_dim;
    part.accumulator.assign(d_v, 0.0);
    for (std::size_t first = begin; first < end; first += chunk) {
        const std::size_t count = std::min(chunk, end - first);
        Lanes scores[2] = {Lanes{} + minus_infinity, Lanes{} + minus_infinity};  // a missing key weighs 0
        double chunk_max = part.max;
        for (std::size_t j = 0; j < count; ++j) {
            const double* key = &cache.keys[(first + j) * d_k];
            double dot = 0.0;
#pragma omp simd reduction(+ : dot)
            for (std::size_t d = 0; d < d_k; ++d) {
                dot += query[d] * key[d];
            }
            scores[j / lanes][j % lanes] = dot;
            chunk_max = std::max(chunk_max, dot);
        }
        const double factor = part.max == chunk_max ? 1.0 : fast_exp(part.max - chunk_max);
        for (Lanes& eight : scores) {
            eight -= chunk_max;
            exp_nonpositive(eight);
        }
        const Lanes both = scores[0] + scores[1];
        double chunk_sum = 0.0;
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            chunk_sum += both[lane];
        }
        part.sum = part.sum * factor + chunk_sum;
        part.max = chunk_max;
        for (std::size_t d = 0; factor != 1.0 && d < d_v; ++d) {
            part.accumulator[d] *= factor;
        }
        for (std::size_t j = 0; j < count; ++j) {
            const double weight = scores[j / lanes][j % lanes];
            const double* value = &cache.values[(first + j) * d_v];
#pragma omp simd
            for (std::size_t d = 0; d < d_v; ++d) {
                part.accumulator[d] += weight * value[d];
            }
        }
    }
}
//< fast-decode

}  // namespace

Matrix fast_decode_step(KvCache& cache, const Matrix& query, const Matrix& key, const Matrix& value)
{
    if (!all_finite(query) || !all_finite(key) || !all_finite(value)) {
        return decode_step(cache, query, key, value);  // the plain step follows the edge rules
    }
    if (cache.key_dim == 0 && cache.keys.empty()) {
        cache.key_dim = key.cols();
        cache.value_dim = value.cols();
    }
    if (query.rows() != 1 || key.rows() != 1 || value.rows() != 1 || query.cols() != cache.key_dim ||
        key.cols() != cache.key_dim || value.cols() != cache.value_dim || cache.key_dim == 0) {
        throw ShapeError(fmt::format("fast_decode_step: q is {}, k is {} and v is {} but the cache holds keys of "
                                     "width {} and values of width {}; each must be one row of that width",
                                     shape(query), shape(key), shape(value), cache.key_dim, cache.value_dim));
    }
    for (std::size_t d = 0; d < cache.key_dim; ++d) {
        cache.keys.push_back(key(0, d));
    }
    for (std::size_t d = 0; d < cache.value_dim; ++d) {
        cache.values.push_back(value(0, d));
    }
    std::vector<double> scaled(cache.key_dim);
    const double scale = 1.0 / std::sqrt(static_cast<double>(cache.key_dim));
    for (std::size_t d = 0; d < cache.key_dim; ++d) {
        scaled[d] = query(0, d) * scale;
    }
    // Split-KV: each core takes one slice of the cache; the slices' states merge exactly.
#ifdef _OPENMP
    std::vector<DecodePart> parts(static_cast<std::size_t>(std::max(1, omp_get_max_threads())));
#else
    std::vector<DecodePart> parts(1);  // a build without OpenMP: one slice
#endif
    const std::size_t tokens = cache.length();
#pragma omp parallel for schedule(static, 1)
    for (std::ptrdiff_t p = 0; p < static_cast<std::ptrdiff_t>(parts.size()); ++p) {
        const auto part = static_cast<std::size_t>(p);
        decode_slice(cache, scaled, tokens * part / parts.size(), tokens * (part + 1) / parts.size(), parts[part]);
    }
    DecodePart merged = parts[0];
    for (std::size_t part = 1; part < parts.size(); ++part) {
        const double new_max = std::max(merged.max, parts[part].max);
        const double first_factor = merged.max == new_max ? 1.0 : fast_exp(merged.max - new_max);
        const double second_factor = parts[part].max == new_max ? 1.0 : fast_exp(parts[part].max - new_max);
        merged.sum = merged.sum * first_factor + parts[part].sum * second_factor;
        for (std::size_t d = 0; d < cache.value_dim; ++d) {
            merged.accumulator[d] = merged.accumulator[d] * first_factor + parts[part].accumulator[d] * second_factor;
        }
        merged.max = new_max;
    }
    Matrix output(1, cache.value_dim);
    for (std::size_t d = 0; d < cache.value_dim; ++d) {
        output(0, d) = merged.accumulator[d] / merged.sum;
    }
    return output;
}

Matrix fast_attention(const Matrix& queries, const Matrix& keys, const Matrix& values, Masking masking,
                      const TileSizes& tiles)
{
    check_shapes(queries, keys, values, tiles);
    if (!all_finite(queries) || !all_finite(keys) || !all_finite(values)) {
        const Matrix mask = masking == Masking::causal ? causal_mask(queries.rows(), keys.rows())
                                                        : Matrix(queries.rows(), keys.rows(), 0.0);
        return tiled_attention(queries, keys, values, mask, tiles);
    }
    return run_fast(copy_operands(queries, keys, values), {masking, nullptr}, tiles);
}

Matrix fast_attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask,
                      const TileSizes& tiles)
{
    check_shapes(queries, keys, values, tiles);
    check_attention_shapes("fast_attention", {.queries = queries, .keys = keys, .mask = &mask});
    for (std::size_t i = 0; i < mask.rows(); ++i) {
        for (std::size_t j = 0; j < mask.cols(); ++j) {
            if (mask(i, j) != 0.0 && mask(i, j) != minus_infinity) {
                throw std::invalid_argument(fmt::format("fast_attention: mask entry ({}, {}) is {}; each entry must "
                                                        "be 0 (takes part) or -inf (masked out)", i, j, mask(i, j)));
            }
        }
    }
    if (!all_finite(queries) || !all_finite(keys) || !all_finite(values)) {
        return tiled_attention(queries, keys, values, mask, tiles);
    }
    return run_fast(copy_operands(queries, keys, values), {Masking::none, &mask}, tiles);
}

}  // namespace sa
