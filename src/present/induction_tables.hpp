/// \file induction_tables.hpp
/// \brief Chapter 15's tables, goals and figures, shared by its programs: a row of scores per head,
///        the OV circuits' table, the goals' arithmetic and verdicts, the phase change's plot and
///        the heads' heatmaps.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "char_text.hpp"
#include "circuits.hpp"
#include "language_model.hpp"
#include "report.hpp"
#include "svg.hpp"

namespace sa {

/// \brief The largest of some scores.
/// \param scores at least one
/// \return the largest
[[nodiscard]] double best_score(const std::vector<double>& scores);

/// \brief The head with the largest score (the first of equals).
/// \param scores one per head, at least one
/// \return its index
[[nodiscard]] std::size_t best_head(const std::vector<double>& scores);

/// \brief "  head 0  head 1 ..." and a line break: the heading of head_row()'s columns.
/// \param heads how many heads
/// \return the line
[[nodiscard]] std::string head_header(std::size_t heads);

/// \brief One row of numbers, one per head, each 8 characters wide, and a line break.
/// \param scores one per head
/// \param digits decimals
/// \return the line
[[nodiscard]] std::string head_row(const std::vector<double>& scores, int digits);

/// \brief The last layer's OV circuits on the letters, one column per head: the share of letters
///        ranked first in their own row (ov_copying()) and the eigenvalue ratio.
/// \param model the model
/// \param letters the letters' tokens
/// \param digits decimals
/// \return a heading of two lines and the table
[[nodiscard]] std::string ov_table(const LanguageModel& model, const std::vector<std::size_t>& letters, int digits);

/// \brief The phase change as a plot: the training loss (a mean of 10 steps), the second copy's loss
///        and the best induction score at each checkpoint.
/// \param training_loss each step's loss
/// \param checkpoints the steps where the circuit was scored
/// \param second_copy the second copy's loss there
/// \param induction the best last-layer induction score there
/// \return the plot
[[nodiscard]] LinePlot phase_change_plot(const std::vector<double>& training_loss,
                                         const std::vector<std::size_t>& checkpoints,
                                         const std::vector<double>& second_copy, const std::vector<double>& induction);

/// \brief Draws the chapter's three heatmaps: the last layer's induction head on the first test
///        sequence (induction-stripe.svg), layer 0's needed head on the same letters
///        (previous-token-head.svg) and on the first held-out window (previous-token-head-text.svg).
/// \param report the report, which draws only with a figures folder
/// \param model the model
/// \param vocabulary its characters
/// \param letters the first test sequence's tokens
/// \param text the first held-out window's tokens
/// \param induction_head the last layer's head with the best induction score
/// \param needed the layer-0 head whose removal lowers that score most
void draw_induction_heads(const Report& report, const LanguageModel& model, const Vocabulary& vocabulary,
                          const std::vector<std::size_t>& letters, const std::vector<std::size_t>& text,
                          std::size_t induction_head, std::size_t needed);

/// \brief The chapter's model beside the model without the mix and the one-layer controls.
struct InductionComparison {
    double held_out_mixed = 0.0;  ///< held-out loss of the two-layer model trained with the mix
    double held_out_plain = 0.0;  ///< the same model trained on text alone
    CopyScores plain;             ///< what the model without the mix does on repeated letters
    bool has_control = false;     ///< chapter 14's model was found, trained on this text
    CopyScores control;           ///< chapter 14's one-layer model, trained on text alone
    CopyScores one_layer;         ///< the fair control: one layer trained as this model, with the mix
};

/// \brief Whether the circuit meets each of the chapter's goals.
struct InductionGoals {
    bool induction = false;  ///< a last-layer head scores >= 0.4, the second copy costs <= 1 nat
    bool shorter = false;    ///< the same on the shorter sequences
    bool ablation = false;   ///< the needed head: score cut >= 75 %, second copy +1 nat; each other head
                             ///< changes both by less than a third of that
    bool previous = false;   ///< a layer-0 head scores >= 0.35 on held-out text
    bool control = false;    ///< one layer with the mix: best score < 0.1, second copy within 10 % of the first
    bool held_out = false;   ///< the mix costs at most the budget on held-out text
};

/// \brief The goals' arithmetic: each goal of InductionGoals measured.
/// \param model the chapter's model
/// \param test the repeated-letter sequences
/// \param shorter the shorter ones
/// \param whole the model's copy_scores() on \p test
/// \param text_previous layer 0's previous-token score per head on held-out text
/// \param needed the layer-0 head the circuit needs
/// \param comparison the controls
/// \param budget what the mix may cost on held-out text, nats per character
/// \return the verdicts
[[nodiscard]] InductionGoals induction_goals(const LanguageModel& model, const Batch& test, const Batch& shorter,
                                             const CopyScores& whole, const std::vector<double>& text_previous,
                                             std::size_t needed, const InductionComparison& comparison,
                                             double budget);

/// \brief The goals with their verdicts, "met" or "NOT met".
/// \param goals the verdicts
/// \param shorter_period the shorter sequences' letters
/// \return "Goals:" and one line or two per goal
[[nodiscard]] std::string induction_goals_text(const InductionGoals& goals, std::size_t shorter_period);

}  // namespace sa
