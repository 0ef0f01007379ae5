#include "copying.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace sa {

namespace {

// Whether the `prefix` characters ending at j equal those ending at i, in one window's inputs.
bool same_prefix(const std::size_t* inputs, std::size_t j, std::size_t i, std::size_t prefix)
{
    for (std::size_t q = 0; q < prefix; ++q) {
        if (inputs[j - q] != inputs[i - q]) {
            return false;
        }
    }
    return true;
}

// A window's start, next() mod starts, drawn again while its window (start … start + window) shares a
// character with one of apart's.
std::size_t apart_start(std::size_t starts, std::size_t window, SplitMix64& generator, const CopiedSpans* apart)
{
    for (std::size_t draw = 0; draw < 10000; ++draw) {
        const std::size_t start = static_cast<std::size_t>(generator.next() % starts);
        bool clear = true;
        for (std::size_t w = 0; apart != nullptr && clear && w < apart->start.size(); ++w) {
            clear = start > apart->start[w] + window || apart->start[w] > start + window;
        }
        if (clear) {
            return start;
        }
    }
    throw std::invalid_argument(fmt::format("copied_spans: 10000 draws found no window of {} apart from the {} "
                                            "windows to keep clear of; expected a longer text or fewer windows",
                                            window, apart->start.size()));
}

}  // namespace

//> prefix-matches
PrefixMatches prefix_matches(const Batch& batch, std::size_t first, std::size_t prefix)
{
    const std::size_t n = batch.window;
    //{ checks its arguments
    if (prefix == 0 || first >= n) {
        throw std::invalid_argument(fmt::format("prefix_matches: a prefix of {} from position {} of windows of {}; "
                                                "expected a prefix of at least 1 and a position below the window",
                                                prefix, first, n));
    }
    //}
    double matches = 0.0, matched = 0.0, right = 0.0, positions = 0.0;
    for (std::size_t w = 0; w * n < batch.inputs.size(); ++w) {
        const std::size_t* inputs = &batch.inputs[w * n];
        const std::size_t* targets = &batch.targets[w * n];
        for (std::size_t i = first; i < n; ++i) {
            double found = 0.0, copied_right = 0.0;
            for (std::size_t j = prefix - 1; j < i; ++j) {
                if (same_prefix(inputs, j, i, prefix)) {
                    found += 1.0;
                    copied_right += targets[j] == targets[i] ? 1.0 : 0.0;  // copy what came after j
                }
            }
            positions += 1.0;
            matches += found;
            if (found > 0.0) {
                matched += 1.0;
                right += copied_right / found;
            }
        }
    }
    return {matches / positions, matched / positions, matched > 0.0 ? right / matched : 0.0};
}
//< prefix-matches

//> copied-spans
CopiedSpans copied_spans(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window,
                         std::size_t shortest, std::size_t longest, SplitMix64& generator, const CopiedSpans* apart)
{
    //{ checks its arguments
    if (tokens.size() <= window + 1 || shortest == 0 || shortest > longest || 2 * longest > window) {
        throw std::invalid_argument(fmt::format("copied_spans: spans of {} to {} in windows of {} over {} "
                                                "characters; expected 1 ≤ shortest ≤ longest ≤ window / 2 and a "
                                                "text longer than a window and the character after it",
                                                shortest, longest, window, tokens.size()));
    }
    //}
    CopiedSpans spans{{{}, {}, window}, {}, {}, {}, {}};
    for (std::size_t w = 0; w < count; ++w) {
        const std::size_t start = apart_start(tokens.size() - window, window, generator, apart);
        const std::size_t length = shortest + static_cast<std::size_t>(generator.next() % (longest - shortest + 1));
        const std::size_t from = static_cast<std::size_t>(generator.next() % (window - 2 * length + 1));
        const std::size_t to =
            from + length + static_cast<std::size_t>(generator.next() % (window - from - 2 * length + 1));
        std::vector<std::size_t> text(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                                      tokens.begin() + static_cast<std::ptrdiff_t>(start + window + 1));
        for (std::size_t k = 0; k < length; ++k) {
            text[to + k] = text[from + k];  // the copy overwrites what the text had there
        }
        spans.batch.inputs.insert(spans.batch.inputs.end(), text.begin(), text.end() - 1);
        spans.batch.targets.insert(spans.batch.targets.end(), text.begin() + 1, text.end());
        spans.first.push_back(from);
        spans.second.push_back(to);
        spans.length.push_back(length);
        spans.start.push_back(start);
    }
    return spans;
}
//< copied-spans

SpanLosses span_losses(const std::vector<double>& losses, const CopiedSpans& spans, std::size_t skip)
{
    const std::size_t n = spans.batch.window;
    if (losses.size() != spans.batch.targets.size()) {
        throw std::invalid_argument(fmt::format("span_losses: {} losses for {} rows; expected one per row",
                                                losses.size(), spans.batch.targets.size()));
    }
    if (skip == 0) {  // the span's first character follows text that is not the span's
        throw std::invalid_argument("span_losses: skipping 0 characters; expected 1 ≤ skip < the shortest span");
    }
    SpanLosses mean;
    double characters = 0.0;
    for (std::size_t w = 0; w < spans.first.size(); ++w) {
        for (std::size_t k = skip; k < spans.length[w]; ++k) {  // row p − 1 predicts the character at p
            mean.first += losses[w * n + spans.first[w] + k - 1];
            mean.second += losses[w * n + spans.second[w] + k - 1];
            characters += 1.0;
        }
    }
    if (characters == 0.0) {
        throw std::invalid_argument(fmt::format("span_losses: skipping {} characters leaves none to measure; "
                                                "expected 1 ≤ skip < the shortest span", skip));
    }
    return {mean.first / characters, mean.second / characters};
}

SpanAttention span_attention(const LayerTrace& trace, std::size_t heads, const CopiedSpans& spans, std::size_t head,
                             std::size_t skip)
{
    const std::size_t n = spans.batch.window;
    if (head >= heads || trace.input.rows() != spans.batch.inputs.size()) {
        throw std::invalid_argument(fmt::format("span_attention: head {} of {}, a trace of {} rows for {} inputs; "
                                                "expected a head below h and the trace of the spans' windows", head,
                                                heads, trace.input.rows(), spans.batch.inputs.size()));
    }
    SpanAttention mean;
    double rows = 0.0;
    for (std::size_t w = 0; w < spans.first.size(); ++w) {
        const Matrix weights = trace_attention(trace, heads, n, w)[head];
        const std::size_t* inputs = &spans.batch.inputs[w * n];
        for (std::size_t k = skip; k < spans.length[w]; ++k) {
            const std::size_t row = spans.second[w] + k - 1;
            const std::size_t source = spans.first[w] + k;
            mean.on_source += weights(row, source);
            for (std::size_t j = 0; j < row; ++j) {
                if (inputs[j] == inputs[row] && j + 1 != source) {  // another earlier place of the character
                    mean.on_other += weights(row, j + 1);
                    mean.other_places += 1.0;
                }
            }
            rows += 1.0;
        }
    }
    return {mean.on_source / rows, mean.on_other / rows, mean.other_places / rows};
}

//> copy-rule
double copy_rule_probability(const NgramCounts& counts, const std::vector<std::size_t>& window, std::size_t position,
                             const CopyRule& rule)
{
    //{ checks its arguments
    if (rule.shortest == 0 || !(rule.weight >= 0.0 && rule.weight <= 1.0) || position == 0 ||
        position >= window.size()) {
        throw std::invalid_argument(fmt::format("copy_rule_probability: a shortest match of {}, λ = {}, position {} of "
                                                "a window of {}; expected a shortest match of at least 1, 0 ≤ λ ≤ 1 "
                                                "and a position from 1 to the last", rule.shortest, rule.weight,
                                                position, window.size()));
    }
    //}
    const double counted = ngram_probability(counts, window, position);
    const std::size_t e = position - 1;  // the last character read
    std::size_t longest = 0;
    double places = 0.0, right = 0.0;  // |M| and those of M followed by x_p
    for (std::size_t j = 0; j < e; ++j) {
        std::size_t length = 0;
        while (length <= j && window[j - length] == window[e - length]) {
            ++length;
        }
        if (length > longest) {
            longest = length;
            places = 0.0;
            right = 0.0;
        }
        if (length == longest && length > 0) {
            places += 1.0;
            right += window[j + 1] == window[position] ? 1.0 : 0.0;
        }
    }
    if (longest < rule.shortest) {
        return counted;
    }
    return rule.weight * right / places + (1.0 - rule.weight) * counted;
}
//< copy-rule

}  // namespace sa
