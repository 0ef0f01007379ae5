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

/// \brief What a central difference may miss by: an entry agrees when
///        \f$ |a - n| \le \mathrm{atol} + \mathrm{rtol} \cdot \max(|a|, |n|) \f$.
struct Tolerance {
    double atol = 0.0;  ///< for the rounding, whatever the size of the entry
    double rtol = 0.0;  ///< for the truncation, in proportion to the entry
};

/// \brief The safety factor of central_difference_tolerance() over each estimated error.
inline constexpr double tolerance_safety = 100.0;

/// \brief The tolerance of a central difference with step h, from its error budget.
///
/// Truncation: the central difference is off by about \f$ h^2 |L'''| / 6 \f$, which is
/// \f$ h^2 / 6 \f$ of the derivative where the third derivative is no larger than the
/// first. Rounding: each loss carries an error of about \f$ \varepsilon F \f$, where F is
/// the size of the terms it is computed from, and the difference of two losses is
/// divided by 2h, so about \f$ \varepsilon F / h \f$. With a safety factor
/// \f$ C \f$ = tolerance_safety over each: \f$ \mathrm{rtol} = C h^2 \f$ and
/// \f$ \mathrm{atol} = C \varepsilon F / h \f$.
/// \param loss_scale F, the size of the loss's terms (see gradient_checks())
/// \param step h, greater than 0
/// \return atol and rtol
[[nodiscard]] Tolerance central_difference_tolerance(double loss_scale, double step);

/// \brief How much of its tolerance the worst entry uses:
///        \f$ \max_{ij} |a_{ij} - n_{ij}| / (\mathrm{atol} + \mathrm{rtol} \max(|a_{ij}|, |n_{ij}|)) \f$.
///
/// At most 1 when every entry agrees; an entry exactly at its tolerance gives 1 and agrees.
/// Two equal entries use none of it, even with a tolerance of 0.
/// \param analytic the gradient from a backward function
/// \param numeric the gradient from numeric_gradient()
/// \param tolerance atol and rtol
/// \return the largest share; NaN if either holds NaN
/// \throws ShapeError if the shapes differ
[[nodiscard]] double tolerance_used(const Matrix& analytic, const Matrix& numeric, const Tolerance& tolerance);

/// \brief One line of gradient_checks(): one analytic gradient against its numeric twin.
struct GradientCheck {
    std::string name = {};      ///< which gradient, e.g. "dW_Q"
    Matrix analytic = {};       ///< from the backward functions
    Matrix numeric = {};        ///< from numeric_gradient(), the same shape
    Tolerance tolerance = {};   ///< central_difference_tolerance() of the check
    double used = 0.0;          ///< tolerance_used(analytic, numeric, tolerance): it agrees when at most 1
    /// \brief Whether every entry agrees within the tolerance (false when an entry is NaN).
    /// \return used <= 1
    [[nodiscard]] bool agrees() const { return used <= 1.0; }
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
/// The tolerance of every check comes from central_difference_tolerance(), with F the size
/// of the loss's terms, \f$ \sum_{id} |dO_{id}| (A |V|)_{id} \f$, times \f$ 1 + \max |S'_{ij}| \f$:
/// the softmax turns an absolute rounding error \f$ \varepsilon |s| \f$ of a score into
/// that relative error of its weights.
/// \return one check per gradient, in the order of the backward pass
/// \throws ShapeError if the shapes do not fit together
[[nodiscard]] std::vector<GradientCheck> gradient_checks(const Matrix& embeddings, const Matrix& w_query,
                                                         const Matrix& w_key, const Matrix& w_value,
                                                         const Matrix& mask, const Matrix& d_outputs, double step);

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
