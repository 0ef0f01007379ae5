/// \file copying_rows.hpp
/// \brief Chapter 15's second half: the copying rule and a model scored on chosen rows of a batch
///        (the copies, or every row with enough characters before it), the comparison of the copying
///        model with counting, and its goals.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "copying.hpp"
#include "language_model.hpp"

namespace sa {

/// \brief The rows measured in each window of a batch: row r predicts the window's token r + 1.
using CopyRows = std::vector<std::vector<std::size_t>>;

/// \brief The rows that predict the copies' characters skip … length − 1.
/// \param spans the windows and their spans
/// \param skip the span's first characters left out
/// \return the rows, window by window
[[nodiscard]] CopyRows copy_rows(const CopiedSpans& spans, std::size_t skip);

/// \brief Every row whose character has order − 1 characters before it in its window (rows
///        order − 2 to window − 1): the positions where an n-gram of that order and the model both
///        read the window alone.
/// \param batch the windows
/// \param order the n-gram's order, at least 2
/// \return the rows, window by window
[[nodiscard]] CopyRows inside_rows(const Batch& batch, std::size_t order);

/// \brief The copying rule's mean loss on the rows (λ = 0: the counted n-gram alone).
/// \param counts the counted n-grams
/// \param batch the windows
/// \param rows the rows of each window
/// \param rule the shortest match and λ
/// \return nats per character
[[nodiscard]] double rule_loss(const NgramCounts& counts, const Batch& batch, const CopyRows& rows,
                               const CopyRule& rule);

/// \brief A model's mean loss on the rows.
/// \param model the model
/// \param batch the windows
/// \param rows the rows of each window
/// \return nats per character
[[nodiscard]] double model_loss(const LanguageModel& model, const Batch& batch, const CopyRows& rows);

/// \brief The copying model against counting, on the copies and on plain held-out text.
struct CopyingVersus {
    CopyRule rule;                    ///< chosen on the validation windows
    double rule_validation = 0.0;     ///< its loss there
    double ngram_validation = 0.0;    ///< and the n-gram's alone
    double model_validation = 0.0;    ///< the copying model's copy loss on the validation spans
    double control_validation = 0.0;  ///< and the chapter's model's after the same training
    double ngram_copy = 0.0;          ///< the n-gram on the test copies
    double rule_copy = 0.0;           ///< the rule there
    SpanLosses model;                 ///< the copying model on the test spans
    SpanLosses control;               ///< the chapter's model after the same training
    double ngram_plain = 0.0;         ///< held-out text, the rows of inside_rows()
    double rule_plain = 0.0;          ///< the rule there
    double model_inside = 0.0;        ///< the copying model there
    double model_plain = 0.0;         ///< held-out text, every row
    double without_mix = 0.0;         ///< the two-layer model trained on text alone, every row
};

/// \brief The copying goals with their verdicts, "met" or "NOT met": the copy costs at most 0.5
///        nats, the first occurrence what plain text costs within 0.1, and the model beats the
///        n-gram by 1 nat on the copy while the n-gram wins on plain text.
/// \param v the comparison
/// \param order the n-gram's order
/// \return "Copying goals:" and a line per goal
[[nodiscard]] std::string copying_goals_text(const CopyingVersus& v, std::size_t order);

}  // namespace sa
