#include "attention.hpp"

#include "attention_shapes.hpp"
#include "exercise.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

//> attention
Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask)
{
    // BEGIN SOLUTION attention: chapter 7, The whole formula
    // Check the shapes up front, so that a mistake is reported as the caller wrote it.
    check_attention_shapes("attention", {.queries = queries, .keys = keys, .values = &values, .mask = &mask});
    const Matrix raw = scores(queries, keys);
    const Matrix scaled = scale(raw, queries.cols());
    const Matrix masked = apply_mask(scaled, mask);
    const Matrix weights = softmax_rows(masked);
    return mix(weights, values);
    // END SOLUTION
}
//< attention

Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values)
{
    return attention(queries, keys, values, Matrix(queries.rows(), keys.rows(), 0.0));
}

//> attention-backward
AttentionGrads attention_backward(const Matrix& embeddings, const Matrix& w_query, const Matrix& w_key,
                                  const Matrix& w_value, const Matrix& mask, const Matrix& d_outputs)
{
    // BEGIN SOLUTION attention_backward: chapter 11, Gradients
    for (const Matrix* weights : {&w_query, &w_key, &w_value}) {
        if (weights->rows() != embeddings.cols()) {
            throw ShapeError(fmt::format("attention_backward: E is {} but a projection is {}; each W needs one row "
                                         "per embedding feature ({})", shape(embeddings), shape(*weights),
                                         embeddings.cols()));
        }
    }
    if (w_query.cols() != w_key.cols()) {
        throw ShapeError(fmt::format("attention_backward: W_Q is {} but W_K is {}; queries and keys need the same "
                                     "width d_k", shape(w_query), shape(w_key)));
    }
    if (mask.rows() != embeddings.rows() || mask.cols() != embeddings.rows()) {
        throw ShapeError(fmt::format("attention_backward: the mask is {} but Q·Kᵀ is {}×{}; it needs one row and one "
                                     "column per token", shape(mask), embeddings.rows(), embeddings.rows()));
    }
    if (d_outputs.rows() != embeddings.rows() || d_outputs.cols() != w_value.cols()) {
        throw ShapeError(fmt::format("attention_backward: dO is {} but the outputs are {}×{}; dO needs the shape "
                                     "of the outputs", shape(d_outputs), embeddings.rows(), w_value.cols()));
    }
    // Forward again: the backward steps need Q, K, V and the weights A.
    const Matrix queries = project(embeddings, w_query);
    const Matrix keys = project(embeddings, w_key);
    const Matrix values = project(embeddings, w_value);
    const Matrix weights = softmax_rows(apply_mask(scale(scores(queries, keys), queries.cols()), mask));
    // Backward, last step first.
    AttentionGrads grads;
    MixGrads mixed = mix_backward(weights, values, d_outputs);
    grads.d_weights = mixed.d_weights;
    grads.d_values = mixed.d_values;
    grads.d_masked = softmax_rows_backward(weights, grads.d_weights);
    grads.d_scaled = apply_mask_backward(grads.d_masked, mask);
    grads.d_scores = scale_backward(grads.d_scaled, queries.cols());
    ScoreGrads scored = scores_backward(queries, keys, grads.d_scores);
    grads.d_queries = scored.d_queries;
    grads.d_keys = scored.d_keys;
    const ProjectionGrads from_queries = project_backward(embeddings, w_query, grads.d_queries);
    const ProjectionGrads from_keys = project_backward(embeddings, w_key, grads.d_keys);
    const ProjectionGrads from_values = project_backward(embeddings, w_value, grads.d_values);
    grads.d_w_query = from_queries.d_weights;
    grads.d_w_key = from_keys.d_weights;
    grads.d_w_value = from_values.d_weights;
    // E feeds all three projections, so its blame is the sum of three shares.
    grads.d_embeddings = Matrix(embeddings.rows(), embeddings.cols());
    for (std::size_t token = 0; token < embeddings.rows(); ++token) {
        for (std::size_t feature = 0; feature < embeddings.cols(); ++feature) {
            grads.d_embeddings(token, feature) = from_queries.d_embeddings(token, feature) +
                                                 from_keys.d_embeddings(token, feature) +
                                                 from_values.d_embeddings(token, feature);
        }
    }
    return grads;
    // END SOLUTION
}
//< attention-backward

}  // namespace sa
