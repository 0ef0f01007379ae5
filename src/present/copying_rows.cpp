#include "copying_rows.hpp"

#include <cmath>

#include <fmt/format.h>

#include "circuits.hpp"

namespace sa {

namespace {

// Each window of a batch as the copying rule reads it: its inputs and the character after them.
std::vector<std::size_t> window_tokens(const Batch& batch, std::size_t w)
{
    const std::size_t n = batch.window;
    std::vector<std::size_t> window(batch.inputs.begin() + static_cast<std::ptrdiff_t>(w * n),
                                    batch.inputs.begin() + static_cast<std::ptrdiff_t>((w + 1) * n));
    window.push_back(batch.targets[(w + 1) * n - 1]);
    return window;
}

}  // namespace

CopyRows copy_rows(const CopiedSpans& spans, std::size_t skip)
{
    CopyRows rows(spans.first.size());
    for (std::size_t w = 0; w < rows.size(); ++w) {
        for (std::size_t k = skip; k < spans.length[w]; ++k) {
            rows[w].push_back(spans.second[w] + k - 1);
        }
    }
    return rows;
}

CopyRows inside_rows(const Batch& batch, std::size_t order)
{
    CopyRows rows(batch.inputs.size() / batch.window);
    for (std::vector<std::size_t>& window : rows) {
        for (std::size_t r = order - 2; r < batch.window; ++r) {
            window.push_back(r);
        }
    }
    return rows;
}

double rule_loss(const NgramCounts& counts, const Batch& batch, const CopyRows& rows, const CopyRule& rule)
{
    double total = 0.0, characters = 0.0;
    for (std::size_t w = 0; w < rows.size(); ++w) {
        const std::vector<std::size_t> window = window_tokens(batch, w);
        for (const std::size_t r : rows[w]) {
            total -= std::log(copy_rule_probability(counts, window, r + 1, rule));
            characters += 1.0;
        }
    }
    return total / characters;
}

double model_loss(const LanguageModel& model, const Batch& batch, const CopyRows& rows)
{
    const std::vector<double> losses = row_losses(forward(model, batch.inputs, batch.window).logits, batch.targets);
    double total = 0.0, characters = 0.0;
    for (std::size_t w = 0; w < rows.size(); ++w) {
        for (const std::size_t r : rows[w]) {
            total += losses[w * batch.window + r];
            characters += 1.0;
        }
    }
    return total / characters;
}

std::string copying_goals_text(const CopyingVersus& v, std::size_t order)
{
    const auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    return fmt::format("Copying goals:\n  the copy costs at most 0.5 nats per character: {}\n"
                       "  the first occurrence costs what plain text costs, within 0.1 nats: {}\n"
                       "  on the copy the model beats the {}-gram by at least 1 nat; on plain text the {}-gram wins: "
                       "{}\n", verdict(v.model.second <= 0.5), verdict(std::fabs(v.model.first - v.model_plain) <= 0.1),
                       order, order, verdict(v.ngram_copy - v.model.second >= 1.0 && v.ngram_plain < v.model_inside));
}

}  // namespace sa
