#include "masking.hpp"

#include <limits>
#include <stdexcept>

#include "exercise.hpp"

namespace sa {

//> causal-mask
Matrix causal_mask(std::size_t queries, std::size_t keys)
{
    // BEGIN SOLUTION causal_mask: chapter 4, Masking
    const double masked_out = -std::numeric_limits<double>::infinity();
    Matrix mask(queries, keys, 0.0);
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = i + 1; j < keys; ++j) {
            mask(i, j) = masked_out;  // key j comes after query i
        }
    }
    return mask;
    // END SOLUTION
}
//< causal-mask

//> causal-mask-bottom-right
Matrix causal_mask_bottom_right(std::size_t queries, std::size_t keys)
{
    const double masked_out = -std::numeric_limits<double>::infinity();
    Matrix mask(queries, keys, 0.0);
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = 0; j < keys; ++j) {
            if (j + queries > i + keys) {  // j > i + (m - n), without a negative number
                mask(i, j) = masked_out;
            }
        }
    }
    return mask;
}
//< causal-mask-bottom-right

//> padding-mask
Matrix padding_mask(std::size_t queries, const std::vector<bool>& key_is_real)
{
    // BEGIN SOLUTION padding_mask: chapter 4, Masking
    const double masked_out = -std::numeric_limits<double>::infinity();
    Matrix mask(queries, key_is_real.size(), 0.0);
    for (std::size_t i = 0; i < mask.rows(); ++i) {
        for (std::size_t j = 0; j < mask.cols(); ++j) {
            if (!key_is_real[j]) {
                mask(i, j) = masked_out;
            }
        }
    }
    return mask;
    // END SOLUTION
}
//< padding-mask

//> apply-mask
Matrix apply_mask(const Matrix& scaled_scores, const Matrix& mask)
{
    // BEGIN SOLUTION apply_mask: chapter 4, Masking
    if (scaled_scores.rows() != mask.rows() || scaled_scores.cols() != mask.cols()) {
        throw ShapeError(fmt::format("apply_mask: scores are {} but the mask is {}; they must have the same shape",
                                     shape(scaled_scores), shape(mask)));
    }
    Matrix masked(scaled_scores.rows(), scaled_scores.cols());
    for (std::size_t i = 0; i < masked.rows(); ++i) {
        for (std::size_t j = 0; j < masked.cols(); ++j) {
            const double entry = mask(i, j);
            if (entry != 0.0 && entry != -std::numeric_limits<double>::infinity()) {
                throw std::invalid_argument(fmt::format(
                    "apply_mask: mask entry ({}, {}) is {}; each entry must be 0 (takes part) or -inf (masked out)",
                    i, j, entry));
            }
            // Set, not add: a masked-out score becomes -inf even if it was NaN or +inf,
            // so a token that cannot be seen cannot change the row that does not see it.
            masked(i, j) = entry == 0.0 ? scaled_scores(i, j) : entry;
        }
    }
    return masked;
    // END SOLUTION
}
//< apply-mask

//> apply-mask-backward
Matrix apply_mask_backward(const Matrix& d_masked, const Matrix& mask)
{
    // BEGIN SOLUTION apply_mask_backward: chapter 11, Gradients
    if (d_masked.rows() != mask.rows() || d_masked.cols() != mask.cols()) {
        throw ShapeError(fmt::format(
            "apply_mask_backward: the gradient is {} but the mask is {}; they must have the same shape",
            shape(d_masked), shape(mask)));
    }
    Matrix d_scaled(d_masked.rows(), d_masked.cols());
    for (std::size_t i = 0; i < d_scaled.rows(); ++i) {
        for (std::size_t j = 0; j < d_scaled.cols(); ++j) {
            const double entry = mask(i, j);
            if (entry != 0.0 && entry != -std::numeric_limits<double>::infinity()) {
                throw std::invalid_argument(fmt::format(
                    "apply_mask_backward: mask entry ({}, {}) is {}; each entry must be 0 (takes part) or -inf "
                    "(masked out)", i, j, entry));
            }
            d_scaled(i, j) = entry == 0.0 ? d_masked(i, j) : 0.0;  // a masked score cannot move the loss
        }
    }
    return d_scaled;
    // END SOLUTION
}
//< apply-mask-backward

}  // namespace sa
