// Chapter 1, Projection: each embedding becomes a query, a key and a value.
#include "cli.hpp"
#include "projection.hpp"
#include "report.hpp"

namespace {

std::string projection_chapter(const sa::Example& example)
{
    //> project-three-times
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);   // V = E·W_V
    //< project-three-times

    const auto& tokens = example.tokens;
    const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
    const auto inputs = features(example.embeddings);
    sa::Report report(example);
    report.table("Embeddings E", example.embeddings, tokens, inputs, "one row per token");
    report.table("W_Q", example.w_query, inputs, features(example.w_query));
    report.table("W_K", example.w_key, inputs, features(example.w_key));
    report.table("W_V", example.w_value, inputs, features(example.w_value));
    report.table("Queries Q = E·W_Q", queries, tokens, features(queries));
    report.table("Keys K = E·W_K", keys, tokens, features(keys));
    report.table("Values V = E·W_V", values, tokens, features(values));
    // The figures, from the same numbers: Q beside K shows the exchanged features.
    report.heatmap("queries.svg", {.title = "Queries Q = E·W_Q", .values = queries, .row_labels = tokens,
                                   .col_labels = features(queries), .row_axis = "token", .col_axis = "feature",
                                   .scale_label = "coordinate"});
    report.heatmap("keys.svg", {.title = "Keys K = E·W_K", .values = keys, .row_labels = tokens,
                                .col_labels = features(keys), .row_axis = "token", .col_axis = "feature",
                                .scale_label = "coordinate"});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch01-projection", "project the embeddings into queries, keys and values",
                         sa::mouse_eats_cheese()};
    info.unused_options = {
        {"--causal", "projection comes before any mask (ch04-masking applies one)"},
    };
    return sa::run_program(info, argc, argv, projection_chapter);
}
