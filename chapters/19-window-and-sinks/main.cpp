// Chapter 19, A window and its sinks: sliding-window attention as a mask, its work and reach; then the
// book's trained models past their context, through a recomputed window, a rolling KV cache and a
// rolling cache that keeps its first positions (attention sinks). The chapter's last part, ALiBi, is a
// program of its own, ch19-alibi (alibi.cpp).
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "char_text.hpp"
#include "cli.hpp"
#include "language_model.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "safetensors.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "sliding_window.hpp"
#include "softmax.hpp"
#include "training_files.hpp"

namespace {

constexpr std::size_t held_out_windows = 16;  // chapter 16's held-out windows of four contexts, the most --windows
constexpr long longest_cache = 127;           // below half a held-out window of the book's models (4 · 64)

sa::SavedModel load_model(const std::string& path, const std::string& option)
{
    try {
        return sa::load_safetensors(sa::read_file(sa::book_file(path), option));
    } catch (const sa::UsageError&) {
        throw;
    } catch (const std::invalid_argument& error) {
        throw sa::UsageError(fmt::format("{} {}: {}", option, path, error.what()));
    }
}

// "Mouse eats cheese" (or the reader's tokens) with the causal mask and with a window of w keys.
std::string worked_example(const sa::Example& example, std::size_t window)
{
    sa::Report report(example);
    const std::size_t n = example.embeddings.rows();
    //> window-example
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix scaled = sa::scale(sa::scores(queries, keys), keys.cols());
    const sa::Matrix mask = sa::sliding_window_mask(n, n, window);  // the last w keys, itself included
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(scaled, mask));
    const sa::Matrix causal = sa::softmax_rows(sa::apply_mask(scaled, sa::causal_mask(n, n)));
    //< window-example
    report.text(fmt::format("A sliding window of {0} key{1}: query i sees keys i - {2} to i, chapter 7's causal mask\n"
                            "with the keys more than {2} back masked too.\n\n", window, window == 1 ? "" : "s",
                            window - 1));
    report.table(fmt::format("Mask M, window {}", window), mask, example.tokens, example.tokens);
    report.table("Weights softmax(Q·Kᵀ/√d_k + M)", weights, example.tokens, example.tokens);
    report.table("Chapter 7's causal weights, for comparison", causal, example.tokens, example.tokens);
    const sa::Matrix outputs = sa::mix(weights, sa::project(example.embeddings, example.w_value));
    report.table("Outputs A·V", outputs, example.tokens, sa::feature_labels(outputs.cols()));
    report.heatmap("window-weights.svg", {.title = fmt::format("Weights with a window of {}", window),
                                          .values = weights, .row_labels = example.tokens,
                                          .col_labels = example.tokens, .scale_label = "weight"});
    report.text(fmt::format("Layers of windows of {} stacked: what the last query, {}, reads.\n", window,
                            example.tokens.back()));
    for (std::size_t layers = 1; layers <= 3; ++layers) {
        const std::size_t reach = std::min(sa::window_reach(window, layers), n - 1);
        report.text(fmt::format("  {} layer{}: {} to {} ({} position{} back)\n", layers, layers == 1 ? "" : "s",
                                example.tokens[n - 1 - reach], example.tokens.back(), reach, reach == 1 ? "" : "s"));
    }
    return report.str();
}

// The scores each way computes and the rows a cache keeps, for windows of w.
std::string work_table(std::size_t window)
{
    std::string out = fmt::format("\nWork and cache per layer, with windows of {} keys:\n"
                                  "  {:>6}   {:>14}   {:>14}   {:>17}   {:>17}\n", window, "n", "scores, causal",
                                  "scores, window", "cache rows, full", "cache rows, window");
    for (const std::size_t n : {std::size_t{256}, std::size_t{1024}, std::size_t{4096}}) {
        out += fmt::format("  {:>6}   {:>14}   {:>14}   {:>17}   {:>17}\n", n, n * (n + 1) / 2,
                           sa::window_scores(n, window), n, std::min(n, window));
    }
    return out;
}

// The mean of the losses at positions first to last - 1 of every window of `span`.
double bucket_mean(const std::vector<double>& losses, std::size_t span, std::size_t first, std::size_t last)
{
    double total = 0.0;
    std::size_t count = 0;
    for (std::size_t r = 0; r < losses.size(); ++r) {
        if (r % span >= first && r % span < last) {
            total += losses[r];
            ++count;
        }
    }
    return total / static_cast<double>(count);
}

struct Reading {
    std::string name;
    std::vector<double> losses;  // one per held-out input, window after window
};

//> past-context
// Every held-out window read from position 0 in each way; the losses of all the windows one after another.
std::vector<Reading> readings(const sa::LanguageModel& model, const sa::Batch& batch, std::size_t span,
                              std::size_t window, const std::vector<std::size_t>& sinks)
{
    std::vector<Reading> out = {{fmt::format("recomputing the last {}", window), {}},
                                {"rolling, the oldest dropped", {}}};
    for (const std::size_t k : sinks) {
        out.push_back({fmt::format("{} sink{}, at {} own position{}", k, k == 1 ? "" : "s", k == 1 ? "its" : "their",
                                   k == 1 ? "" : "s"), {}});
        out.push_back({fmt::format("{} sink{}, beside the window", k, k == 1 ? "" : "s"), {}});
    }
    for (std::size_t w = 0; w < batch.inputs.size() / span; ++w) {
        const auto at = [&](const std::vector<std::size_t>& all) {
            return std::vector<std::size_t>(all.begin() + static_cast<std::ptrdiff_t>(w * span),
                                            all.begin() + static_cast<std::ptrdiff_t>((w + 1) * span));
        };
        const std::vector<std::size_t> inputs = at(batch.inputs);
        const std::vector<std::size_t> targets = at(batch.targets);
        std::vector<std::vector<double>> losses = {sa::recomputed_window_losses(model, inputs, targets, window),
                                                   sa::rolling_losses(model, inputs, targets, window, 0,
                                                                      sa::SinkPositions::own)};
        for (const std::size_t k : sinks) {
            for (const sa::SinkPositions where : {sa::SinkPositions::own, sa::SinkPositions::beside_window}) {
                losses.push_back(sa::rolling_losses(model, inputs, targets, window, k, where));
            }
        }
        for (std::size_t r = 0; r < out.size(); ++r) {
            out[r].losses.insert(out[r].losses.end(), losses[r].begin(), losses[r].end());
        }
    }
    return out;
}
//< past-context

std::string loss_table(const std::string& title, const std::vector<Reading>& read, std::size_t span,
                       std::size_t window, int digits)
{
    std::string out = fmt::format("  {:<39} {:>9}   {:>9}   {:>10}\n", title, fmt::format("0 to {}", window - 1),
                                  fmt::format("{} to {}", window, 2 * window - 1),
                                  fmt::format("{} to {}", 2 * window, span - 1));
    for (const Reading& reading : read) {
        out += fmt::format("  {:<39} {:>9.{}f}   {:>9.{}f}   {:>10.{}f}\n", reading.name,
                           bucket_mean(reading.losses, span, 0, window), digits,
                           bucket_mean(reading.losses, span, window, 2 * window), digits,
                           bucket_mean(reading.losses, span, 2 * window, span), digits);
    }
    return out;
}

// The weight the last query of a window of c characters puts on position 0 and on itself, per layer and
// head, the mean over the held-out windows' first c characters.
std::string sink_weights(const std::string& name, const sa::LanguageModel& model, const sa::Batch& batch,
                         std::size_t span, int digits)
{
    const std::size_t c = model.shape.context;
    std::string out;
    for (std::size_t layer = 0; layer < model.layers.size(); ++layer) {
        std::vector<double> first(model.shape.heads, 0.0);
        std::vector<double> own(model.shape.heads, 0.0);
        for (std::size_t w = 0; w < batch.inputs.size() / span; ++w) {
            const auto start = batch.inputs.begin() + static_cast<std::ptrdiff_t>(w * span);
            const std::vector<sa::Matrix> heads = sa::head_attention(model, layer, {start, start + static_cast<std::ptrdiff_t>(c)});
            for (std::size_t h = 0; h < heads.size(); ++h) {
                first[h] += heads[h](c - 1, 0) / static_cast<double>(batch.inputs.size() / span);
                own[h] += heads[h](c - 1, c - 1) / static_cast<double>(batch.inputs.size() / span);
            }
        }
        for (std::size_t h = 0; h < model.shape.heads; ++h) {
            out += fmt::format("  {:<21} {:>5} {:>5}   {:>13.{}f}   {:>14.{}f}\n", layer + h == 0 ? name : "", layer, h,
                               first[h], digits, own[h], digits);
        }
    }
    return out;
}

std::optional<sa::SavedModel> chapter_15_model(const sa::Vocabulary& vocabulary)
{
    std::ifstream in(sa::book_file(BOOK_CH15_MODEL), std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    sa::SavedModel saved = load_model(BOOK_CH15_MODEL, "chapter 15's model");
    if (saved.vocabulary != vocabulary.characters) {
        return std::nullopt;
    }
    return saved;
}

std::string past_context(const sa::Example& example, const sa::SavedModel& saved, std::size_t window,
                         const std::vector<std::size_t>& sinks)
{
    const auto count = static_cast<std::size_t>(sa::whole_option(example, "--windows", 0, held_out_windows));
    if (count == 0) {
        return "\nPast the context: not read (--windows 0).\n";
    }
    const sa::Vocabulary vocabulary = sa::make_vocabulary(saved.vocabulary);
    const std::string text = sa::read_file(sa::book_file(BOOK_KJV_HELD_OUT), "the King James held-out text");
    if (std::any_of(text.begin(), text.end(),
                    [&](char ch) { return vocabulary.token_of_byte[static_cast<unsigned char>(ch)] < 0; })) {
        return "\nPast the context: skipped, the held-out text has characters outside this model's vocabulary.\n";
    }
    const std::size_t span = 4 * saved.model.shape.context;
    const sa::Batch batch = sa::even_batch(sa::encode(vocabulary, text), held_out_windows, span);
    const sa::Batch read = {{batch.inputs.begin(), batch.inputs.begin() + static_cast<std::ptrdiff_t>(count * span)},
                            {batch.targets.begin(), batch.targets.begin() + static_cast<std::ptrdiff_t>(count * span)},
                            span};
    std::vector<std::pair<std::string, sa::LanguageModel>> models = {{"chapter 14's model", saved.model}};
    if (std::optional<sa::SavedModel> two = chapter_15_model(vocabulary)) {
        models.emplace_back("chapter 15's model", two->model);
    }
    std::string out = fmt::format("\nPast the context, on held-out text: {} windows of {} characters (chapter 16's), "
                                  "each read from position 0.\nEach cache keeps {} positions in every layer; a cache "
                                  "with sinks keeps the first ones among them.\nMean cross-entropy, nats per character, by position "
                                  "in the window:\n", count, span, window);
    for (const auto& [name, model] : models) {
        out += loss_table(fmt::format("{}, {} layer{}", name, model.layers.size(), model.layers.size() == 1 ? "" : "s"),
                          readings(model, read, span, window, sinks), span, window, example.precision);
    }
    const std::size_t c = saved.model.shape.context;
    out += fmt::format("\nA sink to keep? The weight the last query of a window of {} puts on position 0 and on its "
                       "own position,\nthe mean over the same windows' first {} characters (even weights would give "
                       "1/{} = {:.{}f}):\n  {:<21} {:>5} {:>5}   {:>13}   {:>14}\n", c, c, c, 1.0 / static_cast<double>(c),
                       example.precision, "model", "layer", "head", "on position 0", "on its own");
    for (const auto& [name, model] : models) {
        out += sink_weights(name, model, read, span, example.precision);
    }
    return out;
}

std::vector<std::size_t> sink_counts(const sa::Example& example, std::size_t window)
{
    std::vector<std::size_t> sinks;
    for (const long k : sa::whole_list_option(example, "--sinks", 1, static_cast<long>(window))) {
        if (static_cast<std::size_t>(k) >= window) {
            throw sa::UsageError(fmt::format("--sinks: {} sinks in a cache of --cache {}; expected each count below "
                                             "the cache, which keeps at least the newest position", k, window));
        }
        sinks.push_back(static_cast<std::size_t>(k));
    }
    return sinks;
}

std::string window_chapter(const sa::Example& example)
{
    const auto window = static_cast<std::size_t>(sa::whole_option(example, "--window", 1, 64));
    const bool own_cache = example.options.at("--cache") != "context";
    const auto asked = own_cache ? static_cast<std::size_t>(sa::whole_option(example, "--cache", 1, longest_cache)) : 0;
    std::vector<std::size_t> sinks = own_cache ? sink_counts(example, asked) : std::vector<std::size_t>{};
    const sa::SavedModel saved = load_model(example.options.at("--load"), "--load");
    const std::size_t c = saved.model.shape.context;
    if (asked >= 2 * c) {  // the table's last columns would hold no position of a held-out window (4 contexts)
        throw sa::UsageError(fmt::format("--cache: {} positions for a model of context {}; expected at most {}, below "
                                         "half a held-out window of {}", asked, c, 2 * c - 1, 4 * c));
    }
    const std::size_t cache = own_cache ? asked : c;
    sinks = own_cache ? sinks : sink_counts(example, cache);
    std::string out = worked_example(example, window);
    out += work_table(cache);
    out += fmt::format("The book's models with windows of {}: chapter 14's (1 layer) reads {} positions back, chapter "
                       "15's (2 layers) {}.\n", cache, sa::window_reach(cache, 1), sa::window_reach(cache, 2));
    out += past_context(example, saved, cache, sinks);
    return out + "\n";  // then ch19-alibi's output: the two, one after the other, are the chapter's
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch19-window-and-sinks",
                         "a sliding-window mask, and the book's models past their context through rolling caches",
                         sa::mouse_eats_cheese()};
    info.options = {{"--window", "W", "the worked example's window: each query sees its last W keys, 1 to 64", "2"},
                    {"--cache", "W", fmt::format("the positions each rolling cache keeps, 1 to {} (below twice the model's "
                                                 "context), or context (the model's)", longest_cache), "context"},
                    {"--sinks", "K,K", "the sink counts k to compare, each at least 1 and below --cache", "1,2,4"},
                    {"--windows", "N", fmt::format("the held-out windows to read, 0 to {} (0 skips them)",
                                                   held_out_windows), fmt::format("{}", held_out_windows)},
                    {"--load", "FILE", "the saved model (safetensors, F64)", BOOK_CH14_MODEL}};
    info.unused_options = {{"--causal", "the window's mask is causal already"}};
    return sa::run_program(info, argc, argv, window_chapter);
}
