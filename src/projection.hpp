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

/// \brief The gradients that project_backward() passes back: one for E, one for W.
struct ProjectionGrads {
    Matrix d_embeddings = {};  ///< \f$ dE = dP\, W^\top \f$, n×d_model
    Matrix d_weights = {};     ///< \f$ dW = E^\top dP \f$, d_model×d_out
};

/// \brief Backward pass of project(): given \f$ dP = \partial L / \partial P \f$ for
///        \f$ P = E W \f$, returns \f$ dW = E^\top dP \f$ and \f$ dE = dP\, W^\top \f$.
///
/// Entry by entry, \f$ dW_{fo} = \sum_t E_{tf}\, dP_{to} \f$: a weight is blamed through
/// every token, in proportion to that token's feature f. For \f$ Q = E W_Q \f$ this gives
/// \f$ dW_Q = E^\top dQ \f$, and the same for K and V. The embeddings feed all three
/// projections, so their whole gradient is the sum of three such terms,
/// \f$ dE = dQ\, W_Q^\top + dK\, W_K^\top + dV\, W_V^\top \f$ (attention_backward() adds them).
///
/// Shapes: E is n×d_model, W is d_model×d_out, dP is n×d_out; dE is n×d_model and dW is
/// d_model×d_out.
///
/// \param embeddings E, the embeddings project() was called with, n×d_model
/// \param weights W, the projection project() was called with, d_model×d_out
/// \param d_projected dP, the gradient with respect to the projected vectors, n×d_out
/// \return dE (this projection's share only) and dW
/// \throws ShapeError if W does not have one row per column of E, or dP is not n×d_out; the
///         message names the operation and both shapes, e.g.
///         "project_backward: dP is 3×3 but P = E·W is 3×2; dP needs the shape of the projection"
[[nodiscard]] ProjectionGrads project_backward(const Matrix& embeddings, const Matrix& weights,
                                               const Matrix& d_projected);

}  // namespace sa
