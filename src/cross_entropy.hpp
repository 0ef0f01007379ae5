/// \file cross_entropy.hpp
/// \brief Chapter 14: from logits to a loss. The softmax over the vocabulary turns each row of
///        logits into probabilities of the next character; the cross-entropy is the mean of
///        \f$ -\ln p \f$ of the character that came.
#pragma once

#include <cstddef>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The loss of a batch of predictions and its gradient at the logits.
struct CrossEntropy {
    double loss = 0.0;     ///< \f$ L \f$, the mean over rows of \f$ -\ln p_{i, t_i} \f$, in nats per character
    Matrix d_logits = {};  ///< \f$ \partial L / \partial Z = (P - Y) / N \f$, N×V, with Y one-hot of the targets
};

/// \brief The mean cross-entropy of logits against target tokens, and its gradient:
///        \f$ P = \mathrm{softmax}(Z) \f$ row by row,
///        \f$ L = -\frac{1}{N} \sum_i \ln P_{i, t_i} \f$,
///        \f$ \partial L / \partial Z_{ij} = (P_{ij} - [j = t_i]) / N \f$.
///
/// Each row's softmax subtracts the row's largest logit first (chapter 5), and the log of the
/// target's probability is taken as \f$ (Z_{i,t_i} - \max_j Z_{ij}) - \ln \sum_j e^{Z_{ij} - \max_j Z_{ij}} \f$,
/// which stays finite where \f$ P_{i, t_i} \f$ itself would round to 0.
///
/// Shapes: Z is N×V, one row per predicted character; there are N targets, each below V.
/// Edges: all-zero logits give \f$ L = \ln V \f$ exactly up to rounding, the loss of guessing
/// uniformly. Each row of the gradient sums to 0.
/// \param logits Z, N×V
/// \param targets \f$ t_i \f$, the token that came after position i
/// \return the loss and \f$ \partial L / \partial Z \f$
/// \throws std::invalid_argument if there is no row or the targets are not one per row, e.g.
///         "cross_entropy: Z is 2×3 but there are 1 targets; give one target per row, and at least
///         one", or if a target is not below V, e.g. "cross_entropy: target 3 of row 0 is not below
///         d_vocab = 3"
[[nodiscard]] CrossEntropy cross_entropy(const Matrix& logits, const std::vector<std::size_t>& targets);

}  // namespace sa
