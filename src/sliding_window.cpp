#include "sliding_window.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "exercise.hpp"

namespace sa {

namespace {

void check_window(const char* function, std::size_t window)
{
    if (window == 0) {
        throw std::invalid_argument(fmt::format("{}: a window of 0 keys; expected a window of at least 1 (1 is each "
                                                "query on its own key)", function));
    }
}

void check_sinks(std::size_t window, std::size_t sinks)
{
    check_window("rolling_cache", window);
    if (sinks >= window) {
        throw std::invalid_argument(fmt::format("rolling_cache: {} sinks in a window of {}; expected fewer sinks than "
                                                "the window, so that it keeps at least the newest position",
                                                sinks, window));
    }
}

// Turns every sink key of every layer and head on by one position: the pair (2i, 2i+1) of a head
// of width d/h by the angle θ_i = 10000^(−2i/(d/h)), as the rotary code of chapter 10 turns it.
// (Unused while decode_rolling() is an exercise's stub.)
[[maybe_unused]] void move_sinks_on(RollingCache& cache)
{
    for (std::vector<KvCache>& layer : cache.kept.layers) {
        for (KvCache& head : layer) {
            const std::size_t dk = head.key_dim;
            for (std::size_t i = 0; i < dk / 2; ++i) {
                const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(dk));
                const double c = std::cos(theta);
                const double s = std::sin(theta);
                for (std::size_t sink = 0; sink < cache.sinks; ++sink) {
                    double* pair = head.keys.data() + sink * dk + 2 * i;
                    const double x = pair[0];
                    const double y = pair[1];
                    pair[0] = x * c - y * s;
                    pair[1] = x * s + y * c;
                }
            }
        }
    }
}

// Drops row `row` (the oldest recent position) from every layer's and head's keys and values.
[[maybe_unused]] void drop_row(GenerationCache& cache, std::size_t row)
{
    for (std::vector<KvCache>& layer : cache.layers) {
        for (KvCache& head : layer) {
            const auto key = head.keys.begin() + static_cast<std::ptrdiff_t>(row * head.key_dim);
            head.keys.erase(key, key + static_cast<std::ptrdiff_t>(head.key_dim));
            const auto value = head.values.begin() + static_cast<std::ptrdiff_t>(row * head.value_dim);
            head.values.erase(value, value + static_cast<std::ptrdiff_t>(head.value_dim));
        }
    }
}

// −ln softmax(z)[target], the largest logit subtracted first.
double next_loss(const std::vector<double>& logits, std::size_t target)
{
    const double largest = *std::max_element(logits.begin(), logits.end());
    double total = 0.0;
    for (const double z : logits) {
        total += std::exp(z - largest);
    }
    return std::log(total) - (logits[target] - largest);
}

void check_heads(const char* function, std::size_t head, std::size_t heads)
{
    if (heads == 0) {
        throw std::invalid_argument(fmt::format("{}: 0 heads; expected at least 1 head", function));
    }
    if (head >= heads) {
        throw std::invalid_argument(fmt::format("{}: head {} of {} heads; expected a head from 0 to {}, counted "
                                                "from 0", function, head, heads, heads - 1));
    }
}

void check_targets(const char* function, const std::vector<std::size_t>& inputs,
                   const std::vector<std::size_t>& targets)
{
    if (inputs.size() != targets.size()) {
        throw std::invalid_argument(fmt::format("{}: {} inputs and {} targets; expected one target per input",
                                                function, inputs.size(), targets.size()));
    }
}

}  // namespace

//> sliding-window-mask
Matrix sliding_window_mask(std::size_t queries, std::size_t keys, std::size_t window)
{
    // BEGIN SOLUTION sliding_window_mask: chapter 19, A window and its sinks
    check_window("sliding_window_mask", window);
    const double masked_out = -std::numeric_limits<double>::infinity();
    Matrix mask(queries, keys, 0.0);
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = 0; j < keys; ++j) {
            if (j > i || j + window <= i) {  // after query i, or more than w − 1 before it
                mask(i, j) = masked_out;
            }
        }
    }
    return mask;
    // END SOLUTION
}
//< sliding-window-mask

std::size_t window_scores(std::size_t positions, std::size_t window)
{
    check_window("window_scores", window);
    std::size_t count = 0;
    for (std::size_t i = 0; i < positions; ++i) {
        count += std::min(i + 1, window);
    }
    return count;
}

std::size_t window_reach(std::size_t window, std::size_t layers)
{
    check_window("window_reach", window);
    return layers * (window - 1);
}

//> alibi
double alibi_slope(std::size_t head, std::size_t heads)
{
    check_heads("alibi_slope", head, heads);
    std::size_t p = 1;  // the largest power of two not above h
    while (2 * p <= heads) {
        p *= 2;
    }
    const double a = static_cast<double>(head);
    const double power = static_cast<double>(p);
    if (head < p) {
        return std::exp2(-8.0 * (a + 1.0) / power);  // the slopes of p heads
    }
    // Slope b = 2(a − p) of 2p heads, 2^(−8(b+1)/2p): the 1st, 3rd, 5th, ... of them.
    return std::exp2(-4.0 * (2.0 * (a - power) + 1.0) / power);
}

Matrix alibi_bias(std::size_t queries, std::size_t keys, std::size_t head, std::size_t heads)
{
    check_heads("alibi_bias", head, heads);
    const double slope = alibi_slope(head, heads);
    Matrix bias(queries, keys, -std::numeric_limits<double>::infinity());  // j > i: causal
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = 0; j <= i && j < keys; ++j) {
            bias(i, j) = slope * (static_cast<double>(j) - static_cast<double>(i));  // −m (i − j), 0 on the diagonal
        }
    }
    return bias;
}
//< alibi

RollingCache rolling_cache(const LanguageModel& model, std::size_t window, std::size_t sinks, SinkPositions where)
{
    check_sinks(window, sinks);
    return {empty_cache(model), window, sinks, where};
}

//> decode-rolling
std::vector<double> decode_rolling(const LanguageModel& model, RollingCache& cache, std::size_t token)
{
    // BEGIN SOLUTION decode_rolling: chapter 19, A window and its sinks
    if (cache.kept.layers.size() == model.layers.size() && !cache.kept.layers.empty() &&
        cache.kept.layers[0][0].length() == cache.window) {
        drop_row(cache.kept, cache.sinks);  // the oldest recent position; the sinks stay
        if (cache.sink_positions == SinkPositions::beside_window) {
            move_sinks_on(cache);  // they follow the window: one position on, as it moved
        }
    }
    return decode_next(model, cache.kept, token).logits;  // at position kept.length, the true one
    // END SOLUTION
}
//< decode-rolling

std::vector<double> rolling_losses(const LanguageModel& model, const std::vector<std::size_t>& inputs,
                                   const std::vector<std::size_t>& targets, std::size_t window, std::size_t sinks,
                                   SinkPositions where)
{
    check_targets("rolling_losses", inputs, targets);
    RollingCache cache = rolling_cache(model, window, sinks, where);
    std::vector<double> losses;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        losses.push_back(next_loss(decode_rolling(model, cache, inputs[i]), targets[i]));
    }
    return losses;
}

std::vector<double> recomputed_window_losses(const LanguageModel& model, const std::vector<std::size_t>& inputs,
                                             const std::vector<std::size_t>& targets, std::size_t window)
{
    check_targets("recomputed_window_losses", inputs, targets);
    check_window("recomputed_window_losses", window);
    std::vector<double> losses;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const auto first = inputs.begin() + static_cast<std::ptrdiff_t>(i + 1 > window ? i + 1 - window : 0);
        const auto last = inputs.begin() + static_cast<std::ptrdiff_t>(i);
        GenerationCache cache = prefill(model, {first, last});  // the window but its last character, from 0
        losses.push_back(next_loss(decode_next(model, cache, *last).logits, targets[i]));
    }
    return losses;
}

}  // namespace sa
