/// \file head_scores.hpp
/// \brief Chapter 15: two scores of one head's attention weights, which tell a previous-token
///        head and an induction head apart: how much weight each row puts a fixed number of
///        characters back, and how much, in a repeated sequence, just after the current
///        character's first occurrence.
#pragma once

#include <cstddef>

#include "matrix.hpp"

namespace sa {

/// \brief How much a head looks at the character just before: the mean over rows i = 1 … n−1 of
///        \f$ A_{i, i-1} \f$.
///
/// Row 0 has no previous character and is left out. A head that puts all its weight on the
/// previous character scores 1; a uniform causal head (\f$ A_{ij} = 1/(i+1) \f$) scores the mean
/// of \f$ 1/(i+1) \f$ over i = 1 … n−1.
/// \param weights a head's attention weights on one window, n×n, n at least 2
/// \return the score, from 0 to 1
/// \throws std::invalid_argument if the matrix is not square or has fewer than 2 rows
[[nodiscard]] double previous_token_score(const Matrix& weights);

/// \brief How much a head looks k characters back: the mean over rows i = k … n−1 of
///        \f$ A_{i, i-k} \f$. previous_token_score() is offset 1.
/// \param weights a head's attention weights on one window, n×n
/// \param offset k, from 1 to n − 1
/// \return the score, from 0 to 1
/// \throws std::invalid_argument if the matrix is not square or the offset does not fit
[[nodiscard]] double offset_score(const Matrix& weights, std::size_t offset);

/// \brief How much a head looks, in the second copy of a repeated sequence, at the place just after
///        the current character's first occurrence: the mean over rows i = period … n−1 of
///        \f$ A_{i,\, i - \text{period} + 1} \f$.
///
/// In a sequence that repeats with that period, row i's character first occurred at i − period;
/// the character after it, at i − period + 1, is the one that comes next again. A perfect
/// induction head scores 1.
/// \param weights a head's attention weights on one window, n×n
/// \param period the length of the repeated part, at least 1 and below n
/// \return the score, from 0 to 1
/// \throws std::invalid_argument if the matrix is not square or the period does not fit
[[nodiscard]] double induction_score(const Matrix& weights, std::size_t period);

}  // namespace sa
