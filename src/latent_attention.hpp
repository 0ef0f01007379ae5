/// \file latent_attention.hpp
/// \brief Chapter 20: multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2). The keys and
///        values of every head are made from one latent of width \f$ d_c \f$ per token, which is
///        all the cache keeps beside a narrow rotary key shared by the heads.
///
/// Each head a has a content part and a rotary part. For a token x (a row of X):
/// \f$ c = x W_{DKV} \f$ (the latent, \f$ d_c \f$ wide), \f$ k^C_a = c \, W_{UK,a} \f$,
/// \f$ v_a = c \, W_{UV,a} \f$, \f$ k^R = \mathrm{rope}(x W_{KR}) \f$ (one for all heads),
/// \f$ q^C_a = x W_{Q,a} \f$, \f$ q^R_a = \mathrm{rope}(x W_{QR,a}) \f$. Head a scores
/// \f$ (q^C_a \cdot k^C_a + q^R_a \cdot k^R) / \sqrt{d_h + d_R} \f$, with \f$ d_h \f$ the width
/// of a content key and \f$ d_R \f$ that of a rotary key. The cache holds c and \f$ k^R \f$:
/// \f$ d_c + d_R \f$ numbers per token and layer. DeepSeek-V2 also makes its queries from a
/// latent of their own, to save memory in training; the cache does not hold queries, and the
/// book makes them from x directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The matrices of one latent attention layer, for h heads.
struct LatentWeights {
    Matrix w_query = {};         ///< \f$ W_Q \f$, d×(h \f$ d_h \f$): the content queries, h heads side by side
    Matrix w_query_rotary = {};  ///< \f$ W_{QR} \f$, d×(h \f$ d_R \f$): the rotary queries, h heads side by side
    Matrix w_down = {};          ///< \f$ W_{DKV} \f$, d×\f$ d_c \f$: the latent
    Matrix w_up_key = {};        ///< \f$ W_{UK} \f$, \f$ d_c \f$×(h \f$ d_h \f$): the content keys from the latent
    Matrix w_up_value = {};      ///< \f$ W_{UV} \f$, \f$ d_c \f$×(h \f$ d_v \f$): the values from the latent
    Matrix w_key_rotary = {};    ///< \f$ W_{KR} \f$, d×\f$ d_R \f$: the one rotary key all heads share
    Matrix w_out = {};           ///< \f$ W_O \f$, (h \f$ d_v \f$)×\f$ d_{out} \f$
};

/// \brief What the cache keeps of m tokens: the latent and the turned rotary key of each.
struct LatentCache {
    Matrix latent = {};        ///< C = X \f$ W_{DKV} \f$, m×\f$ d_c \f$
    Matrix rotary_keys = {};   ///< \f$ K^R = \mathrm{rope}(X W_{KR}) \f$, m×\f$ d_R \f$, each at its position
};

/// \brief The folded matrices: the up-projections absorbed into the query and the output side.
///
/// \f$ \tilde W_{Q,a} = W_{Q,a} W_{UK,a}^\top \f$ (d×\f$ d_c \f$), so that
/// \f$ q^C_a \cdot k^C_a = (x_i \tilde W_{Q,a}) \cdot c_j \f$; and
/// \f$ \tilde W_{O,a} = W_{UV,a} W_{O,a} \f$ (\f$ d_c \f$×\f$ d_{out} \f$), with \f$ W_{O,a} \f$
/// head a's rows of \f$ W_O \f$, so that a head's weights applied to the latents go straight out.
struct FoldedWeights {
    Matrix w_query_latent = {};  ///< \f$ [\tilde W_{Q,0} \mid \dots \mid \tilde W_{Q,h-1}] \f$, d×(h \f$ d_c \f$)
    Matrix w_out_latent = {};    ///< \f$ \tilde W_{O,0} \f$ over … over \f$ \tilde W_{O,h-1} \f$, (h \f$ d_c \f$)×\f$ d_{out} \f$
};

/// \brief The widths of a layer, read from its matrices and checked against each other.
struct LatentWidths {
    std::size_t model = 0;    ///< d, the rows of \f$ W_Q \f$
    std::size_t latent = 0;   ///< \f$ d_c \f$
    std::size_t head = 0;     ///< \f$ d_h \f$, a content query's (and key's) width in each head
    std::size_t rotary = 0;   ///< \f$ d_R \f$, even
    std::size_t value = 0;    ///< \f$ d_v \f$
    std::size_t out = 0;      ///< \f$ d_{out} \f$
};

/// \brief Reads and checks the widths of a layer of h heads.
/// \param weights the layer
/// \param heads h, at least 1
/// \return the widths
/// \throws std::invalid_argument if h is 0 or \f$ d_c \f$ is 0 or above d ("the latent is
///         narrower than the model, 1 ≤ d_c ≤ d")
/// \throws ShapeError if a matrix does not fit the others or does not split into h heads, or
///         \f$ d_R \f$ is odd; the message names latent_widths and the matrix, e.g.
///         "W_UK needs 2 rows (one per latent feature, d_c = 2), but W_UK is 3×4"
[[nodiscard]] LatentWidths latent_widths(const LatentWeights& weights, std::size_t heads);

/// \brief Head by head, the columns of one matrix then those of another:
///        \f$ [\,L_0 \mid R_0 \mid L_1 \mid R_1 \mid \dots\,] \f$.
///
/// Shapes: L n×(h \f$ w_L \f$); R n×(h \f$ w_R \f$), or n×\f$ w_R \f$ with \p shared (one head that every
/// head reads, as the rotary key); the result n×(h (\f$ w_L + w_R \f$)).
/// \param left L
/// \param right R
/// \param heads h, at least 1
/// \param shared whether R is one head for all
/// \return the heads side by side, each L's part first
/// \throws ShapeError if the rows differ or a matrix does not split into its heads
[[nodiscard]] Matrix interleave_heads(const Matrix& left, const Matrix& right, std::size_t heads, bool shared);

/// \brief The other way: each head's first \p left columns, and its remaining ones.
/// \param joined n×(h w), from interleave_heads()
/// \param heads h, at least 1
/// \param left \f$ w_L \f$, at most w
/// \return { n×(h \f$ w_L \f$), n×(h (w − \f$ w_L \f$)) }
[[nodiscard]] std::vector<Matrix> deinterleave_heads(const Matrix& joined, std::size_t heads, std::size_t left);

/// \brief Turns each of h heads' columns by rope() (chapter 10), row r at position first + r.
///
/// Shapes: n×(h w) in and out, with w even.
/// \param vectors the heads side by side
/// \param heads h, at least 1
/// \param first_position the position of row 0
/// \return the turned vectors
/// \throws ShapeError if the columns do not split into h heads of an even width
[[nodiscard]] Matrix rope_heads(const Matrix& vectors, std::size_t heads, std::size_t first_position);

/// \brief The backward of rope_heads(): each head's pairs turned back by their angle,
///        \f$ dX = dY R^\top \f$, computed as \f$ J \, \mathrm{rope}(J \, dY) \f$ with J negating
///        the second feature of every pair (a rotation's transpose turns the other way).
/// \param d_vectors the gradient at the turned vectors
/// \param heads h
/// \param first_position the position of row 0
/// \return the gradient at the vectors before the turn
/// \throws ShapeError as rope_heads()
[[nodiscard]] Matrix rope_heads_backward(const Matrix& d_vectors, std::size_t heads, std::size_t first_position);

/// \brief What the cache stores of tokens X at positions first, first + 1, …:
///        C = X \f$ W_{DKV} \f$ and \f$ K^R = \mathrm{rope}(X W_{KR}) \f$.
/// \param inputs X, m×d
/// \param weights the layer
/// \param first_position the position of row 0
/// \return the cache rows, \f$ d_c + d_R \f$ numbers per token
/// \throws ShapeError if X does not have d columns, or as latent_widths() with h = 1
[[nodiscard]] LatentCache latent_cache(const Matrix& inputs, const LatentWeights& weights,
                                       std::size_t first_position);

/// \brief Each head's query, key and value, unfolded: what chapter 9's heads read.
struct LatentHeads {
    Matrix queries = {};  ///< head a: \f$ [q^C_a \mid q^R_a] \f$, n×(h (\f$ d_h + d_R \f$))
    Matrix keys = {};     ///< head a: \f$ [k^C_a \mid k^R] \f$, m×(h (\f$ d_h + d_R \f$)); \f$ k^R \f$ in every head
    Matrix values = {};   ///< \f$ V = C W_{UV} \f$, m×(h \f$ d_v \f$)
};

/// \brief Rebuilds every head's keys and values from the cache, and makes the queries.
///
/// \f$ K^C = C W_{UK} \f$, \f$ V = C W_{UV} \f$, \f$ Q^C = X W_Q \f$ and
/// \f$ Q^R = \f$ rope_heads(\f$ X W_{QR} \f$) from position \p query_position; head a's columns
/// are its content part, then its rotary part.
/// \param query_inputs the tokens that ask, n×d
/// \param query_position the position of the first query
/// \param cache latent_cache() of the tokens attended to
/// \param weights the layer
/// \param heads h
/// \return the heads' queries, keys and values
/// \throws std::invalid_argument and ShapeError as latent_widths(), or if X or the cache do not fit
[[nodiscard]] LatentHeads latent_heads(const Matrix& query_inputs, std::size_t query_position,
                                       const LatentCache& cache, const LatentWeights& weights, std::size_t heads);

/// \brief Latent attention, unfolded: K and V rebuilt from the cache, then chapter 9's heads.
///
/// \f$ K^C = C W_{UK} \f$ and \f$ V = C W_{UV} \f$; each head's query is
/// \f$ [q^C_a \mid q^R_a] \f$ and its key \f$ [k^C_a \mid k^R] \f$, so
/// multi_head_attention() with heads of width \f$ d_h + d_R \f$ scales by
/// \f$ \sqrt{d_h + d_R} \f$ and mixes \f$ V \f$ with W_O.
///
/// Shapes: query inputs n×d at positions first, first + 1, …; the cache m rows; M n×m;
/// the result n×\f$ d_{out} \f$. A row of M all \f$ -\infty \f$ gives a zero row.
/// \param query_inputs the tokens that ask, n×d
/// \param query_position the position of the first query
/// \param cache latent_cache() of the tokens attended to
/// \param weights the layer
/// \param mask M, additive, n×m
/// \param heads h
/// \return the outputs
/// \throws std::invalid_argument and ShapeError as latent_widths(), or ShapeError if X, the cache
///         or M do not fit; the message names latent_attention and the shapes, e.g. "the mask needs
///         to be 2×2 (a row per query, a column per cached token), but it is 2×3"
[[nodiscard]] Matrix latent_attention(const Matrix& query_inputs, std::size_t query_position,
                                      const LatentCache& cache, const LatentWeights& weights, const Matrix& mask,
                                      std::size_t heads);

/// \brief Folds the up-projections into the query and output matrices (see FoldedWeights).
/// \param weights the layer
/// \param heads h
/// \return \f$ \tilde W_Q \f$ and \f$ \tilde W_O \f$
/// \throws std::invalid_argument and ShapeError as latent_widths()
[[nodiscard]] FoldedWeights fold_latent(const LatentWeights& weights, std::size_t heads);

/// \brief Latent attention, folded: the scores and the mixing read the cache itself, and K and V
///        are never made.
///
/// Head a's query is \f$ [x_i \tilde W_{Q,a} \mid q^R_a] \f$ (\f$ d_c + d_R \f$ wide) and every
/// head's key is the cache row \f$ [c_j \mid k^R_j] \f$ and its value \f$ c_j \f$: chapter 18's
/// grouped_query_attention() with one key/value head, W_O = \f$ \tilde W_O \f$. That step
/// scales by \f$ \sqrt{d_c + d_R} \f$; the queries are first multiplied by
/// \f$ \sqrt{(d_c + d_R)/(d_h + d_R)} \f$ so that the scores are latent_attention()'s. Equal to
/// latent_attention() up to rounding (the sums run in another order).
/// \param query_inputs the tokens that ask, n×d
/// \param query_position the position of the first query
/// \param cache latent_cache() of the tokens attended to
/// \param weights the layer (its \f$ W_{QR} \f$, and the widths)
/// \param folded fold_latent() of the layer
/// \param mask M, additive, n×m
/// \param heads h
/// \return the outputs, n×\f$ d_{out} \f$
/// \throws std::invalid_argument and ShapeError as latent_attention()
[[nodiscard]] Matrix latent_attention_folded(const Matrix& query_inputs, std::size_t query_position,
                                             const LatentCache& cache, const LatentWeights& weights,
                                             const FoldedWeights& folded, const Matrix& mask, std::size_t heads);

/// \brief The fold that a rotary content key would need:
///        \f$ W_{Q,a} R_i \, (W_{UK,a} R_j)^\top \f$ for a query at position i and a key at j.
///
/// If the content key were turned, \f$ q^C_i \cdot k^C_j = x_i \, W_{Q,a} R_i R_j^\top
/// W_{UK,a}^\top c_j^\top \f$, with \f$ R_p \f$ the turn of rope() at position p (acting on
/// rows). The matrix between \f$ x_i \f$ and \f$ c_j \f$ depends on j − i: no one fixed matrix
/// can be folded, which is why the rotary part is kept apart.
/// \param w_query_head \f$ W_{Q,a} \f$, d×\f$ d_h \f$, \f$ d_h \f$ even
/// \param w_up_key_head \f$ W_{UK,a} \f$, \f$ d_c \f$×\f$ d_h \f$
/// \param query_position i
/// \param key_position j
/// \return the d×\f$ d_c \f$ matrix
/// \throws ShapeError if the two have different or odd widths
[[nodiscard]] Matrix rotated_fold(const Matrix& w_query_head, const Matrix& w_up_key_head,
                                  std::size_t query_position, std::size_t key_position);

/// \brief The gradients of latent self-attention: one per matrix of the layer, and dX.
struct LatentGrads {
    Matrix d_inputs = {};     ///< dX
    LatentWeights d_weights;  ///< the gradient of each matrix, in LatentWeights's shape
};

/// \brief Latent self-attention: X at positions 0, 1, … asks and is attended to,
///        latent_attention(X, 0, latent_cache(X, W, 0), W, M, h).
/// \param inputs X, n×d
/// \param weights the layer
/// \param mask M, n×n
/// \param heads h
/// \return Y, n×\f$ d_{out} \f$
/// \throws std::invalid_argument and ShapeError as latent_attention()
[[nodiscard]] Matrix latent_self_attention(const Matrix& inputs, const LatentWeights& weights, const Matrix& mask,
                                           std::size_t heads);

/// \brief Backpropagates dY at latent_self_attention()'s output to X and every matrix.
///
/// multi_head_backward() (chapter 14) gives dQ, dK, dV and \f$ dW_O \f$ on the heads of
/// width \f$ d_h + d_R \f$. Then: each head's rotary key gradient is summed into one,
/// \f$ dK^R = \sum_a dK^R_a \f$ (the heads share it, as chapter 18's heads share theirs), and the
/// turns are undone by rope_heads_backward(); \f$ dW_{UK} = C^\top dK^C \f$,
/// \f$ dW_{UV} = C^\top dV \f$, \f$ dC = dK^C W_{UK}^\top + dV W_{UV}^\top \f$,
/// \f$ dW_{DKV} = X^\top dC \f$; \f$ dX = dQ^C W_Q^\top + dQ^R W_{QR}^\top + dC W_{DKV}^\top
/// + dK^R W_{KR}^\top \f$, added in that order.
/// \param inputs X
/// \param weights the layer
/// \param mask M
/// \param heads h
/// \param d_outputs dY, n×\f$ d_{out} \f$
/// \return dX and the gradient of every matrix
/// \throws std::invalid_argument and ShapeError as latent_self_attention(), or if dY is not n×\f$ d_{out} \f$
[[nodiscard]] LatentGrads latent_self_attention_backward(const Matrix& inputs, const LatentWeights& weights,
                                                         const Matrix& mask, std::size_t heads,
                                                         const Matrix& d_outputs);

/// \brief The latent cache of a model: \f$ n_{layers} \, (d_c + d_R) \, t \, \sigma \f$ bytes.
///
/// Beside chapter 18's kv_cache_bytes(), \f$ 2 \, n_{layers} \, h_{kv} \, d_h \, t \, \sigma \f$:
/// the latent counts once for keys and values and for all the heads.
/// \param layers \f$ n_{layers} \f$
/// \param latent_width \f$ d_c \f$
/// \param rotary_width \f$ d_R \f$
/// \param positions t
/// \param bytes_per_number \f$ \sigma \f$
/// \return the bytes, in 64 bits
[[nodiscard]] std::uint64_t latent_cache_bytes(std::size_t layers, std::size_t latent_width, std::size_t rotary_width,
                                               std::size_t positions, std::size_t bytes_per_number);

}  // namespace sa
