// Chapter 7, The whole formula: softmax(Q·Kᵀ/√d_k + M)·V in one call, checked against the steps.
#include <algorithm>
#include <cmath>

#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace {

std::string attention_chapter(const sa::Example& example)
{
    //> pipeline
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);   // V = E·W_V
    const sa::Matrix mask = example.causal ? sa::causal_mask(queries.rows(), keys.rows())
                                           : sa::Matrix(queries.rows(), keys.rows(), 0.0);
    // Chapters 2 to 6, one step at a time ...
    const sa::Matrix raw_scores = sa::scores(queries, keys);
    const sa::Matrix scaled = sa::scale(raw_scores, queries.cols());
    const sa::Matrix masked = sa::apply_mask(scaled, mask);
    const sa::Matrix weights = sa::softmax_rows(masked);
    const sa::Matrix step_by_step = sa::mix(weights, values);
    // ... and the whole formula in one call.
    const sa::Matrix one_call =
        example.causal ? sa::attention(queries, keys, values, mask) : sa::attention(queries, keys, values);
    //< pipeline

    const auto& tokens = example.tokens;
    const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
    sa::Report report(example);
    report.table("Embeddings E", example.embeddings, tokens, features(example.embeddings));
    report.table("W_Q", example.w_query, features(example.embeddings), features(example.w_query));
    report.table("W_K", example.w_key, features(example.embeddings), features(example.w_key));
    report.table("W_V", example.w_value, features(example.embeddings), features(example.w_value));
    report.table("Queries Q = E·W_Q", queries, tokens, features(queries));
    report.table("Keys K = E·W_K", keys, tokens, features(keys));
    report.table("Values V = E·W_V", values, tokens, features(values));
    report.table("Scores S = Q·Kᵀ, rows ask, columns are asked about", raw_scores, tokens, tokens);
    report.table(fmt::format("Scaled scores S/√d_k, d_k = {}", queries.cols()), scaled, tokens, tokens);
    if (example.causal) {
        report.table("Masked scores, causal: keys after the query are -inf", masked, tokens, tokens);
    }
    report.table("Weights A = softmax of each row", weights, tokens, tokens);
    report.table("Outputs O = A·V, step by step", step_by_step, tokens, features(step_by_step));
    report.table("Outputs, one call to sa::attention", one_call, tokens, features(one_call));
    report.text(fmt::format("One call == step by step, bit for bit: {}\n", sa::identical(one_call, step_by_step)));
    const auto end = one_call.data() + one_call.rows() * one_call.cols();
    if (std::any_of(one_call.data(), end, [](double output) { return !std::isfinite(output); })) {
        report.text("But some outputs are NaN or infinite: your numbers overflowed a double (about 1.8e308) on the\n"
                    "way, so the two agree only in having overflowed alike.\n");
    }
    report.heatmap("weights.svg", {.title = "Attention weights A", .values = weights, .row_labels = tokens,
                                   .col_labels = tokens, .scale_label = "weight"});
    report.heatmap("outputs.svg", {.title = "Outputs O = A·V", .values = one_call, .row_labels = tokens,
                                   .col_labels = features(one_call), .row_axis = "token",
                                   .col_axis = "output feature", .scale_label = "output"});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch07-attention", "run the whole formula in one call and check it against the steps",
                               sa::mouse_eats_cheese()};
    return sa::run_program(info, argc, argv, attention_chapter);
}
