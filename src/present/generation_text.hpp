/// \file generation_text.hpp
/// \brief Chapter 16's text around a generation (and chapter 14's samples): a prompt and its
///        continuation as the page shows them, the name of a sampling rule, the characters a
///        table lists, where two generations part and where one leaves the context, and the
///        width of a cached row.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "generation.hpp"
#include "language_model.hpp"

namespace sa {

/// \brief A text on one line: each newline, a new verse, shown as '/'.
/// \param text the text
/// \return the text with '/' for '\n'
[[nodiscard]] std::string shown_text(const std::string& text);

/// \brief A long text in lines of at most 72 characters, each indented by two spaces and ended by a
///        line break.
/// \param text the text, on one line
/// \return the lines
[[nodiscard]] std::string wrapped_text(const std::string& text);

/// \brief A sampling rule as the output names it: "greedy", or "τ = 0.8, every character" or
///        "τ = 1, top-5".
/// \param rule the rule
/// \param vocabulary d_vocab: a top-k of d_vocab is every character
/// \return the name
[[nodiscard]] std::string rule_name(const SamplingRule& rule, std::size_t vocabulary);

/// \brief The logits of the character after a prompt, and which of them a table lists: the
///        \p rows largest (the first of equals).
/// \param model the model
/// \param prompt the prompt's tokens, at least one
/// \param uncropped read the whole prompt; otherwise only its last context characters, as a step
///        of generation does
/// \param rows how many characters the table lists
/// \return the logits, in the vocabulary's order, and for each character whether it is listed
[[nodiscard]] std::pair<std::vector<double>, std::vector<bool>> listed_logits(const LanguageModel& model,
                                                                              const std::vector<std::size_t>& prompt,
                                                                              bool uncropped, std::size_t rows);

/// \brief Where a generation leaves the context: the first generated character (from 1) whose
///        draw reads more than \p context characters, or 0 if none does.
/// \param prompt the prompt's characters
/// \param length the characters generated
/// \param context the context the model was trained on
/// \return the character, from 1, or 0
[[nodiscard]] std::size_t leaves_context(std::size_t prompt, std::size_t length, std::size_t context);

/// \brief The first generated character (from 1) where two generations differ, or 0 if none does.
/// \param a one generation's tokens
/// \param b the other's
/// \return the character, from 1, or 0 (a shorter one that agrees so far differs just past its end)
[[nodiscard]] std::size_t first_difference(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b);

/// \brief The numbers each layer caches per position, for each of K and V, written as one number:
///        d, or "h_kv · d/h" where the query heads share key/value heads (chapter 18).
/// \param model the model
/// \return the width as the output writes it
[[nodiscard]] std::string cached_width(const LanguageModel& model);

}  // namespace sa
