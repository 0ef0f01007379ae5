/// \file experiment.hpp
/// \brief Chapter 3's experiments: why the scores are divided by \f$ \sqrt{d_k} \f$.
///
/// Random queries and keys with independent entries of mean 0 and variance 1 stand in
/// for the vectors of a real model. The first experiment measures how the variance of
/// \f$ q \cdot k \f$ grows with \f$ d_k \f$; the second measures what scores of that size
/// do to the softmax. Both draw from SplitMix64, so a seed fixes every printed number.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief Sample variance of all entries of a matrix, with the unbiased divisor \f$ N - 1 \f$:
///        \f$ s^2 = \frac{1}{N-1} \sum_i (x_i - \bar x)^2 \f$.
/// \param values any matrix with N = rows·cols entries
/// \return \f$ s^2 \f$
/// \throws std::invalid_argument if the matrix has fewer than 2 entries
[[nodiscard]] double sample_variance(const Matrix& values);

/// \brief The largest softmax weight of one row of scores,
///        \f$ p_{max} = e^{0} / \sum_j e^{s_j - s_{max}} = 1 / \sum_j e^{s_j - s_{max}} \f$.
///
/// This is the softmax of chapter 5 evaluated at the row's largest score only, written
/// out so that this chapter's experiment does not need the softmax function yet.
/// Shapes: \p row_scores is n×m with m ≥ 1; only row \p row is read. Expects finite scores.
/// \param row_scores the scores
/// \param row which row
/// \return \f$ p_{max} \f$, between \f$ 1/m \f$ and 1
/// \throws std::out_of_range if the row does not exist or has no entries
[[nodiscard]] double largest_weight(const Matrix& row_scores, std::size_t row);

/// \brief One line of the variance experiment: raw and scaled dot products at one \f$ d_k \f$.
struct VarianceRow {
    std::size_t key_dim = 0;       ///< \f$ d_k \f$, the length of each q and k
    std::size_t pairs = 0;         ///< how many independent pairs (q, k) were drawn
    double raw_variance = 0.0;     ///< sample variance of \f$ q \cdot k \f$; about \f$ d_k \f$
    double scaled_variance = 0.0;  ///< sample variance of \f$ q \cdot k / \sqrt{d_k} \f$; about 1
};

/// \brief Draws \p pairs independent pairs (q, k) of length \f$ d_k \f$ with unit-variance
///        entries and measures the variance of \f$ q \cdot k \f$ before and after scaling.
///
/// With independent entries of mean 0 and variance 1, each product \f$ q_i k_i \f$ has mean 0
/// and variance 1, and the \f$ d_k \f$ products are independent, so
/// \f$ \mathrm{Var}(q \cdot k) = d_k \f$ and \f$ \mathrm{Var}(q \cdot k / \sqrt{d_k}) = 1 \f$.
///
/// Shapes: Q and K are pairs×d_k; row i of Q is dotted with row i of K only, which keeps the
/// pairs independent (every query against every key would reuse each vector m times).
/// The scaled values come from scale().
/// \param key_dim \f$ d_k \f$, at least 1
/// \param pairs how many pairs to draw, at least 2
/// \param generator the generator; it advances by 2·pairs·d_k draws
/// \return the measured variances
/// \throws std::invalid_argument if key_dim is 0 or pairs is below 2
[[nodiscard]] VarianceRow score_variance(std::size_t key_dim, std::size_t pairs, SplitMix64& generator);

/// \brief A largest softmax weight counts as all-or-nothing above this value: one key
///        takes more than 99% of the attention.
inline constexpr double all_or_nothing = 0.99;

/// \brief Averages over many queries of the largest softmax weight \f$ p \f$ of each.
struct SoftmaxStats {
    double largest = 0.0;    ///< mean of \f$ p \f$, between \f$ 1/m \f$ and 1
    double gradient = 0.0;   ///< mean of \f$ p(1-p) \f$, between 0 and 1/4
    double saturated = 0.0;  ///< share of queries with \f$ p > \f$ all_or_nothing
};

/// \brief One line of the softmax experiment: the same queries and keys at one \f$ d_k \f$,
///        once with raw scores and once with scaled scores.
struct SaturationRow {
    std::size_t key_dim = 0;  ///< \f$ d_k \f$
    std::size_t keys = 0;     ///< keys per query, m
    std::size_t trials = 0;   ///< queries drawn, each against its own m keys
    SoftmaxStats raw;         ///< softmax of \f$ q K^\top \f$
    SoftmaxStats scaled;      ///< softmax of \f$ q K^\top / \sqrt{d_k} \f$
};

/// \brief Measures how close the softmax comes to all-or-nothing, with and without scaling.
///
/// Each trial draws one query q (1×d_k) and m keys K (m×d_k) with unit-variance entries,
/// takes the scores \f$ s = q K^\top \f$ (1×m) with scores(), and finds the largest softmax
/// weight \f$ p \f$ of s and of \f$ s / \sqrt{d_k} \f$. The factor \f$ p(1-p) \f$ is
/// \f$ \partial p / \partial s \f$ for that weight's own score: when \f$ p \to 1 \f$ it goes to 0,
/// and so does the gradient that training sends back through the softmax.
/// \param key_dim \f$ d_k \f$, at least 1
/// \param keys m, keys per query, at least 1
/// \param trials how many queries, at least 1
/// \param generator the generator; it advances by trials·(1 + m)·d_k draws
/// \return the averages over the trials
/// \throws std::invalid_argument if any count is 0
[[nodiscard]] SaturationRow softmax_saturation(std::size_t key_dim, std::size_t keys, std::size_t trials,
                                               SplitMix64& generator);

}  // namespace sa
