#include "multi_head_backward.hpp"

#include <vector>

#include "masking.hpp"
#include "mixing.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

#include "exercise.hpp"

namespace sa {

//> multi-head-backward
MultiHeadGrads multi_head_backward(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                   const Matrix& mask, std::size_t heads, const Matrix& w_out,
                                   const Matrix& d_outputs)
{
    // BEGIN SOLUTION multi_head_backward: chapter 14, Predicting the next character
    const std::vector<Matrix> q = split_heads(queries, heads);
    const std::vector<Matrix> k = split_heads(keys, heads);
    const std::vector<Matrix> v = split_heads(values, heads);
    const std::size_t head_dim = queries.cols() / heads;
    // The forward pass again, keeping each head's weights.
    std::vector<Matrix> weights;
    std::vector<Matrix> outputs;
    for (std::size_t i = 0; i < heads; ++i) {
        weights.push_back(softmax_rows(apply_mask(scale(scores(q[i], k[i]), head_dim), mask)));
        outputs.push_back(mix(weights.back(), v[i]));
    }
    const Matrix joined = concat_heads(outputs);
    const ProjectionGrads out = project_backward(joined, w_out, d_outputs);
    const std::vector<Matrix> d_heads = split_heads(out.d_embeddings, heads);
    std::vector<Matrix> d_q;
    std::vector<Matrix> d_k;
    std::vector<Matrix> d_v;
    for (std::size_t i = 0; i < heads; ++i) {
        const MixGrads mixed = mix_backward(weights[i], v[i], d_heads[i]);
        const Matrix d_masked = softmax_rows_backward(weights[i], mixed.d_weights);
        const Matrix d_scores = scale_backward(apply_mask_backward(d_masked, mask), head_dim);
        const ScoreGrads scored = scores_backward(q[i], k[i], d_scores);
        d_q.push_back(scored.d_queries);
        d_k.push_back(scored.d_keys);
        d_v.push_back(mixed.d_values);
    }
    return {concat_heads(d_q), concat_heads(d_k), concat_heads(d_v), out.d_weights};
    // END SOLUTION
}
//< multi-head-backward

}  // namespace sa
