/// \file tables.hpp
/// \brief The measurements of the book as text tables: the experiments of chapters 3 and 11,
///        the gradient checks of chapter 11 and the losses of chapter 12.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "experiment.hpp"
#include "gradient_check.hpp"
#include "gradient_experiment.hpp"

namespace sa {

/// \brief The losses of a training run as a table: one line per checkpoint, with the
///        training and the held-out loss.
/// \param checkpoints the steps at which the losses were taken, in order
/// \param training_loss the training loss after 0, 1, 2, ... steps; read at each checkpoint
/// \param held_out_loss the held-out loss at each checkpoint
/// \param precision decimals
/// \return a heading and the table
/// \throws std::invalid_argument if a checkpoint lies beyond training_loss or the held-out
///         losses are not one per checkpoint
[[nodiscard]] std::string loss_table(const std::vector<std::size_t>& checkpoints,
                                     const std::vector<double>& training_loss,
                                     const std::vector<double>& held_out_loss, int precision);

/// \brief The variance experiment as a table, one line per \f$ d_k \f$.
/// \param rows the measurements, in the order to print
/// \param precision decimals
/// \return a heading and the table
[[nodiscard]] std::string variance_table(const std::vector<VarianceRow>& rows, int precision);

/// \brief The softmax experiment as a table, one line per \f$ d_k \f$.
/// \param rows the measurements, in the order to print
/// \param precision decimals
/// \return a heading and the table
[[nodiscard]] std::string saturation_table(const std::vector<SaturationRow>& rows, int precision);

/// \brief The experiment as two tables, raw and scaled, one line per \f$ d_k \f$, in scientific
///        notation (the sizes span many orders of magnitude).
/// \param rows the measurements, in the order to print
/// \param precision digits after the point of each mantissa
/// \return a heading and the two tables
[[nodiscard]] std::string starvation_table(const std::vector<StarvationRow>& rows, int precision);

/// \brief The checks as text: the tolerance, then one line per gradient with its shape and
///        whether it agrees.
///
/// The differences themselves are left out on purpose: they are rounding noise near
/// \f$ 10^{-10} \f$ whose last digits may differ between machines, while the verdict does not.
/// \param checks from gradient_checks()
/// \return the lines
[[nodiscard]] std::string gradient_check_table(const std::vector<GradientCheck>& checks);

}  // namespace sa
