/// \file scores.hpp
/// \brief Step 2: every query dotted with every key.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Raw attention scores: \f$ S = Q K^\top \f$, so \f$ S_{ij} = q_i \cdot k_j \f$.
///
/// Row i belongs to the token that asks (query i), column j to the token that
/// is asked about (key j).
///
/// Shapes: Q is n×d_k, K is m×d_k, the result is n×m. The number of queries n and
/// the number of keys m may differ; the columns d_k must match.
///
/// \param queries Q, one query per row
/// \param keys K, one key per row (not transposed)
/// \return S, n×m
/// \throws ShapeError if Q and K have different numbers of columns, with a message
///         that names the operation and both shapes, e.g.
///         "scores: Q is 3×2 but K is 3×4; their columns must match"
[[nodiscard]] Matrix scores(const Matrix& queries, const Matrix& keys);

}  // namespace sa
