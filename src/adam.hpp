/// \file adam.hpp
/// \brief Chapter 14: Adam (Kingma and Ba, 2015), the optimiser that trains the language model.
///        Each parameter keeps a running mean of its gradients and of their squares, and moves by
///        the ratio of the two: a step of about the learning rate, whatever the gradient's scale.
#pragma once

#include <cstddef>

#include "matrix.hpp"

namespace sa {

/// \brief Adam's settings, with the paper's defaults.
struct AdamSettings {
    double learning_rate = 1e-2;  ///< \f$ \alpha \f$, about the largest move of one entry in one step
    double beta1 = 0.9;           ///< \f$ \beta_1 \f$, how slowly the mean of the gradients forgets
    double beta2 = 0.999;         ///< \f$ \beta_2 \f$, how slowly the mean of their squares forgets
    double epsilon = 1e-8;        ///< \f$ \epsilon \f$, keeps the division finite where the gradient was 0
};

/// \brief Adam's memory for one parameter matrix: the running means m and v, both the shape
///        of the parameter and 0 before the first step.
struct AdamMoments {
    Matrix first = {};   ///< m, the running mean of the gradients
    Matrix second = {};  ///< v, the running mean of the squared gradients
};

/// \brief Zero moments for a parameter: m and v of its shape, all 0.
/// \param parameter the parameter matrix
/// \return the moments
[[nodiscard]] AdamMoments zero_moments(const Matrix& parameter);

/// \brief One Adam step on one parameter matrix, entry by entry (Kingma and Ba, 2015, Algorithm 1):
///        \f$ m \leftarrow \beta_1 m + (1 - \beta_1)\, g \f$,
///        \f$ v \leftarrow \beta_2 v + (1 - \beta_2)\, g^2 \f$,
///        \f$ \hat m = m / (1 - \beta_1^t) \f$, \f$ \hat v = v / (1 - \beta_2^t) \f$,
///        \f$ \theta \leftarrow \theta - \alpha\, \hat m / (\sqrt{\hat v} + \epsilon) \f$.
///
/// The corrections \f$ 1 - \beta^t \f$ undo the pull of the zero start on the early means: in
/// the first step \f$ \hat m = g \f$ and \f$ \hat v = g^2 \f$, so every entry with a gradient moves
/// by almost exactly \f$ \alpha \f$ against its sign.
/// Shapes: the parameter, the gradient, m and v all have the same shape.
/// \param parameter \f$ \theta \f$; changed in place
/// \param gradient g, \f$ \partial L / \partial \theta \f$
/// \param moments m and v; changed in place
/// \param step t, the number of this step, counting from 1
/// \param settings \f$ \alpha, \beta_1, \beta_2, \epsilon \f$
/// \throws ShapeError if the shapes differ
/// \throws std::invalid_argument if t is 0: "adam_step: step 0; Adam counts its steps from 1"
void adam_step(Matrix& parameter, const Matrix& gradient, AdamMoments& moments, std::size_t step,
               const AdamSettings& settings);

/// \brief Kingma and Ba's bound on one entry's move at step s, in units of α, for the sparsest
///        gradient: one that was 0 at every earlier step and is not 0 now,
///        \f$ \frac{1 - \beta_1}{1 - \beta_1^s} \cdot \frac{\sqrt{1 - \beta_2^s}}{\sqrt{1 - \beta_2}} \f$.
///
/// Then \f$ m = (1 - \beta_1) g \f$ and \f$ v = (1 - \beta_2) g^2 \f$, so with \f$ \epsilon = 0 \f$ the
/// move is exactly this, whatever g. It is 1 at step 1 and grows towards
/// \f$ (1 - \beta_1)/\sqrt{1 - \beta_2} \f$, 3.162 for the paper's β's; ε makes a move a little shorter.
/// \param settings β1 and β2
/// \param step s, from 1
/// \return the bound, in units of α
/// \throws std::invalid_argument if s is 0
[[nodiscard]] double sparse_move_bound(const AdamSettings& settings, std::size_t step);

/// \brief A bound on one entry's move at step s, in units of α, for any gradients:
///        sparse_move_bound() times \f$ \sqrt{\sum_{j=0}^{s-1} (\beta_1^2/\beta_2)^j} \f$.
///
/// By the Cauchy–Schwarz inequality, \f$ |\sum_j \beta_1^j g_{s-j}| \le
/// \sqrt{\sum_j (\beta_1^2/\beta_2)^j} \sqrt{\sum_j \beta_2^j g_{s-j}^2} \f$, with equality when the
/// gradient grows by \f$ \beta_2/\beta_1 \f$ every step; for the paper's β's the bound tends to 7.27.
/// \param settings β1 and β2
/// \param step s, from 1
/// \return the bound, in units of α
/// \throws std::invalid_argument if s is 0
[[nodiscard]] double move_bound(const AdamSettings& settings, std::size_t step);

}  // namespace sa
