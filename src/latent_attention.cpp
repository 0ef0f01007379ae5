#include "latent_attention.hpp"

#include <cmath>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dense.hpp"
#include "exercise.hpp"
#include "grouped_query.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "positions.hpp"

namespace sa {

namespace {

void need_rows(std::string_view name, const Matrix& matrix, std::size_t rows, std::string_view why)
{
    if (matrix.rows() != rows) {
        throw ShapeError(fmt::format("latent_widths: {} needs {} rows ({}), but {} is {}", name, rows, why, name,
                                     shape(matrix)));
    }
}

// The columns of a matrix as `heads` heads: their width, or a message naming the matrix.
std::size_t head_width(std::string_view name, const Matrix& matrix, std::size_t heads)
{
    if (matrix.cols() == 0 || matrix.cols() % heads != 0) {
        throw ShapeError(fmt::format("latent_widths: {} is {}, which does not split into {} heads", name,
                                     shape(matrix), heads));
    }
    return matrix.cols() / heads;
}

void check_queries(const Matrix& query_inputs, const LatentCache& cache, const Matrix& mask,
                   const LatentWidths& widths)
{
    if (query_inputs.cols() != widths.model) {
        throw ShapeError(fmt::format("latent_attention: the query inputs are {}, but W_Q has {} rows",
                                     shape(query_inputs), widths.model));
    }
    if (cache.latent.cols() != widths.latent || cache.rotary_keys.cols() != widths.rotary ||
        cache.latent.rows() != cache.rotary_keys.rows()) {
        throw ShapeError(fmt::format("latent_attention: the cache holds C {} and K^R {}, but the layer needs "
                                     "{} and {} columns on as many rows", shape(cache.latent),
                                     shape(cache.rotary_keys), widths.latent, widths.rotary));
    }
    if (mask.rows() != query_inputs.rows() || mask.cols() != cache.latent.rows()) {
        throw ShapeError(fmt::format("latent_attention: the mask needs to be {}×{} (a row per query, a column per "
                                     "cached token), but it is {}", query_inputs.rows(), cache.latent.rows(),
                                     shape(mask)));
    }
}

}  // namespace

Matrix interleave_heads(const Matrix& left, const Matrix& right, std::size_t heads, bool shared)
{
    const std::vector<Matrix> lefts = split_heads(left, heads);
    const std::vector<Matrix> rights = split_heads(right, shared ? 1 : heads);
    std::vector<Matrix> joined;
    for (std::size_t a = 0; a < heads; ++a) {
        joined.push_back(concat_heads({lefts[a], rights[shared ? 0 : a]}));
    }
    return concat_heads(joined);
}

std::vector<Matrix> deinterleave_heads(const Matrix& joined, std::size_t heads, std::size_t left)
{
    const std::size_t width = joined.cols() / heads;
    Matrix lefts(joined.rows(), heads * left);
    Matrix rights(joined.rows(), heads * (width - left));
    for (std::size_t r = 0; r < joined.rows(); ++r) {
        for (std::size_t a = 0; a < heads; ++a) {
            for (std::size_t c = 0; c < width; ++c) {
                (c < left ? lefts(r, a * left + c) : rights(r, a * (width - left) + c - left)) =
                    joined(r, a * width + c);
            }
        }
    }
    return {lefts, rights};
}

LatentWidths latent_widths(const LatentWeights& weights, std::size_t heads)
{
    if (heads == 0) {
        throw std::invalid_argument("latent_widths: the number of heads must be at least 1");
    }
    LatentWidths widths{weights.w_query.rows(), weights.w_down.cols(), head_width("W_Q", weights.w_query, heads),
                        weights.w_key_rotary.cols(), head_width("W_UV", weights.w_up_value, heads),
                        weights.w_out.cols()};
    if (widths.latent == 0 || widths.latent > widths.model) {
        throw std::invalid_argument(fmt::format("latent_widths: W_DKV is {}, a latent of d_c = {} for d = {}; "
                                                "the latent is narrower than the model, 1 ≤ d_c ≤ d",
                                                shape(weights.w_down), widths.latent, widths.model));
    }
    if (widths.rotary == 0 || widths.rotary % 2 != 0) {
        throw ShapeError(fmt::format("latent_widths: W_KR is {}; the rotary key turns pairs, so d_R must be even "
                                     "and at least 2", shape(weights.w_key_rotary)));
    }
    need_rows("W_QR", weights.w_query_rotary, widths.model, "one per model feature, d");
    need_rows("W_DKV", weights.w_down, widths.model, "one per model feature, d");
    need_rows("W_KR", weights.w_key_rotary, widths.model, "one per model feature, d");
    need_rows("W_UK", weights.w_up_key, widths.latent, fmt::format("one per latent feature, d_c = {}", widths.latent));
    need_rows("W_UV", weights.w_up_value, widths.latent, fmt::format("one per latent feature, d_c = {}", widths.latent));
    need_rows("W_O", weights.w_out, heads * widths.value, "one per column of the heads' values side by side");
    if (weights.w_up_key.cols() != weights.w_query.cols() || weights.w_query_rotary.cols() != heads * widths.rotary) {
        throw ShapeError(fmt::format("latent_widths: W_Q is {} and W_UK {}, W_KR {} and W_QR {}; the content keys "
                                     "need W_Q's columns and the rotary queries {} heads of d_R = {}",
                                     shape(weights.w_query), shape(weights.w_up_key), shape(weights.w_key_rotary),
                                     shape(weights.w_query_rotary), heads, widths.rotary));
    }
    return widths;
}

Matrix rope_heads(const Matrix& vectors, std::size_t heads, std::size_t first_position)
{
    if (heads == 0 || vectors.cols() % heads != 0 || (vectors.cols() / heads) % 2 != 0 || vectors.cols() == 0) {
        throw ShapeError(fmt::format("rope_heads: {} does not split into {} heads of an even width", shape(vectors),
                                     heads));
    }
    std::vector<Matrix> turned;
    for (const Matrix& head : split_heads(vectors, heads)) {
        turned.push_back(rope(head, first_position));
    }
    return concat_heads(turned);
}

Matrix rope_heads_backward(const Matrix& d_vectors, std::size_t heads, std::size_t first_position)
{
    Matrix flipped = d_vectors;  // J: the second feature of every pair negated
    for (std::size_t r = 0; r < flipped.rows(); ++r) {
        for (std::size_t c = 1; c < flipped.cols(); c += 2) {
            flipped(r, c) = -flipped(r, c);
        }
    }
    Matrix turned = rope_heads(flipped, heads, first_position);
    for (std::size_t r = 0; r < turned.rows(); ++r) {
        for (std::size_t c = 1; c < turned.cols(); c += 2) {
            turned(r, c) = -turned(r, c);
        }
    }
    return turned;
}

//> latent-cache
LatentCache latent_cache(const Matrix& inputs, const LatentWeights& weights, std::size_t first_position)
{
    //{ checks that X, W_DKV and W_KR fit
    if (inputs.cols() != weights.w_down.rows() || inputs.cols() != weights.w_key_rotary.rows() ||
        weights.w_key_rotary.cols() % 2 != 0) {
        throw ShapeError(fmt::format("latent_cache: X is {}, W_DKV {} and W_KR {}; both need a row per column of X, "
                                     "and W_KR an even number of columns", shape(inputs), shape(weights.w_down),
                                     shape(weights.w_key_rotary)));
    }
    //}
    return {multiply(inputs, weights.w_down),                                   // C = X W_DKV
            rope(multiply(inputs, weights.w_key_rotary), first_position)};      // K^R, turned once, when cached
}
//< latent-cache

//> latent-unfolded
LatentHeads latent_heads(const Matrix& query_inputs, std::size_t query_position, const LatentCache& cache,
                         const LatentWeights& weights, std::size_t heads)
{
    //{ checks the widths, the inputs and the cache
    const LatentWidths widths = latent_widths(weights, heads);
    check_queries(query_inputs, cache, Matrix(query_inputs.rows(), cache.latent.rows(), 0.0), widths);
    //}
    const Matrix content_keys = multiply(cache.latent, weights.w_up_key);  // K^C = C W_UK, h heads
    const Matrix content_queries = multiply(query_inputs, weights.w_query);
    const Matrix rotary_queries = rope_heads(multiply(query_inputs, weights.w_query_rotary), heads, query_position);
    return {interleave_heads(content_queries, rotary_queries, heads, false),
            interleave_heads(content_keys, cache.rotary_keys, heads, true),  // k^R in every head
            multiply(cache.latent, weights.w_up_value)};                     // V = C W_UV, h heads
}

Matrix latent_attention(const Matrix& query_inputs, std::size_t query_position, const LatentCache& cache,
                        const LatentWeights& weights, const Matrix& mask, std::size_t heads)
{
    // BEGIN SOLUTION latent_attention: chapter 20, Latent keys and values
    check_queries(query_inputs, cache, mask, latent_widths(weights, heads));
    const LatentHeads unfolded = latent_heads(query_inputs, query_position, cache, weights, heads);
    // Head a: query [q^C_a | q^R_a], key [k^C_a | k^R], d_h + d_R wide; chapter 9 scales by its root.
    return multi_head_attention(unfolded.queries, unfolded.keys, unfolded.values, mask, heads, weights.w_out);
    // END SOLUTION
}
//< latent-unfolded

//> fold-latent
FoldedWeights fold_latent(const LatentWeights& weights, std::size_t heads)
{
    // BEGIN SOLUTION fold_latent: chapter 20, Latent keys and values
    const LatentWidths widths = latent_widths(weights, heads);
    const std::vector<Matrix> query_heads = split_heads(weights.w_query, heads);
    const std::vector<Matrix> key_heads = split_heads(weights.w_up_key, heads);
    const std::vector<Matrix> value_heads = split_heads(weights.w_up_value, heads);
    std::vector<Matrix> query_latent;
    Matrix out_latent(heads * widths.latent, widths.out);
    for (std::size_t a = 0; a < heads; ++a) {
        query_latent.push_back(multiply_transposed_rhs(query_heads[a], key_heads[a]));  // W_Q,a W_UK,aᵀ
        Matrix out_rows(widths.value, widths.out);  // head a's rows of W_O
        for (std::size_t r = 0; r < widths.value; ++r) {
            for (std::size_t c = 0; c < widths.out; ++c) {
                out_rows(r, c) = weights.w_out(a * widths.value + r, c);
            }
        }
        const Matrix folded = multiply(value_heads[a], out_rows);  // W_UV,a W_O,a
        for (std::size_t r = 0; r < widths.latent; ++r) {
            for (std::size_t c = 0; c < widths.out; ++c) {
                out_latent(a * widths.latent + r, c) = folded(r, c);
            }
        }
    }
    return {concat_heads(query_latent), out_latent};
    // END SOLUTION
}
//< fold-latent

//> latent-folded
Matrix latent_attention_folded(const Matrix& query_inputs, std::size_t query_position, const LatentCache& cache,
                               const LatentWeights& weights, const FoldedWeights& folded, const Matrix& mask,
                               std::size_t heads)
{
    const LatentWidths widths = latent_widths(weights, heads);
    check_queries(query_inputs, cache, mask, widths);
    const Matrix latent_queries = multiply(query_inputs, folded.w_query_latent);  // x W̃_Q,a: d_c wide per head
    const Matrix rotary_queries = rope_heads(multiply(query_inputs, weights.w_query_rotary), heads, query_position);
    Matrix queries = interleave_heads(latent_queries, rotary_queries, heads, false);
    // grouped_query_attention() divides by √(d_c + d_R); the scores are to be divided by √(d_h + d_R).
    const double rescale = std::sqrt(static_cast<double>(widths.latent + widths.rotary) /
                                     static_cast<double>(widths.head + widths.rotary));
    for (std::size_t i = 0; i < queries.rows() * queries.cols(); ++i) {
        queries.data()[i] *= rescale;
    }
    // One key/value head for all h query heads: the key is the cache row [c | k^R], the value c.
    return grouped_query_attention(queries, concat_heads({cache.latent, cache.rotary_keys}), cache.latent, mask,
                                   heads, 1, folded.w_out_latent);
}
//< latent-folded

//> rotated-fold
Matrix rotated_fold(const Matrix& w_query_head, const Matrix& w_up_key_head, std::size_t query_position,
                    std::size_t key_position)
{
    //{ checks that the two heads have one even width
    if (w_query_head.cols() != w_up_key_head.cols() || w_query_head.cols() % 2 != 0 || w_query_head.cols() == 0) {
        throw ShapeError(fmt::format("rotated_fold: W_Q,a is {} and W_UK,a {}; they need one even width",
                                     shape(w_query_head), shape(w_up_key_head)));
    }
    //}
    const auto turn_rows = [](const Matrix& matrix, std::size_t position) {  // M R_p: every row at position p
        std::vector<Matrix> rows;
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            rows.push_back(rope(row_vector(matrix, r), position));
        }
        return stack_rows(rows);
    };
    return multiply_transposed_rhs(turn_rows(w_query_head, query_position), turn_rows(w_up_key_head, key_position));
}
//< rotated-fold

Matrix latent_self_attention(const Matrix& inputs, const LatentWeights& weights, const Matrix& mask,
                             std::size_t heads)
{
    return latent_attention(inputs, 0, latent_cache(inputs, weights, 0), weights, mask, heads);
}

//> latent-backward
LatentGrads latent_self_attention_backward(const Matrix& inputs, const LatentWeights& weights, const Matrix& mask,
                                           std::size_t heads, const Matrix& d_outputs)
{
    //{ checks the widths, X and dY
    const LatentWidths widths = latent_widths(weights, heads);
    const LatentCache cache = latent_cache(inputs, weights, 0);
    check_queries(inputs, cache, mask, widths);
    if (d_outputs.rows() != inputs.rows() || d_outputs.cols() != widths.out) {
        throw ShapeError(fmt::format("latent_self_attention_backward: the outputs are {}×{} but dY is {}",
                                     inputs.rows(), widths.out, shape(d_outputs)));
    }
    //}
    const LatentHeads unfolded = latent_heads(inputs, 0, cache, weights, heads);
    const MultiHeadGrads g = multi_head_backward(unfolded.queries, unfolded.keys, unfolded.values, mask, heads,
                                                 weights.w_out, d_outputs);
    const std::vector<Matrix> d_query = deinterleave_heads(g.d_queries, heads, widths.head);  // dQ^C, dQ^R
    const std::vector<Matrix> d_key = deinterleave_heads(g.d_keys, heads, widths.head);       // dK^C, each dK^R_a
    const Matrix d_rotary_queries = rope_heads_backward(d_query[1], heads, 0);
    const Matrix d_rotary_keys = rope_heads_backward(sum_kv_heads(d_key[1], 1, heads), 1, 0);  // Σ_a dK^R_a
    LatentGrads grads;
    LatentWeights& d = grads.d_weights;
    d.w_out = g.d_w_out;
    d.w_query = multiply_transposed_lhs(inputs, d_query[0]);
    d.w_query_rotary = multiply_transposed_lhs(inputs, d_rotary_queries);
    d.w_key_rotary = multiply_transposed_lhs(inputs, d_rotary_keys);
    d.w_up_key = multiply_transposed_lhs(cache.latent, d_key[0]);
    d.w_up_value = multiply_transposed_lhs(cache.latent, g.d_values);
    Matrix d_latent = multiply_transposed_rhs(d_key[0], weights.w_up_key);
    add_in_place(d_latent, multiply_transposed_rhs(g.d_values, weights.w_up_value));
    d.w_down = multiply_transposed_lhs(inputs, d_latent);
    grads.d_inputs = multiply_transposed_rhs(d_query[0], weights.w_query);
    add_in_place(grads.d_inputs, multiply_transposed_rhs(d_rotary_queries, weights.w_query_rotary));
    add_in_place(grads.d_inputs, multiply_transposed_rhs(d_latent, weights.w_down));
    add_in_place(grads.d_inputs, multiply_transposed_rhs(d_rotary_keys, weights.w_key_rotary));
    return grads;
}
//< latent-backward

//> latent-cache-bytes
std::uint64_t latent_cache_bytes(std::size_t layers, std::size_t latent_width, std::size_t rotary_width,
                                 std::size_t positions, std::size_t bytes_per_number)
{
    // BEGIN SOLUTION latent_cache_bytes: chapter 20, Latent keys and values
    return static_cast<std::uint64_t>(layers) * (static_cast<std::uint64_t>(latent_width) + rotary_width) *
           positions * bytes_per_number;
    // END SOLUTION
}
//< latent-cache-bytes

}  // namespace sa
