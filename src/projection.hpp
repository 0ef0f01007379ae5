/// \file projection.hpp
/// \brief Step 1: project each token's embedding into a query, key or value space.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief Projects embeddings through a learned matrix: \f$ P = E \, W \f$.
///
/// Tokens are row vectors, so the projection multiplies from the right:
/// \f$ P_{ij} = \sum_{f} E_{if} W_{fj} \f$.
/// Use it three times to get \f$ Q = E W_Q \f$, \f$ K = E W_K \f$ and \f$ V = E W_V \f$.
///
/// Shapes: E is n×d_model, W is d_model×d_out, the result is n×d_out
/// (d_out is d_k for W_Q and W_K, d_v for W_V).
///
/// \param embeddings E, one row per token
/// \param weights W, one row per embedding feature
/// \return the projected vectors, one row per token
/// \throws ShapeError if W does not have one row per column of E, with a message
///         that names the operation and both shapes, e.g.
///         "project: E is 3×2 but W is 3×3; W needs one row per embedding feature (2)"
[[nodiscard]] Matrix project(const Matrix& embeddings, const Matrix& weights);

}  // namespace sa
