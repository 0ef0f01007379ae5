#pragma once

#include <cstddef>

/// \file head_tiles.hpp
/// \brief One attention head on one window of the training step (chapters 14 and 15), causal,
///        forward and backward, with its products in register tiles.
///
/// Every entry is the same sum in the same order as the plain loops that
/// sa::layer_forward() documents (each score over the features from the first to the last, each
/// output and gradient over the rows from the first to the last), each started from zero, with
/// one rounding per multiplication and per addition: only several sums advance at once, so the
/// bits are those of the plain loops.

namespace sa {

/// \brief Where one head's columns of one window's rows lie: entry (i, c) of Q is
///        `queries[i * stride + c]`, and likewise for K, V and the gradients.
struct HeadWindow {
    const double* queries = nullptr;  ///< Q, rows×head_dim, with rotary positions
    const double* keys = nullptr;     ///< K, rows×head_dim, with rotary positions
    const double* values = nullptr;   ///< V, rows×head_dim
    std::size_t stride = 0;           ///< the distance between two rows, in doubles
    std::size_t rows = 0;             ///< the window's length n
    std::size_t head_dim = 0;         ///< the head's width d/h
};

/// \brief The head forward: \f$ A = \mathrm{softmax}(Q K^\top / \sqrt{d/h}) \f$ under a causal mask,
///        and \f$ C = A V \f$.
/// \param head the window's Q, K and V
/// \param weights n×n, row by row: row i receives \f$ A_{i,0..i} \f$; the entries past the diagonal
///        are left as they are (zeros)
/// \param out C's first entry, with rows \p head.stride apart; every entry of the head's columns
///        is written, whatever it held before
void head_forward_tiled(const HeadWindow& head, double* weights, double* out);

/// \brief Where the head's gradients go, with rows HeadWindow::stride apart; every entry of the
///        head's columns is written, whatever it held before.
struct HeadGradients {
    double* d_queries = nullptr;  ///< dQ = dS K
    double* d_keys = nullptr;     ///< dK = dSᵀ Q
    double* d_values = nullptr;   ///< dV = Aᵀ dC
};

/// \brief The head backward: \f$ dA = dC\, V^\top \f$, \f$ dS = A \circ (dA - \mathrm{rowsum}(dA \circ A))
///        / \sqrt{d/h} \f$, then \f$ dQ = dS\, K \f$, \f$ dK = dS^\top Q \f$ and \f$ dV = A^\top dC \f$.
/// \param head the window's Q, K and V
/// \param weights A as head_forward_tiled() wrote it
/// \param d_out dC's first entry, rows \p head.stride apart
/// \param grads where dQ, dK and dV go
void head_backward_tiled(const HeadWindow& head, const double* weights, const double* d_out,
                         const HeadGradients& grads);

}  // namespace sa
