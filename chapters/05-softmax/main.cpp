// Chapter 5, Softmax: each row of scores becomes positive weights that sum to one.
#include <cmath>
#include <string>
#include <vector>

#include "cli.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace {
//> naive-softmax
// The formula exactly as written, e^{s_j} / Σ_l e^{s_l}, kept here to show where it breaks.
sa::Matrix exponentials(sa::Matrix scores)
{
    for (std::size_t i = 0; i < scores.rows(); ++i) {
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            scores(i, j) = std::exp(scores(i, j));  // e^1000 is already inf in a double
        }
    }
    return scores;
}

sa::Matrix naive_softmax(const sa::Matrix& scores)
{
    sa::Matrix weights = exponentials(scores);
    for (std::size_t i = 0; i < weights.rows(); ++i) {
        double total = 0.0;
        for (std::size_t j = 0; j < weights.cols(); ++j) {
            total += weights(i, j);
        }
        for (std::size_t j = 0; j < weights.cols(); ++j) {
            weights(i, j) /= total;  // inf / inf and 0 / 0 are nan
        }
    }
    return weights;
}
//< naive-softmax

std::string softmax_chapter(const sa::Example& example)
{
    const std::size_t n = example.tokens.size();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    sa::Matrix scaled = sa::scale(sa::scores(queries, keys), queries.cols());
    if (example.causal) {
        scaled = sa::apply_mask(scaled, sa::causal_mask(n, n));
    }
    //> softmax
    const sa::Matrix weights = sa::softmax_rows(scaled);  // row i: how query i spends its attention
    //< softmax
    // The formula as written on the example's own rows, where no exponent is large: each e^s, and their sum.
    const sa::Matrix terms = exponentials(scaled);
    sa::Matrix terms_and_sum(n, n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            terms_and_sum(i, j) = terms(i, j);
            terms_and_sum(i, n) += terms(i, j);
        }
    }
    //> shifted-rows
    sa::Matrix shifted(3, n);  // the last row as it is, then with 1000 added, then with 1000 taken away
    for (std::size_t j = 0; j < n; ++j) {
        shifted(0, j) = scaled(n - 1, j);
        shifted(1, j) = scaled(n - 1, j) + 1000.0;
        shifted(2, j) = scaled(n - 1, j) - 1000.0;
    }
    const sa::Matrix as_written = naive_softmax(shifted);
    const sa::Matrix stable = sa::softmax_rows(shifted);
    //< shifted-rows

    const auto& tokens = example.tokens;
    const std::vector<std::string> rows{"as is", "+ 1000", "- 1000"};
    const std::string masked = example.causal ? ", causally masked" : "";
    sa::Report report(example);
    report.table("Scaled scores" + masked + ", rows ask, columns are asked about", scaled, tokens, tokens);
    std::vector<std::string> terms_columns = tokens;
    terms_columns.push_back("Σ e^s");
    report.table("e^s of each row and their sum Σ e^s, the formula as written", terms_and_sum, tokens, terms_columns);
    report.table("Weights A = softmax_rows(scores), one row at a time", weights, tokens, tokens);
    report.table("The " + tokens.back() + " row shifted by a constant", shifted, rows, tokens);
    report.table("e^s, the numerators as written", exponentials(shifted), rows, tokens);
    report.table("Softmax as written, e^s / Σ e^s", as_written, rows, tokens);
    report.table("softmax_rows, which subtracts the row maximum first", stable, rows, tokens);
    report.heatmap("weights.svg", {.title = "Weights A = softmax of each row" + masked, .values = weights,
                                   .row_labels = tokens, .col_labels = tokens, .scale_label = "weight"});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch05-softmax", "turn each row of scores into weights that sum to one",
                         sa::mouse_eats_cheese()};
    info.unused_options = {
        {"--wv", "the weights use only the queries and keys (the values come in ch06-mixing)"},
    };
    return sa::run_program(info, argc, argv, softmax_chapter);
}
