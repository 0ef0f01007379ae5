// Chapter 4, Masking: positions a token may not use get -inf before the softmax, so weight 0.
#include <vector>

#include "cli.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace {

std::string masking_chapter(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    const sa::Matrix scaled = sa::scale(sa::scores(queries, keys), queries.cols());
    //> mask-the-scores
    const sa::Matrix mask = sa::causal_mask(n, n);         // 0 on and below the diagonal, -inf above
    const sa::Matrix masked = sa::apply_mask(scaled, mask);  // S/√d_k + M
    const sa::Matrix weights = sa::softmax_rows(masked);     // each -inf becomes a weight of 0
    const sa::Matrix outputs = sa::mix(weights, values);
    //< mask-the-scores
    //> pad-the-first-token
    std::vector<bool> key_is_real(n, true);
    key_is_real.front() = false;  // the first position holds a padding token
    const sa::Matrix padding = sa::padding_mask(n, key_is_real);  // -inf in the first column
    const sa::Matrix padded = sa::apply_mask(masked, padding);      // both masks, one after the other
    const sa::Matrix padded_weights = sa::softmax_rows(padded);  // the first row has nothing left
    const sa::Matrix padded_outputs = sa::mix(padded_weights, values);
    //< pad-the-first-token

    const auto& tokens = example.tokens;
    const auto features = sa::feature_labels(values.cols());
    sa::Report report(example);
    report.table("Scaled scores S/√d_k, rows ask, columns are asked about", scaled, tokens, tokens);
    report.table("Causal mask M: 0 takes part, -inf is masked out", mask, tokens, tokens);
    report.table("Masked scores S/√d_k + M", masked, tokens, tokens);
    report.table("Weights A = softmax(masked scores), row by row", weights, tokens, tokens);
    report.table("Outputs A·V", outputs, tokens, features);
    report.text("With the first position (" + tokens.front() + ") treated as padding as well:\n\n");
    report.table("Padding mask: the first key is masked out in every row", padding, tokens, tokens);
    report.table("Scores with both masks", padded, tokens, tokens);
    report.table("Weights: a row with every key masked gets all zeros", padded_weights, tokens, tokens);
    report.table("Outputs: the fully masked row is all zeros, never nan", padded_outputs, tokens, features);
    report.heatmap("masked-scores.svg", {.title = "Masked scores S/√d_k + M", .values = masked, .row_labels = tokens,
                                         .col_labels = tokens, .scale_label = "score"});
    report.heatmap("weights.svg", {.title = "Weights under the causal mask", .values = weights, .row_labels = tokens,
                                   .col_labels = tokens, .scale_label = "weight"});
    report.heatmap("outputs.svg", {.title = "Outputs A·V under the causal mask", .values = outputs,
                                   .row_labels = tokens, .col_labels = features, .col_axis = "feature",
                                   .scale_label = "output"});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch04-masking", "mask the positions each token may not use (always causal here)",
                         sa::mouse_eats_cheese()};
    info.unused_options = {
        {"--causal", "it always applies the causal mask"},
    };
    return sa::run_program(info, argc, argv, masking_chapter);
}
