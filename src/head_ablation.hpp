/// \file head_ablation.hpp
/// \brief Chapter 15: one layer of the model with one head silenced, the experiment that shows
///        what the head does (circuits.hpp runs the whole model with it).
#pragma once

#include <cstddef>

#include "language_model.hpp"
#include "matrix.hpp"

namespace sa {

/// \brief One layer with one head's output zeroed: \f$ Y = X + C' W_O \f$, where C' is C with
///        the head's d/h columns set to 0. Every other head's columns of C are computed exactly as
///        by layer_forward(), so they are the same bit for bit.
/// \param layer the layer's matrices
/// \param input X, N×d
/// \param heads h
/// \param window the rows of each window
/// \param head the head to zero, below h
/// \param trace where to keep the layer's work (its joined holds C'); may be null
/// \return Y, N×d
/// \throws std::invalid_argument if the head is not below h
[[nodiscard]] Matrix ablated_layer_forward(const AttentionLayer& layer, const Matrix& input, std::size_t heads,
                                           std::size_t window, std::size_t head, LayerTrace* trace);

}  // namespace sa
