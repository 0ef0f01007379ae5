#include "generation_text.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include <fmt/format.h>

namespace sa {

std::string shown_text(const std::string& text)
{
    std::string out = text;
    std::replace(out.begin(), out.end(), '\n', '/');  // a new verse
    return out;
}

std::string wrapped_text(const std::string& text)
{
    std::string out;
    for (std::size_t start = 0; start < text.size(); start += 72) {
        out += "  " + text.substr(start, 72) + "\n";
    }
    return out;
}

std::string rule_name(const SamplingRule& rule, std::size_t vocabulary)
{
    if (rule.greedy) {
        return "greedy";
    }
    return fmt::format("τ = {}, {}", rule.temperature,
                       rule.top_k == vocabulary ? std::string("every character") : fmt::format("top-{}", rule.top_k));
}

std::pair<std::vector<double>, std::vector<bool>> listed_logits(const LanguageModel& model,
                                                                const std::vector<std::size_t>& prompt,
                                                                bool uncropped, std::size_t rows)
{
    const std::size_t c = model.shape.context;
    const std::size_t start = !uncropped && prompt.size() > c ? prompt.size() - c : 0;
    std::vector<double> z = recomputed_logits(model, {prompt.begin() + static_cast<std::ptrdiff_t>(start),
                                                      prompt.end()});
    std::vector<std::size_t> order(z.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a] > z[b]; });
    std::vector<bool> listed(z.size(), false);
    for (std::size_t r = 0; r < std::min(rows, z.size()); ++r) {
        listed[order[r]] = true;
    }
    return {z, listed};
}

std::size_t leaves_context(std::size_t prompt, std::size_t length, std::size_t context)
{
    const std::size_t first = prompt > context ? 1 : context - prompt + 2;
    return first <= length ? first : 0;
}

std::size_t first_difference(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b)
{
    const auto where = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    return where.first == a.end() && where.second == b.end() ? 0 : static_cast<std::size_t>(where.first - a.begin()) + 1;
}

std::string cached_width(const LanguageModel& model)
{
    const std::size_t kv_heads = kv_head_count(model.shape);
    return kv_heads == model.shape.heads ? fmt::format("{}", model.shape.width)
                                         : fmt::format("{} · {}", kv_heads, model.shape.width / model.shape.heads);
}

}  // namespace sa
