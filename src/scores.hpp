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

/// \brief The gradients that scores_backward() passes back: one for Q, one for K.
struct ScoreGrads {
    Matrix d_queries = {};  ///< \f$ dQ = dS\, K \f$, n×d_k
    Matrix d_keys = {};     ///< \f$ dK = dS^\top Q \f$, m×d_k
};

/// \brief Backward pass of scores(): given \f$ dS = \partial L / \partial S \f$ for
///        \f$ S = Q K^\top \f$, returns \f$ dQ = dS\, K \f$ and \f$ dK = dS^\top Q \f$.
///
/// Entry by entry, \f$ dq_i = \sum_j dS_{ij}\, k_j \f$: query i is pushed toward every key
/// whose score the loss wants higher and away from every key whose score it wants lower.
/// Likewise \f$ dk_j = \sum_i dS_{ij}\, q_i \f$ gathers over the queries that asked about key j.
///
/// Shapes: Q is n×d_k, K is m×d_k, dS is n×m; dQ is n×d_k and dK is m×d_k.
///
/// \param queries Q, the queries scores() was called with, n×d_k
/// \param keys K, the keys scores() was called with (not transposed), m×d_k
/// \param d_scores dS, the gradient with respect to the raw scores, n×m
/// \return dQ and dK
/// \throws ShapeError if Q and K differ in columns, or dS is not n×m; the message names the
///         operation and both shapes, e.g.
///         "scores_backward: dS is 3×2 but S = Q·Kᵀ is 3×4; dS needs the shape of the scores"
[[nodiscard]] ScoreGrads scores_backward(const Matrix& queries, const Matrix& keys, const Matrix& d_scores);

}  // namespace sa
