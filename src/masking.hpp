/// \file masking.hpp
/// \brief Step 4: hide the positions a token may not look at.
///
/// The book's masks are additive: an n×m matrix whose entry is 0 where query i may
/// use key j ("takes part") and \f$ -\infty \f$ where it may not ("masked out").
/// Adding it to the scaled scores before the softmax gives masked positions a
/// weight of exactly 0. (PyTorch's scaled_dot_product_attention reads a boolean
/// mask the same way round, True meaning "takes part"; nn.MultiheadAttention's
/// boolean masks mean the opposite.)
#pragma once

#include <cstddef>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The causal mask of a decoder-only model: query i may use keys 0..i only.
///
/// \f$ M_{ij} = 0 \f$ for \f$ j \le i \f$ and \f$ M_{ij} = -\infty \f$ for \f$ j > i \f$:
/// everything above the diagonal is masked out.
///
/// Shapes: the result is n×m.
///
/// \param queries n, the number of query rows
/// \param keys m, the number of key rows
/// \return the additive mask, n×m
[[nodiscard]] Matrix causal_mask(std::size_t queries, std::size_t keys);

/// \brief The causal mask aligned bottom-right: the last query lines up with the last key.
///
/// \f$ M_{ij} = -\infty \f$ for \f$ j > i + (m - n) \f$, else 0. This is the
/// alignment when the n queries are the last n of m positions (generating with a cache
/// of earlier keys); FlashAttention (from version 2.1) and PyTorch's causal_lower_right
/// use it. The book's causal_mask() is aligned top-left instead (\f$ j > i \f$ masked,
/// as PyTorch's `is_causal=True`); for n = m the two are the same. When n > m, the
/// first n − m rows are masked completely.
///
/// Shapes: the result is n×m.
///
/// \param queries n, the number of query rows
/// \param keys m, the number of key rows
/// \return the additive mask, n×m
[[nodiscard]] Matrix causal_mask_bottom_right(std::size_t queries, std::size_t keys);

/// \brief A padding mask: every query may use exactly the keys marked real.
///
/// \f$ M_{ij} = 0 \f$ if key j is real and \f$ -\infty \f$ if it is padding, the same
/// in every row. A key list with no real key masks every row completely.
///
/// Shapes: \p key_is_real has m entries, the result is n×m.
///
/// \param queries n, the number of query rows
/// \param key_is_real one flag per key: true for a real token, false for padding
/// \return the additive mask, n×m
[[nodiscard]] Matrix padding_mask(std::size_t queries, const std::vector<bool>& key_is_real);

/// \brief Adds an additive mask to scaled scores: \f$ S' = S + M \f$.
///
/// Shapes: S and M are both n×m, the result is n×m. Masked entries become
/// \f$ -\infty \f$ whatever the score was, NaN and \f$ +\infty \f$ included, so a
/// masked-out token can never change a row that does not see it; the other
/// entries are unchanged. For finite scores this is exactly \f$ S + M \f$.
///
/// \param scaled_scores S, n×m
/// \param mask M, n×m, every entry 0 or \f$ -\infty \f$
/// \return the masked scores, n×m
/// \throws ShapeError if the shapes differ, with a message that names the operation
///         and both shapes, e.g. "apply_mask: scores are 3×3 but the mask is 3×2; they must have the same shape"
/// \throws std::invalid_argument if a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix apply_mask(const Matrix& scaled_scores, const Matrix& mask);

/// \brief Backward pass of apply_mask(): the gradient passes through where the mask is 0
///        and is exactly 0 where it is \f$ -\infty \f$.
///
/// apply_mask() sets a masked entry to \f$ -\infty \f$ whatever the score was, so nothing
/// the score does there can change the loss: its derivative is 0. Elsewhere the entry is
/// the score itself, with derivative 1. So \f$ dS_{ij} = dS'_{ij} \f$ where
/// \f$ M_{ij} = 0 \f$ and \f$ dS_{ij} = 0 \f$ where \f$ M_{ij} = -\infty \f$, even if
/// \f$ dS'_{ij} \f$ is NaN: a token that cannot be seen is never blamed, and a fully
/// masked row passes back an all-zero row.
///
/// Shapes: dS' and M are both n×m; the result is n×m.
///
/// \param d_masked dS', the gradient with respect to the masked scores, n×m
/// \param mask M, the mask apply_mask() was called with, every entry 0 or \f$ -\infty \f$
/// \return the gradient with respect to the scaled scores, n×m
/// \throws ShapeError if the shapes differ, e.g. "apply_mask_backward: the gradient is 3×3 but
///         the mask is 3×2; they must have the same shape"
/// \throws std::invalid_argument if a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix apply_mask_backward(const Matrix& d_masked, const Matrix& mask);

}  // namespace sa
