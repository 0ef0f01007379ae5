#include "grouped_query.hpp"

#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "attention.hpp"
#include "exercise.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

namespace {

// h and h_kv themselves: both at least 1, and the groups of equal size.
void check_head_counts(std::string_view operation, std::size_t query_heads, std::size_t kv_heads)
{
    if (query_heads == 0) {
        throw std::invalid_argument(fmt::format("{}: the number of query heads must be at least 1", operation));
    }
    if (kv_heads == 0) {
        throw std::invalid_argument(fmt::format("{}: the number of key/value heads must be at least 1", operation));
    }
    if (query_heads % kv_heads != 0) {
        throw std::invalid_argument(fmt::format("{}: {} query heads do not split into {} equal groups; the number of "
                                                "key/value heads must divide the number of query heads ({})",
                                                operation, query_heads, kv_heads, query_heads));
    }
}

// The width of one of `heads` heads of a matrix, or a message naming the shape.
std::size_t width_of_heads(std::string_view operation, std::string_view what, const Matrix& matrix, std::size_t heads,
                           std::string_view kind)
{
    if (matrix.cols() == 0 || matrix.cols() % heads != 0) {
        throw ShapeError(
            fmt::format("{}: {} is {}, which does not split into {} {} heads; its {} columns are not a multiple of {}",
                        operation, what, shape(matrix), heads, kind, matrix.cols(), heads));
    }
    return matrix.cols() / heads;
}

// Every shape up front, named as the caller wrote it.
void check_grouped_shapes(std::string_view operation, const Matrix& queries, const Matrix& keys, const Matrix& values,
                          const Matrix& mask, std::size_t query_heads, std::size_t kv_heads, const Matrix& w_out)
{
    check_head_counts(operation, query_heads, kv_heads);
    const std::size_t query_width = width_of_heads(operation, "Q", queries, query_heads, "query");
    if (keys.cols() != kv_heads * query_width) {
        throw ShapeError(fmt::format(
            "{}: Q is {}, {} query heads of width {}, so K needs {} key heads of the same width ({}×{}), but K is {}",
            operation, shape(queries), query_heads, query_width, kv_heads, keys.rows(), kv_heads * query_width,
            shape(keys)));
    }
    const std::size_t value_width = width_of_heads(operation, "V", values, kv_heads, "value");
    if (values.rows() != keys.rows()) {
        throw ShapeError(fmt::format("{}: K is {} but V is {}; K and V need one row per key each", operation,
                                     shape(keys), shape(values)));
    }
    if (mask.rows() != queries.rows() || mask.cols() != keys.rows()) {
        throw ShapeError(fmt::format(
            "{}: Q is {} and K is {}, so the mask needs to be {}×{} (a row per query, a column per key), but it is {}",
            operation, shape(queries), shape(keys), queries.rows(), keys.rows(), shape(mask)));
    }
    if (w_out.rows() != query_heads * value_width) {
        throw ShapeError(fmt::format("{}: V is {}, {} value heads of width {}, so the {} query heads' outputs side by "
                                     "side are {} wide and W_O needs {} rows, but W_O is {}",
                                     operation, shape(values), kv_heads, value_width, query_heads,
                                     query_heads * value_width, query_heads * value_width, shape(w_out)));
    }
}

// A shared head's gradient: the gradients of its query heads, added one after the other.
void add_into(Matrix& sum, const Matrix& term)
{
    for (std::size_t r = 0; r < sum.rows(); ++r) {
        for (std::size_t c = 0; c < sum.cols(); ++c) {
            sum(r, c) += term(r, c);
        }
    }
}

}  // namespace

std::size_t kv_head_of(std::size_t query_head, std::size_t query_heads, std::size_t kv_heads)
{
    check_head_counts("kv_head_of", query_heads, kv_heads);
    if (query_head >= query_heads) {
        throw std::invalid_argument(fmt::format("kv_head_of: query head {} does not exist; there are {} (0 to {})",
                                                query_head, query_heads, query_heads - 1));
    }
    return query_head / (query_heads / kv_heads);  // groups of h/h_kv consecutive query heads
}

//> repeat-kv-heads
Matrix repeat_kv_heads(const Matrix& matrix, std::size_t kv_heads, std::size_t query_heads)
{
    // BEGIN SOLUTION repeat_kv_heads: chapter 18, Grouped queries
    check_head_counts("repeat_kv_heads", query_heads, kv_heads);
    const std::size_t width = width_of_heads("repeat_kv_heads", "the matrix", matrix, kv_heads, "key/value");
    Matrix repeated(matrix.rows(), query_heads * width);
    for (std::size_t head = 0; head < query_heads; ++head) {
        const std::size_t source = kv_head_of(head, query_heads, kv_heads);  // the group's shared head
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                repeated(r, head * width + c) = matrix(r, source * width + c);
            }
        }
    }
    return repeated;
    // END SOLUTION
}
//< repeat-kv-heads

Matrix sum_kv_heads(const Matrix& repeated, std::size_t kv_heads, std::size_t query_heads)
{
    check_head_counts("sum_kv_heads", query_heads, kv_heads);
    const std::size_t width = width_of_heads("sum_kv_heads", "the gradient", repeated, query_heads, "query");
    Matrix summed(repeated.rows(), kv_heads * width, 0.0);
    for (std::size_t head = 0; head < query_heads; ++head) {  // in the order of the query heads
        const std::size_t target = kv_head_of(head, query_heads, kv_heads);
        for (std::size_t r = 0; r < repeated.rows(); ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                summed(r, target * width + c) += repeated(r, head * width + c);
            }
        }
    }
    return summed;
}

//> grouped-query-attention
Matrix grouped_query_attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask,
                               std::size_t query_heads, std::size_t kv_heads, const Matrix& w_out)
{
    // BEGIN SOLUTION grouped_query_attention: chapter 18, Grouped queries
    check_grouped_shapes("grouped_query_attention", queries, keys, values, mask, query_heads, kv_heads, w_out);
    const std::vector<Matrix> query_slices = split_heads(queries, query_heads);  // h heads
    const std::vector<Matrix> key_slices = split_heads(keys, kv_heads);          // h_kv heads
    const std::vector<Matrix> value_slices = split_heads(values, kv_heads);
    std::vector<Matrix> head_outputs;
    for (std::size_t head = 0; head < query_heads; ++head) {
        const std::size_t shared = head / (query_heads / kv_heads);  // the group's key/value head
        head_outputs.push_back(attention(query_slices[head], key_slices[shared], value_slices[shared], mask));
    }
    return project(concat_heads(head_outputs), w_out);  // [head_0 | ... | head_(h-1)]·W_O
    // END SOLUTION
}
//< grouped-query-attention

//> grouped-query-backward
MultiHeadGrads grouped_query_backward(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                      const Matrix& mask, std::size_t query_heads, std::size_t kv_heads,
                                      const Matrix& w_out, const Matrix& d_outputs)
{
    // BEGIN SOLUTION grouped_query_backward: chapter 18, Grouped queries
    check_grouped_shapes("grouped_query_backward", queries, keys, values, mask, query_heads, kv_heads, w_out);
    if (d_outputs.rows() != queries.rows() || d_outputs.cols() != w_out.cols()) {
        throw ShapeError(fmt::format("grouped_query_backward: the outputs are {}×{} but dY is {}", queries.rows(),
                                     w_out.cols(), shape(d_outputs)));
    }
    const std::vector<Matrix> q = split_heads(queries, query_heads);
    const std::vector<Matrix> k = split_heads(keys, kv_heads);
    const std::vector<Matrix> v = split_heads(values, kv_heads);
    const std::size_t group = query_heads / kv_heads;
    std::vector<Matrix> weights;  // the forward pass again, keeping each head's weights
    std::vector<Matrix> outputs;
    for (std::size_t a = 0; a < query_heads; ++a) {
        weights.push_back(softmax_rows(apply_mask(scale(scores(q[a], k[a / group]), q[a].cols()), mask)));
        outputs.push_back(mix(weights.back(), v[a / group]));
    }
    const ProjectionGrads out = project_backward(concat_heads(outputs), w_out, d_outputs);
    const std::vector<Matrix> d_heads = split_heads(out.d_embeddings, query_heads);
    std::vector<Matrix> d_q;
    std::vector<Matrix> d_k(kv_heads, Matrix(keys.rows(), q.front().cols(), 0.0));
    std::vector<Matrix> d_v(kv_heads, Matrix(values.rows(), v.front().cols(), 0.0));
    for (std::size_t a = 0; a < query_heads; ++a) {
        const std::size_t b = a / group;  // the shared head collects the gradients of its whole group
        const MixGrads mixed = mix_backward(weights[a], v[b], d_heads[a]);
        const Matrix d_masked = softmax_rows_backward(weights[a], mixed.d_weights);
        const ScoreGrads scored =
            scores_backward(q[a], k[b], scale_backward(apply_mask_backward(d_masked, mask), q[a].cols()));
        d_q.push_back(scored.d_queries);
        add_into(d_k[b], scored.d_keys);
        add_into(d_v[b], mixed.d_values);
    }
    return {concat_heads(d_q), concat_heads(d_k), concat_heads(d_v), out.d_weights};
    // END SOLUTION
}
//< grouped-query-backward

std::uint64_t kv_cache_bytes(std::size_t layers, std::size_t kv_heads, std::size_t head_width, std::size_t positions,
                             std::size_t bytes_per_number)
{
    // A key and a value per head; every factor widened first, so no product wraps at 32 bits.
    return std::uint64_t{2} * layers * kv_heads * head_width * positions * bytes_per_number;
}

namespace {

// Each group of g = columns/(kv_heads·width) heads of `weights` (width columns each) averaged into one.
Matrix pooled_heads(const Matrix& weights, std::size_t kv_heads, std::size_t width)
{
    const std::size_t group = weights.cols() / width / kv_heads;
    Matrix pooled(weights.rows(), kv_heads * width, 0.0);
    for (std::size_t head = 0; head < kv_heads * group; ++head) {  // in the order of the old heads
        for (std::size_t r = 0; r < weights.rows(); ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                double& sum = pooled(r, (head / group) * width + c);
                sum = head % group == 0 ? weights(r, head * width + c) : sum + weights(r, head * width + c);
            }
        }
    }
    for (std::size_t i = 0; i < pooled.rows() * pooled.cols(); ++i) {
        pooled.data()[i] /= static_cast<double>(group);
    }
    return pooled;
}

}  // namespace

//> mean-pooled-model
LanguageModel mean_pooled_model(const LanguageModel& model, std::size_t kv_heads)
{
    //{ checks that h_kv divides the model's key/value heads
    const std::size_t old_kv_heads = kv_head_count(model.shape);
    if (kv_heads == 0) {
        throw std::invalid_argument("mean_pooled_model: the number of key/value heads must be at least 1");
    }
    if (old_kv_heads % kv_heads != 0) {
        throw std::invalid_argument(fmt::format("mean_pooled_model: {} key/value heads do not pool into {} equal "
                                                "groups; h_kv must divide them",
                                                old_kv_heads, kv_heads));
    }
    //}
    if (kv_heads == old_kv_heads) {
        return model;  // every group is one head: its mean is itself
    }
    const std::size_t width = model.shape.width / model.shape.heads;  // d/h, one head
    LanguageModel pooled = model;
    pooled.shape.kv_heads = kv_heads;
    for (AttentionLayer& layer : pooled.layers) {
        layer.w_key = pooled_heads(layer.w_key, kv_heads, width);  // each group's mean
        layer.w_value = pooled_heads(layer.w_value, kv_heads, width);
    }
    return pooled;
}
//< mean-pooled-model

}  // namespace sa
