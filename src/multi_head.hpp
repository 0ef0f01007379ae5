/// \file multi_head.hpp
/// \brief Multi-head attention: several heads, each on its own column slice of Q, K
///        and V, written back side by side and multiplied by W_O.
///
/// The book's convention is the transformer paper's, and that of PyTorch and nanoGPT:
/// with h heads, head i owns columns \f$ [i \cdot d_{head}, (i+1) \cdot d_{head}) \f$
/// of Q, K and V. (PyTorch's nn.MultiheadAttention keeps \f$ W_Q \f$, \f$ W_K \f$
/// and \f$ W_V \f$ stacked as one in_proj_weight and multiplies by its transpose,
/// \f$ Q = E \, W_Q^{\top} \f$; the book's W_Q is that block, transposed.)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief Splits a matrix into h heads by columns: head i is columns
///        \f$ [i \cdot d_{head}, (i+1) \cdot d_{head}) \f$, with \f$ d_{head} = d / h \f$.
///
/// Shapes: the matrix is n×d, each of the h results is n×(d/h). Every row stays
/// with its token: row r of each head is a piece of row r of the matrix.
///
/// \param matrix Q, K or V, one row per token
/// \param heads h, at least 1
/// \return the h slices, head 0 first
/// \throws ShapeError if d is not a multiple of h (or is 0), e.g.
///         "split_heads: the matrix is 3×4, which does not split into 3 heads; its 4 columns are not a multiple of 3"
/// \throws std::invalid_argument if h is 0
[[nodiscard]] std::vector<Matrix> split_heads(const Matrix& matrix, std::size_t heads);

/// \brief Writes the heads' outputs back side by side ("concatenates" them):
///        \f$ C = [\,O_0 \mid O_1 \mid \dots \mid O_{h-1}\,] \f$.
///
/// The inverse of split_heads(): head i lands in columns
/// \f$ [i \cdot d_{head}, (i+1) \cdot d_{head}) \f$ of row r for each row r.
///
/// Shapes: h matrices, each n×d_i; the result is n×(d_0 + ... + d_{h-1}).
///
/// \param heads the heads' outputs, head 0 first
/// \return the concatenation, one row per token
/// \throws ShapeError if the heads have different numbers of rows
/// \throws std::invalid_argument if there is no head
[[nodiscard]] Matrix concat_heads(const std::vector<Matrix>& heads);

/// \brief Each head's attention weights:
///        \f$ A_i = \mathrm{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k / h}} + M\right) \f$.
///
/// The weights multi_head_attention() gives head i, for showing them: \f$ Q_i \f$ and
/// \f$ K_i \f$ are the column slices of split_heads(), and each head scales by the
/// width of its own slice. A row of M that is all \f$ -\infty \f$ gives all-zero weights.
///
/// Shapes: Q is n×d_k, K is m×d_k, M is n×m; each of the h results is n×m.
///
/// \param queries Q
/// \param keys K
/// \param mask M, additive, shared by every head
/// \param heads h, at least 1
/// \return the h weight matrices, head 0 first
/// \throws ShapeError if d_k is not a multiple of h or the shapes do not fit together
/// \throws std::invalid_argument if h is 0
[[nodiscard]] std::vector<Matrix> head_weights(const Matrix& queries, const Matrix& keys, const Matrix& mask,
                                               std::size_t heads);

/// \brief Multi-head attention:
///        \f$ \mathrm{MultiHead}(Q, K, V) = [\,\mathrm{head}_0 \mid \dots \mid \mathrm{head}_{h-1}\,] \, W_O \f$,
///        with \f$ \mathrm{head}_i = \mathrm{Attention}(Q_i, K_i, V_i) \f$ on column slices.
///
/// \f$ Q_i \f$, \f$ K_i \f$ and \f$ V_i \f$ are the column slices of split_heads();
/// each head runs attention() (chapter 7) on its slices with the same mask, so it
/// scales by \f$ \sqrt{d_k / h} \f$, the width of its own slice. The outputs are
/// joined by concat_heads() and multiplied by \f$ W_O \f$ from the right.
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v, M is n×m, \f$ W_O \f$ is d_v×d_out;
/// the result is n×d_out. n and m may differ (cross-attention), and so may d_k and
/// d_v, but both must be multiples of h.
///
/// Edges: with h = 1 and \f$ W_O = I \f$ the result is attention(Q, K, V, M) bit for
/// bit (for finite numbers). A row of M that is all \f$ -\infty \f$ gives an all-zero
/// output row in every head, so an all-zero row after \f$ W_O \f$, never NaN. A NaN
/// in one head's output reaches every output feature whose column of \f$ W_O \f$
/// reads it, since \f$ 0 \cdot \mathrm{NaN} \f$ is NaN.
///
/// \param queries Q, one query per row
/// \param keys K, one key per row (not transposed)
/// \param values V, one value per key row
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out), shared by every head
/// \param heads h, at least 1
/// \param w_out \f$ W_O \f$, one row per column of V
/// \return the outputs, n×d_out
/// \throws ShapeError if d_k or d_v is not a multiple of h, if \f$ W_O \f$ does not have
///         d_v rows, or if Q, K, V and M do not fit together as in attention(); the
///         message names multi_head_attention and the shapes
/// \throws std::invalid_argument if h is 0, or a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix multi_head_attention(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                          const Matrix& mask, std::size_t heads, const Matrix& w_out);

/// \brief The classic mistake: splits into heads by reshaping the row-major numbers
///        without the transpose, as `x.view(h, n, d / h)` does in PyTorch.
///
/// Reads the n×d matrix as one list of n·d numbers, row after row, and cuts it into
/// h blocks of n·(d/h) consecutive numbers, each read as n×(d/h). Head i, row r,
/// column c is number \f$ i \cdot n \cdot d_{head} + r \cdot d_{head} + c \f$ of the list.
/// A row of a head then holds pieces of different tokens. The right way, split_heads(),
/// is `x.view(n, h, d / h).transpose(0, 1)`.
///
/// Shapes: as split_heads(): n×d in, h results of n×(d/h) out.
///
/// \param matrix Q, K or V
/// \param heads h, at least 1
/// \return the h blocks, head 0 first
/// \throws ShapeError if d is not a multiple of h (or is 0)
/// \throws std::invalid_argument if h is 0
[[nodiscard]] std::vector<Matrix> split_heads_by_reshape(const Matrix& matrix, std::size_t heads);

/// \brief The mistake's way back: lays the heads' numbers end to end, head 0 first,
///        and reads them as n×(h·d_head) row after row, without the transpose.
///
/// Shapes: h matrices, each n×d_head; the result is n×(h·d_head).
///
/// \param heads the heads' outputs, all of the same shape
/// \return the merged matrix
/// \throws ShapeError if the heads differ in shape
/// \throws std::invalid_argument if there is no head
[[nodiscard]] Matrix concat_heads_by_reshape(const std::vector<Matrix>& heads);

/// \brief Multi-head attention with the classic mistake: as multi_head_attention(),
///        but split by split_heads_by_reshape() and merged by concat_heads_by_reshape().
///
/// Shown to be wrong, not to be used. With h = 1 the reshape changes nothing and it
/// agrees with multi_head_attention(); with more heads it mixes tokens and, in general,
/// gives other numbers.
///
/// Shapes, parameters and errors: as multi_head_attention().
/// \param queries Q, n×d_k
/// \param keys K, m×d_k
/// \param values V, m×d_v
/// \param mask M, n×m
/// \param heads h, at least 1
/// \param w_out \f$ W_O \f$, d_v×d_out
/// \return the wrong outputs, n×d_out
/// \throws ShapeError if the shapes do not fit, as in multi_head_attention()
/// \throws std::invalid_argument if h is 0
[[nodiscard]] Matrix multi_head_attention_by_reshape(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                                     const Matrix& mask, std::size_t heads, const Matrix& w_out);

}  // namespace sa
