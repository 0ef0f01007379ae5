#include "gradient_check.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "attention.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

double upstream_loss(const Matrix& outputs, const Matrix& d_outputs)
{
    if (outputs.rows() != d_outputs.rows() || outputs.cols() != d_outputs.cols()) {
        throw ShapeError(fmt::format("upstream_loss: O is {} but dO is {}; they must have the same shape",
                                     shape(outputs), shape(d_outputs)));
    }
    double loss = 0.0;
    for (std::size_t i = 0; i < outputs.rows(); ++i) {
        for (std::size_t d = 0; d < outputs.cols(); ++d) {
            loss += d_outputs(i, d) * outputs(i, d);
        }
    }
    return loss;
}

//> numeric-gradient
Matrix numeric_gradient(const std::function<double(const Matrix&)>& loss, const Matrix& at, double step)
{
    //{ checks that the step is positive
    if (!(step > 0.0)) {
        throw std::invalid_argument(fmt::format("numeric_gradient: the step is {}; it must be greater than 0", step));
    }
    //}
    Matrix gradient(at.rows(), at.cols());
    Matrix nudged = at;
    for (std::size_t i = 0; i < at.rows(); ++i) {
        for (std::size_t j = 0; j < at.cols(); ++j) {
            const double above = at(i, j) + step;  // rounded: at 1e4, the step is off by 1e-7 of itself
            const double below = at(i, j) - step;
            nudged(i, j) = above;
            const double up = loss(nudged);
            nudged(i, j) = below;
            const double down = loss(nudged);
            nudged(i, j) = at(i, j);
            // -inf ± h is -inf again: the loss does not move, and neither may the gradient.
            // Otherwise divide by the distance the entry really moved, not by 2h.
            gradient(i, j) = up == down ? 0.0 : (up - down) / (above - below);
        }
    }
    return gradient;
}
//< numeric-gradient

double relative_difference(const Matrix& analytic, const Matrix& numeric)
{
    if (analytic.rows() != numeric.rows() || analytic.cols() != numeric.cols()) {
        throw ShapeError(fmt::format("relative_difference: the analytic gradient is {} but the numeric one is {}; "
                                     "they must have the same shape", shape(analytic), shape(numeric)));
    }
    const double largest_gap = largest_difference(analytic, numeric);  // NaN if either holds NaN
    if (std::isnan(largest_gap)) {
        return largest_gap;
    }
    const double largest_entry = std::fmax(largest_magnitude(analytic), largest_magnitude(numeric));
    return largest_entry == 0.0 ? 0.0 : largest_gap / largest_entry;
}

Tolerance central_difference_tolerance(double loss_scale, double step)
{
    constexpr double epsilon = std::numeric_limits<double>::epsilon();
    return {tolerance_safety * epsilon * loss_scale / step, tolerance_safety * step * step};
}

double tolerance_used(const Matrix& analytic, const Matrix& numeric, const Tolerance& tolerance)
{
    if (analytic.rows() != numeric.rows() || analytic.cols() != numeric.cols()) {
        throw ShapeError(fmt::format("tolerance_used: the analytic gradient is {} but the numeric one is {}; "
                                     "they must have the same shape", shape(analytic), shape(numeric)));
    }
    double used = 0.0;
    for (std::size_t i = 0; i < analytic.rows(); ++i) {
        for (std::size_t j = 0; j < analytic.cols(); ++j) {
            const double a = analytic(i, j);
            const double n = numeric(i, j);
            if (std::isnan(a) || std::isnan(n)) {
                return std::numeric_limits<double>::quiet_NaN();
            }
            const double gap = std::fabs(a - n);
            if (gap > 0.0) {  // equal entries use none of the tolerance, even a tolerance of 0
                used = std::fmax(used, gap / (tolerance.atol + tolerance.rtol * std::fmax(std::fabs(a), std::fabs(n))));
            }
        }
    }
    return used;
}

namespace {

// F of gradient_checks(): the size of the loss's terms, sum |dO|∘(A·|V|), times 1 + the
// largest finite |score| at the softmax's input.
double loss_scale(const Matrix& weights, const Matrix& values, const Matrix& masked, const Matrix& d_outputs)
{
    double largest_score = 0.0;
    for (std::size_t i = 0; i < masked.rows(); ++i) {
        for (std::size_t j = 0; j < masked.cols(); ++j) {
            if (std::isfinite(masked(i, j))) {
                largest_score = std::fmax(largest_score, std::fabs(masked(i, j)));
            }
        }
    }
    double terms = 0.0;
    for (std::size_t i = 0; i < weights.rows(); ++i) {
        for (std::size_t d = 0; d < values.cols(); ++d) {
            double mixed = 0.0;  // (A·|V|)_id
            for (std::size_t j = 0; j < weights.cols(); ++j) {
                mixed += weights(i, j) * std::fabs(values(j, d));
            }
            terms += std::fabs(d_outputs(i, d)) * mixed;
        }
    }
    return terms * (1.0 + largest_score);
}

}  // namespace

std::vector<GradientCheck> gradient_checks(const Matrix& embeddings, const Matrix& w_query, const Matrix& w_key,
                                           const Matrix& w_value, const Matrix& mask, const Matrix& d_outputs,
                                           double step)
{
    const AttentionGrads grads = attention_backward(embeddings, w_query, w_key, w_value, mask, d_outputs);
    const std::size_t key_dim = w_query.cols();
    // The forward pass from each point on, as a loss of the one quantity that is nudged.
    const auto from_weights = [&](const Matrix& values) {
        return [&d_outputs, values](const Matrix& weights) { return upstream_loss(mix(weights, values), d_outputs); };
    };
    const auto from_masked = [&](const Matrix& values) {
        return [&d_outputs, values](const Matrix& masked) {
            return upstream_loss(mix(softmax_rows(masked), values), d_outputs);
        };
    };
    const auto from_scores = [&](const Matrix& values) {
        return [&d_outputs, &mask, values, key_dim](const Matrix& raw) {
            return upstream_loss(mix(softmax_rows(apply_mask(scale(raw, key_dim), mask)), values), d_outputs);
        };
    };
    const auto from_qkv = [&](const Matrix& queries, const Matrix& keys, const Matrix& values) {
        return upstream_loss(attention(queries, keys, values, mask), d_outputs);
    };
    const auto from_projections = [&](const Matrix& e, const Matrix& wq, const Matrix& wk, const Matrix& wv) {
        return from_qkv(project(e, wq), project(e, wk), project(e, wv));
    };
    const Matrix queries = project(embeddings, w_query);
    const Matrix keys = project(embeddings, w_key);
    const Matrix values = project(embeddings, w_value);
    const Matrix raw = scores(queries, keys);
    const Matrix masked = apply_mask(scale(raw, key_dim), mask);
    const Matrix weights = softmax_rows(masked);

    const Tolerance tolerance = central_difference_tolerance(loss_scale(weights, values, masked, d_outputs), step);
    std::vector<GradientCheck> checks;
    const auto add = [&](const std::string& name, const Matrix& analytic,
                         const std::function<double(const Matrix&)>& loss, const Matrix& at) {
        const Matrix numeric = numeric_gradient(loss, at, step);
        checks.push_back({name, analytic, numeric, tolerance, tolerance_used(analytic, numeric, tolerance)});
    };
    add("dA", grads.d_weights, from_weights(values), weights);
    add("dS'", grads.d_masked, from_masked(values), masked);
    add("dS", grads.d_scores, from_scores(values), raw);
    add("dQ", grads.d_queries, [&](const Matrix& x) { return from_qkv(x, keys, values); }, queries);
    add("dK", grads.d_keys, [&](const Matrix& x) { return from_qkv(queries, x, values); }, keys);
    add("dV", grads.d_values, [&](const Matrix& x) { return from_qkv(queries, keys, x); }, values);
    add("dW_Q", grads.d_w_query,
        [&](const Matrix& x) { return from_projections(embeddings, x, w_key, w_value); }, w_query);
    add("dW_K", grads.d_w_key,
        [&](const Matrix& x) { return from_projections(embeddings, w_query, x, w_value); }, w_key);
    add("dW_V", grads.d_w_value,
        [&](const Matrix& x) { return from_projections(embeddings, w_query, w_key, x); }, w_value);
    add("dE", grads.d_embeddings,
        [&](const Matrix& x) { return from_projections(x, w_query, w_key, w_value); }, embeddings);
    return checks;
}

Matrix rowsum_product(const Matrix& lhs, const Matrix& rhs)
{
    if (lhs.rows() != rhs.rows() || lhs.cols() != rhs.cols()) {
        throw ShapeError(fmt::format("rowsum_product: X is {} but Y is {}; they must have the same shape", shape(lhs),
                                     shape(rhs)));
    }
    Matrix sums(lhs.rows(), 1);
    for (std::size_t i = 0; i < lhs.rows(); ++i) {
        for (std::size_t j = 0; j < lhs.cols(); ++j) {
            sums(i, 0) += lhs(i, j) * rhs(i, j);
        }
    }
    return sums;
}

}  // namespace sa
