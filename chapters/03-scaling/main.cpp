// Chapter 3, Scaling: divide the scores by √d_k, and measure why on random vectors.
#include <cmath>

#include "cli.hpp"
#include "experiment.hpp"
#include "plots.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "tables.hpp"

namespace {

std::string scaling_chapter(const sa::Example& example)
{
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    //> scale-the-scores
    const sa::Matrix raw_scores = sa::scores(queries, keys);          // S = Q·Kᵀ
    const std::size_t key_dim = queries.cols();                       // d_k
    const sa::Matrix scaled_scores = sa::scale(raw_scores, key_dim);  // S / √d_k
    //< scale-the-scores

    //> experiment
    // 4000 draws measure a variance to about 2% (one standard error).
    constexpr std::size_t pairs = 4000;
    constexpr std::size_t trials = 4000;
    constexpr std::size_t keys_per_query = 8;
    sa::SplitMix64 generator(static_cast<std::uint64_t>(example.seed));
    std::vector<sa::VarianceRow> variances;
    std::vector<sa::SaturationRow> saturation;
    for (const std::size_t dimension : {2, 16, 64, 256, 1024}) {
        variances.push_back(sa::score_variance(dimension, pairs, generator));
        saturation.push_back(sa::softmax_saturation(dimension, keys_per_query, trials, generator));
    }
    //< experiment

    const auto& tokens = example.tokens;
    const int digits = example.precision;
    sa::Report report(example);
    report.table("Scores S = Q·Kᵀ", raw_scores, tokens, tokens);
    const double root = std::sqrt(static_cast<double>(key_dim));
    report.text(fmt::format("d_k = {}, √d_k = {:.{}f}\n\n", key_dim, root, digits));
    report.table("Scaled scores S / √d_k", scaled_scores, tokens, tokens);
    report.text(fmt::format("Random q and k, entries uniform on [−√3, √3] (mean 0, variance 1), seed {}\n\n",
                            example.seed));
    report.text(sa::variance_table(variances, digits));
    report.text(sa::saturation_table(saturation, digits));
    report.heatmap("scaled-scores.svg", {.title = "Scaled scores S / √d_k", .values = scaled_scores,
                                         .row_labels = tokens, .col_labels = tokens});
    report.line_plot("variance.svg", sa::variance_plot(variances));
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch03-scaling", "divide the scores by the square root of d_k, and measure why",
                         sa::mouse_eats_cheese()};
    info.unused_options = {
        {"--causal", "scaling comes before any mask (ch04-masking applies one)"},
        {"--wv", "the scaled scores use only the queries and keys (the values come in ch06-mixing)"},
    };
    info.uses_seed = true;
    return sa::run_program(info, argc, argv, scaling_chapter);
}
