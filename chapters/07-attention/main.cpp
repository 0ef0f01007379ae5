// Chapter 7, The whole formula: softmax(Q·Kᵀ/√d_k + M)·V in one call, checked against the steps.
#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"
#include "svg.hpp"

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch07-attention", "run the whole formula in one call and check it against the steps",
                               sa::mouse_eats_cheese()};
    return sa::run_program(info, argc, argv, [](const sa::Example& example) {
        const auto& tokens = example.tokens;
        std::string out;
        const auto print = [&](const std::string& title, const sa::Matrix& matrix, const std::vector<std::string>& rows,
                               const std::vector<std::string>& cols) {
            out += sa::show(title + " (" + sa::shape(matrix) + "):", matrix, rows, cols, example.precision);
        };
        const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
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
        print("Embeddings E", example.embeddings, tokens, features(example.embeddings));
        print("W_Q", example.w_query, features(example.embeddings), features(example.w_query));
        print("W_K", example.w_key, features(example.embeddings), features(example.w_key));
        print("W_V", example.w_value, features(example.embeddings), features(example.w_value));
        print("Queries Q = E·W_Q", queries, tokens, features(queries));
        print("Keys K = E·W_K", keys, tokens, features(keys));
        print("Values V = E·W_V", values, tokens, features(values));
        print("Scores S = Q·Kᵀ, rows ask, columns are asked about", raw_scores, tokens, tokens);
        print(fmt::format("Scaled scores S/√d_k, d_k = {}", queries.cols()), scaled, tokens, tokens);
        if (example.causal) {
            print("Masked scores, causal: keys after the query are -inf", masked, tokens, tokens);
        }
        print("Weights A = softmax of each row", weights, tokens, tokens);
        print("Outputs O = A·V, step by step", step_by_step, tokens, features(step_by_step));
        print("Outputs, one call to sa::attention", one_call, tokens, features(one_call));
        out += fmt::format("One call == step by step, bit for bit: {}\n", one_call == step_by_step);
        sa::write_figure(example.figures, "weights.svg",
                         sa::heatmap_svg(sa::Heatmap{"Attention weights A", weights, tokens, tokens,
                                                     "query (asking)", "key (asked about)", example.precision, "weight"}));
        sa::write_figure(example.figures, "outputs.svg",
                         sa::heatmap_svg(sa::Heatmap{"Outputs O = A·V", one_call, tokens, features(one_call),
                                                     "token", "output feature", example.precision, "output"}));
        return out;
    });
}
