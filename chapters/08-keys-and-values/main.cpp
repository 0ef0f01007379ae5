// Chapter 8, Keys and values are different jobs: one projection to be found, another to deliver.
#include <algorithm>
#include <string>

#include "attention.hpp"
#include "attention_weights.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "report.hpp"

namespace {

//> example
// "Cat chases mouse", the default of this program.
sa::Example cat_chases_mouse()
{
    sa::Example example;
    example.tokens = {"Cat", "Chases", "Mouse"};
    example.embeddings = sa::Matrix{{2, 0}, {1, 1}, {0, 2}};
    example.w_query = sa::Matrix{{1, 0}, {0, 1}};  // each query is the embedding itself
    example.w_key = sa::Matrix{{0, 1}, {1, 0}};    // swaps the two features
    example.w_value = sa::Matrix{{1, 0}, {0, 3}};  // triples the second feature
    return example;
}
//< example

// One variation of the example: the keys, values, weights and outputs under one W_K and one W_V.
struct Case {
    std::string name = {};
    std::string slug = {};  // names its figures
    sa::Matrix w_key = {};
    sa::Matrix w_value = {};
    sa::Matrix keys = {};
    sa::Matrix values = {};
    sa::Matrix weights = {};
    sa::Matrix outputs = {};
};

Case run_case(const sa::Example& example, const sa::Matrix& queries, const sa::Matrix& mask, Case variation)
{
    const sa::Matrix& w_key = variation.w_key;
    const sa::Matrix& w_value = variation.w_value;
    //> run-case
    const sa::Matrix keys = sa::project(example.embeddings, w_key);      // how each token is found
    const sa::Matrix values = sa::project(example.embeddings, w_value);  // what each token delivers
    const sa::Matrix weights = sa::attention_weights(queries, keys, mask);  // no V anywhere
    const sa::Matrix outputs = sa::attention(queries, keys, values, mask);
    //< run-case
    variation.keys = keys;
    variation.values = values;
    variation.weights = weights;
    variation.outputs = outputs;
    return variation;
}

void report_case(sa::Report& report, const sa::Example& example, const Case& result)
{
    const auto& tokens = example.tokens;
    const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
    const auto figure = [&](const std::string& what, const std::string& title, const sa::Matrix& matrix) {
        report.heatmap(what + "-" + result.slug + ".svg",
                       {.title = result.name + ": " + title, .values = matrix, .row_labels = tokens,
                        .col_labels = features(matrix), .row_axis = "token", .col_axis = "feature",
                        .scale_label = "coordinate"});
    };
    report.text("== " + result.name + " ==\n\n");
    report.table("W_K", result.w_key, features(example.embeddings), features(result.w_key));
    report.table("Keys K = E·W_K, how each token is found", result.keys, tokens, features(result.keys));
    report.table("W_V", result.w_value, features(example.embeddings), features(result.w_value));
    report.table("Values V = E·W_V, what each token delivers", result.values, tokens, features(result.values));
    report.table("Weights A = softmax(Q·Kᵀ/√d_k + M), from Q and K only", result.weights, tokens, tokens);
    report.table("Outputs O = A·V", result.outputs, tokens, features(result.outputs));
    figure("keys", "keys K", result.keys);
    figure("values", "values V", result.values);
    report.heatmap("weights-" + result.slug + ".svg", {.title = result.name + ": weights A", .values = result.weights,
                                                       .row_labels = tokens, .col_labels = tokens,
                                                       .scale_label = "weight"});
    figure("outputs", "outputs O", result.outputs);
}

std::string keys_and_values_chapter(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    // On other widths the two variations keep their meaning: ones on the diagonal, and
    // for W_V a 2 in its first entry.
    const auto identity = [&example](std::size_t cols) { return sa::identity(example.embeddings.cols(), cols); };
    sa::Matrix doubled = identity(example.w_value.cols());
    doubled(0, 0) = 2.0;
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    //> three-cases
    const Case base = run_case(example, queries, mask, {"Base case", "base", example.w_key, example.w_value});
    const Case new_wv = run_case(example, queries, mask,  // doubles the first feature instead of tripling the second
                                 {"A new W_V", "new-wv", example.w_key, doubled});  // [[2, 0], [0, 1]] here
    const Case new_wk = run_case(example, queries, mask,  // the identity: each key is the embedding itself
                                 {"A new W_K", "new-wk", identity(example.w_key.cols()), example.w_value});
    //< three-cases

    const auto& tokens = example.tokens;
    sa::Report report(example);
    report.table("Embeddings E", example.embeddings, tokens, sa::feature_labels(example.embeddings.cols()));
    report.table("Queries Q = E·W_Q, the same in every case", queries, tokens, sa::feature_labels(queries.cols()));
    for (const Case& result : {base, new_wv, new_wk}) {
        report_case(report, example, result);
    }
    report.text(fmt::format("== Which jobs changed ==\n\n"
                            "A new W_V: weights == base weights: {}; outputs == base outputs: {}\n"
                            "A new W_K: weights == base weights: {}; outputs == base outputs: {}\n",
                            sa::identical(new_wv.weights, base.weights), sa::identical(new_wv.outputs, base.outputs),
                            sa::identical(new_wk.weights, base.weights), sa::identical(new_wk.outputs, base.outputs)));
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch08-keys-and-values",
                               "change W_V and only the outputs move; change W_K and the weights move",
                               cat_chases_mouse()};
    return sa::run_program(info, argc, argv, keys_and_values_chapter);
}
