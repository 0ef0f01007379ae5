// Chapter 13, Attention at scale: the same outputs without the n×m score matrix, split
// across workers and decoded token by token with a KV cache.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"
#include "svg.hpp"
#include "tiled.hpp"

namespace {

std::string operation_counts(std::size_t tokens, std::size_t key_dim, std::size_t value_dim)
{
    std::string text = fmt::format("Operations per decoding step, d_k = {}, d_v = {}:\n  token  with the cache  "
                                   "recomputing the prefix\n", key_dim, value_dim);
    for (std::uint64_t t = 1; t <= tokens; ++t) {
        text += fmt::format("  {:>5}  {:>14}  {:>22}\n", t, sa::cached_step_operations(t, key_dim, value_dim),
                            sa::recomputed_step_operations(t, key_dim, value_dim));
    }
    constexpr std::uint64_t big_n = 4096;
    constexpr std::uint64_t d = 64;
    std::uint64_t all_cached = 0;
    std::uint64_t all_recomputed = 0;
    for (std::uint64_t t = 1; t <= big_n; ++t) {
        all_cached += sa::cached_step_operations(t, d, d);
        all_recomputed += sa::recomputed_step_operations(t, d, d);
    }
    const std::uint64_t last_cached = sa::cached_step_operations(big_n, d, d);
    const std::uint64_t last_recomputed = sa::recomputed_step_operations(big_n, d, d);
    text += fmt::format("At n = {}, d_k = d_v = {}:\n  step n: {} with the cache, {} recomputing, {:.1f} times as many\n"
                        "  all n steps: {} with the cache, {} recomputing, {:.1f} times as many\n", big_n, d,
                        last_cached, last_recomputed, static_cast<double>(last_recomputed) / static_cast<double>(last_cached),
                        all_cached, all_recomputed, static_cast<double>(all_recomputed) / static_cast<double>(all_cached));
    const std::uint64_t last_reads = sa::cached_step_reads(big_n, d, d);
    text += fmt::format("  step n with the cache reads {} numbers for {} operations, "
                        "{:.1f} per number\n", last_reads, last_cached,
                        static_cast<double>(last_cached) / static_cast<double>(last_reads));
    return text;
}

// Why tiling pays on any machine: the memory traffic it saves, at the benchmark's sizes.
std::string traffic_counts()
{
    constexpr std::uint64_t n = 4096;
    constexpr std::uint64_t d = 64;
    const sa::TileSizes tiles;  // the tiled loop's default blocks, 64 by 64
    const std::uint64_t reference = sa::reference_matrix_traffic(n, n);
    const std::uint64_t operations = sa::block_operations(tiles, d, d);
    const std::uint64_t loads = sa::block_loads(tiles, d, d);
    const std::uint64_t working_set = sa::block_working_set(tiles, d, d);
    constexpr double gib = 1024.0 * 1024.0 * 1024.0;
    return fmt::format("Memory traffic at n = m = {}, d_k = d_v = {}, B_r = {}, B_c = {}:\n"
                       "  sa::attention: 9 passes over n·m doubles, at least {} bytes = {:.3f} GiB\n"
                       "  one tiled block: {} operations on {} loaded numbers, {:.1f} per number\n"
                       "  one tiled block's working set: {} numbers = {:.1f} KiB\n",
                       n, d, tiles.query_block, tiles.key_block, reference, static_cast<double>(reference) / gib,
                       operations, loads, static_cast<double>(operations) / static_cast<double>(loads), working_set,
                       static_cast<double>(working_set * sizeof(double)) / 1024.0);
}

std::string key_range(const std::vector<std::string>& tokens, std::size_t first, std::size_t last)
{
    return last - first == 1 ? "key " + tokens[first] : fmt::format("keys {} to {}", tokens[first], tokens[last - 1]);
}

// Exact counts at d = 64: the numbers each method holds, and the operations of a decoding step.
sa::LinePlot memory_plot()
{
    sa::LinePlot plot{"Numbers held besides Q, K, V and O, at d_k = d_v = 64", "n = m (tokens)", "numbers"};
    plot.series = {{"the score matrix, n·m"}, {"tiled: one block state, B_r·(B_c + d_v + 2), B_r = B_c = 64"}};
    for (double n = 512; n <= 16384; n *= 2) {
        plot.series[0].x.push_back(n);
        plot.series[0].y.push_back(n * n);
        plot.series[1].x.push_back(n);
        plot.series[1].y.push_back(64.0 * (64.0 + 64.0 + 2.0));
    }
    plot.log_x = plot.log_y = true;
    plot.log_x_base = 2;
    return plot;
}

sa::LinePlot decoding_plot()
{
    sa::LinePlot plot{"Operations of decoding step t, d_k = d_v = 64", "t (tokens so far)", "operations"};
    plot.series = {{"with the KV cache, 4·t·d"}, {"recomputing the prefix, 2·t·(t + 1)·d"}};
    for (std::uint64_t t = 1; t <= 4096; t *= 2) {
        plot.series[0].x.push_back(static_cast<double>(t));
        plot.series[0].y.push_back(static_cast<double>(sa::cached_step_operations(t, 64, 64)));
        plot.series[1].x.push_back(static_cast<double>(t));
        plot.series[1].y.push_back(static_cast<double>(sa::recomputed_step_operations(t, 64, 64)));
    }
    plot.log_x = plot.log_y = true;
    plot.log_x_base = 2;
    return plot;
}

// The chapter's sentence: its Q, K and V, the scaled scores and chapter 7's outputs, and the
// labels of a state's columns (μ, ℓ and the running outputs Õ).
struct Sentence {
    std::size_t n;
    sa::Matrix queries;
    sa::Matrix keys;
    sa::Matrix values;
    sa::Matrix mask;
    sa::Matrix scaled;
    sa::Matrix reference;
    std::vector<std::string> features;
    std::vector<std::string> state_columns;
};

Sentence sentence(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    const sa::Matrix scaled = sa::apply_mask(sa::scale(sa::scores(queries, keys), queries.cols()), mask);
    const sa::Matrix reference = sa::attention(queries, keys, values, mask);  // chapter 7, the whole score matrix
    const auto features = sa::feature_labels(values.cols());
    std::vector<std::string> state_columns{"μ", "ℓ"};
    for (const auto& feature : features) {
        state_columns.push_back("Õ " + feature);
    }
    return {n, queries, keys, values, mask, scaled, reference, features, state_columns};
}

const char* yes(bool flag)
{
    return flag ? "true" : "false";
}

// The online softmax over the first row, one score at a time.
void online_row(sa::Report& report, const sa::Example& example, const Sentence& sentence)
{
    const std::size_t n = sentence.n;
    const sa::Matrix& scaled = sentence.scaled;
    //> online-row
    sa::OnlineSoftmax running;  // μ = -inf, ℓ = 0
    sa::Matrix after_each(n, 3);
    for (std::size_t j = 0; j < n; ++j) {
        running = sa::online_softmax_step(running, scaled(0, j));
        after_each(j, 0) = scaled(0, j);
        after_each(j, 1) = running.max;
        after_each(j, 2) = running.sum;
    }
    sa::Matrix online_weights(1, n);
    for (std::size_t j = 0; j < n; ++j) {
        online_weights(0, j) = sa::shifted_exp(scaled(0, j), running.max) / running.sum;
    }
    //< online-row
    const auto& tokens = example.tokens;
    report.table("Scaled scores" + std::string(example.causal ? ", causally masked" : ""), scaled, tokens, tokens);
    report.table("Online softmax over the " + tokens[0] + " row: the state after each score", after_each, tokens,
                 {"score s", "max μ", "sum ℓ"});
    report.table("Weights e^(s - μ) / ℓ from the final state", online_weights, {"online"}, tokens);
    const sa::Matrix chapter5_weights = sa::row_vector(sa::softmax_rows(scaled), 0);
    report.table("Weights from softmax_rows (chapter 5)", chapter5_weights, {"chapter 5"}, tokens);
    report.text(fmt::format("Online == chapter 5, bit for bit: {}\n\n",
                            yes(sa::identical(online_weights, chapter5_weights))));
}

// Attention one block of keys at a time.
void key_blocks(sa::Report& report, const sa::Example& example, const Sentence& sentence, std::size_t key_block)
{
    const std::size_t n = sentence.n;
    const sa::Matrix& queries = sentence.queries;
    const sa::Matrix& keys = sentence.keys;
    const sa::Matrix& values = sentence.values;
    const sa::Matrix& mask = sentence.mask;
    //> key-blocks
    sa::PartialAttention state = sa::empty_attention(n, values.cols());
    std::vector<sa::Matrix> after_block;
    for (std::size_t first = 0; first < n; first += key_block) {
        sa::absorb_block(state, queries, keys, values, mask, {0, n, first, std::min(first + key_block, n)});
        after_block.push_back(sa::state_table(state));
    }
    const sa::Matrix tiled = sa::finish_attention(state);
    //< key-blocks
    const auto& tokens = example.tokens;
    for (std::size_t block = 0; block < after_block.size(); ++block) {
        const std::size_t first = block * key_block;
        report.table(fmt::format("State after key block {} ({})", block + 1,
                                 key_range(tokens, first, std::min(first + key_block, n))),
                     after_block[block], tokens, sentence.state_columns);
    }
    report.table("Outputs O = Õ / ℓ, tiled", tiled, tokens, sentence.features);
    report.table("Outputs of sa::attention (chapter 7)", sentence.reference, tokens, sentence.features);
    report.text(fmt::format("Tiled == chapter 7 to a relative 1e-12: {}\n\n",
                            yes(sa::agree(tiled, sentence.reference, 1e-12))));
}

// The keys split between workers, and their states merged.
void split_and_merge(sa::Report& report, const sa::Example& example, const Sentence& sentence, std::size_t parts)
{
    const std::size_t n = sentence.n;
    const sa::Matrix& queries = sentence.queries;
    const sa::Matrix& keys = sentence.keys;
    const sa::Matrix& values = sentence.values;
    const sa::Matrix& mask = sentence.mask;
    //> split-merge
    std::vector<sa::PartialAttention> part_states;  // each worker: its own keys, all the queries
    for (std::size_t part = 0; part < parts; ++part) {
        part_states.push_back(sa::empty_attention(n, values.cols()));
        sa::absorb_block(part_states.back(), queries, keys, values, mask, {0, n, part * n / parts, (part + 1) * n / parts});
    }
    sa::PartialAttention merged = part_states.front();
    for (std::size_t part = 1; part < parts; ++part) {
        merged = sa::merge_attention(merged, part_states[part]);
    }
    const sa::Matrix merged_outputs = sa::finish_attention(merged);
    //< split-merge
    const auto& tokens = example.tokens;
    for (std::size_t part = 0; part < parts; ++part) {
        report.table(fmt::format("Worker {} of {}: {}", part + 1, parts,
                                 key_range(tokens, part * n / parts, (part + 1) * n / parts)),
                     sa::state_table(part_states[part]), tokens, sentence.state_columns);
    }
    report.table("Merged state", sa::state_table(merged), tokens, sentence.state_columns);
    report.text(fmt::format("Merged outputs == chapter 7 to a relative 1e-12: {}\n\n",
                            yes(sa::agree(merged_outputs, sentence.reference, 1e-12))));
}

// Decoding one token at a time with a KV cache.
void decode_with_cache(sa::Report& report, const sa::Example& example, const Sentence& sentence)
{
    const std::size_t n = sentence.n;
    const sa::Matrix& queries = sentence.queries;
    const sa::Matrix& keys = sentence.keys;
    const sa::Matrix& values = sentence.values;
    //> decode-loop
    sa::KvCache cache;
    sa::Matrix decoded(n, values.cols());
    for (std::size_t t = 0; t < n; ++t) {  // one more token arrives: one new row of K and V
        const sa::Matrix output =
            sa::decode_step(cache, sa::row_vector(queries, t), sa::row_vector(keys, t), sa::row_vector(values, t));
        for (std::size_t d = 0; d < values.cols(); ++d) {
            decoded(t, d) = output(0, d);
        }
    }
    const sa::Matrix causal = sa::attention(queries, keys, values, sa::causal_mask(n, n));
    //< decode-loop
    const auto& tokens = example.tokens;
    report.table("Decoded token by token with the KV cache", decoded, tokens, sentence.features);
    report.table("Causal attention over the whole sentence (chapter 7 with --causal)", causal, tokens,
                 sentence.features);
    report.text(fmt::format("KV cache == causal attention to a relative 1e-12: {}\n\n",
                            yes(sa::agree(decoded, causal, 1e-12))));
}

std::string at_scale_chapter(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    const auto key_block = static_cast<std::size_t>(sa::whole_option(example, "--key-block", 1, 1000));
    const auto parts = static_cast<std::size_t>(sa::whole_option(example, "--parts", 1, static_cast<long>(n)));
    const Sentence words = sentence(example);
    sa::Report report(example);
    online_row(report, example, words);
    key_blocks(report, example, words, key_block);
    split_and_merge(report, example, words, parts);
    decode_with_cache(report, example, words);
    report.text(operation_counts(n, words.keys.cols(), words.values.cols()));
    report.text(traffic_counts());
    report.line_plot("memory.svg", memory_plot());
    report.line_plot("decoding.svg", decoding_plot());
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch13-at-scale", "compute attention one block of keys at a time, split it and decode with a KV cache",
                         sa::mouse_eats_cheese()};
    info.options = {{"--key-block", "B", "keys per block of the tiled loop", "2"},
                    {"--parts", "P", "workers the keys are split between", "3",
                     [](const sa::Example& example) {  // fewer tokens than workers: one worker per token
                         return example.tokens.size() < 3 ? std::to_string(example.tokens.size()) : std::string();
                     }}};
    return sa::run_program(info, argc, argv, at_scale_chapter);
}
