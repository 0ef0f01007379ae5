/// \file generation.hpp
/// \brief Chapter 16: generating text with chapter 14's model, one character at a time, with a KV
///        cache in every layer for every head, and without one (the reference it must equal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "language_model.hpp"
#include "matrix.hpp"
#include "tiled.hpp"

namespace sa {

/// \brief What a model keeps between decoding steps: for each layer and key/value head the rotated
///        keys and the values of every position so far (chapter 13's KvCache, one per key/value head:
///        h of them, or the \f$ h_{kv} \f$ that the query heads share in chapter 18).
struct GenerationCache {
    std::vector<std::vector<KvCache>> layers;  ///< layers[l][b]: layer l's key/value head b
    std::size_t length = 0;                    ///< the positions cached, t
};

/// \brief An empty cache for a model: one KvCache of width d/h per layer and key/value head, h of
///        them, or \f$ h_{kv} \f$ where the query heads share them (chapter 18).
/// \param model the model
/// \return the cache, length 0
[[nodiscard]] GenerationCache empty_cache(const LanguageModel& model);

/// \brief What one decoding step returns.
struct DecodedStep {
    std::vector<double> logits;  ///< z, one per character: the scores of the character after the token
    std::vector<Matrix> weights; ///< per layer, h×t: each head's attention over the t cached positions
};

/// \brief One decoding step: the token at position t = cache.length goes through every layer, each
///        computing one row of Q, K and V, appending the key and value to its heads' caches and
///        attending over them; the cache grows by one position.
///
/// With \f$ h_{kv} < h \f$ key/value heads (chapter 18) the row of K and V holds \f$ h_{kv} \f$
/// heads: each is appended once, and query head a attends over key/value head
/// \f$ \lfloor a\, h_{kv} / h \rfloor \f$, whose cache it shares with the rest of its group. The
/// logits then equal those of forward() on the model with W_K and W_V repeated, bit for bit.
///
/// The arithmetic is layer_forward()'s for the last row, in the same order (rotary angles, scores,
/// the two-pass softmax, the sums), so the logits equal the last row of forward() on the whole text
/// bit for bit. A step costs one row per layer: its work grows with t, not with t².
/// \param model the model
/// \param cache the cache, appended to
/// \param token the new token, below V
/// \return the logits and the attention weights of the step
/// \throws std::invalid_argument if the token is outside the vocabulary or the cache is not the model's
[[nodiscard]] DecodedStep decode_next(const LanguageModel& model, GenerationCache& cache, std::size_t token);

/// \brief The cache after a text, filled at once ("prefill"): each layer's keys and values of every
///        position from one product per matrix, as forward() computes them.
///
/// It holds the numbers decode_next() appends one token at a time, bit for bit, without what no later
/// step reads: the queries, attention and output of the last layer, and the logits. A next
/// decode_next() then gives the logits after the text, those of forward() on it with the next token.
/// \param model the model
/// \param tokens the text, each below V; empty gives an empty cache
/// \return the cache, its length the text's
/// \throws std::out_of_range if a token is outside the vocabulary
[[nodiscard]] GenerationCache prefill(const LanguageModel& model, const std::vector<std::size_t>& tokens);

/// \brief The reference without a cache: forward() on the whole text as one window, last row.
/// \param model the model
/// \param tokens the text so far, at least one token
/// \return the logits of the character after the last token
[[nodiscard]] std::vector<double> recomputed_logits(const LanguageModel& model,
                                                    const std::vector<std::size_t>& tokens);

/// \brief How a character is chosen from the logits.
struct SamplingRule {
    bool greedy = false;     ///< take the largest logit (the other fields are then not read)
    double temperature = 1;  ///< τ, above 0
    std::size_t top_k = 0;   ///< k, from 1 to V; 0 means V
};

/// \brief Which characters a step of generate_text() reads.
enum class Window {
    /// the last context characters at most, at positions from 0, as the model was trained: once the text
    /// is longer, the window slides by one character a step (nanoGPT's generate crops the same way)
    sliding,
    /// the whole text, at positions past the context the model was trained on: an experiment
    whole,
    /// the sliding window's distances in a rolling cache: each layer keeps the keys and values of the
    /// last context positions at their own positions, one row per step; with the cache only
    rolling,
};

/// \brief Generated text and the work it took.
struct Generated {
    std::vector<std::size_t> tokens;  ///< the generated tokens, without the prompt
    std::size_t rows = 0;             ///< the positions each layer computed (rows of Q, K and V), all steps together
};

/// \brief Text generated after a prompt, with the cache or by recomputing the window at each step.
///
/// Before each draw the step reads its window (see Window). With the cache, the tokens of the window
/// not yet cached go through decode_next() one at a time (the prompt at the first step, then the
/// character drawn last); when a sliding window moves, every position in it shifts by one, so the
/// cache is emptied and filled again from the window. Without the cache, recomputed_logits() runs on
/// the window. Each character is then chosen from the logits by the rule, with one
/// generator.uniform() per character unless the rule is greedy, and appended.
/// \param model the model
/// \param prompt at least one token
/// \param length the characters to generate
/// \param rule greedy, or temperature and top-k
/// \param seed the generator's seed
/// \param cached use decode_next() (true) or recomputed_logits() (false)
/// \param window what each step reads
/// \return the generated tokens and the rows computed
/// \throws std::invalid_argument for an empty prompt, or a rolling window without the cache
[[nodiscard]] Generated generate_text(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                      std::size_t length, const SamplingRule& rule, std::uint64_t seed, bool cached,
                                      Window window);

/// \brief generate_text() with the sliding window: the tokens only.
/// \param model the model
/// \param prompt at least one token
/// \param length the characters to generate
/// \param rule greedy, or temperature and top-k
/// \param seed the generator's seed
/// \param cached use decode_next() (true) or recomputed_logits() (false)
/// \return the generated tokens, without the prompt
[[nodiscard]] std::vector<std::size_t> generate(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                                std::size_t length, const SamplingRule& rule, std::uint64_t seed,
                                                bool cached);

/// \brief What a model writes, greedy, where copying would write the rest of a name.
struct NameCompletion {
    std::vector<std::size_t> wrote;  ///< the greedy continuation, as many tokens as the rest of the name
    std::size_t right = 0;           ///< the letters written right: the k with wrote_k = rest_k
    std::size_t copied = 0;          ///< the leading run of them: the letters written before the first miss
};

/// \brief The greedy continuation of a prompt, as long as \p rest, compared with it letter by letter.
///
/// generate() with the cache and the greedy rule, \p rest.size() tokens; then
/// \f$ right = \#\{k : wrote_k = rest_k\} \f$ and \f$ copied = \min\{k : wrote_k \ne rest_k\} \f$
/// (rest.size() if there is no miss). The prompt is read as generate() reads it: at most the last
/// context characters.
/// \param model the model
/// \param prompt at least one token, each below V
/// \param rest what copying would write: the name's letters after those in the prompt
/// \return the continuation, the letters right, and the letters before the first miss
/// \throws std::invalid_argument for an empty prompt
[[nodiscard]] NameCompletion complete_name(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                           const std::vector<std::size_t>& rest);

/// \brief A made-up name: the letters of \p name in a random order, the first a capital and the rest small.
///
/// A Fisher–Yates shuffle of the name's letters in lower case, drawing position
/// \f$ j = next() \bmod (i + 1) \f$ from SplitMix64(\p seed) for i from the last position down to 1.
/// The name keeps its length and its letters, so it reads as much like English as the name does,
/// but it can be looked for in a text (a test checks that the chapter's are in none the models read).
/// \param name letters A-Z and a-z only, at least one
/// \param seed the shuffle's seed
/// \return the shuffled letters, e.g. "Abednego" may give "Gedoneba"
/// \throws std::invalid_argument if the name is empty or holds anything but letters A-Z and a-z
[[nodiscard]] std::string shuffled_name(const std::string& name, std::uint64_t seed);

/// \brief The numbers a KV cache holds for t positions: a key and a value of width d/h per layer and
///        key/value head, \f$ 2 \cdot n_{layers} \cdot h_{kv} \cdot (d/h) \cdot t \f$ (with
///        \f$ h_{kv} = h \f$, \f$ 2 \cdot n_{layers} \cdot d \cdot t \f$).
/// \param model the model
/// \param positions t
/// \return the count
[[nodiscard]] std::size_t cache_numbers(const LanguageModel& model, std::size_t positions);

}  // namespace sa
