#include "attention_weights.hpp"

#include "attention_shapes.hpp"
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
    check_attention_shapes("attention_weights", {.queries = queries, .keys = keys, .mask = &mask});
    // Q, K and M only: the values are not an input, so W_V cannot move the weights.
    return softmax_rows(apply_mask(scale(scores(queries, keys), queries.cols()), mask));
    // END SOLUTION
}
//< attention-weights

}  // namespace sa
