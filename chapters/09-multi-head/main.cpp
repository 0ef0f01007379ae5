// Chapter 9, Multi-head attention: each head asks its own question on its own columns, side by side.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "attention.hpp"
#include "cli.hpp"
#include "fitting_options.hpp"
#include "labels.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace {

//> example
// "Mouse eats cheese" with two heads of width 2. Head 0 has chapter 7's projections; head 1
// compares each embedding with the others and delivers it with its features swapped.
sa::Example two_heads()
{
    sa::Example example = sa::mouse_eats_cheese();
    example.w_query = sa::Matrix{{0, 1, 1, 0}, {1, 0, 0, 1}};  // [swap | identity]
    example.w_key = sa::Matrix{{1, 0, 1, 0}, {0, 1, 0, 1}};    // [identity | identity]
    example.w_value = sa::Matrix{{1, 0, 0, 1}, {0, 1, 1, 0}};  // [identity | swap]
    return example;
}
//< example

// The defaults below fit the book's example. On the reader's numbers a default that no
// longer fits becomes what they need (sa::run_program's note line says so): the most
// heads up to 2 that divide d_k and d_v; a W_O that adds the heads; a source of two
// tokens with the identity's rows.
std::string fit_heads(const sa::Example& example)
{
    const std::size_t widths = std::gcd(example.w_query.cols(), example.w_value.cols());
    return widths % 2 == 0 ? "" : "1";
}

std::string fit_w_out(const sa::Example& example)
{
    const std::size_t d_v = example.w_value.cols();
    const auto heads = static_cast<std::size_t>(sa::whole_option(example, "--heads", 1, 64));
    if (d_v == 4 || d_v % heads != 0) {  // the default fits; or --heads is refused on its own
        return "";
    }
    sa::Matrix adds(d_v, d_v / heads, 0.0);  // [I; I; ...]: output feature f = the heads' feature f, added
    for (std::size_t row = 0; row < d_v; ++row) {
        adds(row, row % (d_v / heads)) = 1.0;
    }
    return sa::matrix_text(adds);
}

std::string fit_source(const sa::Example& example)
{
    const std::size_t d_model = example.embeddings.cols();
    if (d_model == 2) {
        return "";
    }
    sa::Matrix source(2, d_model, 0.0);  // s1 = feature 1, s2 = feature 2 (or 0 when d_model = 1)
    for (std::size_t row = 0; row < std::min<std::size_t>(2, d_model); ++row) {
        source(row, row) = 1.0;
    }
    return sa::matrix_text(source);
}

const std::vector<sa::ProgramOption> options = {
    {"--heads", "H", "number of heads; it must divide the columns of --wq and of --wv", "2", fit_heads},
    {"--wo", "M", "W_O, one row per column of --wv (the default adds the heads)", "1,0;0,1;1,0;0,1", fit_w_out},
    {"--source", "M", "the sequence cross-attention reads, one row per token", "1,2;2,0", fit_source}};

// Everything the chapter prints: the heads one by one, the checks, and cross-attention.
struct Heads {
    std::size_t heads;
    sa::Matrix w_out;
    sa::Matrix source;
    sa::Matrix queries;
    sa::Matrix keys;
    sa::Matrix values;
    std::vector<sa::Matrix> query_heads;
    std::vector<sa::Matrix> weights;
    std::vector<sa::Matrix> head_outputs;
    sa::Matrix concatenated;
    sa::Matrix outputs;
    sa::Matrix one_call;
    bool one_head_is_chapter_7;
    sa::Matrix wrong;
    sa::Matrix source_keys;
    sa::Matrix source_values;
    std::vector<sa::Matrix> cross_weights;
    sa::Matrix cross;
    sa::Matrix alignments;  // the two causal alignments side by side
};

Heads run_heads(const sa::Example& example, std::size_t heads, const sa::Matrix& w_out, const sa::Matrix& source)
{
    //> heads
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q, n×d_k
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K, n×d_k
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);   // V = E·W_V, n×d_v
    const std::size_t n = queries.rows();
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    const std::vector<sa::Matrix> query_heads = sa::split_heads(queries, heads);  // head i: its own columns
    const std::vector<sa::Matrix> key_heads = sa::split_heads(keys, heads);
    const std::vector<sa::Matrix> value_heads = sa::split_heads(values, heads);
    std::vector<sa::Matrix> weights;
    std::vector<sa::Matrix> head_outputs;
    for (std::size_t head = 0; head < heads; ++head) {  // chapter 7, once per head, on the head's slices
        const sa::Matrix scaled = sa::scale(sa::scores(query_heads[head], key_heads[head]), query_heads[head].cols());
        weights.push_back(sa::softmax_rows(sa::apply_mask(scaled, mask)));
        head_outputs.push_back(sa::mix(weights[head], value_heads[head]));
    }
    const sa::Matrix concatenated = sa::concat_heads(head_outputs);  // [head 0 | head 1 | ...], n×d_v
    const sa::Matrix outputs = sa::project(concatenated, w_out);     // O = concatenated·W_O
    //< heads
    //> checks
    const sa::Matrix one_call = sa::multi_head_attention(queries, keys, values, mask, heads, w_out);
    const sa::Matrix identity = sa::identity(values.cols());  // W_O = I: the heads' outputs as they are
    const bool one_head_is_chapter_7 = sa::identical(sa::multi_head_attention(queries, keys, values, mask, 1, identity),
                                                     sa::attention(queries, keys, values, mask));
    const sa::Matrix wrong = sa::multi_head_attention_by_reshape(queries, keys, values, mask, heads, w_out);
    //< checks
    //> cross
    const sa::Matrix source_keys = sa::project(source, example.w_key);      // m×d_k: keys from the other sequence
    const sa::Matrix source_values = sa::project(source, example.w_value);  // m×d_v: and so are the values
    const std::size_t m = source.rows();
    const sa::Matrix cross_mask = example.causal ? sa::causal_mask(n, m) : sa::Matrix(n, m, 0.0);
    const std::vector<sa::Matrix> cross_weights = sa::head_weights(queries, source_keys, cross_mask, heads);
    const sa::Matrix cross = sa::multi_head_attention(queries, source_keys, source_values, cross_mask, heads, w_out);
    //< cross
    const sa::Matrix alignments = sa::concat_heads({sa::causal_mask(n, m), sa::causal_mask_bottom_right(n, m)});
    return {heads, w_out, source, queries, keys, values, query_heads, weights, head_outputs, concatenated, outputs,
            one_call, one_head_is_chapter_7, wrong, source_keys, source_values, cross_weights, cross, alignments};
}

// Labels of a matrix's columns: f1, f2, ...; and per head: h0 f1, h0 f2, h1 f1, ...
std::vector<std::string> features(const sa::Matrix& matrix)
{
    return sa::feature_labels(matrix.cols());
}

std::vector<std::string> per_head(const Heads& run, const sa::Matrix& matrix)
{
    return sa::head_labels(run.heads, sa::feature_labels(matrix.cols() / run.heads));
}

void report_heads(sa::Report& report, const sa::Example& example, const Heads& run)
{
    const auto& tokens = example.tokens;
    const auto e_features = features(example.embeddings);
    report.table("Embeddings E", example.embeddings, tokens, e_features);
    report.table("W_Q, one block of columns per head", example.w_query, e_features, per_head(run, run.queries));
    report.table("W_K", example.w_key, e_features, per_head(run, run.keys));
    report.table("W_V", example.w_value, e_features, per_head(run, run.values));
    report.table("W_O, one row per column of V", run.w_out, per_head(run, run.values), features(run.w_out));
    report.table("Queries Q = E·W_Q", run.queries, tokens, per_head(run, run.queries));
    report.table("Keys K = E·W_K", run.keys, tokens, per_head(run, run.keys));
    report.table("Values V = E·W_V", run.values, tokens, per_head(run, run.values));
    for (std::size_t head = 0; head < run.heads; ++head) {
        report.table(fmt::format("Head {0}: weights A{0} = softmax(Q{0}·K{0}ᵀ/√{1}{2})", head,
                                 run.query_heads[head].cols(), example.causal ? " + M" : ""),
                     run.weights[head], tokens, tokens);
        report.table(fmt::format("Head {0}: outputs A{0}·V{0}", head), run.head_outputs[head], tokens,
                     features(run.head_outputs[head]));
    }
    report.table("The heads side by side (concatenated)", run.concatenated, tokens, per_head(run, run.concatenated));
    report.table("Outputs O = concatenated·W_O", run.outputs, tokens, features(run.outputs));
    report.text(fmt::format("One call to sa::multi_head_attention == step by step, bit for bit: {}\n"
                            "One head with W_O = I == sa::attention (chapter 7), bit for bit: {}\n\n",
                            sa::identical(run.one_call, run.outputs), run.one_head_is_chapter_7));
}

void report_classic_mistake(sa::Report& report, const sa::Example& example, const Heads& run)
{
    report.text("== The classic mistake: heads by reshape, without the transpose ==\n\n");
    const std::vector<std::string> right_wrong = {"right", "wrong"};
    report.table("Head 0's queries, split by columns (right) and by reshape (wrong)",
                 sa::concat_heads({run.query_heads[0], sa::split_heads_by_reshape(run.queries, run.heads)[0]}),
                 example.tokens, sa::side_by_side_labels(right_wrong, features(run.query_heads[0])));
    report.table("Outputs O, right and wrong", sa::concat_heads({run.outputs, run.wrong}), example.tokens,
                 sa::side_by_side_labels(right_wrong, features(run.outputs)));
    report.text(fmt::format("Wrong outputs == right outputs: {}\n\n", sa::identical(run.wrong, run.outputs)));
}

void report_cross_attention(sa::Report& report, const sa::Example& example, const Heads& run)
{
    const auto& tokens = example.tokens;
    const std::vector<std::string> source_tokens = sa::numbered_labels("s", run.source.rows());  // s1, s2, ...
    report.text("== Cross-attention: queries from the sentence, keys and values from the source ==\n\n");
    report.table("Source", run.source, source_tokens, features(run.source));
    report.table("Keys from the source", run.source_keys, source_tokens, per_head(run, run.source_keys));
    report.table("Values from the source", run.source_values, source_tokens, per_head(run, run.source_values));
    report.table("Weights of each head, side by side", sa::concat_heads(run.cross_weights), tokens,
                 sa::head_labels(run.heads, source_tokens));
    report.table("Cross-attention outputs", run.cross, tokens, features(run.cross));
    const std::vector<std::string> alignment_labels = sa::side_by_side_labels({"TL", "BR"}, source_tokens);
    report.table("Causal masks: top-left (sa::causal_mask) and bottom-right", run.alignments, tokens,
                 alignment_labels);
}

void draw_figures(sa::Report& report, const sa::Example& example, const Heads& run)
{
    const auto& tokens = example.tokens;
    const std::vector<std::string> source_tokens = sa::numbered_labels("s", run.source.rows());
    report.heatmap("weights.svg", {.title = "Weights of each head, side by side",
                                   .values = sa::concat_heads(run.weights), .row_labels = tokens,
                                   .col_labels = sa::head_labels(run.heads, tokens), .scale_label = "weight"});
    report.heatmap("cross-weights.svg", {.title = "Cross-attention weights of each head",
                                         .values = sa::concat_heads(run.cross_weights), .row_labels = tokens,
                                         .col_labels = sa::head_labels(run.heads, source_tokens),
                                         .col_axis = "source key (asked about)", .scale_label = "weight"});
    report.heatmap("causal-alignment.svg", {.title = "Causal masks: top-left and bottom-right",
                                            .values = run.alignments, .row_labels = tokens,
                                            .col_labels = sa::side_by_side_labels({"TL", "BR"}, source_tokens),
                                            .col_axis = "source key", .scale_label = "mask"});
}

std::string multi_head_chapter(const sa::Example& example)
{
    const std::size_t heads = sa::heads_option(example, options[0]);
    const sa::Matrix w_out = sa::fitting_matrix_option(example, options[1], example.w_value.cols(), sa::Along::rows,
                                                       "one per column of --wv");
    const sa::Matrix source = sa::fitting_matrix_option(example, options[2], example.embeddings.cols(),
                                                        sa::Along::columns, "one per embedding feature");
    const Heads run = run_heads(example, heads, w_out, source);
    sa::Report report(example);
    report_heads(report, example, run);
    report_classic_mistake(report, example, run);
    report_cross_attention(report, example, run);
    draw_figures(report, example, run);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch09-multi-head", "run several heads side by side, put them back together, and cross-attend",
                         two_heads()};
    info.options = options;
    return sa::run_program(info, argc, argv, multi_head_chapter);
}
