/// \file embedding.hpp
/// \brief Chapter 14: tokens in. Each token's vector is its row of the embedding table W_E,
///        and the gradient of that lookup sends each row's gradient back to the token's row.
#pragma once

#include <cstddef>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief Looks the tokens up in the embedding table: \f$ x_i = W_E[t_i] \f$, row \f$ t_i \f$ of W_E.
///
/// The same as multiplying a one-hot row for each token by W_E, without the multiplications.
/// Shapes: W_E is V×d; the result is n×d for n tokens.
/// \param table W_E, one row per character of the vocabulary
/// \param tokens \f$ t_0, \dots, t_{n-1} \f$, each below V
/// \return X, n×d
/// \throws std::out_of_range if a token is not below V
[[nodiscard]] Matrix embed(const Matrix& table, const std::vector<std::size_t>& tokens);

/// \brief The gradient of embed() at the table, a scatter-add:
///        \f$ \partial L / \partial W_E[v] = \sum_{i : t_i = v} \partial L / \partial x_i \f$.
///
/// Row v of the result adds up the gradients of every position that holds token v, in the
/// order of the positions; a token that does not occur gets a zero row. (In the one-hot view,
/// \f$ dW_E = \mathrm{OneHot}^\top dX \f$.)
/// Shapes: dX is n×d; the result is V×d.
/// \param d_rows dX, the gradient at the looked-up rows, n×d
/// \param tokens the n tokens that were looked up
/// \param vocabulary V, the number of rows of W_E
/// \return \f$ dW_E \f$, V×d
/// \throws std::invalid_argument if the tokens are not one per row of dX, e.g. "embedding_backward:
///         dX is 3×2 but there are 2 tokens; give one token per row", or one is not below V, e.g.
///         "embedding_backward: token 3 at position 2 is not below d_vocab = 3"
[[nodiscard]] Matrix embedding_backward(const Matrix& d_rows, const std::vector<std::size_t>& tokens,
                                        std::size_t vocabulary);

}  // namespace sa
