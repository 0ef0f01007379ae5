/// \file multi_head_backward.hpp
/// \brief Chapter 14: the backward pass of multi-head attention (chapter 9), built from the
///        backward steps of chapter 11 applied to each head's column slices.
#pragma once

#include <cstddef>

#include "matrix.hpp"

namespace sa {

/// \brief The gradients of multi_head_attention() with respect to its inputs and W_O.
struct MultiHeadGrads {
    Matrix d_queries = {};  ///< dQ, n×d_k: each head's dQ_i in its own columns
    Matrix d_keys = {};     ///< dK, m×d_k
    Matrix d_values = {};   ///< dV, m×d_v
    Matrix d_w_out = {};    ///< \f$ dW_O = C^\top dY \f$, d_v×d_out, with C the heads side by side
};

/// \brief Backpropagates a gradient dY at the outputs of multi_head_attention() to Q, K, V and W_O.
///
/// The forward pass is redone head by head to get each head's weights \f$ A_i \f$ and the
/// concatenation C. Then \f$ dC = dY\, W_O^\top \f$ and \f$ dW_O = C^\top dY \f$ (project_backward()),
/// and each head's slice \f$ dO_i \f$ of dC goes back through mix_backward(), softmax_rows_backward(),
/// apply_mask_backward(), scale_backward() (by \f$ \sqrt{d_k / h} \f$, the head's width) and
/// scores_backward(), landing in that head's columns of dQ, dK and dV. The heads share no
/// parameter, so nothing is added across heads except in \f$ dW_O \f$, through C.
///
/// Shapes: as multi_head_attention(): Q n×d_k, K m×d_k, V m×d_v, M n×m, W_O d_v×d_out, dY n×d_out.
/// \param queries Q
/// \param keys K
/// \param values V
/// \param mask M, additive, shared by every head
/// \param heads h
/// \param w_out \f$ W_O \f$
/// \param d_outputs dY, the gradient at the outputs
/// \return dQ, dK, dV and \f$ dW_O \f$
/// \throws ShapeError if the shapes do not fit together, as in multi_head_attention()
/// \throws std::invalid_argument if h is 0
[[nodiscard]] MultiHeadGrads multi_head_backward(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                                 const Matrix& mask, std::size_t heads, const Matrix& w_out,
                                                 const Matrix& d_outputs);

}  // namespace sa
