/// \file plots.hpp
/// \brief The measurements of the book as line plots, ready for line_plot_svg(): the
///        experiments of chapters 3 and 11, the rotary scores of chapter 10 and the losses of
///        chapter 12.
#pragma once

#include <cstddef>
#include <vector>

#include "experiment.hpp"
#include "gradient_experiment.hpp"
#include "matrix.hpp"
#include "svg.hpp"

namespace sa {

/// \brief The losses of a training run as a line plot on a logarithmic y axis: the
///        training loss every \p every steps (and at the last step), the held-out loss at
///        each checkpoint.
/// \param training_loss the training loss after 0, 1, 2, ... steps, all positive
/// \param every the distance between plotted steps of the training loss, at least 1
/// \param checkpoints the steps at which the held-out loss was taken
/// \param held_out_loss the held-out loss at each checkpoint, all positive
/// \return the plot, ready for line_plot_svg()
/// \throws std::invalid_argument if there is no training loss, \p every is 0, or the held-out
///         losses are not one per checkpoint
[[nodiscard]] LinePlot loss_plot(const std::vector<double>& training_loss, std::size_t every,
                                 const std::vector<std::size_t>& checkpoints, const std::vector<double>& held_out_loss);

/// \brief The variance experiment as a line plot on logarithmic axes: raw and scaled
///        variance against \f$ d_k \f$.
/// \param rows the measurements
/// \return the plot, ready for line_plot_svg()
[[nodiscard]] LinePlot variance_plot(const std::vector<VarianceRow>& rows);

/// \brief The medians as a line plot on logarithmic axes: \f$ \|dS'\| \f$ and \f$ \|dW_Q\| \f$,
///        raw and scaled, against \f$ d_k \f$.
/// \param rows the measurements
/// \return the plot, ready for line_plot_svg()
[[nodiscard]] LinePlot starvation_plot(const std::vector<StarvationRow>& rows);

/// \brief A rotary score table read along its diagonals, as a line plot against the offset
///        b − a: one series "with rotary positions" takes, for each offset from
///        −(positions − 1) to positions − 1, the first cell of that diagonal (a = max(0, −offset),
///        b = a + offset); the other, "without positions", is the plain score q·k at every offset.
/// By the relative property of rope() every cell of a diagonal holds the same score, so the
/// first cell speaks for the whole diagonal.
/// Shapes: \p table is positions×positions, as rope_score_table() gives it.
/// \param table the scores \f$ (R_a q) \cdot (R_b k) \f$, rows a, columns b
/// \param plain_score q·k, the score without positions
/// \return the plot, ready for line_plot_svg()
/// \throws ShapeError if \p table is empty or not square
[[nodiscard]] LinePlot rope_offset_plot(const Matrix& table, double plain_score);

}  // namespace sa
