/// \file mixing.hpp
/// \brief Step 6: blend the values with the attention weights.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Mixes the values: \f$ O = A V \f$, so \f$ o_i = \sum_j A_{ij} v_j \f$.
///
/// Each output row is the weighted blend of every value row, with the weights
/// that query i gave to each key. An all-zero weight row (fully masked) gives an
/// all-zero output row when the values are finite. A NaN weight makes its whole
/// output row NaN, and a NaN or infinite value reaches every output row, even a
/// row that gives its key a weight of 0 (0·NaN is NaN): a NaN in the input is
/// never hidden, even where a mask would have excluded it. PyTorch does the same.
///
/// Shapes: A is n×m, V is m×d_v, the result is n×d_v.
///
/// \param weights A, n×m, each row usually summing to 1
/// \param values V, one value per key row
/// \return the outputs O, n×d_v
/// \throws ShapeError if V does not have one row per column of A, with a message
///         that names the operation and both shapes, e.g.
///         "mix: A is 2×3 but V is 2×2; V needs one row per key (3)"
[[nodiscard]] Matrix mix(const Matrix& weights, const Matrix& values);

}  // namespace sa
