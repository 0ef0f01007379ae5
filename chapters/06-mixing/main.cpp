// Chapter 6, Mixing: each output is the weighted blend of the values, O = A·V.
#include <string>
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

std::string mixing_chapter(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    sa::Matrix scaled = sa::scale(sa::scores(queries, keys), queries.cols());
    if (example.causal) {
        scaled = sa::apply_mask(scaled, sa::causal_mask(n, n));
    }
    const sa::Matrix weights = sa::softmax_rows(scaled);
    //> mix
    const sa::Matrix outputs = sa::mix(weights, values);  // n×m · m×d_v = n×d_v
    //< mix
    //> contributions
    // The first token's output, one term per key: weight A_1j times value v_j.
    sa::Matrix contributions(n, values.cols());
    for (std::size_t key = 0; key < n; ++key) {
        for (std::size_t d = 0; d < values.cols(); ++d) {
            contributions(key, d) = weights(0, key) * values(key, d);
        }
    }
    //< contributions

    const auto& tokens = example.tokens;
    const auto features = sa::feature_labels(values.cols());
    const std::string masked = example.causal ? ", causally masked" : "";
    sa::Report report(example);
    report.table("Weights A" + masked, weights, tokens, tokens, "rows ask");
    report.table("Values V", values, tokens, features, "one row per key");
    report.table("Outputs O = A·V", outputs, tokens, features, "one row per query");
    report.show("The " + tokens.front() + " output term by term, A(" + tokens.front() + ", key)·v_key:",
                contributions, tokens, features);
    report.heatmap("outputs.svg", {.title = "Outputs O = A·V" + masked, .values = outputs, .row_labels = tokens,
                                   .col_labels = features, .col_axis = "feature", .scale_label = "output"});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch06-mixing", "blend the values with the attention weights", sa::mouse_eats_cheese()};
    return sa::run_program(info, argc, argv, mixing_chapter);
}
