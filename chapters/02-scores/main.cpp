// Chapter 2, Scores: every query is dotted with every key, S = Q·Kᵀ.
#include "cli.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scores.hpp"

namespace {

std::string scores_chapter(const sa::Example& example)
{
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K
    //> scores
    const sa::Matrix scores = sa::scores(queries, keys);  // S = Q·Kᵀ, one row per asking token
    //< scores

    const auto& tokens = example.tokens;
    sa::Report report(example);
    report.table("Queries Q", queries, tokens, sa::feature_labels(queries.cols()));
    report.table("Keys K", keys, tokens, sa::feature_labels(keys.cols()));
    report.table("Scores S = Q·Kᵀ", scores, tokens, tokens, "rows: the query asking, columns: the key asked about");
    report.heatmap("scores.svg",
                   {.title = "Scores S = Q·Kᵀ", .values = scores, .row_labels = tokens, .col_labels = tokens});
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch02-scores", "compare every query with every key: S = Q·Kᵀ", sa::mouse_eats_cheese()};
    info.unused_options = {
        {"--causal", "the scores come before any mask (ch04-masking applies one)"},
        {"--wv", "the scores use only the queries and keys (the values come in ch06-mixing)"},
    };
    return sa::run_program(info, argc, argv, scores_chapter);
}
