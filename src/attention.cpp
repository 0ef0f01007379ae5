#include "attention.hpp"

#include "exercise.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

//> attention
Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask)
{
    // BEGIN SOLUTION attention: chapter 7, The whole formula
    // Check the shapes up front, so that a mistake is reported as the caller wrote it.
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("attention: Q is {} but K is {}; a query and a key need the same width d_k",
                                     shape(queries), shape(keys)));
    }
    if (keys.rows() != values.rows()) {
        throw ShapeError(fmt::format("attention: K is {} but V is {}; they need one row per key each", shape(keys),
                                     shape(values)));
    }
    if (mask.rows() != queries.rows() || mask.cols() != keys.rows()) {
        throw ShapeError(fmt::format("attention: the mask is {} but Q·Kᵀ is {}×{}; it needs one row per query and "
                                     "one column per key", shape(mask), queries.rows(), keys.rows()));
    }
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

}  // namespace sa
