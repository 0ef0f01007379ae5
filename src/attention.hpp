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

/// \brief Every gradient of one self-attention layer, from the outputs back to the embeddings.
///
/// The forward pass it belongs to: \f$ Q = E W_Q \f$, \f$ K = E W_K \f$, \f$ V = E W_V \f$,
/// \f$ S = Q K^\top \f$, \f$ S / \sqrt{d_k} \f$, \f$ S' = S / \sqrt{d_k} + M \f$,
/// \f$ A = \mathrm{softmax}(S') \f$, \f$ O = A V \f$. Each member is the gradient of the
/// loss with respect to one of these, with the same shape.
struct AttentionGrads {
    Matrix d_weights = {};     ///< dA, n×n, from mix_backward()
    Matrix d_masked = {};      ///< dS', n×n, the gradient at the softmax's input, from softmax_rows_backward()
    Matrix d_scaled = {};      ///< the gradient at \f$ S/\sqrt{d_k} \f$, n×n, from apply_mask_backward()
    Matrix d_scores = {};      ///< dS, n×n, at the raw scores \f$ Q K^\top \f$, from scale_backward()
    Matrix d_queries = {};     ///< dQ, n×d_k, from scores_backward()
    Matrix d_keys = {};        ///< dK, n×d_k, from scores_backward()
    Matrix d_values = {};      ///< dV, n×d_v, from mix_backward()
    Matrix d_w_query = {};     ///< dW_Q, d_model×d_k, \f$ E^\top dQ \f$
    Matrix d_w_key = {};       ///< dW_K, d_model×d_k, \f$ E^\top dK \f$
    Matrix d_w_value = {};     ///< dW_V, d_model×d_v, \f$ E^\top dV \f$
    Matrix d_embeddings = {};  ///< dE, n×d_model, \f$ dQ\, W_Q^\top + dK\, W_K^\top + dV\, W_V^\top \f$
};

/// \brief Backward pass of a whole self-attention layer: given \f$ dO = \partial L / \partial O \f$,
///        the gradient of every step, from the weights back to the projections and the embeddings.
///
/// Runs the forward pass again (project() three times, scores(), scale(), apply_mask(),
/// softmax_rows(), mix()), then the backward steps in the opposite order: mix_backward(),
/// softmax_rows_backward(), apply_mask_backward(), scale_backward(), scores_backward() and
/// project_backward() three times. Each result is bit for bit the one those steps give when
/// called one at a time.
///
/// Shapes: E is n×d_model; W_Q and W_K are d_model×d_k; W_V is d_model×d_v; M is n×n; dO is n×d_v.
///
/// Edges: when dO is finite, every masked entry of dS', of the gradient at
/// \f$ S/\sqrt{d_k} \f$ and of dS is exactly 0, and a fully masked row (a query with no
/// key) passes nothing back: its rows of dS', dS and dQ are all zero, and it adds nothing to
/// dK or dV. Its row of dA is not zero, since mix_backward() does not know the weights cannot
/// move; the softmax stops that blame.
///
/// \param embeddings E, one row per token
/// \param w_query W_Q, d_model×d_k
/// \param w_key W_K, d_model×d_k
/// \param w_value W_V, d_model×d_v
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out), n×n
/// \param d_outputs dO, the gradient of the loss with respect to the outputs, n×d_v
/// \return every gradient, each with the shape of what it belongs to
/// \throws ShapeError if any two shapes do not fit together; the message names the operation and both shapes
/// \throws std::invalid_argument if a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] AttentionGrads attention_backward(const Matrix& embeddings, const Matrix& w_query, const Matrix& w_key,
                                                const Matrix& w_value, const Matrix& mask, const Matrix& d_outputs);

}  // namespace sa
