// Chapter 1, Projection: each embedding becomes a query, a key and a value.
#include "cli.hpp"
#include "projection.hpp"
#include "svg.hpp"

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch01-projection", "project the embeddings into queries, keys and values",
                               sa::mouse_eats_cheese()};
    return sa::run_program(info, argc, argv, [](const sa::Example& example) {
        const auto& tokens = example.tokens;
        const int digits = example.precision;
        //> project-three-times
        const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q
        const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K
        const sa::Matrix values = sa::project(example.embeddings, example.w_value);   // V = E·W_V
        //< project-three-times
        const auto inputs = sa::feature_labels(example.embeddings.cols());
        std::string out;
        out += sa::show("Embeddings E (" + sa::shape(example.embeddings) + "), one row per token:",
                        example.embeddings, tokens, inputs, digits);
        out += sa::show("W_Q (" + sa::shape(example.w_query) + "):", example.w_query, inputs,
                        sa::feature_labels(example.w_query.cols()), digits);
        out += sa::show("W_K (" + sa::shape(example.w_key) + "):", example.w_key, inputs,
                        sa::feature_labels(example.w_key.cols()), digits);
        out += sa::show("W_V (" + sa::shape(example.w_value) + "):", example.w_value, inputs,
                        sa::feature_labels(example.w_value.cols()), digits);
        out += sa::show("Queries Q = E·W_Q (" + sa::shape(queries) + "):", queries, tokens,
                        sa::feature_labels(queries.cols()), digits);
        out += sa::show("Keys K = E·W_K (" + sa::shape(keys) + "):", keys, tokens, sa::feature_labels(keys.cols()),
                        digits);
        out += sa::show("Values V = E·W_V (" + sa::shape(values) + "):", values, tokens,
                        sa::feature_labels(values.cols()), digits);
        // The figures, from the same numbers: Q beside K shows the exchanged features.
        const auto heatmap = [&](const std::string& title, const sa::Matrix& matrix) {
            return sa::heatmap_svg(sa::Heatmap{title, matrix, tokens, sa::feature_labels(matrix.cols()), "token",
                                               "feature", digits, "coordinate"});
        };
        sa::write_figure(example.figures, "queries.svg", heatmap("Queries Q = E·W_Q", queries));
        sa::write_figure(example.figures, "keys.svg", heatmap("Keys K = E·W_K", keys));
        return out;
    });
}
