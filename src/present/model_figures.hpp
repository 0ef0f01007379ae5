/// \file model_figures.hpp
/// \brief Chapter 14's figures of a trained character model: each head's attention on a line of
///        the held-out text, one heatmap per head.
#pragma once

#include <cstddef>
#include <string>

#include "char_text.hpp"
#include "language_model.hpp"
#include "report.hpp"

namespace sa {

/// \brief The line a figure shows: the first line of \p text from 20 to 40 characters long, without
///        its newline, or the first 40 characters if no line is that long.
/// \param text the held-out text
/// \return the line
[[nodiscard]] std::string shown_verse(const std::string& text);

/// \brief Draws `head-H.svg` for each head of one layer: its attention weights on shown_verse() of
///        the held-out text, rows and columns labelled by the characters.
/// \param report where the figures go (nothing is drawn without a figures folder)
/// \param model the trained model
/// \param vocabulary its characters
/// \param held_out the held-out text, every character one the model knows
/// \param layer the layer whose heads are drawn
void draw_verse_heads(const Report& report, const LanguageModel& model, const Vocabulary& vocabulary,
                      const std::string& held_out, std::size_t layer);

}  // namespace sa
