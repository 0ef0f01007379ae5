#include "model_figures.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "labels.hpp"

namespace sa {

std::string shown_verse(const std::string& text)
{
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        if (end - start >= 20 && end - start <= 40) {
            return text.substr(start, end - start);
        }
        start = end + 1;
    }
    return text.substr(0, 40);
}

void draw_verse_heads(const Report& report, const LanguageModel& model, const Vocabulary& vocabulary,
                      const std::string& held_out, std::size_t layer)
{
    const std::vector<std::size_t> tokens = encode(vocabulary, shown_verse(held_out));
    const std::vector<std::string> labels = token_labels(vocabulary, tokens);
    const std::vector<Matrix> weights = head_attention(model, layer, tokens);
    for (std::size_t h = 0; h < weights.size(); ++h) {
        report.heatmap(fmt::format("head-{}.svg", h),
                       {.title = fmt::format("Head {} on a held-out verse", h), .values = weights[h],
                        .row_labels = labels, .col_labels = labels, .precision = 1, .scale_label = "weight"});
    }
}

}  // namespace sa
