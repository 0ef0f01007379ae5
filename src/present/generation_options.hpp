/// \file generation_options.hpp
/// \brief Chapter 16's options: the sampling rule and the prompt read from the command line, each
///        misfit refused in one line; and the measured speed of generation, with and without the
///        KV cache, which goes to a file of its own, never to the checked output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "char_text.hpp"
#include "example.hpp"
#include "generation.hpp"
#include "language_model.hpp"
#include "report.hpp"

namespace sa {

/// \brief The reader's rule: greedy (`--greedy`), or `--temperature` and `--top-k`.
///
/// `--greedy` reads neither of the two, so giving one with it is refused rather than silently
/// ignored.
/// \param example the parsed example, with the three options
/// \param vocabulary d_vocab, the largest top-k (`--top-k all`)
/// \throws UsageError if the temperature is not a number above 0 and at most 100, the top-k not a whole
///         number from 1 to d_vocab or `all`, or `--greedy` comes with either
[[nodiscard]] SamplingRule sampling_rule(const Example& example, std::size_t vocabulary);

/// \brief The tokens of `--prompt`.
/// \param vocabulary the model's characters
/// \param prompt the reader's text
/// \throws UsageError if the prompt is empty, holds a byte that is not ASCII, or characters outside the
///         vocabulary (each named once)
[[nodiscard]] std::vector<std::size_t> prompt_tokens(const Vocabulary& vocabulary, const std::string& prompt);

/// \brief Times generate_text() with the cache and recomputing the whole text, over the whole text
///        (the cache grows with it, as chapter 13's did), and writes the characters per second at each
///        length to `path` and, with `--figures`, as the plot measured-speed.svg.
/// \param path the file to write (`--speed`)
/// \param report where the plot goes
/// \param model the model that generates
/// \param prompt the prompt's tokens
/// \param rule the sampling rule
/// \param seed the draws' seed
/// \param lengths the numbers of characters to generate
/// \throws UsageError if the file cannot be written
void write_generation_speed(const std::string& path, const Report& report, const LanguageModel& model,
                            const std::vector<std::size_t>& prompt, const SamplingRule& rule, std::int64_t seed,
                            const std::vector<std::size_t>& lengths);

}  // namespace sa
