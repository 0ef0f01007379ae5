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

/// \brief The gradients that mix_backward() passes back: one for each input of mix().
struct MixGrads {
    Matrix d_weights = {};  ///< \f$ \partial L / \partial A = dO\, V^\top \f$, n×m
    Matrix d_values = {};   ///< \f$ \partial L / \partial V = A^\top dO \f$, m×d_v
};

/// \brief Backward pass of mix(): given \f$ dO = \partial L / \partial O \f$ for
///        \f$ O = A V \f$, returns \f$ dA = dO\, V^\top \f$ and \f$ dV = A^\top dO \f$.
///
/// Entry by entry, \f$ dA_{ij} = \sum_d dO_{id} V_{jd} = do_i \cdot v_j \f$: weight
/// \f$ A_{ij} \f$ is blamed as much as value j points the way the loss wants output i to move.
/// And \f$ dV_{jd} = \sum_i A_{ij} dO_{id} \f$: value j collects the blame of every output
/// row in proportion to the weight that row gave it.
///
/// Shapes: A is n×m, V is m×d_v, dO is n×d_v; dA is n×m (like A) and dV is m×d_v (like V).
///
/// Edges: a key with weight 0 in every row (masked out everywhere) gets an all-zero row of dV
/// when dO is finite; a NaN in dO or V reaches the gradients it touches, as in mix().
///
/// \param weights A, the weights mix() was called with, n×m
/// \param values V, the values mix() was called with, m×d_v
/// \param d_outputs dO, the gradient of the loss with respect to the outputs, n×d_v
/// \return dA and dV
/// \throws ShapeError if V does not have one row per column of A, or dO is not n×d_v;
///         the message names the operation and both shapes, e.g.
///         "mix_backward: dO is 2×2 but O = A·V is 3×2; dO needs the shape of the outputs"
[[nodiscard]] MixGrads mix_backward(const Matrix& weights, const Matrix& values, const Matrix& d_outputs);

}  // namespace sa
