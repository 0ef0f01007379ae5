/// \file tiled.hpp
/// \brief Attention at scale: the online softmax, attention one block of keys at a time
///        without the n×m score matrix, the exact merge of partial results, and one step
///        of decoding with a KV cache.
///
/// Everything here computes the same outputs as attention() (up to rounding), in
/// O(n·d) memory instead of O(n·m). The functions are the plainest loops that follow
/// the recurrences; fast_attention() (fast_attention.hpp) is the same recurrence
/// built for speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The running state of the online softmax over one row: the largest score
///        seen so far, \f$ \mu \f$, and the sum \f$ \ell = \sum_j e^{s_j - \mu} \f$ of the
///        scores seen so far, each shifted by that maximum.
///
/// Before any score, \f$ \mu = -\infty \f$ and \f$ \ell = 0 \f$.
struct OnlineSoftmax {
    double max = -std::numeric_limits<double>::infinity();  ///< μ, the running maximum
    double sum = 0.0;                                         ///< ℓ, the running sum of e^{s - μ}
};

/// \brief The factor \f$ e^{\mu_\mathrm{old} - \mu_\mathrm{new}} \f$ that moves a sum shifted
///        by an old maximum onto a new, larger one.
///
/// It is 1 when the two maxima are equal, which also covers the two cases where the
/// subtraction itself would give NaN: both \f$ -\infty \f$ (nothing seen yet, or
/// everything masked) and both \f$ +\infty \f$.
///
/// \param old_max the maximum the sum was shifted by
/// \param new_max the new maximum, at least \p old_max
/// \return \f$ e^{\mu_\mathrm{old} - \mu_\mathrm{new}} \f$, in [0, 1]
[[nodiscard]] double rescale_factor(double old_max, double new_max);

/// \brief The shifted exponential \f$ e^{s - \mu} \f$ of one score under the running maximum.
///
/// It is 0 for \f$ s = -\infty \f$ (a masked score), even when \f$ \mu = -\infty \f$ too,
/// and 1 when \f$ s = \mu \f$, even when both are \f$ +\infty \f$; so a row
/// whose maximum is \f$ +\infty \f$ shares its weight equally among its \f$ +\infty \f$
/// scores, as softmax_rows() does. A NaN score gives NaN.
///
/// \param score s
/// \param max μ, at least s
/// \return \f$ e^{s - \mu} \f$
[[nodiscard]] double shifted_exp(double score, double max);

/// \brief One step of the online softmax (Milakov and Gimelshein, 2018): absorb one more score.
///
/// \f$ \mu' = \max(\mu, s) \f$ and \f$ \ell' = \ell \, e^{\mu - \mu'} + e^{s - \mu'} \f$: the old
/// sum is rescaled whenever the maximum grows, so at every moment \f$ \ell = \sum_j e^{s_j - \mu} \f$
/// over the scores seen so far. After the whole row, the weights are \f$ e^{s_j - \mu} / \ell \f$,
/// the same as softmax_rows() gives.
///
/// Edges: a score of \f$ -\infty \f$ (masked out) leaves the state unchanged. A NaN
/// score makes \f$ \ell \f$ NaN from then on, so the row's weights are NaN, as in
/// softmax_rows().
///
/// \param state (μ, ℓ) after the scores so far
/// \param score the next score s
/// \return (μ', ℓ') after it
[[nodiscard]] OnlineSoftmax online_softmax_step(OnlineSoftmax state, double score);

/// \brief The state of attention for some query rows after some of the keys: a running
///        maximum \f$ \mu_i \f$ and sum \f$ \ell_i \f$ per query row, and the unnormalised output
///        \f$ \tilde O_i = \sum_j e^{s_{ij} - \mu_i} v_j \f$ over the keys absorbed so far.
///
/// Shapes: \c max and \c sum have n entries, \c accumulator is n×d_v. The finished
/// output row is \f$ \tilde O_i / \ell_i \f$ (see finish_attention()). Memory: n·(d_v + 2)
/// numbers, whatever the number of keys.
struct PartialAttention {
    std::vector<double> max = {};  ///< μ_i, the largest score of row i so far
    std::vector<double> sum = {};  ///< ℓ_i, the sum of e^{s_ij - μ_i} so far
    Matrix accumulator = {};       ///< Õ, n×d_v: the values weighted by e^{s_ij - μ_i}, not yet divided by ℓ_i
};

/// \brief The state before any key: \f$ \mu_i = -\infty \f$, \f$ \ell_i = 0 \f$, \f$ \tilde O = 0 \f$.
///
/// \param queries n, the number of query rows
/// \param value_dim d_v, the width of a value
/// \return the empty state for n query rows
[[nodiscard]] PartialAttention empty_attention(std::size_t queries, std::size_t value_dim);

/// \brief A rectangle of the score matrix: query rows [first_query, last_query) and
///        key rows [first_key, last_key).
struct Block {
    std::size_t first_query = 0;  ///< the first query row of the block
    std::size_t last_query = 0;   ///< one past the last query row
    std::size_t first_key = 0;    ///< the first key row of the block
    std::size_t last_key = 0;     ///< one past the last key row
};

/// \brief The FlashAttention-2 forward recurrence: absorb one block of keys into the
///        state of one block of query rows.
///
/// For each query row i of the block: compute the block's scores
/// \f$ s_{ij} = q_i \cdot k_j / \sqrt{d_k} \f$ (\f$ -\infty \f$ where the mask says so),
/// then \f$ \mu_i' = \max(\mu_i, \max_j s_{ij}) \f$,
/// \f$ \ell_i' = \ell_i e^{\mu_i - \mu_i'} + \sum_j e^{s_{ij} - \mu_i'} \f$ and
/// \f$ \tilde O_i' = \tilde O_i e^{\mu_i - \mu_i'} + \sum_j e^{s_{ij} - \mu_i'} v_j \f$.
/// Only one block of scores exists at a time.
///
/// Edges as in attention(): a masked score is \f$ -\infty \f$ whatever Q and K hold;
/// a NaN score makes the row NaN; every value row is multiplied in, even with a weight
/// of 0, so a NaN value shows in every output row, as in mix().
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v, M is n×m; the state covers all n rows.
///
/// \param state the partial result, updated in place
/// \param queries Q
/// \param keys K
/// \param values V
/// \param mask M, additive (0 takes part, \f$ -\infty \f$ masked out)
/// \param block the query rows and key rows to absorb
/// \throws ShapeError if the shapes do not fit together or the block lies outside them
void absorb_block(PartialAttention& state, const Matrix& queries, const Matrix& keys, const Matrix& values,
                  const Matrix& mask, const Block& block);

/// \brief The outputs from a state: \f$ O_i = \tilde O_i / \ell_i \f$.
///
/// Edges: a row with \f$ \ell_i = 0 \f$ saw no key it may use (fully masked); its
/// output is \f$ \tilde O_i \f$ itself, which is all zeros (or NaN where a value was
/// NaN, as in attention()), never 0/0.
///
/// \param state the state after every key
/// \return the outputs, n×d_v
[[nodiscard]] Matrix finish_attention(const PartialAttention& state);

/// \brief Merges the states of the same query rows over two disjoint sets of keys into
///        the state over both.
///
/// \f$ \mu = \max(\mu_a, \mu_b) \f$, \f$ \ell = \ell_a e^{\mu_a - \mu} + \ell_b e^{\mu_b - \mu} \f$,
/// \f$ \tilde O = \tilde O_a e^{\mu_a - \mu} + \tilde O_b e^{\mu_b - \mu} \f$, row by row.
/// The merge is exact in real arithmetic and does not depend on how the keys were split.
///
/// \param first the state over one set of keys, n rows
/// \param second the state over another set of keys, the same n rows and d_v
/// \return the state over both sets
/// \throws ShapeError if the two states have different shapes; the message names merge_attention
///         and both shapes, e.g. "merge_attention: the first state has 4 rows and an output of 4×2,
///         the second 3 rows and 3×2; they must cover the same query rows and d_v"
[[nodiscard]] PartialAttention merge_attention(const PartialAttention& first, const PartialAttention& second);

/// \brief A state as one table: row i is \f$ [\mu_i, \ell_i, \tilde O_{i1}, \dots, \tilde O_{i d_v}] \f$.
///
/// \param state the partial result of n query rows
/// \return an n×(2 + d_v) matrix, for printing
[[nodiscard]] Matrix state_table(const PartialAttention& state);

/// \brief The block sizes of tiled attention: how many query rows and key rows one block has.
struct TileSizes {
    std::size_t query_block = 64;  ///< B_r, query rows per block (at least 1)
    std::size_t key_block = 64;    ///< B_c, key rows per block (at least 1)
};

/// \brief Attention without the score matrix: loops over blocks of query rows and, for each,
///        over blocks of keys, with absorb_block(), then finish_attention().
///
/// \f$ O = \mathrm{softmax}(Q K^\top / \sqrt{d_k} + M) V \f$, the same as attention() up
/// to rounding, with the same edges. Memory besides Q, K, V, M and O: the state of
/// one block of query rows and one block of scores.
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v, M is n×m; the result is n×d_v.
/// A block size larger than n or m is fine (one block).
///
/// \param queries Q
/// \param keys K
/// \param values V
/// \param mask M, additive
/// \param tiles the block sizes
/// \return the outputs, n×d_v
/// \throws ShapeError if the shapes do not fit together
/// \throws std::invalid_argument if a block size is 0 or a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix tiled_attention(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                     const Matrix& mask, const TileSizes& tiles);

/// \brief The keys and values of the tokens generated so far, one row per token.
///
/// Under the causal mask they never change once written, so a decoder keeps them and
/// appends one row of each per token. Memory: t·(d_k + d_v) numbers after t tokens.
struct KvCache {
    std::size_t key_dim = 0;         ///< d_k
    std::size_t value_dim = 0;       ///< d_v
    std::vector<double> keys = {};   ///< t×d_k, row after row
    std::vector<double> values = {}; ///< t×d_v, row after row

    /// \brief The number of tokens in the cache, t.
    /// \return t
    [[nodiscard]] std::size_t length() const;
};

/// \brief One step of decoding: appends the new token's key and value to the cache and
///        returns its output, attention of its query over every cached token.
///
/// With t tokens in the cache after the append,
/// \f$ o_t = \sum_{j \le t} \mathrm{softmax}_j(q_t \cdot k_j / \sqrt{d_k}) \, v_j \f$ in one
/// pass of the online softmax: \f$ 2 t d_k + 2 t d_v \f$ operations (4·t·d for
/// \f$ d_k = d_v = d \f$), instead of recomputing the whole prefix. It equals row t of
/// causal attention over the t tokens.
///
/// Shapes: the query and the key are 1×d_k, the value 1×d_v; the result is 1×d_v.
/// An empty cache (key_dim 0) takes its widths from the first token.
///
/// \param cache the cache, appended to
/// \param query q_t
/// \param key k_t
/// \param value v_t
/// \return o_t, 1×d_v
/// \throws ShapeError if a shape does not fit the cache or is not one row; the message names
///         decode_step and the shapes, e.g. "decode_step: q is 1×3, k is 1×2 and v is 1×2 but the
///         cache holds keys of width 3 and values of width 2; each must be one row of that width"
[[nodiscard]] Matrix decode_step(KvCache& cache, const Matrix& query, const Matrix& key, const Matrix& value);

/// \brief Whether two results agree to a relative tolerance:
///        \f$ |a_{ij} - b_{ij}| \le \mathrm{relative} \cdot \max_{kl} |b_{kl}| \f$ for every entry.
///
/// The tolerance is relative to the largest entry of the reference, so an entry that
/// happens to be near 0 is held to the same absolute standard as the rest. A NaN must
/// face a NaN, and an infinity the same infinity.
///
/// \param result the result to check
/// \param reference the reference, the same shape
/// \param relative the tolerance, e.g. 1e-12
/// \return true if the shapes match and every entry agrees
[[nodiscard]] bool agree(const Matrix& result, const Matrix& reference, double relative);

/// \brief The operations of one decoding step with the cache: \f$ 2 t d_k + 2 t d_v \f$.
///
/// A multiply and an add per term: \f$ t \f$ dot products of width \f$ d_k \f$ for the
/// scores and \f$ t \f$ weighted value rows of width \f$ d_v \f$ for the output
/// (4·t·d when \f$ d_k = d_v = d \f$). The exponentials and the division are not counted.
///
/// \param tokens t, the number of tokens in the cache, the new one included
/// \param key_dim d_k
/// \param value_dim d_v
/// \return \f$ 2 t (d_k + d_v) \f$
[[nodiscard]] std::uint64_t cached_step_operations(std::uint64_t tokens, std::uint64_t key_dim,
                                                   std::uint64_t value_dim);

/// \brief The operations of recomputing causal attention over the whole prefix of t tokens:
///        \f$ \sum_{i=1}^{t} 2 i (d_k + d_v) = t (t + 1) (d_k + d_v) \f$.
///
/// Query i sees i keys (the causal mask), counted as in cached_step_operations(); the
/// masked pairs are not counted. For \f$ d_k = d_v = d \f$ this is \f$ 2 t (t + 1) d \f$.
///
/// \param tokens t
/// \param key_dim d_k
/// \param value_dim d_v
/// \return \f$ t (t + 1) (d_k + d_v) \f$
[[nodiscard]] std::uint64_t recomputed_step_operations(std::uint64_t tokens, std::uint64_t key_dim,
                                                       std::uint64_t value_dim);

/// \brief The numbers one decoding step with the cache reads: \f$ t (d_k + d_v) \f$,
///        every cached key and value once.
///
/// Against the \f$ 2 t (d_k + d_v) \f$ operations of cached_step_operations() that is
/// 2 operations per number read, far fewer than a core can do in the time it takes to
/// fetch a number from memory: a decoding step is bound by memory traffic, not arithmetic.
///
/// \param tokens t, the number of tokens in the cache, the new one included
/// \param key_dim d_k
/// \param value_dim d_v
/// \return \f$ t (d_k + d_v) \f$
[[nodiscard]] inline std::uint64_t cached_step_reads(std::uint64_t tokens, std::uint64_t key_dim,
                                                     std::uint64_t value_dim)
{
    return tokens * (key_dim + value_dim);
}

/// \brief The least memory traffic of attention() in its n×m matrices of doubles, in bytes:
///        \f$ 9 \cdot 8\, n m \f$.
///
/// attention() writes four n×m matrices, \f$ S \f$, \f$ S/\sqrt{d_k} \f$, \f$ S' \f$ and
/// \f$ A \f$, and the next step reads each back; it also reads the mask once. That is at
/// least 4·2 + 1 = 9 passes over n·m doubles of 8 bytes. Once the matrices outgrow the
/// caches, every pass goes to main memory. (Zeroing a new matrix and the passes within a
/// row add to this; the count is a lower bound.)
///
/// \param queries n
/// \param keys m
/// \return \f$ 72\, n m \f$
[[nodiscard]] inline std::uint64_t reference_matrix_traffic(std::uint64_t queries, std::uint64_t keys)
{
    return 9 * queries * keys * sizeof(double);
}

/// \brief The operations of one block of the tiled loop: \f$ 2 B_r B_c (d_k + d_v) \f$.
///
/// \f$ B_r \times B_c \f$ scores of width \f$ d_k \f$ and as many weighted value rows of
/// width \f$ d_v \f$, a multiply and an add per term, as in cached_step_operations(), which
/// is the case \f$ B_r = 1 \f$, \f$ B_c = t \f$.
///
/// \param tiles B_r and B_c
/// \param key_dim d_k
/// \param value_dim d_v
/// \return \f$ 2 B_r B_c (d_k + d_v) \f$
[[nodiscard]] inline std::uint64_t block_operations(const TileSizes& tiles, std::uint64_t key_dim,
                                                    std::uint64_t value_dim)
{
    return 2 * tiles.query_block * tiles.key_block * (key_dim + value_dim);
}

/// \brief The numbers one block of the tiled loop loads: its \f$ B_c \f$ keys and values,
///        \f$ B_c (d_k + d_v) \f$.
///
/// The block's queries and its state stay in place from one key block to the next, so
/// each key and value loaded serves all \f$ B_r \f$ query rows: block_operations() over
/// this is \f$ 2 B_r \f$ operations per number loaded.
///
/// \param tiles B_r and B_c
/// \param key_dim d_k
/// \param value_dim d_v
/// \return \f$ B_c (d_k + d_v) \f$
[[nodiscard]] inline std::uint64_t block_loads(const TileSizes& tiles, std::uint64_t key_dim,
                                               std::uint64_t value_dim)
{
    return tiles.key_block * (key_dim + value_dim);
}

/// \brief The numbers one block of the tiled loop works on:
///        \f$ B_r d_k + B_c (d_k + d_v) + B_r (B_c + d_v + 2) \f$.
///
/// Its queries, its keys and values, and its state: the block of scores and, per query
/// row, \f$ \tilde O \f$, \f$ \mu \f$ and \f$ \ell \f$. Times 8 bytes, this is what a core
/// must keep close, whatever n and m are.
///
/// \param tiles B_r and B_c
/// \param key_dim d_k
/// \param value_dim d_v
/// \return the count above
[[nodiscard]] inline std::uint64_t block_working_set(const TileSizes& tiles, std::uint64_t key_dim,
                                                     std::uint64_t value_dim)
{
    return tiles.query_block * key_dim + tiles.key_block * (key_dim + value_dim) +
           tiles.query_block * (tiles.key_block + value_dim + 2);
}

}  // namespace sa
