#include "softmax.hpp"

#include <cmath>
#include <limits>

#include "exercise.hpp"

namespace sa {

//> softmax-rows
Matrix softmax_rows(const Matrix& scores)
{
    // BEGIN SOLUTION softmax_rows: chapter 5, Softmax
    constexpr double infinity = std::numeric_limits<double>::infinity();
    Matrix weights(scores.rows(), scores.cols());
    for (std::size_t i = 0; i < scores.rows(); ++i) {
        // Start the running maximum at -inf, not at some large negative number.
        double row_max = -infinity;
        bool has_nan = false;
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            has_nan = has_nan || std::isnan(scores(i, j));
            row_max = std::fmax(row_max, scores(i, j));
        }
        if (has_nan) {
            for (std::size_t j = 0; j < scores.cols(); ++j) {
                weights(i, j) = std::numeric_limits<double>::quiet_NaN();
            }
            continue;
        }
        if (row_max == -infinity) {
            continue;  // fully masked: the row stays all zeros
        }
        if (row_max == infinity) {
            double count = 0.0;
            for (std::size_t j = 0; j < scores.cols(); ++j) {
                count += scores(i, j) == infinity ? 1.0 : 0.0;
            }
            for (std::size_t j = 0; j < scores.cols(); ++j) {
                weights(i, j) = scores(i, j) == infinity ? 1.0 / count : 0.0;
            }
            continue;
        }
        double total = 0.0;
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            weights(i, j) = std::exp(scores(i, j) - row_max);  // each term is in (0, 1]
            total += weights(i, j);
        }
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            weights(i, j) /= total;
        }
    }
    return weights;
    // END SOLUTION
}
//< softmax-rows

//> softmax-rows-backward
Matrix softmax_rows_backward(const Matrix& weights, const Matrix& d_weights)
{
    // BEGIN SOLUTION softmax_rows_backward: chapter 11, Gradients
    if (weights.rows() != d_weights.rows() || weights.cols() != d_weights.cols()) {
        throw ShapeError(fmt::format("softmax_rows_backward: A is {} but dA is {}; they must have the same shape",
                                     shape(weights), shape(d_weights)));
    }
    Matrix d_scores(weights.rows(), weights.cols());
    for (std::size_t i = 0; i < weights.rows(); ++i) {
        // c_i = rowsum(dA ∘ A): the blame of the row's weighted average, which every
        // entry shares because the weights must keep summing to 1.
        double shared = 0.0;
        for (std::size_t j = 0; j < weights.cols(); ++j) {
            shared += d_weights(i, j) * weights(i, j);
        }
        for (std::size_t j = 0; j < weights.cols(); ++j) {
            d_scores(i, j) = weights(i, j) * (d_weights(i, j) - shared);
        }
    }
    return d_scores;
    // END SOLUTION
}
//< softmax-rows-backward

}  // namespace sa
