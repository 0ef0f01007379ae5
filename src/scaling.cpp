#include "scaling.hpp"

#include <cmath>
#include <stdexcept>

#include "exercise.hpp"

namespace sa {

//> scale
Matrix scale(const Matrix& raw_scores, std::size_t key_dim)
{
    // BEGIN SOLUTION scale: chapter 3, Scaling
    if (key_dim == 0) {
        throw std::invalid_argument(fmt::format("scale: d_k is 0 for scores of shape {}; d_k must be at least 1",
                                                shape(raw_scores)));
    }
    const double divisor = std::sqrt(static_cast<double>(key_dim));
    Matrix scaled(raw_scores.rows(), raw_scores.cols());
    for (std::size_t i = 0; i < raw_scores.rows(); ++i) {
        for (std::size_t j = 0; j < raw_scores.cols(); ++j) {
            scaled(i, j) = raw_scores(i, j) / divisor;
        }
    }
    return scaled;
    // END SOLUTION
}
//< scale

//> scale-backward
Matrix scale_backward(const Matrix& d_scaled, std::size_t key_dim)
{
    // BEGIN SOLUTION scale_backward: chapter 11, Gradients
    if (key_dim == 0) {
        throw std::invalid_argument(fmt::format(
            "scale_backward: d_k is 0 for a gradient of shape {}; d_k must be at least 1", shape(d_scaled)));
    }
    const double divisor = std::sqrt(static_cast<double>(key_dim));
    Matrix d_raw(d_scaled.rows(), d_scaled.cols());
    for (std::size_t i = 0; i < d_scaled.rows(); ++i) {
        for (std::size_t j = 0; j < d_scaled.cols(); ++j) {
            d_raw(i, j) = d_scaled(i, j) / divisor;
        }
    }
    return d_raw;
    // END SOLUTION
}
//< scale-backward

}  // namespace sa
