#include "attention_weights.hpp"

#include "exercise.hpp"
#include "masking.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

//> attention-weights
Matrix attention_weights(const Matrix& queries, const Matrix& keys, const Matrix& mask)
{
    // BEGIN SOLUTION attention_weights: chapter 8, Keys and values are different jobs
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("attention_weights: Q is {} but K is {}; a query and a key need the same "
                                     "width d_k", shape(queries), shape(keys)));
    }
    if (mask.rows() != queries.rows() || mask.cols() != keys.rows()) {
        throw ShapeError(fmt::format("attention_weights: the mask is {} but Q·Kᵀ is {}×{}; it needs one row per "
                                     "query and one column per key", shape(mask), queries.rows(), keys.rows()));
    }
    // Q, K and M only: the values are not an input, so W_V cannot move the weights.
    return softmax_rows(apply_mask(scale(scores(queries, keys), queries.cols()), mask));
    // END SOLUTION
}
//< attention-weights

}  // namespace sa
