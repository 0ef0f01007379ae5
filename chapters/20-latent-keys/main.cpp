// Chapter 20, Latent keys and values: every head's keys and values made from one narrow latent per token, which is
// what the cache keeps; the up-projections folded away; the rotary part kept apart.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "gradient_check.hpp"
#include "grouped_query.hpp"
#include "labels.hpp"
#include "latent_attention.hpp"
#include "latent_options.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "report.hpp"

namespace {

//> example
// "Mouse eats cheese" with h = 2 heads of width d_h = 2 (chapter 18's W_Q: [swap | identity]), a latent of d_c = 1
// number per token (the mean of the two features), and a rotary key of d_R = 2 features shared by the heads.
sa::Example latent_example()
{
    sa::Example example = sa::mouse_eats_cheese();
    example.w_query = sa::Matrix{{0, 1, 1, 0}, {1, 0, 0, 1}};
    return example;
}

const std::vector<sa::ProgramOption> options = {
    {"--heads", "H", "h, the heads; it divides the columns of --wq, --wuk, --wuv and --wqr", "2",
     sa::fit_latent_heads},
    {"--wdkv", "M", "W_DKV, d×d_c: the latent of each token, 1 ≤ d_c ≤ d", "0.5;0.5", sa::fit_latent_down},
    {"--wuk", "M", "W_UK, d_c×(h·d_h): the content keys from the latent, as wide as --wq", "1,0,1,0",
     sa::fit_latent_up_key},
    {"--wuv", "M", "W_UV, d_c×(h·d_v): the values from the latent", "1,2", sa::fit_latent_up_value},
    {"--wkr", "M", "W_KR, d×d_R: the rotary key all heads share, d_R even", "1,0;0,1", sa::fit_latent_key_rotary},
    {"--wqr", "M", "W_QR, d×(h·d_R): each head's rotary query", "1,0,0,1;0,1,1,0", sa::fit_latent_query_rotary},
    {"--wo", "M", "W_O, (h·d_v)×d_out: the heads' outputs side by side back out", "1,0;0,1", sa::fit_latent_out}};
//< example

struct Run {
    std::size_t heads;
    sa::LatentWeights weights;
    sa::Matrix mask;
    sa::LatentCache cache;
    sa::LatentHeads unfolded_heads;
    sa::Matrix unfolded, folded;
    sa::FoldedWeights folding;
};

Run run_latent(const sa::Example& example, const sa::LatentWeights& weights, std::size_t heads)
{
    const std::size_t n = example.embeddings.rows();
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    //> latent
    const sa::LatentCache cache = sa::latent_cache(example.embeddings, weights, 0);  // C and K^R: all that is kept
    // Unfolded: K^C = C W_UK and V = C W_UV rebuilt, then chapter 9's heads.
    const sa::Matrix unfolded = sa::latent_attention(example.embeddings, 0, cache, weights, mask, heads);
    // Folded: W_UK into the queries, W_UV into W_O; the heads read the cache itself.
    const sa::FoldedWeights folding = sa::fold_latent(weights, heads);
    const sa::Matrix folded = sa::latent_attention_folded(example.embeddings, 0, cache, weights, folding, mask, heads);
    //< latent
    return {heads,  weights,  mask,   cache, sa::latent_heads(example.embeddings, 0, cache, weights, heads),
            unfolded, folded, folding};
}

void report_latent(sa::Report& report, const sa::Example& example, const Run& run)
{
    const auto& tokens = example.tokens;
    const sa::LatentWidths widths = sa::latent_widths(run.weights, run.heads);
    const std::size_t keyed = widths.head + widths.rotary;
    report.text(fmt::format("h = {} heads, d = {}, d_c = {}, d_h = {}, d_R = {}, d_v = {}.\n\n", run.heads,
                            widths.model, widths.latent, widths.head, widths.rotary, widths.value));
    report.table("The latent C^KV = E·W_DKV (what the cache keeps)", run.cache.latent, tokens,
                 sa::feature_labels(widths.latent));
    report.table("The rotary key K^R = rope(E·W_KR), shared by the heads (also kept)", run.cache.rotary_keys, tokens,
                 sa::feature_labels(widths.rotary));
    const auto per_head = sa::head_labels(run.heads, sa::feature_labels(keyed));
    report.table("Queries, each head [content q^C = E·W_Q | rotary q^R = rope(E·W_QR)]", run.unfolded_heads.queries,
                 tokens, per_head);
    report.table("Keys, each head [content k^C = C^KV·W_UK | the shared k^R]", run.unfolded_heads.keys, tokens, per_head);
    report.table("Values V = C^KV·W_UV", run.unfolded_heads.values, tokens,
                 sa::head_labels(run.heads, sa::feature_labels(widths.value)));
    const std::vector<sa::Matrix> weights =
        sa::head_weights(run.unfolded_heads.queries, run.unfolded_heads.keys, run.mask, run.heads);
    for (std::size_t head = 0; head < run.heads; ++head) {
        report.table(fmt::format("Head {}: weights softmax((q^C·k^C + q^R·k^R)/√{}{})", head, keyed,
                                 example.causal ? " + M" : ""),
                     weights[head], tokens, tokens);
    }
    report.table("Outputs, unfolded (K and V rebuilt)", run.unfolded, tokens, sa::feature_labels(widths.out));
    report.heatmap("weights.svg", {.title = "Weights of each head, side by side", .values = sa::concat_heads(weights),
                                   .row_labels = tokens, .col_labels = sa::head_labels(run.heads, tokens),
                                   .scale_label = "weight"});
}

void report_folded(sa::Report& report, const sa::Example& example, const Run& run)
{
    const sa::LatentWidths widths = sa::latent_widths(run.weights, run.heads);
    report.text("== Folded: the up-projections absorbed, K and V never made ==\n\n");
    report.table("W~_Q = [W_Q,a·W_UK,aᵀ side by side], d×(h·d_c)", run.folding.w_query_latent,
                 sa::feature_labels(widths.model), sa::head_labels(run.heads, sa::feature_labels(widths.latent)));
    report.table("W~_O = [W_UV,a·W_O,a one under another], (h·d_c)×d_out", run.folding.w_out_latent,
                 sa::head_labels(run.heads, sa::feature_labels(widths.latent)), sa::feature_labels(widths.out));
    report.table("Outputs, folded (each head reads the cache row [c^KV | k^R], one key/value head for all)", run.folded,
                 example.tokens, sa::feature_labels(widths.out));
    report.text(fmt::format("Folded == unfolded to 1e-12 (largest difference below it): {}\n\n",
                            sa::largest_difference(run.folded, run.unfolded) < 1e-12));
}

// A turned content key: the matrix between x_i and c_j is W_Q,0 R_i (W_UK,0 R_j)ᵀ, one per distance j − i.
void report_rotary_apart(sa::Report& report, const Run& run, int digits)
{
    const sa::LatentWidths widths = sa::latent_widths(run.weights, run.heads);
    if (widths.head % 2 != 0) {
        report.text(fmt::format("(A head of odd width d_h = {} has no pairs to turn: the rotary fold is not shown.)\n\n",
                                widths.head));
        return;
    }
    const sa::Matrix w_query_head = sa::split_heads(run.weights.w_query, run.heads)[0];
    const sa::Matrix w_up_key_head = sa::split_heads(run.weights.w_up_key, run.heads)[0];
    //> rotary-apart
    const std::vector<std::pair<std::size_t, std::size_t>> places = {{0, 0}, {1, 0}, {2, 1}, {2, 0}};  // (i, j)
    std::vector<sa::Matrix> folds;
    for (const auto& [query_at, key_at] : places) {
        folds.push_back(sa::transpose(sa::rotated_fold(w_query_head, w_up_key_head, query_at, key_at)));
    }
    //< rotary-apart
    report.text("== Why the rotary part is kept apart: head 0 with its content key turned ==\n\n");
    std::vector<std::string> labels;
    for (const auto& [query_at, key_at] : places) {
        for (std::size_t c = 0; c < widths.latent; ++c) {
            labels.push_back(widths.latent == 1 ? fmt::format("i = {}, j = {}", query_at, key_at)
                                                : fmt::format("i = {}, j = {}, c{}", query_at, key_at, c + 1));
        }
    }
    report.table("W_Q,0·R_i·(W_UK,0·R_j)ᵀ, transposed: one row per latent feature, d columns",
                 sa::stack_rows(folds), labels, sa::feature_labels(widths.model));
    report.text(fmt::format(
        "Distance 1 at (1, 0) == at (2, 1), to 1e-12: {}\nLargest difference between distance 0 and distance 1: "
        "{:.{}f}\nLargest difference between distance 0 and distance 2: {:.{}f}\n\n",
        sa::largest_difference(folds[1], folds[2]) < 1e-12, sa::largest_difference(folds[0], folds[1]), digits,
        sa::largest_difference(folds[0], folds[3]), digits));
}

// Backward through the latent: every matrix and X against central differences.
void report_backward(sa::Report& report, const sa::Example& example, const Run& run)
{
    const sa::Matrix& x = example.embeddings;
    const sa::Matrix d_outputs(run.unfolded.rows(), run.unfolded.cols(), 1.0);  // dY = 1: L = the sum of the outputs
    //> backward
    const sa::LatentGrads grads = sa::latent_self_attention_backward(x, run.weights, run.mask, run.heads, d_outputs);
    //< backward
    constexpr double step = 1e-5;
    const auto loss = [&](const sa::Matrix& at, const sa::LatentWeights& w) {
        return sa::upstream_loss(sa::latent_self_attention(at, w, run.mask, run.heads), d_outputs);
    };
    bool agree = sa::relative_difference(grads.d_inputs, sa::numeric_gradient([&](const sa::Matrix& at) {
                                             return loss(at, run.weights);
                                         }, x, step)) < 1e-7;
    for (sa::Matrix sa::LatentWeights::*member :
         {&sa::LatentWeights::w_query, &sa::LatentWeights::w_query_rotary, &sa::LatentWeights::w_down,
          &sa::LatentWeights::w_up_key, &sa::LatentWeights::w_up_value, &sa::LatentWeights::w_key_rotary,
          &sa::LatentWeights::w_out}) {
        const auto changed = [&](const sa::Matrix& at) {
            sa::LatentWeights w = run.weights;
            w.*member = at;
            return loss(x, w);
        };
        agree = agree && sa::relative_difference(grads.d_weights.*member,
                                                 sa::numeric_gradient(changed, run.weights.*member, step)) < 1e-7;
    }
    const sa::LatentWidths widths = sa::latent_widths(run.weights, run.heads);
    report.text("== Backward through the latent, with dY = 1 (the loss is the sum of the outputs) ==\n\n");
    report.table("dW_DKV: the latent feeds both the keys and the values", grads.d_weights.w_down,
                 sa::feature_labels(widths.model), sa::feature_labels(widths.latent));
    report.table("dW_KR: the shared rotary key gathers every head's share", grads.d_weights.w_key_rotary,
                 sa::feature_labels(widths.model), sa::feature_labels(widths.rotary));
    report.text(fmt::format("dX and the gradients of W_Q, W_QR, W_DKV, W_UK, W_UV, W_KR and W_O against central "
                            "differences\n(step 1e-5), relative difference below 1e-7: {}\n\n", agree));
}

// A model whose cache the chapter sizes: the book's own and DeepSeek-V2.
struct CacheModel {
    std::string name;     // with its source
    std::size_t heads;    // h
    std::size_t width;    // d_h, the width of a head's key (and value)
    std::size_t layers;   // n_layers
    std::size_t bytes;    // σ
    std::size_t context;  // t
    std::vector<std::size_t> kv_heads;                           // chapter 18's choices
    std::vector<std::pair<std::size_t, std::size_t>> latents;    // (d_c, d_R)
};

//> cache-models
const std::vector<CacheModel> cache_models = {
    {"The book's model (chapter 14), F64", 4, 16, 1, 8, 64, {4, 2, 1}, {{8, 8}, {16, 8}, {32, 8}}},
    {"DeepSeek-V2 (DeepSeek-AI 2024, sections 2.1 and 3.1.2), 16-bit numbers", 128, 128, 60, 2, 4096,
     {128, 32, 1}, {{512, 64}}}};
//< cache-models

void report_cache(sa::Report& report)
{
    report.text("== The cache per token: 2·n_layers·h_kv·d_h·σ for keys and values, n_layers·(d_c + d_R)·σ for the "
                "latent ==\n");
    for (const CacheModel& model : cache_models) {
        report.text(fmt::format("\n{}:\nh = {}, d_h = {}, n_layers = {}, σ = {}, t = {}\n", model.name, model.heads,
                                model.width, model.layers, model.bytes, model.context));
        report.text(fmt::format("  {:<27}  {:>7}  {:>7}  {:>9}  {:>11}  {:>10}\n", "kept per token and layer",
                                "numbers", "as h_kv", "per token", "at t", "h_kv = h's"));
        // how many times the cache of a key and a value head per query head is larger
        const auto times = [&](std::uint64_t bytes) {
            return fmt::format("/ {:.2f}", static_cast<double>(sa::kv_cache_bytes(model.layers, model.heads,
                                                                                  model.width, 1, model.bytes)) /
                                               static_cast<double>(bytes));
        };
        for (const std::size_t kv_heads : model.kv_heads) {
            const std::uint64_t bytes = sa::kv_cache_bytes(model.layers, kv_heads, model.width, 1, model.bytes);
            report.text(fmt::format("  {:<27}  {:>7}  {:>7}  {:>9}  {:>11}  {:>10}\n",
                                    fmt::format("keys and values, h_kv = {}", kv_heads), 2 * kv_heads * model.width,
                                    kv_heads, bytes,
                                    sa::kv_cache_bytes(model.layers, kv_heads, model.width, model.context, model.bytes),
                                    times(bytes)));
        }
        for (const auto& [latent, rotary] : model.latents) {
            // (d_c + d_R) / (2 d_h): the key/value heads that would take as many numbers
            const double as_heads = static_cast<double>(latent + rotary) / (2.0 * static_cast<double>(model.width));
            const std::uint64_t bytes = sa::latent_cache_bytes(model.layers, latent, rotary, 1, model.bytes);
            report.text(fmt::format("  {:<27}  {:>7}  {:>7.2f}  {:>9}  {:>11}  {:>10}\n",
                                    fmt::format("latent, d_c = {}, d_R = {}", latent, rotary), latent + rotary,
                                    as_heads, bytes,
                                    sa::latent_cache_bytes(model.layers, latent, rotary, model.context, model.bytes),
                                    times(bytes)));
        }
    }
}

std::string latent_chapter(const sa::Example& example)
{
    const auto heads = static_cast<std::size_t>(sa::whole_option(example, "--heads", 1, 64));
    const sa::LatentWeights weights = sa::latent_weights_option(example);
    check_latent_options(example, weights, heads);
    const Run run = run_latent(example, weights, heads);
    sa::Report report(example);
    report_latent(report, example, run);
    report_folded(report, example, run);
    report_rotary_apart(report, run, example.precision);
    report_backward(report, example, run);
    report_cache(report);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch20-latent-keys",
                         "make every head's keys and values from one latent per token, fold the up-projections away, "
                         "and size the cache", latent_example()};
    info.options = options;
    const std::string latent = "the keys and values come from the latent: give --wdkv, --wuk and --wuv";
    info.unused_options = {{"--wk", latent}, {"--wv", latent}};
    return sa::run_program(info, argc, argv, latent_chapter);
}
