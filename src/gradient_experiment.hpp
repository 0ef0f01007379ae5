/// \file gradient_experiment.hpp
/// \brief Chapter 11's experiment: how much gradient survives the softmax as \f$ d_k \f$ grows,
///        with and without the division by \f$ \sqrt{d_k} \f$.
///
/// Chapter 3 argued from the factor \f$ p(1-p) \f$ that large scores starve the gradients.
/// This experiment measures the gradients themselves, with the backward functions of
/// chapter 11, on random queries, keys and values drawn from SplitMix64, so a seed fixes
/// every printed number.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief The Frobenius norm, \f$ \|X\| = \sqrt{\sum_{ij} X_{ij}^2} \f$: the size of a whole gradient.
/// \param matrix any matrix
/// \return \f$ \|X\| \f$, 0 for an empty matrix
[[nodiscard]] double frobenius_norm(const Matrix& matrix);

/// \brief The median of some numbers: the middle one after sorting, or the mean of the two
///        middle ones when the count is even.
/// \param numbers at least one number, none NaN
/// \return the median
/// \throws std::invalid_argument if there are no numbers
[[nodiscard]] double median(std::vector<double> numbers);

/// \brief The size of the gradients over many random queries, at one \f$ d_k \f$, one way of scoring.
struct GradientSize {
    double scores_median = 0.0;   ///< median over the queries of \f$ \|dS'\| \f$, the gradient out of the softmax
    double scores_mean = 0.0;     ///< mean of \f$ \|dS'\| \f$
    double w_query_median = 0.0;  ///< median of \f$ \|dW_Q\| \f$, the gradient that reaches the query projection
    double w_query_mean = 0.0;    ///< mean of \f$ \|dW_Q\| \f$
};

/// \brief One line of the experiment: the same random draws at one \f$ d_k \f$, scored raw and scaled.
struct StarvationRow {
    std::size_t key_dim = 0;  ///< \f$ d_k \f$
    std::size_t keys = 0;     ///< keys per query, m
    std::size_t trials = 0;   ///< queries drawn, each with its own keys, values and upstream gradient
    GradientSize raw;         ///< softmax of \f$ q K^\top \f$
    GradientSize scaled;      ///< softmax of \f$ q K^\top / \sqrt{d_k} \f$
};

/// \brief Measures the gradient that reaches the scores and \f$ W_Q \f$, with and without scaling.
///
/// Each trial draws an embedding e (1×d_model), a projection \f$ W_Q \f$ (d_model×d_k, entries
/// divided by \f$ \sqrt{d_{model}} \f$ so that \f$ q = e W_Q \f$ has entries of variance 1), keys K
/// (m×d_k), values V (m×d_v) and an upstream gradient dO (1×d_v), all with unit-variance entries.
/// It runs q = project(), scores(), optionally scale(), softmax_rows() and mix() forward, then
/// mix_backward(), softmax_rows_backward(), optionally scale_backward(), scores_backward() and
/// project_backward() back, and records \f$ \|dS'\| \f$ and \f$ \|dW_Q\| \f$. Raw and scaled use the
/// same draws.
/// \param key_dim \f$ d_k \f$, at least 1
/// \param keys m, at least 1
/// \param model_dim d_model, at least 1
/// \param value_dim d_v, at least 1
/// \param trials how many queries, at least 1
/// \param generator the generator; it advances by trials·(d_model·(1 + d_k) + m·(d_k + d_v) + d_v) draws
/// \return medians and means over the trials
/// \throws std::invalid_argument if any count is 0
[[nodiscard]] StarvationRow gradient_starvation(std::size_t key_dim, std::size_t keys, std::size_t model_dim,
                                                std::size_t value_dim, std::size_t trials, SplitMix64& generator);

}  // namespace sa
