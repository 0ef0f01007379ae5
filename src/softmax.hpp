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

}  // namespace sa
