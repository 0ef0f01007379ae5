/// \file softmax.hpp
/// \brief Step 5: turn each row of scores into weights that are positive and sum to one.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Row-wise softmax: \f$ A_{ij} = e^{S_{ij} - \max_k S_{ik}} / \sum_l e^{S_{il} - \max_k S_{ik}} \f$.
///
/// Subtracting the row maximum changes nothing mathematically (the factor
/// \f$ e^{-\max} \f$ cancels) but keeps every exponent at or below 0, so no term
/// overflows. Each row is normalised on its own: the weights of row i say how
/// query i spends its attention across the m keys.
///
/// Edge cases, one rule each:
/// - a row that is entirely \f$ -\infty \f$ (fully masked) gives all-zero weights;
/// - a row containing NaN gives NaN in every entry of that row;
/// - a row containing \f$ +\infty \f$ splits the weight equally among its
///   \f$ +\infty \f$ entries and gives 0 to the rest (the limit as those scores grow together).
///
/// Shapes: S is n×m, the result is n×m. Other rows are never affected by one row's edge case.
///
/// \param scores S, n×m (usually scaled and masked)
/// \return the attention weights A, n×m
[[nodiscard]] Matrix softmax_rows(const Matrix& scores);

/// \brief Backward pass of softmax_rows(): given the weights \f$ A \f$ it returned and
///        \f$ dA = \partial L / \partial A \f$, returns the gradient at its input,
///        \f$ dS' = A \circ \left(dA - \mathrm{rowsum}(dA \circ A)\right) \f$.
///
/// Row by row, with \f$ c_i = \sum_k dA_{ik} A_{ik} \f$:
/// \f$ dS'_{ij} = A_{ij} \, (dA_{ij} - c_i) \f$. This is the product of \f$ dA \f$ with the
/// softmax's m×m Jacobian \f$ \partial A_{ik} / \partial S'_{ij} = A_{ik}(\delta_{kj} - A_{ij}) \f$,
/// done in O(m) per row without ever forming the Jacobian. Only the weights are needed, not
/// the scores. Each row of the result sums to 0 (up to rounding): adding the same number to
/// every score of a row does not change its weights, so it cannot change the loss.
///
/// Edges: an entry whose weight is 0 (masked out with \f$ -\infty \f$) gets exactly 0 when
/// dA is finite, so a fully masked row passes back an all-zero row. A NaN in a row of A or dA
/// makes that row's result NaN, except where apply_mask_backward() then zeroes masked entries.
///
/// Shapes: A and dA are both n×m; the result is n×m.
///
/// \param weights A, the output of softmax_rows(), n×m
/// \param d_weights dA, the gradient of the loss with respect to A, n×m
/// \return dS', the gradient with respect to the scores softmax_rows() was given, n×m
/// \throws ShapeError if A and dA differ in shape, e.g.
///         "softmax_rows_backward: A is 3×3 but dA is 3×2; they must have the same shape"
[[nodiscard]] Matrix softmax_rows_backward(const Matrix& weights, const Matrix& d_weights);

}  // namespace sa
