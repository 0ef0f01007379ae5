/// \file gradient_check.hpp
/// \brief Chapter 11's check of every backward function: central finite differences.
///
/// A backward function computes \f$ \partial L / \partial X \f$ from a formula. The check
/// computes the same thing without any formula: nudge one entry of X up and down by a small
/// step h, run the forward pass each time, and divide the change in the loss by 2h. The two
/// must agree to many digits; a wrong transpose or a missing term does not.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The loss the book pushes through a layer when it has a gradient dO to send back:
///        \f$ L = \sum_{i,d} dO_{id}\, O_{id} \f$.
///
/// Its gradient with respect to O is exactly dO, whatever O is, so any upstream gradient
/// can be checked with it: a one-hot dO picks one output entry as the loss.
/// \param outputs O, n×d_v
/// \param d_outputs dO, n×d_v
/// \return \f$ L \f$
/// \throws ShapeError if the shapes differ
[[nodiscard]] double upstream_loss(const Matrix& outputs, const Matrix& d_outputs);

/// \brief The gradient of a loss by central finite differences:
///        \f$ \partial L / \partial X_{ij} \approx (L(X + h e_{ij}) - L(X - h e_{ij})) / 2h \f$.
///
/// The error of a central difference is about \f$ h^2 L''' / 6 \f$ from the curvature plus
/// about \f$ \varepsilon |L| / h \f$ from rounding (\f$ \varepsilon \approx 2.2 \cdot 10^{-16} \f$);
/// \f$ h = 10^{-5} \f$ keeps both near \f$ 10^{-11} \f$ for a loss and derivatives of size 1.
/// An entry that is \f$ -\infty \f$ stays \f$ -\infty \f$ when nudged, so its gradient is 0.
///
/// Shapes: the result has the shape of X; the loss is evaluated 2·rows·cols times.
/// \param loss L, a function of one matrix
/// \param at X, the point at which to differentiate
/// \param step h, greater than 0
/// \return the numeric gradient, the shape of X
/// \throws std::invalid_argument if the step is not greater than 0
[[nodiscard]] Matrix numeric_gradient(const std::function<double(const Matrix&)>& loss, const Matrix& at,
                                      double step);

/// \brief How far an analytic gradient is from a numeric one, relative to their size:
///        \f$ \max_{ij} |a_{ij} - n_{ij}| \, / \, \max_{ij} \max(|a_{ij}|, |n_{ij}|) \f$.
///
/// Measured against the largest entry, not entry by entry: an entry that should be 0 and
/// comes out as \f$ 10^{-12} \f$ from rounding is no error. Two all-zero matrices give 0.
/// \param analytic the gradient from a backward function
/// \param numeric the gradient from numeric_gradient()
/// \return the relative difference, 0 when they agree exactly; NaN if either holds NaN
/// \throws ShapeError if the shapes differ
[[nodiscard]] double relative_difference(const Matrix& analytic, const Matrix& numeric);

/// \brief One line of gradient_checks(): one analytic gradient against its numeric twin.
struct GradientCheck {
    std::string name = {};      ///< which gradient, e.g. "dW_Q"
    Matrix analytic = {};       ///< from the backward functions
    Matrix numeric = {};        ///< from numeric_gradient(), the same shape
    double difference = 0.0;    ///< relative_difference(analytic, numeric)
};

/// \brief Checks every gradient of attention_backward() against central finite differences.
///
/// For each of dA, dS', dS, dQ, dK, dV, dW_Q, dW_K, dW_V and dE, the numeric gradient nudges
/// that quantity alone and runs the rest of the forward pass from there, with the loss
/// upstream_loss(O, dO). Masked entries stay \f$ -\infty \f$ when the masked scores are
/// nudged, so they check the exact zeros too.
///
/// Shapes: as for attention_backward(): E is n×d_model, W_Q and W_K d_model×d_k, W_V
/// d_model×d_v, M n×n and dO n×d_v.
/// \param embeddings E
/// \param w_query W_Q
/// \param w_key W_K
/// \param w_value W_V
/// \param mask M, additive
/// \param d_outputs dO
/// \param step h for numeric_gradient()
/// \return one check per gradient, in the order of the backward pass
/// \throws ShapeError if the shapes do not fit together
[[nodiscard]] std::vector<GradientCheck> gradient_checks(const Matrix& embeddings, const Matrix& w_query,
                                                         const Matrix& w_key, const Matrix& w_value,
                                                         const Matrix& mask, const Matrix& d_outputs, double step);

/// \brief The checks as text, one line per gradient: its shape and whether the relative
///        difference is below \p tolerance.
///
/// The differences themselves are left out on purpose: they are rounding noise near
/// \f$ 10^{-10} \f$ whose last digits may differ between machines, while the verdict does not.
/// \param checks from gradient_checks()
/// \param tolerance the largest relative difference that counts as agreement, e.g. 1e-7
/// \return the lines
[[nodiscard]] std::string gradient_check_table(const std::vector<GradientCheck>& checks, double tolerance);

/// \brief The sum of each row of an entry-by-entry product: \f$ r_i = \sum_j X_{ij} Y_{ij} \f$.
///
/// For the weights and their gradient this is \f$ \mathrm{rowsum}(dA \circ A) \f$, the number
/// softmax_rows_backward() subtracts in each row; for the outputs and theirs it is
/// \f$ \mathrm{rowsum}(dO \circ O) \f$, and the two are equal.
/// \param lhs X, n×m
/// \param rhs Y, n×m
/// \return r, n×1
/// \throws ShapeError if the shapes differ
[[nodiscard]] Matrix rowsum_product(const Matrix& lhs, const Matrix& rhs);

}  // namespace sa
