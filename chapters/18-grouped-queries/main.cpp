// Chapter 18, Grouped queries: h query heads share h_kv key/value heads, and the KV cache shrinks with h_kv.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "attention.hpp"
#include "cli.hpp"
#include "gradient_check.hpp"
#include "grouped_options.hpp"
#include "grouped_query.hpp"
#include "labels.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "projection.hpp"
#include "report.hpp"

namespace {

//> example
// "Mouse eats cheese" with two query heads of width 2 (chapter 9's W_Q) and one key/value head: W_K and W_V are the
// identity, so both query heads read K = V = E.
sa::Example shared_head()
{
    sa::Example example = sa::mouse_eats_cheese();
    example.w_query = sa::Matrix{{0, 1, 1, 0}, {1, 0, 0, 1}};  // [swap | identity], chapter 9's
    return example;
}
//< example

struct Run {
    std::size_t heads;
    std::size_t kv_heads;
    sa::Matrix w_out, mask, queries, keys, values;
    std::vector<sa::Matrix> weights, head_outputs;
    sa::Matrix outputs;
    bool repeated_is_same;  // == chapter 9 on K and V repeated, bit for bit
};

Run run_grouped(const sa::Example& example, std::size_t heads, std::size_t kv_heads, const sa::Matrix& w_out)
{
    //> grouped
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // h heads side by side
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // h_kv heads
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);   // h_kv heads
    const std::size_t n = queries.rows();
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    const sa::Matrix outputs = sa::grouped_query_attention(queries, keys, values, mask, heads, kv_heads, w_out);
    // Chapter 9's heads on K and V repeated, one copy per query head:
    const sa::Matrix repeated =
        sa::multi_head_attention(queries, sa::repeat_kv_heads(keys, kv_heads, heads),
                                 sa::repeat_kv_heads(values, kv_heads, heads), mask, heads, w_out);
    //< grouped
    const sa::Matrix keys_repeated = sa::repeat_kv_heads(keys, kv_heads, heads);
    const std::vector<sa::Matrix> weights = sa::head_weights(queries, keys_repeated, mask, heads);
    const std::vector<sa::Matrix> value_heads = sa::split_heads(sa::repeat_kv_heads(values, kv_heads, heads), heads);
    std::vector<sa::Matrix> head_outputs;
    for (std::size_t head = 0; head < heads; ++head) {
        head_outputs.push_back(sa::mix(weights[head], value_heads[head]));
    }
    return {heads,
            kv_heads,
            w_out,
            mask,
            queries,
            keys,
            values,
            weights,
            head_outputs,
            outputs,
            sa::identical(outputs, repeated)};
}

void report_grouped(sa::Report& report, const sa::Example& example, const Run& run)
{
    const auto& tokens = example.tokens;
    const auto per_query_head = sa::head_labels(run.heads, sa::feature_labels(run.queries.cols() / run.heads));
    const auto per_kv_head = [&](const sa::Matrix& matrix) {
        return sa::side_by_side_labels(sa::numbered_labels("kv", run.kv_heads, 0),
                                       sa::feature_labels(matrix.cols() / run.kv_heads));
    };
    report.text(fmt::format("h = {} query heads share h_kv = {} key/value head(s): {} query head(s) per group.\n",
                            run.heads, run.kv_heads, run.heads / run.kv_heads));
    for (std::size_t head = 0; head < run.heads; ++head) {
        report.text(fmt::format("  query head {} reads key/value head {}\n", head,
                                sa::kv_head_of(head, run.heads, run.kv_heads)));
    }
    report.text("\n");
    report.table("Queries Q = E·W_Q", run.queries, tokens, per_query_head);
    report.table("Keys K = E·W_K", run.keys, tokens, per_kv_head(run.keys));
    report.table("Values V = E·W_V", run.values, tokens, per_kv_head(run.values));
    for (std::size_t head = 0; head < run.heads; ++head) {
        const std::size_t shared = sa::kv_head_of(head, run.heads, run.kv_heads);
        report.table(fmt::format("Query head {0}: weights softmax(Q{0}·K{1}ᵀ/√{2}{3})", head, shared,
                                 run.queries.cols() / run.heads, example.causal ? " + M" : ""),
                     run.weights[head], tokens, tokens);
        report.table(fmt::format("Query head {0}: outputs A{0}·V{1}", head, shared), run.head_outputs[head], tokens,
                     sa::feature_labels(run.head_outputs[head].cols()));
    }
    report.table("Outputs O = [heads side by side]·W_O", run.outputs, tokens, sa::feature_labels(run.outputs.cols()));
    report.heatmap("weights.svg", {.title = "Weights of each query head, side by side",
                                   .values = sa::concat_heads(run.weights), .row_labels = tokens,
                                   .col_labels = sa::head_labels(run.heads, tokens), .scale_label = "weight"});
    report.text(fmt::format("sa::grouped_query_attention == chapter 9's heads on K and V repeated "
                            "(sa::repeat_kv_heads), bit for bit: {}\n\n",
                            run.repeated_is_same));
}

// h_kv = h: every query head has a key/value head of its own, and the step is chapter 9's.
void report_as_many_as_queries(sa::Report& report, const Run& run)
{
    const sa::Matrix keys = sa::repeat_kv_heads(run.keys, run.kv_heads, run.heads);  // h key/value heads
    const sa::Matrix values = sa::repeat_kv_heads(run.values, run.kv_heads, run.heads);
    const bool same =
        sa::identical(sa::grouped_query_attention(run.queries, keys, values, run.mask, run.heads, run.heads, run.w_out),
                      sa::multi_head_attention(run.queries, keys, values, run.mask, run.heads, run.w_out));
    report.text(fmt::format("With h_kv = h = {} (K and V repeated, one key/value head per query head):\n"
                            "sa::grouped_query_attention == sa::multi_head_attention (chapter 9), bit for bit: {}\n\n",
                            run.heads, same));
}

// Queries of zeros: every score is 0, so each head averages the value rows of its group.
void report_by_hand(sa::Report& report, const sa::Example& example)
{
    const std::size_t n = example.embeddings.rows();
    const std::size_t d = example.embeddings.cols();
    sa::Matrix values(n, 2 * d);  // [E | E with its features reversed]: two
                                  // key/value heads of width d
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < d; ++c) {
            values(r, c) = example.embeddings(r, c);
            values(r, d + c) = example.embeddings(r, d - 1 - c);
        }
    }
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    //> by-hand
    const sa::Matrix heads_side_by_side =
        sa::grouped_query_attention(sa::Matrix(n, 4, 0.0), sa::Matrix(n, 2, 0.0), values, mask, 4, 2,
                                    sa::identity(4 * d));  // W_O = I
    //< by-hand
    report.text("== Sharing by hand: h = 4 query heads, h_kv = 2, every query and key 0 ==\n\n");
    report.table("Values V: key/value head 0 is E, head 1 is E with its features reversed", values, example.tokens,
                 sa::side_by_side_labels(sa::numbered_labels("kv", 2, 0), sa::feature_labels(d)));
    report.text(fmt::format(
        "Every score is 0, so each query gives the same weight to every key it {}: each head's output row is\nthe mean "
        "of those rows of its group's values. Heads 0 and 1 read key/value head 0, heads 2 and 3 read head 1.\n\n",
        example.causal ? "may see (itself and those before it)" : "sees"));
    report.table("The heads' outputs side by side (W_O = I)", heads_side_by_side, example.tokens,
                 sa::head_labels(4, sa::feature_labels(d)));
}

// Backward through the sharing: a shared head's gradient is the sum over its query heads.
void report_backward(sa::Report& report, const sa::Example& example, const Run& run)
{
    const sa::Matrix d_outputs(run.outputs.rows(), run.outputs.cols(), 1.0);  // dY = 1: L = the sum of O
    //> backward
    const sa::MultiHeadGrads grouped = sa::grouped_query_backward(run.queries, run.keys, run.values, run.mask,
                                                                  run.heads, run.kv_heads, run.w_out, d_outputs);
    // Chapter 14's backward on K and V repeated: one gradient per query head, then each group summed.
    const sa::MultiHeadGrads per_query_head = sa::multi_head_backward(
        run.queries, sa::repeat_kv_heads(run.keys, run.kv_heads, run.heads),
        sa::repeat_kv_heads(run.values, run.kv_heads, run.heads), run.mask, run.heads, run.w_out, d_outputs);
    const bool sums_agree =
        sa::identical(grouped.d_keys, sa::sum_kv_heads(per_query_head.d_keys, run.kv_heads, run.heads)) &&
        sa::identical(grouped.d_values, sa::sum_kv_heads(per_query_head.d_values, run.kv_heads, run.heads)) &&
        sa::identical(grouped.d_queries, per_query_head.d_queries);
    //< backward
    const auto loss = [&](const sa::Matrix& q, const sa::Matrix& k, const sa::Matrix& v, const sa::Matrix& w_o) {
        return sa::upstream_loss(sa::grouped_query_attention(q, k, v, run.mask, run.heads, run.kv_heads, w_o),
                                 d_outputs);
    };
    constexpr double step = 1e-5;
    const bool numeric_agree =
        sa::relative_difference(
            grouped.d_queries,
            sa::numeric_gradient([&](const sa::Matrix& x) { return loss(x, run.keys, run.values, run.w_out); },
                                 run.queries, step)) < 1e-7 &&
        sa::relative_difference(
            grouped.d_keys,
            sa::numeric_gradient([&](const sa::Matrix& x) { return loss(run.queries, x, run.values, run.w_out); },
                                 run.keys, step)) < 1e-7 &&
        sa::relative_difference(
            grouped.d_values,
            sa::numeric_gradient([&](const sa::Matrix& x) { return loss(run.queries, run.keys, x, run.w_out); },
                                 run.values, step)) < 1e-7 &&
        sa::relative_difference(
            grouped.d_w_out,
            sa::numeric_gradient([&](const sa::Matrix& x) { return loss(run.queries, run.keys, run.values, x); },
                                 run.w_out, step)) < 1e-7;
    const std::size_t width = run.values.cols() / run.kv_heads;
    report.text("== Backward through the sharing, with dY = 1 (the loss is the sum of the outputs) ==\n\n");
    report.table("dV of each query head (chapter 14's backward on V repeated)", per_query_head.d_values, example.tokens,
                 sa::head_labels(run.heads, sa::feature_labels(width)));
    report.table("dV = each group's query heads added (sa::grouped_query_backward)", grouped.d_values, example.tokens,
                 sa::side_by_side_labels(sa::numbered_labels("kv", run.kv_heads, 0), sa::feature_labels(width)));
    report.table("dK, the same way", grouped.d_keys, example.tokens,
                 sa::side_by_side_labels(sa::numbered_labels("kv", run.kv_heads, 0),
                                         sa::feature_labels(run.keys.cols() / run.kv_heads)));
    report.text(fmt::format(
        "dQ, dK and dV == chapter 14's on K and V repeated, each group summed (sa::sum_kv_heads), bit for bit: {}\n"
        "dQ, dK, dV and dW_O against central differences (step 1e-5), relative difference below 1e-7: {}\n\n",
        sums_agree, numeric_agree));
}

// A model whose cache the chapter sizes: the book's own, and two published configurations.
struct CacheModel {
    std::string name;      // with its source
    std::size_t heads;     // h
    std::size_t kv_heads;  // the h_kv the model has
    std::size_t width;     // d_k/h, the width of one head
    std::size_t layers;    // n_layers
    std::size_t bytes;     // σ, the bytes of one number
    std::size_t context;   // t, the positions the table also sizes
    std::string number;    // what σ stands for
};

//> cache-models
const std::vector<CacheModel> cache_models = {
    {"The book's model (chapter 14)", 4, 4, 16, 1, 8, 64, "F64"},
    {"The book's two layers (chapter 15)", 4, 4, 16, 2, 8, 64, "F64"},
    {"Llama 2 70B (Touvron et al. 2023, and its released configuration)", 64, 8, 128, 80, 2, 4096, "16-bit numbers"},
    {"Mistral 7B (Jiang et al. 2023, Table 1)", 32, 8, 128, 32, 2, 4096, "16-bit numbers"}};
//< cache-models

std::string kind_of(std::size_t kv_heads, const CacheModel& model)
{
    std::string kind = kv_heads == model.heads ? "multi-head" : kv_heads == 1 ? "multi-query" : "grouped";
    return kv_heads == model.kv_heads ? kind + ", as published" : kind;
}

void report_cache(sa::Report& report)
{
    report.text("== The KV cache: 2 · n_layers · h_kv · d_k/h · t · σ bytes, whatever h ==\n");
    for (const CacheModel& model : cache_models) {
        report.text(fmt::format("\n{}:\nh = {}, d_k/h = {}, n_layers = {}, {} (σ = {}), t = {}\n", model.name,
                                model.heads, model.width, model.layers, model.number, model.bytes, model.context));
        report.text(fmt::format("  {:>5}  {:>10}  {:>12}  {:>7}\n", "h_kv", "per token", "at t", "of h"));
        // h_kv = h, h/4, the published count and 1: from most to fewest, each once.
        const std::set<std::size_t, std::greater<>> counts = {model.heads, std::max<std::size_t>(1, model.heads / 4),
                                                              model.kv_heads, 1};
        for (std::size_t count : counts) {
            report.text(fmt::format("  {:>5}  {:>10}  {:>12}  {:>7}  {}\n", count,
                                    sa::kv_cache_bytes(model.layers, count, model.width, 1, model.bytes),
                                    sa::kv_cache_bytes(model.layers, count, model.width, model.context, model.bytes),
                                    fmt::format("1/{}", model.heads / count), kind_of(count, model)));
        }
    }
}

std::string grouped_chapter(const sa::Example& example)
{
    const sa::GroupedOptions options = sa::read_grouped_options(example);  // each misfit named by its option
    const Run run = run_grouped(example, options.heads, options.kv_heads, options.w_out);
    sa::Report report(example);
    report_grouped(report, example, run);
    report_as_many_as_queries(report, run);
    report_by_hand(report, example);
    report_backward(report, example, run);
    report_cache(report);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch18-grouped-queries", "let h query heads share h_kv key/value heads, and size the KV cache",
                         shared_head()};
    info.options = sa::grouped_program_options();
    info.grouped_keys = true;  // W_K holds h_kv heads, W_Q h
    return sa::run_program(info, argc, argv, grouped_chapter);
}
