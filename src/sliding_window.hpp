/// \file sliding_window.hpp
/// \brief Chapter 19: attention past the trained context. A sliding-window mask (each query sees
///        its last w keys), what it costs and how far several layers reach; a rolling KV cache that
///        keeps the last positions, with or without the first few (attention sinks); the loss of
///        a text read through each; and ALiBi's slopes and bias, positions as a penalty on the scores.
#pragma once

#include <cstddef>
#include <vector>

#include "generation.hpp"
#include "language_model.hpp"
#include "matrix.hpp"

namespace sa {

/// \brief The sliding-window mask: query i may use keys i − w + 1 to i only, the last w.
///
/// \f$ M_{ij} = 0 \f$ for \f$ i - w < j \le i \f$ and \f$ -\infty \f$ otherwise. It is
/// causal_mask() (top-left aligned, \f$ j > i \f$ masked) with the keys more than w − 1 back
/// masked too; for \f$ w \ge m \f$ it is causal_mask(). Every row keeps its own key, so no row is
/// masked completely.
///
/// Shapes: the result is n×m.
///
/// \param queries n, the number of query rows
/// \param keys m, the number of key rows
/// \param window w, the keys a query sees, at least 1
/// \return the additive mask, n×m
/// \throws std::invalid_argument for a window of 0, in one line: "sliding_window_mask: a window of 0 keys;
///         expected a window of at least 1 (1 is each query on its own key)"
[[nodiscard]] Matrix sliding_window_mask(std::size_t queries, std::size_t keys, std::size_t window);

/// \brief The scores a sliding window computes on n positions, the entries its mask keeps:
///        \f$ \sum_{i=0}^{n-1} \min(i + 1, w) \f$.
///
/// The causal mask keeps \f$ n(n+1)/2 \f$; a window keeps at most \f$ w n \f$, so its work grows
/// with w, not with n.
/// \param positions n
/// \param window w, at least 1
/// \return the count
/// \throws std::invalid_argument for a window of 0
[[nodiscard]] std::size_t window_scores(std::size_t positions, std::size_t window);

/// \brief How far back the last of L layers of sliding windows reads: \f$ L (w - 1) \f$ positions.
///
/// Each layer moves information at most w − 1 positions forward, so after L layers a position
/// depends on the \f$ L(w - 1) + 1 \f$ positions up to itself.
/// \param window w, at least 1
/// \param layers L
/// \return the distance, in positions
/// \throws std::invalid_argument for a window of 0
[[nodiscard]] std::size_t window_reach(std::size_t window, std::size_t layers);

/// \brief ALiBi's slope for head a of h heads (Press et al., 2022): \f$ m_a = 2^{-8(a+1)/h} \f$
///        when h is a power of two.
///
/// For h a power of two the slopes are the geometric sequence that starts at \f$ 2^{-8/h} \f$ and
/// ends at \f$ 2^{-8} = 1/256 \f$: 1/4, 1/16, 1/64, 1/256 for h = 4; 1/2, 1/4, …, 1/256 for h = 8.
/// For any other h, the paper's rule: with p the largest power of two below h, heads 0 to p − 1
/// take the slopes of p heads, and heads p to h − 1 take every other slope of 2p heads, its first,
/// third, fifth, …: \f$ m_a = 2^{-4(2(a - p) + 1)/p} \f$. For h = 6: 1/4, 1/16, 1/64, 1/256, then
/// 1/2 and 1/8. Every slope lies in \f$ [2^{-8}, 1) \f$; one head (h = 1) gets 1/256.
///
/// \param head a, from 0 to h − 1
/// \param heads h, at least 1
/// \return \f$ m_a \f$, positive
/// \throws std::invalid_argument in one line, for 0 heads ("alibi_slope: 0 heads; expected at least
///         1 head") and for a head outside 0 to h − 1 ("alibi_slope: head 4 of 4 heads; expected a head
///         from 0 to 3, counted from 0")
[[nodiscard]] double alibi_slope(std::size_t head, std::size_t heads);

/// \brief ALiBi's bias for head a of h heads: the causal mask with a penalty that grows with the
///        distance, \f$ B_{ij} = -m_a\,(i - j) \f$ for \f$ j \le i \f$ and \f$ -\infty \f$ for \f$ j > i \f$.
///
/// It is added to the scaled scores in place of a mask, \f$ \mathrm{softmax}(QK^\top/\sqrt{d_k} + B) \f$,
/// and gives attention positions without touching the embeddings, the queries or the keys: a key
/// \f$ i - j \f$ positions back loses \f$ m_a (i - j) \f$ from its score, so its weight is multiplied
/// by \f$ e^{-m_a (i - j)} \f$ against the same score at distance 0. The bias depends on the distance
/// only, and it has no parameter to learn; \f$ m_a \f$ is alibi_slope(a, h).
///
/// Shapes: the result is n×m, top-left aligned as causal_mask(): query i and key i are the same
/// position, and \f$ -\infty \f$ stands exactly where causal_mask() has it. Edges: the diagonal is 0
/// (a query reads itself unpenalised); a row of 1 key is that 0; 0 queries or keys give an empty matrix.
///
/// \param queries n, the number of query rows
/// \param keys m, the number of key rows
/// \param head a, from 0 to h − 1
/// \param heads h, at least 1
/// \return the bias, n×m
/// \throws std::invalid_argument for 0 heads or a head outside 0 to h − 1, in one line, as alibi_slope()
///         ("alibi_bias: 0 heads; expected at least 1 head")
[[nodiscard]] Matrix alibi_bias(std::size_t queries, std::size_t keys, std::size_t head, std::size_t heads);

/// \brief Where a rolling cache's sinks sit for the rotary angles.
enum class SinkPositions {
    /// each sink keeps the rotation of its own position s: the query at position p reads it
    /// p − s back, farther than any distance the model was trained on once p ≥ w
    own,
    /// the sinks sit just before the oldest recent position, as StreamingLLM numbers the
    /// positions within the cache: every distance stays below w
    beside_window,
};

/// \brief A rolling KV cache: every layer keeps the keys and values of the first k positions
///        (the sinks) and of the last w − k, w in all.
///
/// The recent keys keep the rotation of their own positions: rotary scores depend only on the
/// distance between the query and the key, so a recent key is read at its true distance, and none
/// is turned again when the window moves.
struct RollingCache {
    GenerationCache kept;  ///< the sinks first, then the recent positions oldest first; kept.length counts every position read
    std::size_t window = 0;  ///< w, the positions kept, the sinks included
    std::size_t sinks = 0;   ///< k, below w
    SinkPositions sink_positions = SinkPositions::own;  ///< where the sinks sit
};

/// \brief An empty rolling cache for a model.
/// \param model the model
/// \param window w, the positions kept, at least 1
/// \param sinks k, the first positions kept for good, below w (0 is a plain rolling cache)
/// \param where where the sinks sit
/// \return the cache, empty
/// \throws std::invalid_argument for a window of 0, or k ≥ w (no room left for the recent positions)
[[nodiscard]] RollingCache rolling_cache(const LanguageModel& model, std::size_t window, std::size_t sinks,
                                         SinkPositions where);

/// \brief One decoding step through a rolling cache: if the cache holds w positions, the oldest
///        recent one (row k) is dropped from every layer and head (and, with the sinks beside the
///        window, every sink key is turned on by one position); then decode_next().
///
/// Until the text is longer than w nothing is dropped, and the logits are decode_next()'s bit for
/// bit. After that the query at position p reads the sinks and positions p − (w − k) + 1 to p.
/// \param model the model
/// \param cache the rolling cache, updated
/// \param token the new token, below V
/// \return the logits of the character after the token
/// \throws std::invalid_argument if the token is outside the vocabulary or the cache is not the model's
[[nodiscard]] std::vector<double> decode_rolling(const LanguageModel& model, RollingCache& cache, std::size_t token);

/// \brief The loss of each next character, \f$ -\ln p(\text{target}_i) \f$, for a text read one
///        character at a time through a rolling cache that starts empty at position 0.
/// \param model the model
/// \param inputs the text, each below V
/// \param targets the character after each input, as many
/// \param window w
/// \param sinks k, below w
/// \param where where the sinks sit
/// \return one loss per input, in nats
/// \throws std::invalid_argument if inputs and targets differ in length, or for the window and sinks
///         as rolling_cache()
[[nodiscard]] std::vector<double> rolling_losses(const LanguageModel& model, const std::vector<std::size_t>& inputs,
                                                 const std::vector<std::size_t>& targets, std::size_t window,
                                                 std::size_t sinks, SinkPositions where);

/// \brief The loss of each next character when every position recomputes its last w characters
///        from scratch at positions 0 to w − 1 (chapter 16's sliding window), \f$ -\ln p(\text{target}_i) \f$.
///
/// Position i reads inputs max(0, i − w + 1) to i: below w the text so far, as one window from
/// position 0 does. Each is recomputed_logits() on those characters (computed as prefill() of all
/// but the last, then decode_next()).
/// \param model the model
/// \param inputs the text, each below V
/// \param targets the character after each input, as many
/// \param window w, at least 1
/// \return one loss per input, in nats
/// \throws std::invalid_argument if inputs and targets differ in length, or for a window of 0
[[nodiscard]] std::vector<double> recomputed_window_losses(const LanguageModel& model,
                                                           const std::vector<std::size_t>& inputs,
                                                           const std::vector<std::size_t>& targets,
                                                           std::size_t window);

}  // namespace sa
