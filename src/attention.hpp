/// \file attention.hpp
/// \brief The whole formula in one call: scores, scale, mask, softmax, mix.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Scaled dot-product attention:
///        \f$ \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V \f$.
///
/// Runs scores(), scale(), apply_mask(), softmax_rows() and mix() in that order, so
/// the result matches the step-by-step chapters exactly.
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v, M is n×m; the result is n×d_v.
///
/// \param queries Q
/// \param keys K
/// \param values V
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out)
/// \return the outputs, n×d_v
/// \throws ShapeError if any two shapes do not fit together
[[nodiscard]] Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask);

/// \brief Scaled dot-product attention without a mask: every query may use every key.
///
/// The same as attention(Q, K, V, M) with an all-zero n×m mask M.
///
/// \param queries Q, n×d_k
/// \param keys K, m×d_k
/// \param values V, m×d_v
/// \return the outputs, n×d_v
/// \throws ShapeError if any two shapes do not fit together
[[nodiscard]] Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values);

}  // namespace sa
