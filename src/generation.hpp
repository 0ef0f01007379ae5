/// \file generation.hpp
/// \brief Chapter 16: generating text with chapter 14's model, one character at a time, with a KV
///        cache in every layer for every head, and without one (the reference it must equal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "language_model.hpp"
#include "matrix.hpp"
#include "tiled.hpp"

namespace sa {

/// \brief What a model keeps between decoding steps: for each layer and head the rotated keys and
///        the values of every position so far (chapter 13's KvCache, one per head).
struct GenerationCache {
    std::vector<std::vector<KvCache>> layers;  ///< layers[l][h]: layer l's head h
    std::size_t length = 0;                    ///< the positions cached, t
};

/// \brief An empty cache for a model: one KvCache of width d/h per layer and head.
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
/// The arithmetic is layer_forward()'s for the last row, in the same order (rotary angles, scores,
/// the two-pass softmax, the sums), so the logits equal the last row of forward() on the whole text
/// bit for bit. A step costs one row per layer: its work grows with t, not with t².
/// \param model the model
/// \param cache the cache, appended to
/// \param token the new token, below V
/// \return the logits and the attention weights of the step
/// \throws std::invalid_argument if the token is outside the vocabulary or the cache is not the model's
[[nodiscard]] DecodedStep decode_next(const LanguageModel& model, GenerationCache& cache, std::size_t token);

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

/// \brief Text generated after a prompt, with the cache or by recomputing the whole text at each step.
///
/// The prompt goes through decode_next() one token at a time (or, without the cache, nothing is
/// computed until the first draw); then each character is chosen from the logits by the rule, with
/// one generator.uniform() per character unless the rule is greedy, and fed back.
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

}  // namespace sa
