#include "attention_shapes.hpp"

namespace sa {

void check_attention_shapes(std::string_view operation, const AttentionShapes& inputs)
{
    const Matrix& queries = inputs.queries;
    const Matrix& keys = inputs.keys;
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("{}: Q is {} but K is {}; a query and a key need the same width d_k", operation,
                                     shape(queries), shape(keys)));
    }
    if (inputs.values != nullptr && keys.rows() != inputs.values->rows()) {
        throw ShapeError(fmt::format("{}: K is {} but V is {}; they need one row per key each", operation,
                                     shape(keys), shape(*inputs.values)));
    }
    if (inputs.mask != nullptr && (inputs.mask->rows() != queries.rows() || inputs.mask->cols() != keys.rows())) {
        throw ShapeError(fmt::format("{}: the mask is {} but Q·Kᵀ is {}×{}; it needs one row per query and one "
                                     "column per key", operation, shape(*inputs.mask), queries.rows(), keys.rows()));
    }
}

}  // namespace sa
