/// \file sampling.hpp
/// \brief Chapter 16: from the logits of one step to one character. Greedy choice, a temperature,
///        a top-k cut, and a draw by the inverse of the cumulative distribution on one uniform number,
///        so that every choice can be followed by hand.
#pragma once

#include <cstddef>
#include <vector>

namespace sa {

/// \brief The index of the largest logit; the first one if several tie.
/// \param logits z, one per character, at least one
/// \return the greedy choice
/// \throws std::invalid_argument if there are no logits
[[nodiscard]] std::size_t greedy_choice(const std::vector<double>& logits);

/// \brief The probabilities a rule draws from: \f$ p_j = e^{(z_j - z_{\max})/\tau} / \sum_i e^{(z_i - z_{\max})/\tau} \f$
///        over the logits at or above the k-th largest (k = \p top_k), and 0 for every other character.
///
/// The largest logit is subtracted before the division by τ, so every exponent is at most 0 and no
/// temperature above 0 overflows: as τ falls, every logit below the largest gets an exponent that
/// runs to \f$ -\infty \f$ and a probability that runs to 0. The kept logits are those at or above
/// the k-th largest, so a logit tied with the k-th is kept too and more than k may be kept, as
/// Hugging Face's TopKLogitsWarper and nanoGPT keep them. The sums run over the characters in their
/// order, so top_k = d_vocab gives the plain softmax of z / τ bit for bit.
/// \param logits z, one per character, at least one
/// \param temperature τ, above 0
/// \param top_k k, from 1 to the number of logits
/// \return p, one per character, summing to 1 up to rounding
/// \throws std::invalid_argument for no logits, τ not above 0 (or not a number), or k outside 1..d_vocab
[[nodiscard]] std::vector<double> rule_probabilities(const std::vector<double>& logits, double temperature,
                                                     std::size_t top_k);

/// \brief The inverse-CDF draw: the first character j whose cumulative probability
///        \f$ c_j = p_0 + \dots + p_j \f$ (summed in this order) is above \p uniform.
///
/// A uniform number u in [0, 1) falls in the interval \f$ [c_{j-1}, c_j) \f$ of width \f$ p_j \f$, so
/// character j is drawn with probability \f$ p_j \f$. If rounding leaves \f$ c_{V-1} \le u \f$, the
/// last character with a probability above 0 is drawn.
/// \param probabilities p, at least one above 0
/// \param uniform u, in [0, 1)
/// \return the drawn character
/// \throws std::invalid_argument if no probability is above 0 or u is outside [0, 1)
[[nodiscard]] std::size_t inverse_cdf_draw(const std::vector<double>& probabilities, double uniform);

/// \brief One character from logits: rule_probabilities() with the temperature and the top-k, then
///        inverse_cdf_draw() with the uniform number.
/// \param logits z, one per character
/// \param temperature τ, above 0
/// \param top_k k, from 1 to the number of logits
/// \param uniform u, in [0, 1)
/// \return the drawn character
/// \throws std::invalid_argument as rule_probabilities() and inverse_cdf_draw() do
[[nodiscard]] std::size_t sample_character(const std::vector<double>& logits, double temperature,
                                           std::size_t top_k, double uniform);

}  // namespace sa
