#include "fast_attention.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attention_shapes.hpp"
#include "masking.hpp"

namespace sa {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// The inputs, copied once into plain row-major arrays the loops can stream through.
struct Operands {
    std::size_t queries = 0;     // n
    std::size_t keys = 0;        // m
    std::size_t key_dim = 0;     // d_k
    std::size_t value_dim = 0;   // d_v
    std::vector<double> q = {};  // n×d_k, already divided by √d_k
    std::vector<double> k = {};  // m×d_k
    std::vector<double> v = {};  // m×d_v
};

Operands copy_operands(const Matrix& queries, const Matrix& keys, const Matrix& values)
{
    Operands ops{queries.rows(), keys.rows(), queries.cols(), values.cols()};
    const double scale = 1.0 / std::sqrt(static_cast<double>(ops.key_dim));
    ops.q.resize(ops.queries * ops.key_dim);
    ops.k.resize(ops.keys * ops.key_dim);
    ops.v.resize(ops.keys * ops.value_dim);
    for (std::size_t i = 0; i < ops.queries; ++i) {
        for (std::size_t d = 0; d < ops.key_dim; ++d) {
            ops.q[i * ops.key_dim + d] = queries(i, d) * scale;
        }
    }
    for (std::size_t j = 0; j < ops.keys; ++j) {
        for (std::size_t d = 0; d < ops.key_dim; ++d) {
            ops.k[j * ops.key_dim + d] = keys(j, d);
        }
        for (std::size_t d = 0; d < ops.value_dim; ++d) {
            ops.v[j * ops.value_dim + d] = values(j, d);
        }
    }
    return ops;
}

bool all_finite(const Matrix& matrix)
{
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            if (!std::isfinite(matrix(r, c))) {
                return false;
            }
        }
    }
    return true;
}

//> micro-kernel
// C (4×8) += A (4×depth) · B (depth×8), where B is a panel: its 8 columns stored row
// after row, so that the loop reads it front to back. The 4×8 sums live in eight
// registers of four doubles each for the whole depth, and each number loaded from B
// serves four rows.
using Lanes = double __attribute__((vector_size(32)));  // four doubles: one 256-bit register
constexpr std::size_t tile_rows = 4;
constexpr std::size_t panel_width = 8;

void multiply_tile(const double* a, std::size_t lda, const double* panel, std::size_t depth, double* c,
                   std::size_t ldc)
{
    Lanes sums[tile_rows][2] = {};
    for (std::size_t k = 0; k < depth; ++k) {
        Lanes left;
        Lanes right;
        std::memcpy(&left, panel + k * panel_width, sizeof(Lanes));
        std::memcpy(&right, panel + k * panel_width + 4, sizeof(Lanes));
        for (std::size_t r = 0; r < tile_rows; ++r) {
            const double a_rk = a[r * lda + k];
            sums[r][0] += a_rk * left;
            sums[r][1] += a_rk * right;
        }
    }
    for (std::size_t r = 0; r < tile_rows; ++r) {
        for (std::size_t col = 0; col < 4; ++col) {
            c[r * ldc + col] += sums[r][0][col];
            c[r * ldc + 4 + col] += sums[r][1][col];
        }
    }
}
//< micro-kernel

// C (rows×8·panels) += A (rows×depth) · B, B given as panels of 8 columns each;
// rows is a multiple of 4 (the blocks are padded).
void multiply_panels(std::size_t rows, std::size_t panels, std::size_t depth, const double* a, std::size_t lda,
                     const double* b_panels, std::size_t panel_stride, double* c, std::size_t ldc)
{
    for (std::size_t p = 0; p < panels; ++p) {  // one panel of B stays in the L1 cache while A streams past
        for (std::size_t r = 0; r < rows; r += tile_rows) {
            multiply_tile(a + r * lda, lda, b_panels + p * panel_stride, depth, c + r * ldc + p * panel_width, ldc);
        }
    }
}

std::size_t round_up(std::size_t count, std::size_t multiple)
{
    return (count + multiple - 1) / multiple * multiple;
}

//> fast-exp
// e^x for x <= 0 on four numbers at once, as 2^k · e^r with k = round(x / ln 2) and
// |r| <= ln(2)/2: e^r from its Taylor series to r^13/13! (truncated there, it is off by
// less than 1e-17 relative) and 2^k written straight into the exponent bits. Only
// arithmetic, comparisons and bit operations, so each line is one vector instruction.
// Below -708 the result would be a subnormal number; it is taken as 0, as is e^-inf.
using Bits = std::uint64_t __attribute__((vector_size(32)));

Lanes exp_nonpositive(Lanes x)
{
    constexpr double log2e = 1.4426950408889634;
    constexpr double ln2_high = 0.693147180369123816490;  // ln 2 in two parts, so that k·ln2_high is exact
    constexpr double ln2_low = 1.90821492927058770002e-10;
    constexpr double round_shift = 6755399441055744.0;    // 1.5·2^52: adding it rounds to an integer
    constexpr double inverse_factorials[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                             1.0 / 362880.0,    1.0 / 40320.0,    1.0 / 5040.0,
                                             1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,
                                             1.0 / 6.0,         1.0 / 2.0,        1.0,
                                             1.0};
    const Lanes lowest = Lanes{} - 708.0;
    const Lanes clamped = x < lowest ? lowest : x;
    const Lanes shifted = clamped * log2e + round_shift;  // k + 1.5·2^52, k in the low bits
    const Lanes k = shifted - round_shift;
    const Lanes r = (clamped - k * ln2_high) - k * ln2_low;
    Lanes series = Lanes{} + 1.0 / 6227020800.0;  // 1/13!
    for (const double coefficient : inverse_factorials) {
        series = series * r + coefficient;
    }
    const Bits power_bits = (std::bit_cast<Bits>(shifted) + 1023) << 52;  // 2^k: k + 1023 in the exponent
    const Lanes result = series * std::bit_cast<Lanes>(power_bits);
    return x < lowest ? Lanes{} : result;
}

double exp_nonpositive(double x)
{
    return exp_nonpositive(Lanes{} + x)[0];
}
//< fast-exp

// Per core: one block of queries, one block of keys and values packed into panels, one
// block of scores and the state of the query block. The rows are padded to a multiple
// of 4 and the columns to a multiple of 8, so that the products need no edge cases.
struct Scratch {
    std::size_t rows = 0;                  // B_r rounded up to a multiple of 4
    std::size_t score_cols = 0;            // B_c rounded up to a multiple of 8
    std::size_t value_cols = 0;            // d_v rounded up to a multiple of 8
    std::size_t key_rows = 0;              // B_c
    std::vector<double> queries = {};      // rows×d_k
    std::vector<double> key_panels = {};   // (score_cols/8) panels of d_k×8: Kᵀ of the block
    std::vector<double> value_panels = {}; // (value_cols/8) panels of B_c×8: V of the block
    std::vector<double> scores = {};       // rows×score_cols
    std::vector<double> accumulator = {};  // rows×value_cols
    std::vector<double> max = {};          // rows
    std::vector<double> sum = {};          // rows
};

Scratch make_scratch(const Operands& ops, const TileSizes& tiles)
{
    Scratch scratch;
    scratch.rows = round_up(std::min(tiles.query_block, ops.queries), tile_rows);
    scratch.key_rows = std::min(tiles.key_block, ops.keys);
    scratch.score_cols = round_up(scratch.key_rows, panel_width);
    scratch.value_cols = round_up(ops.value_dim, panel_width);
    scratch.queries.assign(scratch.rows * ops.key_dim, 0.0);
    scratch.key_panels.assign(scratch.score_cols * ops.key_dim, 0.0);
    scratch.value_panels.assign(scratch.value_cols * scratch.key_rows, 0.0);
    scratch.scores.assign(scratch.rows * scratch.score_cols, 0.0);
    scratch.accumulator.assign(scratch.rows * scratch.value_cols, 0.0);
    scratch.max.assign(scratch.rows, minus_infinity);
    scratch.sum.assign(scratch.rows, 0.0);
    return scratch;
}

// Which keys each query may use: the explicit mask, or the causal rule, or all.
struct MaskRule {
    Masking masking = Masking::none;
    const Matrix* mask = nullptr;
};

void pack_keys_and_values(const Operands& ops, std::size_t first_key, std::size_t last_key, Scratch& scratch)
{
    std::fill(scratch.key_panels.begin(), scratch.key_panels.end(), 0.0);
    for (std::size_t j = 0; j < last_key - first_key; ++j) {
        double* key_panel = &scratch.key_panels[j / panel_width * ops.key_dim * panel_width + j % panel_width];
        for (std::size_t d = 0; d < ops.key_dim; ++d) {
            key_panel[d * panel_width] = ops.k[(first_key + j) * ops.key_dim + d];
        }
        for (std::size_t d = 0; d < ops.value_dim; ++d) {
            scratch.value_panels[d / panel_width * scratch.key_rows * panel_width + j * panel_width + d % panel_width] =
                ops.v[(first_key + j) * ops.value_dim + d];
        }
    }
}

//> fast-block
// One key block for one query block: S = Q_r·K_cᵀ, mask, the online softmax, Õ += Ã·V_c.
void absorb_fast(const Operands& ops, const MaskRule& rule, const Block& block, Scratch& scratch)
{
    const std::size_t rows = block.last_query - block.first_query;
    const std::size_t cols = block.last_key - block.first_key;
    pack_keys_and_values(ops, block.first_key, block.last_key, scratch);
    std::fill(scratch.scores.begin(), scratch.scores.end(), 0.0);
    multiply_panels(scratch.rows, round_up(cols, panel_width) / panel_width, ops.key_dim, scratch.queries.data(),
                    ops.key_dim, scratch.key_panels.data(), ops.key_dim * panel_width, scratch.scores.data(),
                    scratch.score_cols);
    const bool diagonal = rule.masking == Masking::causal && block.last_key > block.first_query + 1;
    for (std::size_t r = 0; r < rows; ++r) {
        double* row = &scratch.scores[r * scratch.score_cols];
        const std::size_t i = block.first_query + r;
        if (rule.mask != nullptr) {
            for (std::size_t c = 0; c < cols; ++c) {
                row[c] = (*rule.mask)(i, block.first_key + c) == 0.0 ? row[c] : minus_infinity;
            }
        } else if (diagonal) {
            for (std::size_t c = i + 1 > block.first_key ? i + 1 - block.first_key : 0; c < cols; ++c) {
                row[c] = minus_infinity;  // key after query i
            }
        }
        double new_max = scratch.max[r];
#pragma omp simd reduction(max : new_max)
        for (std::size_t c = 0; c < cols; ++c) {
            new_max = row[c] > new_max ? row[c] : new_max;
        }
        if (new_max == minus_infinity) {
            std::fill(row, row + cols, 0.0);  // nothing visible yet: every weight is 0
            continue;
        }
        const double factor = exp_nonpositive(scratch.max[r] - new_max);
        // Ã = e^(S - μ), four at a time; the padding after the last key is -inf, weight 0.
        std::fill(row + cols, row + round_up(cols, 4), minus_infinity);
        Lanes block_sums = {};
        for (std::size_t c = 0; c < cols; c += 4) {
            Lanes four;
            std::memcpy(&four, row + c, sizeof(Lanes));
            four = exp_nonpositive(four - new_max);
            std::memcpy(row + c, &four, sizeof(Lanes));
            block_sums += four;
        }
        const double block_sum = (block_sums[0] + block_sums[1]) + (block_sums[2] + block_sums[3]);
        scratch.sum[r] = scratch.sum[r] * factor + block_sum;
        scratch.max[r] = new_max;
        for (std::size_t d = 0; d < ops.value_dim; ++d) {
            scratch.accumulator[r * scratch.value_cols + d] *= factor;
        }
    }
    multiply_panels(scratch.rows, scratch.value_cols / panel_width, cols, scratch.scores.data(), scratch.score_cols,
                    scratch.value_panels.data(), scratch.key_rows * panel_width, scratch.accumulator.data(),
                    scratch.value_cols);
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
            const std::size_t last_query = std::min(first_query + tiles.query_block, ops.queries);
            std::fill(scratch.queries.begin(), scratch.queries.end(), 0.0);
            std::copy(ops.q.begin() + static_cast<std::ptrdiff_t>(first_query * ops.key_dim),
                      ops.q.begin() + static_cast<std::ptrdiff_t>(last_query * ops.key_dim), scratch.queries.begin());
            std::fill(scratch.accumulator.begin(), scratch.accumulator.end(), 0.0);
            std::fill(scratch.max.begin(), scratch.max.end(), minus_infinity);
            std::fill(scratch.sum.begin(), scratch.sum.end(), 0.0);
            for (std::size_t first_key = 0; first_key < ops.keys; first_key += tiles.key_block) {
                if (rule.masking == Masking::causal && first_key >= last_query) {
                    break;  // every later key comes after every query of the block
                }
                const std::size_t last_key = std::min(first_key + tiles.key_block, ops.keys);
                absorb_fast(ops, rule, {first_query, last_query, first_key, last_key}, scratch);
            }
            for (std::size_t i = first_query; i < last_query; ++i) {
                const std::size_t r = i - first_query;
                const double sum = scratch.sum[r];
                for (std::size_t d = 0; d < ops.value_dim; ++d) {
                    outputs(i, d) = sum == 0.0 ? 0.0 : scratch.accumulator[r * scratch.value_cols + d] / sum;
                }
            }
        }
    }
    return outputs;
}

}  // namespace

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
