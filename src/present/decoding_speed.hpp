/// \file decoding_speed.hpp
/// \brief Chapter 18: one decoding step of chapter 16's cache (decode_next()) with \f$ h_{kv} = h \f$,
///        fewer and 1 key/value heads: the bytes a step reads, the same on every machine, and its
///        time, which is a fact about the machine and is measured interleaved, never printed in the
///        checked output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generation.hpp"
#include "language_model.hpp"
#include "random.hpp"

namespace sa {

/// \brief A model shape to decode with, and where in the text its timed steps lie.
struct DecodingShape {
    std::string name;                     ///< how the output names it
    ModelShape shape;                     ///< the sizes; ModelShape::kv_heads is set per count
    std::size_t positions = 0;            ///< t: the positions cached before the timed steps
    std::size_t steps = 0;                ///< the tokens one timed run decodes, at positions t to t + steps - 1
    std::vector<std::size_t> kv_counts;   ///< \f$ h_{kv} \f$: h, a count between, 1
};

/// \brief Chapter 18's two shapes: the book's model (d = 64, h = 4, one layer, positions 48 to 63 of
///        its context of 64; \f$ h_{kv} \f$ = 4, 2, 1), and a larger one whose cache outweighs the
///        weights a step reads (d = 1024, h = 16 heads of width 64, one layer, positions 4080 to
///        4095; \f$ h_{kv} \f$ = 16, 4, 1).
/// \param vocabulary V, the characters of the text
/// \return the shapes
[[nodiscard]] std::vector<DecodingShape> decoding_shapes(std::size_t vocabulary);

/// \brief What one decoding step reads from memory, in bytes of F64.
struct DecodingBytes {
    std::uint64_t cache_per_position = 0;  ///< \f$ 2\, n_{layers}\, h_{kv}\, (d/h) \cdot 8 \f$
    /// the cache at t positions, each key/value head once: the query heads of a group read the same
    /// numbers, \f$ 2\, n_{layers}\, h_{kv}\, (d/h)\, t \cdot 8 \f$
    std::uint64_t cache = 0;
    /// the weights: one row of W_E, W_Q and W_O (\f$ d^2 \f$ each), W_K and W_V
    /// (\f$ d\, h_{kv}\, d/h \f$ each) per layer, and W_U (\f$ d V \f$), 8 bytes each
    std::uint64_t weights = 0;
};

/// \brief The bytes one decoding step reads at position t.
/// \param shape the model's sizes
/// \param positions t, the positions in the cache the step attends over
/// \return the bytes
[[nodiscard]] DecodingBytes decoding_bytes(const ModelShape& shape, std::size_t positions);

/// \brief The bytes table of the shapes, for the checked output.
/// \param shapes the shapes
/// \return the text, one line per shape and \f$ h_{kv} \f$
[[nodiscard]] std::string decoding_bytes_table(const std::vector<DecodingShape>& shapes);

/// \brief A cache of t positions of random keys and values for a model, its numbers drawn by
///        SplitMix64::unit_variance(): for timing a step, whose work does not depend on the numbers.
/// \param model the model
/// \param positions t
/// \param generator advances by one draw per number
/// \return the cache, its length t
[[nodiscard]] GenerationCache random_cache(const LanguageModel& model, std::size_t positions, SplitMix64& generator);

/// \brief The measured seconds per decoded token of each count of a shape, run by run.
struct DecodingTimes {
    std::vector<std::vector<double>> per_token;  ///< per_token[c][r]: count c's run r, seconds per token
};

/// \brief Times decode_next() for each \f$ h_{kv} \f$ of a shape, interleaved: each round decodes
///        DecodingShape::steps tokens with every count in turn, after which each cache is cut back
///        to t positions (outside the timing).
/// \param shape the shape
/// \param runs the rounds
/// \param seed the models' and caches' seed
/// \return the times
[[nodiscard]] DecodingTimes time_decoding(const DecodingShape& shape, int runs, std::uint64_t seed);

/// \brief The measured times as text: the median of the runs per token and, beside it, the ratio of
///        medians to \f$ h_{kv} = h \f$, under a line naming the machine and its load.
/// \param shapes the shapes
/// \param times the times of each shape, in the same order
/// \param runs the rounds each was timed
/// \return the text
[[nodiscard]] std::string decoding_speed_text(const std::vector<DecodingShape>& shapes,
                                              const std::vector<DecodingTimes>& times, int runs);

}  // namespace sa
