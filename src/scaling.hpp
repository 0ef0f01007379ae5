/// \file scaling.hpp
/// \brief Step 3: divide the scores by the square root of the key dimension.
#pragma once

#include <cstddef>

#include "matrix.hpp"

namespace sa {

/// \brief Scaled scores: \f$ S / \sqrt{d_k} \f$, entry by entry.
///
/// If the entries of q and k are independent with mean 0 and variance 1, the dot
/// product \f$ q \cdot k \f$ has variance \f$ d_k \f$; dividing by \f$ \sqrt{d_k} \f$
/// brings it back to variance 1 whatever the dimension.
///
/// Shapes: S is n×m, the result is n×m. Infinities and NaN pass through
/// (\f$ -\infty / \sqrt{d_k} = -\infty \f$).
///
/// \param raw_scores S, n×m
/// \param key_dim d_k, the number of columns of Q and K
/// \return the scaled scores, n×m
/// \throws std::invalid_argument if key_dim is 0, with a message that names the
///         operation and d_k, e.g. "scale: d_k is 0 for scores of shape 3×3; d_k must be at least 1"
[[nodiscard]] Matrix scale(const Matrix& raw_scores, std::size_t key_dim);

/// \brief Backward pass of scale(): \f$ dS = dS_{scaled} / \sqrt{d_k} \f$, entry by entry.
///
/// Scaling is linear, so its gradient is the same division: each scaled score moves by
/// \f$ 1/\sqrt{d_k} \f$ for every unit its raw score moves.
///
/// Shapes: the gradient is n×m, the result is n×m. NaN and infinities pass through.
///
/// \param d_scaled the gradient with respect to the scaled scores, n×m
/// \param key_dim d_k, the one scale() divided by
/// \return dS, the gradient with respect to the raw scores, n×m
/// \throws std::invalid_argument if key_dim is 0, e.g.
///         "scale_backward: d_k is 0 for a gradient of shape 3×3; d_k must be at least 1"
[[nodiscard]] Matrix scale_backward(const Matrix& d_scaled, std::size_t key_dim);

}  // namespace sa
