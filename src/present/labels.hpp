/// \file labels.hpp
/// \brief Row and column labels for matrices shown side by side: heads, or a right and a wrong version;
///        and the characters of a text, as the tables and heatmaps of Parts III to V name them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "char_text.hpp"

namespace sa {

/// \brief Labels for matrices whose columns (or rows) are heads side by side:
///        "h0 f1", "h0 f2", "h1 f1", "h1 f2" for labels "f1", "f2" and two heads.
/// \param heads h
/// \param labels the labels of one head's columns
/// \return h copies of \p labels, each prefixed by its head, counting from 0 as the formulas do
[[nodiscard]] std::vector<std::string> head_labels(std::size_t heads, const std::vector<std::string>& labels);

/// \brief Labels for matrices laid side by side: every label under each prefix in turn,
///        "right f1", "right f2", "wrong f1", "wrong f2" for prefixes "right", "wrong".
/// \param prefixes one per matrix, left first
/// \param labels the labels of one matrix's columns
/// \return one copy of \p labels per prefix, each label after its prefix and a space
[[nodiscard]] std::vector<std::string> side_by_side_labels(const std::vector<std::string>& prefixes,
                                                           const std::vector<std::string>& labels);

/// \brief Labels for the characters of a text: character_label() of each token's character.
/// \param vocabulary the characters the tokens index
/// \param tokens the text, one token per character
/// \return one label per token, e.g. "a", "␣" for a space
[[nodiscard]] std::vector<std::string> token_labels(const Vocabulary& vocabulary, const std::vector<std::size_t>& tokens);

}  // namespace sa
