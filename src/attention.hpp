/// \file attention.hpp
/// \brief The whole formula in one call: scores, scale, mask, softmax, mix.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Scaled dot-product attention:
///        \f$ \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V \f$.
///
/// Runs scores(), scale(), apply_mask(), softmax_rows() and mix() in that order, so
/// the result is bit for bit the one the step-by-step chapters compute.
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v, M is n×m; the result is n×d_v.
/// The number of queries n and of keys m may differ, and so may d_k and d_v.
///
/// Edges: a row of M that is entirely \f$ -\infty \f$ (a query with no key it
/// may use) gives an all-zero output row, not NaN, and leaves the other rows as
/// they are. A NaN in Q, K or V is never hidden: every output row whose weights
/// or values it reaches is NaN.
///
/// \param queries Q, one query per row
/// \param keys K, one key per row (not transposed)
/// \param values V, one value per key row
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out)
/// \return the outputs, n×d_v
/// \throws ShapeError if any two shapes do not fit together; the message names
///         the operation and both shapes, e.g. "attention: K is 3×2 but V is 4×2; ..."
/// \throws std::invalid_argument if a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask);

/// \brief Scaled dot-product attention without a mask: every query may use every key.
///
/// \f$ \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V \f$,
/// the same as attention(Q, K, V, M) with an all-zero n×m mask M.
///
/// \param queries Q, n×d_k
/// \param keys K, m×d_k
/// \param values V, m×d_v
/// \return the outputs, n×d_v
/// \throws ShapeError if any two shapes do not fit together
[[nodiscard]] Matrix attention(const Matrix& queries, const Matrix& keys, const Matrix& values);

}  // namespace sa
