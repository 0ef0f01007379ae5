/// \file grouped_query.hpp
/// \brief Chapter 18: grouped-query attention. h query heads share \f$ h_{kv} \f$ key/value
///        heads; \f$ h_{kv} = h \f$ is chapter 9's multi-head attention, \f$ h_{kv} = 1 \f$ is
///        multi-query attention.
///
/// The book's convention is that of the Llama models and of PyTorch's `repeat_interleave`:
/// the query heads come in \f$ h_{kv} \f$ groups of \f$ h / h_{kv} \f$ consecutive heads, and
/// query head a reads key/value head \f$ \lfloor a \, h_{kv} / h \rfloor \f$. With h = 4 and
/// \f$ h_{kv} = 2 \f$, query heads 0 and 1 read key/value head 0, heads 2 and 3 read head 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "language_model.hpp"
#include "matrix.hpp"
#include "multi_head_backward.hpp"

namespace sa {

/// \brief The key/value head that query head a reads: \f$ \lfloor a \, h_{kv} / h \rfloor \f$.
/// \param query_head a, from 0 to h - 1
/// \param query_heads h
/// \param kv_heads \f$ h_{kv} \f$, which divides h
/// \return the key/value head, from 0 to \f$ h_{kv} - 1 \f$
/// \throws std::invalid_argument if \f$ h_{kv} \f$ is 0, does not divide h, or a is not below h
[[nodiscard]] std::size_t kv_head_of(std::size_t query_head, std::size_t query_heads, std::size_t kv_heads);

/// \brief Repeats each of the \f$ h_{kv} \f$ heads of K (or V) \f$ h / h_{kv} \f$ times, side
///        by side, so that chapter 9's multi_head_attention() finds one key head per query head.
///
/// Head b of the input (columns \f$ [b \, w, (b+1) \, w) \f$, with w its width) lands in
/// heads \f$ b \, h/h_{kv} \f$ to \f$ (b+1) \, h/h_{kv} - 1 \f$ of the result: PyTorch's
/// `repeat_interleave(h / h_kv, dim=head)`. Every number is copied, none computed.
///
/// Shapes: m×(\f$ h_{kv} \f$·w) in, m×(h·w) out.
/// \param matrix K or V, the key/value heads side by side
/// \param kv_heads \f$ h_{kv} \f$, at least 1; it divides the columns of the matrix
/// \param query_heads h, a multiple of \f$ h_{kv} \f$
/// \return the heads repeated, one per query head
/// \throws std::invalid_argument if \f$ h_{kv} \f$ is 0 or does not divide h
/// \throws ShapeError if the columns of the matrix are not a multiple of \f$ h_{kv} \f$ (or are 0)
[[nodiscard]] Matrix repeat_kv_heads(const Matrix& matrix, std::size_t kv_heads, std::size_t query_heads);

/// \brief The backward of repeat_kv_heads(): each key/value head's gradient is the sum of the
///        gradients of its \f$ h / h_{kv} \f$ copies, added in the order of the query heads.
///
/// Shapes: m×(h·w) in, m×(\f$ h_{kv} \f$·w) out.
/// \param repeated the gradient with respect to the repeated matrix, one head per query head
/// \param kv_heads \f$ h_{kv} \f$, at least 1
/// \param query_heads h, a multiple of \f$ h_{kv} \f$
/// \return the gradient with respect to the key/value heads
/// \throws std::invalid_argument if \f$ h_{kv} \f$ is 0 or does not divide h
/// \throws ShapeError if the columns are not a multiple of h (or are 0)
[[nodiscard]] Matrix sum_kv_heads(const Matrix& repeated, std::size_t kv_heads, std::size_t query_heads);

/// \brief Grouped-query attention:
///        \f$ [\,\mathrm{head}_0 \mid \dots \mid \mathrm{head}_{h-1}\,] \, W_O \f$ with
///        \f$ \mathrm{head}_a = \mathrm{Attention}(Q_a, K_b, V_b) \f$, \f$ b = \lfloor a \, h_{kv} / h \rfloor \f$.
///
/// Q splits into h heads of width \f$ d_k / h \f$, K into \f$ h_{kv} \f$ heads of the same
/// width and V into \f$ h_{kv} \f$ heads of width \f$ d_v / h_{kv} \f$. Each query head
/// runs attention() (chapter 7) against the key/value head of its group, with no copy, and
/// scales by \f$ \sqrt{d_k / h} \f$. The h outputs, each n×\f$ (d_v / h_{kv}) \f$, are joined by
/// concat_heads() and multiplied by \f$ W_O \f$.
///
/// Edges: with \f$ h_{kv} = h \f$ it is multi_head_attention() bit for bit; for any \f$ h_{kv} \f$
/// it equals multi_head_attention() on repeat_kv_heads() of K and V bit for bit, since each head
/// runs the same operations on the same numbers. A row of M that is all \f$ -\infty \f$ gives an
/// all-zero output row, never NaN.
///
/// Shapes: Q n×\f$ d_k \f$, K m×(\f$ d_k \, h_{kv} / h \f$), V m×\f$ d_v \f$, M n×m,
/// \f$ W_O \f$ (h·\f$ d_v / h_{kv} \f$)×\f$ d_{out} \f$; the result is n×\f$ d_{out} \f$.
/// \param queries Q, the h query heads side by side
/// \param keys K, the \f$ h_{kv} \f$ key heads side by side
/// \param values V, the \f$ h_{kv} \f$ value heads side by side
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out), shared by every head
/// \param query_heads h, at least 1
/// \param kv_heads \f$ h_{kv} \f$, at least 1, a divisor of h
/// \param w_out \f$ W_O \f$, one row per column of the h heads' outputs side by side
/// \return the outputs, n×\f$ d_{out} \f$
/// \throws std::invalid_argument if h or \f$ h_{kv} \f$ is 0, or \f$ h_{kv} \f$ does not divide h;
///         the message names grouped_query_attention and the numbers, e.g. "the number of
///         key/value heads must be at least 1", "4 query heads do not split into 3 equal groups"
/// \throws ShapeError if Q does not split into h heads, K or V into \f$ h_{kv} \f$ heads, the key
///         heads are not as wide as the query heads, K and V differ in rows, the mask is not n×m,
///         or \f$ W_O \f$ has the wrong number of rows; the message names the shapes and the one
///         expected, e.g. "Q is 3×8, 4 query heads of width 2, so K needs 1 key heads of the same
///         width (3×2), but K is 3×4", "V is 2×6, which does not split into 4 value heads",
///         "K is 2×4 but V is 3×6", "the mask needs to be 3×2 (a row per query, a column per key),
///         but it is 3×3", "W_O needs 12 rows, but W_O is 6×2"
[[nodiscard]] Matrix grouped_query_attention(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                             const Matrix& mask, std::size_t query_heads, std::size_t kv_heads,
                                             const Matrix& w_out);

/// \brief Backpropagates dY at the outputs of grouped_query_attention() to Q, K, V and W_O.
///
/// Each query head goes back through chapter 11's steps as in multi_head_backward(); a
/// key/value head that \f$ h / h_{kv} \f$ query heads read receives the sum of their gradients:
/// \f$ dK_b = \sum_{a : \lfloor a h_{kv}/h \rfloor = b} dK^{(a)} \f$, and the same for
/// \f$ dV_b \f$, added in the order of the query heads. That equals sum_kv_heads() of
/// multi_head_backward() on the repeated K and V, bit for bit.
///
/// Shapes: as grouped_query_attention(); dY is n×\f$ d_{out} \f$, and the gradients have the
/// shapes of Q, K, V and \f$ W_O \f$.
/// \param queries Q
/// \param keys K
/// \param values V
/// \param mask M
/// \param query_heads h
/// \param kv_heads \f$ h_{kv} \f$
/// \param w_out \f$ W_O \f$
/// \param d_outputs dY
/// \return dQ, dK, dV and \f$ dW_O \f$
/// \throws std::invalid_argument and ShapeError as grouped_query_attention(); the message names
///         grouped_query_backward (e.g. "4 query heads do not split into 3 equal groups"), and
///         ShapeError if dY is not n×\f$ d_{out} \f$: "the outputs are 3×2 but dY is 2×2"
[[nodiscard]] MultiHeadGrads grouped_query_backward(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                                    const Matrix& mask, std::size_t query_heads,
                                                    std::size_t kv_heads, const Matrix& w_out,
                                                    const Matrix& d_outputs);

/// \brief The size of a model's KV cache (chapter 16):
///        \f$ 2 \, n_{layers} \, h_{kv} \, (d_k/h) \, t \, \sigma \f$ bytes.
///
/// Every layer keeps, for each of t positions, one key and one value of width \f$ d_k/h \f$ in
/// each of its \f$ h_{kv} \f$ key/value heads; each number takes \f$ \sigma \f$ bytes (8 in F64,
/// 2 in BF16). The query heads are never cached: h counts only through the width of a head.
/// \param layers \f$ n_{layers} \f$
/// \param kv_heads \f$ h_{kv} \f$
/// \param head_width \f$ d_k/h \f$, the width of one key (and one value)
/// \param positions t
/// \param bytes_per_number \f$ \sigma \f$
/// \return the bytes, in 64 bits wherever std::size_t has 32 (a published model's cache passes 4 GiB)
[[nodiscard]] std::uint64_t kv_cache_bytes(std::size_t layers, std::size_t kv_heads, std::size_t head_width,
                                           std::size_t positions, std::size_t bytes_per_number);

/// \brief A trained model converted to fewer key/value heads by mean pooling (Ainslie et al.
///        2023, the start of their "uptraining"): each new key head is the mean of the key heads
///        of its group, and each new value head likewise.
///
/// New head b of W_K averages the model's key heads \f$ b\,g \f$ to \f$ (b+1)\,g - 1 \f$, with
/// \f$ g = h^{old}_{kv} / h_{kv} \f$: \f$ W_K^{(b)} = \frac{1}{g} \sum_{j=0}^{g-1} W_K^{(b g + j)} \f$,
/// summed in the order of the heads, then divided by g; the same for W_V. Every other matrix is
/// copied. Query head a then reads the mean of the key heads that query heads of its group read
/// before, the grouping of kv_head_of(). With \f$ h_{kv} \f$ equal to the model's own count the
/// model is returned unchanged, bit for bit.
///
/// Shapes: W_K and W_V go from d×(\f$ h^{old}_{kv} \f$ d/h) to d×(\f$ h_{kv} \f$ d/h).
/// \param model the model, e.g. trained with a key/value head per query head
/// \param kv_heads \f$ h_{kv} \f$, at least 1, a divisor of the model's key/value heads
/// \return the model with \f$ h_{kv} \f$ key/value heads (ModelShape::kv_heads set)
/// \throws std::invalid_argument if \f$ h_{kv} \f$ is 0 or does not divide the model's key/value
///         heads; the message names mean_pooled_model and the counts, e.g. "the number of key/value
///         heads must be at least 1", "4 key/value heads do not pool into 3 equal groups"
[[nodiscard]] LanguageModel mean_pooled_model(const LanguageModel& model, std::size_t kv_heads);

}  // namespace sa
