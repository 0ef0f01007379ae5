#include "induction_tables.hpp"

#include <cmath>

#include <fmt/format.h>

#include "dense.hpp"
#include "labels.hpp"

namespace sa {

double best_score(const std::vector<double>& scores)
{
    double top = scores.front();
    for (const double s : scores) {
        top = std::fmax(top, s);
    }
    return top;
}

std::size_t best_head(const std::vector<double>& scores)
{
    std::size_t top = 0;
    for (std::size_t h = 1; h < scores.size(); ++h) {
        top = scores[h] > scores[top] ? h : top;
    }
    return top;
}

std::string head_header(std::size_t heads)
{
    std::string row;
    for (std::size_t h = 0; h < heads; ++h) {
        row += fmt::format("  head {}", h);
    }
    return row + "\n";
}

std::string head_row(const std::vector<double>& scores, int digits)
{
    std::string row;
    for (const double s : scores) {
        row += fmt::format("  {:>6.{}f}", s, digits);
    }
    return row + "\n";
}

std::string ov_table(const LanguageModel& model, const std::vector<std::size_t>& letters, int digits)
{
    const std::size_t last = model.layers.size() - 1;
    std::vector<double> first, ratio;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const OvCopying copying = ov_copying(ov_circuit(model, last, h), letters);
        first.push_back(copying.ranked_first);
        ratio.push_back(copying.eigenvalue_ratio);
    }
    return fmt::format("Layer {}'s OV circuits W_E W_V^κ W_O^κ W_U on the {} letters: the share of letters whose own "
                       "logit\nis the largest of their row, and the eigenvalues' sum over the sum of their moduli:\n"
                       "                ", last, letters.size()) +
           head_header(model.shape.heads) + "ranked first    " + head_row(first, digits) + "eigenvalue ratio" +
           head_row(ratio, digits);
}

LinePlot phase_change_plot(const std::vector<double>& training_loss, const std::vector<std::size_t>& checkpoints,
                           const std::vector<double>& second_copy, const std::vector<double>& induction)
{
    LinePlot plot{.title = "The phase change: the induction head forms", .x_label = "training step",
                  .y_label = "nats per character, or score (0 to 1)"};
    Series training{.name = "training loss (mean of 10 steps)"};
    for (std::size_t s = 0; s + 10 <= training_loss.size(); s += 10) {
        double total = 0.0;
        for (std::size_t k = s; k < s + 10; ++k) {
            total += training_loss[k];
        }
        training.x.push_back(static_cast<double>(s + 10));
        training.y.push_back(total / 10.0);
    }
    Series second{.name = "loss on the second copy"};
    Series score{.name = "best induction score"};
    for (std::size_t i = 0; i < checkpoints.size(); ++i) {
        second.x.push_back(static_cast<double>(checkpoints[i]));
        second.y.push_back(second_copy[i]);
        score.x.push_back(static_cast<double>(checkpoints[i]));
        score.y.push_back(induction[i]);
    }
    plot.series = {training, second, score};
    return plot;
}

void draw_induction_heads(const Report& report, const LanguageModel& model, const Vocabulary& vocabulary,
                          const std::vector<std::size_t>& letters, const std::vector<std::size_t>& text,
                          std::size_t induction_head, std::size_t needed)
{
    const std::vector<std::string> labels = token_labels(vocabulary, letters);
    const std::size_t last = model.layers.size() - 1;
    report.heatmap("induction-stripe.svg",
                   {.title = fmt::format("Layer {} head {} on 32 random letters repeated once", last, induction_head),
                    .values = head_attention(model, last, letters)[induction_head], .row_labels = labels,
                    .col_labels = labels, .precision = 1, .scale_label = "weight"});
    report.heatmap("previous-token-head.svg",
                   {.title = fmt::format("Layer 0 head {}, the head the circuit needs, on the same letters", needed),
                    .values = head_attention(model, 0, letters)[needed], .row_labels = labels,
                    .col_labels = labels, .precision = 1, .scale_label = "weight"});
    const std::vector<std::string> text_labels = token_labels(vocabulary, text);
    report.heatmap("previous-token-head-text.svg",
                   {.title = fmt::format("Layer 0 head {} on the first held-out window of text", needed),
                    .values = head_attention(model, 0, text)[needed], .row_labels = text_labels,
                    .col_labels = text_labels, .precision = 1, .scale_label = "weight"});
}

InductionGoals induction_goals(const LanguageModel& model, const Batch& test, const Batch& shorter,
                               const CopyScores& whole, const std::vector<double>& text_previous, std::size_t needed,
                               const InductionComparison& comparison, double budget)
{
    InductionGoals goals;
    goals.induction = best_score(whole.induction.back()) >= 0.4 && whole.second_copy_loss <= 1.0;
    const CopyScores on_shorter = copy_scores(model, shorter, nullptr);
    goals.shorter = best_score(on_shorter.induction.back()) >= 0.4 && on_shorter.second_copy_loss <= 1.0;
    const double top = best_score(whole.induction.back());
    goals.ablation = true;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const HeadAblation ablation{0, h};
        const CopyScores cut = copy_scores(model, test, &ablation);
        const double drop = (top - best_score(cut.induction.back())) / top;
        const double rise = cut.second_copy_loss - whole.second_copy_loss;
        goals.ablation = goals.ablation && (h == needed ? drop >= 0.75 && rise >= 1.0 : drop < 0.25 && rise < 1.0 / 3.0);
    }
    goals.previous = best_score(text_previous) >= 0.35;
    const CopyScores& one = comparison.one_layer;
    goals.control = best_score(one.induction.back()) < 0.1 &&
                    std::fabs(one.second_copy_loss - one.first_copy_loss) <= 0.1 * one.first_copy_loss;
    goals.held_out = comparison.held_out_mixed - comparison.held_out_plain <= budget;
    return goals;
}

std::string induction_goals_text(const InductionGoals& g, std::size_t shorter_period)
{
    const auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    return fmt::format("Goals:\n  layer 1: a head scores at least 0.4, second copy at most 1 nat: {}\n"
                       "  on {} letters repeated once as well: a head scores at least 0.4, second copy "
                       "at most 1 nat: {}\n"
                       "  ablation: one layer-0 head cuts the score by 75 % and adds 1 nat,\n"
                       "    each other head less than a third of that: {}\n"
                       "  layer 0: a head's previous-token score on held-out text at least 0.35: {}\n"
                       "  one-layer control with the mix: best score below 0.1, second copy within 10 % of the "
                       "first: {}\n  held-out text: the mix costs at most 0.1 nats per character: {}\n",
                       verdict(g.induction), shorter_period, verdict(g.shorter), verdict(g.ablation),
                       verdict(g.previous), verdict(g.control), verdict(g.held_out));
}

}  // namespace sa
