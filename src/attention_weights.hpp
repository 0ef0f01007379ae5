/// \file attention_weights.hpp
/// \brief Chapter 8: the attention weights alone, which the queries and keys decide.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief The attention weights without the values:
///        \f$ A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) \f$.
///
/// Runs scores(), scale(), apply_mask() and softmax_rows() in that order, so the weights
/// are bit for bit those that attention() blends the values with:
/// attention(Q, K, V, M) is mix(attention_weights(Q, K, M), V). No value enters them, so
/// a new \f$ W_V \f$ never changes them; a new \f$ W_K \f$ does.
///
/// Shapes: Q is n×d_k, K is m×d_k, M is n×m; the result is n×m. Row i says how query i
/// spends its attention across the m keys: it sums to 1, or is all 0 where M masks every key.
///
/// \param queries Q, one query per row
/// \param keys K, one key per row (not transposed)
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out)
/// \return the weights A, n×m
/// \throws ShapeError if Q and K have different widths, or M is not n×m; the message names
///         the operation and both shapes, e.g. "attention_weights: the mask is 2×3 but Q·Kᵀ is 3×3; ..."
/// \throws std::invalid_argument if a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix attention_weights(const Matrix& queries, const Matrix& keys, const Matrix& mask);

}  // namespace sa
