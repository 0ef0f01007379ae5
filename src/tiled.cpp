#include "tiled.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attention_shapes.hpp"
#include "exercise.hpp"

namespace sa {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

}  // namespace

//> rescale-factor
double rescale_factor(double old_max, double new_max)
{
    // Equal maxima need no rescaling; this also avoids -inf - -inf and inf - inf, which are NaN.
    return old_max == new_max ? 1.0 : std::exp(old_max - new_max);
}

double shifted_exp(double score, double max)
{
    if (score == -std::numeric_limits<double>::infinity()) {
        return 0.0;  // masked out, even when everything is (μ = -inf)
    }
    return score == max ? 1.0 : std::exp(score - max);  // 1 also for a score of +inf under μ = +inf
}
//< rescale-factor

//> online-softmax-step
OnlineSoftmax online_softmax_step(OnlineSoftmax state, double score)
{
    // BEGIN SOLUTION online_softmax_step: chapter 13, Attention at scale
    const double new_max = std::fmax(state.max, score);  // fmax ignores a NaN score ...
    OnlineSoftmax next;
    next.max = new_max;
    // ... which then reaches the sum through e^(NaN - μ) = NaN.
    next.sum = state.sum * rescale_factor(state.max, new_max) + shifted_exp(score, new_max);
    return next;
    // END SOLUTION
}
//< online-softmax-step

PartialAttention empty_attention(std::size_t queries, std::size_t value_dim)
{
    PartialAttention state;
    state.max.assign(queries, minus_infinity);
    state.sum.assign(queries, 0.0);
    state.accumulator = Matrix(queries, value_dim, 0.0);
    return state;
}

//> absorb-block
void absorb_block(PartialAttention& state, const Matrix& queries, const Matrix& keys, const Matrix& values,
                  const Matrix& mask, const Block& block)
{
    // BEGIN SOLUTION absorb_block: chapter 13, Attention at scale
    check_attention_shapes("absorb_block", {.queries = queries, .keys = keys, .values = &values, .mask = &mask});
    if (block.first_query > block.last_query || block.last_query > queries.rows() ||
        block.first_key > block.last_key || block.last_key > keys.rows() || state.max.size() != queries.rows()) {
        throw ShapeError(fmt::format("absorb_block: the block of queries [{}, {}) and keys [{}, {}) does not fit "
                                     "Q {}, K {} and a state of {} rows", block.first_query, block.last_query,
                                     block.first_key, block.last_key, shape(queries), shape(keys), state.max.size()));
    }
    const double divisor = std::sqrt(static_cast<double>(queries.cols()));
    std::vector<double> block_scores(block.last_key - block.first_key);  // one row of the block: B_c numbers
    for (std::size_t i = block.first_query; i < block.last_query; ++i) {
        // s_ij = q_i · k_j / √d_k, or -inf where the mask hides key j.
        double block_max = minus_infinity;
        for (std::size_t j = block.first_key; j < block.last_key; ++j) {
            if (mask(i, j) != 0.0 && mask(i, j) != minus_infinity) {
                throw std::invalid_argument(fmt::format("absorb_block: mask entry ({}, {}) is {}; each entry must "
                                                        "be 0 (takes part) or -inf (masked out)", i, j, mask(i, j)));
            }
            double dot = 0.0;
            for (std::size_t d = 0; d < queries.cols(); ++d) {
                dot += queries(i, d) * keys(j, d);
            }
            const double score = mask(i, j) == 0.0 ? dot / divisor : minus_infinity;
            block_scores[j - block.first_key] = score;
            block_max = std::fmax(block_max, score);
        }
        // Move the running sum and output onto the new maximum, then add this block's keys.
        const double new_max = std::fmax(state.max[i], block_max);
        const double factor = rescale_factor(state.max[i], new_max);
        state.sum[i] *= factor;
        for (std::size_t d = 0; d < values.cols(); ++d) {
            state.accumulator(i, d) *= factor;
        }
        for (std::size_t j = block.first_key; j < block.last_key; ++j) {
            const double weight = shifted_exp(block_scores[j - block.first_key], new_max);
            state.sum[i] += weight;
            for (std::size_t d = 0; d < values.cols(); ++d) {
                state.accumulator(i, d) += weight * values(j, d);  // even a weight of 0: NaN must show
            }
        }
        state.max[i] = new_max;
    }
    // END SOLUTION
}
//< absorb-block

//> finish-attention
Matrix finish_attention(const PartialAttention& state)
{
    Matrix outputs = state.accumulator;
    for (std::size_t i = 0; i < outputs.rows(); ++i) {
        if (state.sum[i] == 0.0) {
            continue;  // no key to use: the accumulator holds zeros (or NaN from a NaN value)
        }
        for (std::size_t d = 0; d < outputs.cols(); ++d) {
            outputs(i, d) /= state.sum[i];
        }
    }
    return outputs;
}
//< finish-attention

Matrix state_table(const PartialAttention& state)
{
    Matrix table(state.max.size(), state.accumulator.cols() + 2);
    for (std::size_t i = 0; i < table.rows(); ++i) {
        table(i, 0) = state.max[i];
        table(i, 1) = state.sum[i];
        for (std::size_t d = 0; d < state.accumulator.cols(); ++d) {
            table(i, d + 2) = state.accumulator(i, d);
        }
    }
    return table;
}

//> merge-attention
PartialAttention merge_attention(const PartialAttention& first, const PartialAttention& second)
{
    // BEGIN SOLUTION merge_attention: chapter 13, Attention at scale
    if (first.max.size() != second.max.size() || first.accumulator.rows() != second.accumulator.rows() ||
        first.accumulator.cols() != second.accumulator.cols()) {
        throw ShapeError(fmt::format("merge_attention: the first state has {} rows and an output of {}, the second "
                                     "{} rows and {}; they must cover the same query rows and d_v",
                                     first.max.size(), shape(first.accumulator), second.max.size(),
                                     shape(second.accumulator)));
    }
    PartialAttention merged = first;
    for (std::size_t i = 0; i < first.max.size(); ++i) {
        const double new_max = std::fmax(first.max[i], second.max[i]);
        const double first_factor = rescale_factor(first.max[i], new_max);
        const double second_factor = rescale_factor(second.max[i], new_max);
        merged.max[i] = new_max;
        merged.sum[i] = first.sum[i] * first_factor + second.sum[i] * second_factor;
        for (std::size_t d = 0; d < merged.accumulator.cols(); ++d) {
            merged.accumulator(i, d) =
                first.accumulator(i, d) * first_factor + second.accumulator(i, d) * second_factor;
        }
    }
    return merged;
    // END SOLUTION
}
//< merge-attention

//> tiled-attention
Matrix tiled_attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask,
                       const TileSizes& tiles)
{
    //{ checks the shapes and that each block holds a row
    check_attention_shapes("tiled_attention", {.queries = queries, .keys = keys, .values = &values, .mask = &mask});
    if (tiles.query_block == 0 || tiles.key_block == 0) {
        throw std::invalid_argument(fmt::format("tiled_attention: the blocks are {} queries by {} keys; each needs "
                                                "at least 1", tiles.query_block, tiles.key_block));
    }
    //}
    PartialAttention state = empty_attention(queries.rows(), values.cols());
    for (std::size_t first_query = 0; first_query < queries.rows(); first_query += tiles.query_block) {
        const std::size_t last_query = std::min(first_query + tiles.query_block, queries.rows());
        for (std::size_t first_key = 0; first_key < keys.rows(); first_key += tiles.key_block) {
            const std::size_t last_key = std::min(first_key + tiles.key_block, keys.rows());
            absorb_block(state, queries, keys, values, mask, {first_query, last_query, first_key, last_key});
        }
    }
    return finish_attention(state);
}
//< tiled-attention

std::size_t KvCache::length() const
{
    return key_dim == 0 ? 0 : keys.size() / key_dim;
}

//> decode-step
Matrix decode_step(KvCache& cache, const Matrix& query, const Matrix& key, const Matrix& value)
{
    // BEGIN SOLUTION decode_step: chapter 13, Attention at scale
    if (cache.key_dim == 0 && cache.keys.empty()) {
        cache.key_dim = key.cols();
        cache.value_dim = value.cols();
    }
    if (query.rows() != 1 || key.rows() != 1 || value.rows() != 1 || query.cols() != cache.key_dim ||
        key.cols() != cache.key_dim || value.cols() != cache.value_dim || cache.key_dim == 0) {
        throw ShapeError(fmt::format("decode_step: q is {}, k is {} and v is {} but the cache holds keys of width "
                                     "{} and values of width {}; each must be one row of that width",
                                     shape(query), shape(key), shape(value), cache.key_dim, cache.value_dim));
    }
    // The new token's key and value join the cache; earlier rows are never touched again.
    for (std::size_t d = 0; d < cache.key_dim; ++d) {
        cache.keys.push_back(key(0, d));
    }
    for (std::size_t d = 0; d < cache.value_dim; ++d) {
        cache.values.push_back(value(0, d));
    }
    // One pass of the online softmax over the t cached tokens: 2·t·d_k + 2·t·d_v operations.
    const double divisor = std::sqrt(static_cast<double>(cache.key_dim));
    OnlineSoftmax running;
    std::vector<double> accumulator(cache.value_dim, 0.0);
    for (std::size_t j = 0; j < cache.length(); ++j) {
        double dot = 0.0;
        for (std::size_t d = 0; d < cache.key_dim; ++d) {
            dot += query(0, d) * cache.keys[j * cache.key_dim + d];
        }
        const double score = dot / divisor;
        const double new_max = std::fmax(running.max, score);
        const double factor = rescale_factor(running.max, new_max);  // 1 unless the maximum grew
        const double weight = shifted_exp(score, new_max);
        running.sum = running.sum * factor + weight;
        running.max = new_max;
        for (std::size_t d = 0; d < cache.value_dim; ++d) {
            accumulator[d] = accumulator[d] * factor + weight * cache.values[j * cache.value_dim + d];
        }
    }
    Matrix output(1, cache.value_dim);
    for (std::size_t d = 0; d < cache.value_dim; ++d) {
        output(0, d) = accumulator[d] / running.sum;
    }
    return output;
    // END SOLUTION
}
//< decode-step

bool agree(const Matrix& result, const Matrix& reference, double relative)
{
    if (result.rows() != reference.rows() || result.cols() != reference.cols()) {
        return false;
    }
    // Entries that are equal (the same infinity) or both NaN agree; every other entry is
    // measured by largest_difference(), against the largest finite entry of the reference.
    Matrix got = result;
    Matrix want = reference;
    Matrix finite = reference;
    for (std::size_t r = 0; r < reference.rows(); ++r) {
        for (std::size_t c = 0; c < reference.cols(); ++c) {
            if ((std::isnan(got(r, c)) && std::isnan(want(r, c))) || got(r, c) == want(r, c)) {
                got(r, c) = want(r, c) = 0.0;
            }
            finite(r, c) = std::isfinite(reference(r, c)) ? reference(r, c) : 0.0;
        }
    }
    return largest_difference(got, want) <= relative * largest_magnitude(finite);
}

//> operation-counts
std::uint64_t cached_step_operations(std::uint64_t tokens, std::uint64_t key_dim, std::uint64_t value_dim)
{
    return 2 * tokens * (key_dim + value_dim);  // t scores of width d_k, t value rows of width d_v
}

std::uint64_t recomputed_step_operations(std::uint64_t tokens, std::uint64_t key_dim, std::uint64_t value_dim)
{
    return tokens * (tokens + 1) * (key_dim + value_dim);  // query i sees i keys: sum of 2·i·(d_k + d_v)
}
//< operation-counts

}  // namespace sa
