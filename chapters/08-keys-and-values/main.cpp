// Chapter 8, Keys and values are different jobs: one projection to be found, another to deliver.
#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"
#include "svg.hpp"

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
        std::string out;
        const auto print = [&](const std::string& title, const sa::Matrix& matrix, const std::vector<std::string>& rows,
                               const std::vector<std::string>& cols) {
            out += sa::show(title + " (" + sa::shape(matrix) + "):", matrix, rows, cols, example.precision);
        };
        const auto figure = [&](const std::string& file, const std::string& title, const sa::Matrix& matrix, bool weights) {
            sa::write_figure(example.figures, file + ".svg",
                             sa::heatmap_svg(sa::Heatmap{title, matrix, tokens, weights ? tokens : features(matrix),
                                                         weights ? "query (asking)" : "token",
                                                         weights ? "key (asked about)" : "feature", example.precision,
                                                         weights ? "weight" : "coordinate"}));
        };
        const sa::Matrix queries = sa::project(embeddings, example.w_query);
        const sa::Matrix mask = example.causal ? sa::causal_mask(queries.rows(), queries.rows())
                                               : sa::Matrix(queries.rows(), queries.rows(), 0.0);
        print("Embeddings E", embeddings, tokens, features(embeddings));
        print("Queries Q = E·W_Q, the same in every case", queries, tokens, features(queries));
        const auto run_case = [&](const std::string& name, const std::string& slug, const sa::Matrix& w_key,
                                  const sa::Matrix& w_value) {
            //> run-case
            const sa::Matrix keys = sa::project(embeddings, w_key);      // how each token is found
            const sa::Matrix values = sa::project(embeddings, w_value);  // what each token delivers
            const sa::Matrix weights =  // A = softmax(Q·Kᵀ/√d_k + M): no V anywhere
                sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(queries, keys), keys.cols()), mask));
            const sa::Matrix outputs = sa::attention(queries, keys, values, mask);
            //< run-case
            out += "== " + name + " ==\n\n";
            print("W_K", w_key, features(embeddings), features(w_key));
            print("Keys K = E·W_K, how each token is found", keys, tokens, features(keys));
            print("W_V", w_value, features(embeddings), features(w_value));
            print("Values V = E·W_V, what each token delivers", values, tokens, features(values));
            print("Weights A = softmax(Q·Kᵀ/√d_k + M), from Q and K only", weights, tokens, tokens);
            print("Outputs O = A·V", outputs, tokens, features(outputs));
            figure("keys-" + slug, name + ": keys K", keys, false);
            figure("values-" + slug, name + ": values V", values, false);
            figure("weights-" + slug, name + ": weights A", weights, true);
            figure("outputs-" + slug, name + ": outputs O", outputs, false);
            return std::pair{weights, outputs};
        };
        //> three-cases
        const auto [weights, outputs] = run_case("Base case", "base", example.w_key, example.w_value);
        const auto [weights_wv, outputs_wv] =  // doubles the first feature instead of tripling the second
            run_case("A new W_V", "new-wv", example.w_key, sa::Matrix{{2, 0}, {0, 1}});
        const auto [weights_wk, outputs_wk] =  // the identity: each key is the embedding itself
            run_case("A new W_K", "new-wk", sa::Matrix{{1, 0}, {0, 1}}, example.w_value);
        //< three-cases
        out += fmt::format("== Which jobs changed ==\n\nA new W_V: weights == base weights: {}; outputs == base outputs: {}\n"
                           "A new W_K: weights == base weights: {}; outputs == base outputs: {}\n",
                           weights_wv == weights, outputs_wv == outputs, weights_wk == weights, outputs_wk == outputs);
        return out;
    });
}
