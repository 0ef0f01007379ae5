// Chapter 8, Keys and values are different jobs: one projection to be found, another to deliver.
#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

int main(int argc, char** argv)
{
    //> example
    // "Cat chases mouse", the default of this program.
    sa::Example cat_chases_mouse;
    cat_chases_mouse.tokens = {"Cat", "Chases", "Mouse"};
    cat_chases_mouse.embeddings = sa::Matrix{{2, 0}, {1, 1}, {0, 2}};
    cat_chases_mouse.w_query = sa::Matrix{{1, 0}, {0, 1}};  // each query is the embedding itself
    cat_chases_mouse.w_key = sa::Matrix{{0, 1}, {1, 0}};    // swaps the two features
    cat_chases_mouse.w_value = sa::Matrix{{1, 0}, {0, 3}};  // triples the second feature
    //< example
    const sa::ProgramInfo info{"ch08-keys-and-values",
                               "change W_V and only the outputs move; change W_K and the weights move", cat_chases_mouse};
    return sa::run_program(info, argc, argv, [](const sa::Example& example) {
        const auto& [tokens, embeddings] = std::tie(example.tokens, example.embeddings);
        if (embeddings.cols() != 2 || example.w_query.cols() != 2) {
            throw sa::UsageError("the variations of this chapter are 2×2: they need 2 embedding features and d_k = 2");
        }
        const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
        sa::Report report(example);
        const auto figure = [&](const std::string& file, const std::string& title, const sa::Matrix& matrix) {
            report.heatmap(file + ".svg", title, matrix, tokens, features(matrix), "token", "feature", "coordinate");
        };
        const sa::Matrix queries = sa::project(embeddings, example.w_query);
        const sa::Matrix mask = example.causal ? sa::causal_mask(queries.rows(), queries.rows())
                                               : sa::Matrix(queries.rows(), queries.rows(), 0.0);
        report.table("Embeddings E", embeddings, tokens, features(embeddings));
        report.table("Queries Q = E·W_Q, the same in every case", queries, tokens, features(queries));
        const auto run_case = [&](const std::string& name, const std::string& slug, const sa::Matrix& w_key,
                                  const sa::Matrix& w_value) {
            //> run-case
            const sa::Matrix keys = sa::project(embeddings, w_key);      // how each token is found
            const sa::Matrix values = sa::project(embeddings, w_value);  // what each token delivers
            const sa::Matrix weights =  // A = softmax(Q·Kᵀ/√d_k + M): no V anywhere
                sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(queries, keys), keys.cols()), mask));
            const sa::Matrix outputs = sa::attention(queries, keys, values, mask);
            //< run-case
            report.text("== " + name + " ==\n\n");
            report.table("W_K", w_key, features(embeddings), features(w_key));
            report.table("Keys K = E·W_K, how each token is found", keys, tokens, features(keys));
            report.table("W_V", w_value, features(embeddings), features(w_value));
            report.table("Values V = E·W_V, what each token delivers", values, tokens, features(values));
            report.table("Weights A = softmax(Q·Kᵀ/√d_k + M), from Q and K only", weights, tokens, tokens);
            report.table("Outputs O = A·V", outputs, tokens, features(outputs));
            figure("keys-" + slug, name + ": keys K", keys);
            figure("values-" + slug, name + ": values V", values);
            report.heatmap("weights-" + slug + ".svg", name + ": weights A", weights, tokens, tokens, "query (asking)",
                           "key (asked about)", "weight");
            figure("outputs-" + slug, name + ": outputs O", outputs);
            return std::pair{weights, outputs};
        };
        //> three-cases
        const auto [weights, outputs] = run_case("Base case", "base", example.w_key, example.w_value);
        const auto [weights_wv, outputs_wv] =  // doubles the first feature instead of tripling the second
            run_case("A new W_V", "new-wv", example.w_key, sa::Matrix{{2, 0}, {0, 1}});
        const auto [weights_wk, outputs_wk] =  // the identity: each key is the embedding itself
            run_case("A new W_K", "new-wk", sa::Matrix{{1, 0}, {0, 1}}, example.w_value);
        //< three-cases
        report.text(fmt::format("== Which jobs changed ==\n\n"
                                "A new W_V: weights == base weights: {}; outputs == base outputs: {}\n"
                                "A new W_K: weights == base weights: {}; outputs == base outputs: {}\n",
                                sa::identical(weights_wv, weights), sa::identical(outputs_wv, outputs),
                                sa::identical(weights_wk, weights),
                                sa::identical(outputs_wk, outputs)));
        return report.str();
    });
}
