/// \file attention_shapes.hpp
/// \brief The one shape check of every operation that takes Q, K, V and a mask.
#pragma once

#include <string_view>

#include "matrix.hpp"

namespace sa {

/// \brief What an attention operation takes: Q and K always, V and the mask when it has them.
struct AttentionShapes {
    const Matrix& queries;          ///< Q, n×d_k
    const Matrix& keys;             ///< K, m×d_k
    const Matrix* values = nullptr; ///< V, m×d_v, or null when the operation takes no values
    const Matrix* mask = nullptr;   ///< M, n×m, or null when the operation takes no mask
};

/// \brief Checks that Q, K, V and the mask fit together, before any step runs, so that a
///        mistake is reported as the caller wrote it.
///
/// Q and K need the same width d_k, K and V one row per key each, and the mask one row per
/// query and one column per key. The first misfit is reported, in that order, e.g.
/// "attention: Q is 3×2 but K is 3×4; a query and a key need the same width d_k".
/// \param operation the name the message starts with, e.g. "attention"
/// \param inputs Q and K, and V and the mask where the operation takes them
/// \throws ShapeError naming the operation, the two shapes and what they need
void check_attention_shapes(std::string_view operation, const AttentionShapes& inputs);

}  // namespace sa
