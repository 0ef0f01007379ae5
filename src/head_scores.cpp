#include "head_scores.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "exercise.hpp"

namespace sa {

//> previous-token-score
double previous_token_score(const Matrix& weights)
{
    // BEGIN SOLUTION previous_token_score: chapter 15, Two layers: the induction head
    const std::size_t n = weights.rows();
    if (weights.cols() != n || n < 2) {
        throw std::invalid_argument(fmt::format(
            "previous_token_score: weights of {}×{}; expected a square matrix of at least 2 rows",
            weights.rows(), weights.cols()));
    }
    double total = 0.0;
    for (std::size_t i = 1; i < n; ++i) {
        total += weights(i, i - 1);  // row i's weight on the character just before it
    }
    return total / static_cast<double>(n - 1);
    // END SOLUTION
}
//< previous-token-score

double offset_score(const Matrix& weights, std::size_t offset)
{
    const std::size_t n = weights.rows();
    if (weights.cols() != n || offset == 0 || offset >= n) {
        throw std::invalid_argument(fmt::format("offset_score: weights of {}×{} and an offset of {}; expected a square "
                                                "matrix and an offset from 1 to rows − 1", weights.rows(),
                                                weights.cols(), offset));
    }
    double total = 0.0;
    for (std::size_t i = offset; i < n; ++i) {
        total += weights(i, i - offset);
    }
    return total / static_cast<double>(n - offset);
}

//> induction-score
double induction_score(const Matrix& weights, std::size_t period)
{
    // BEGIN SOLUTION induction_score: chapter 15, Two layers: the induction head
    const std::size_t n = weights.rows();
    if (weights.cols() != n || period == 0 || period >= n) {
        throw std::invalid_argument(fmt::format(
            "induction_score: weights of {}×{} and a period of {}; expected a square matrix "
            "and a period from 1 to rows − 1", weights.rows(), weights.cols(), period));
    }
    double total = 0.0;
    for (std::size_t i = period; i < n; ++i) {
        total += weights(i, i - period + 1);  // the place just after the first occurrence of row i's character
    }
    return total / static_cast<double>(n - period);
    // END SOLUTION
}
//< induction-score

}  // namespace sa
