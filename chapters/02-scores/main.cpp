// Chapter 2, Scores: every query is dotted with every key, S = Q·Kᵀ.
#include "cli.hpp"
#include "projection.hpp"
#include "scores.hpp"
#include "svg.hpp"

int main(int argc, char** argv)
{
    const sa::ProgramInfo info{"ch02-scores", "compare every query with every key: S = Q·Kᵀ",
                               sa::mouse_eats_cheese()};
    return sa::run_program(info, argc, argv, [](const sa::Example& example) {
        const auto& tokens = example.tokens;
        const int digits = example.precision;
        const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // Q = E·W_Q
        const sa::Matrix keys = sa::project(example.embeddings, example.w_key);       // K = E·W_K
        //> scores
        const sa::Matrix scores = sa::scores(queries, keys);  // S = Q·Kᵀ, one row per asking token
        //< scores
        std::string out;
        out += sa::show("Queries Q (" + sa::shape(queries) + "):", queries, tokens,
                        sa::feature_labels(queries.cols()), digits);
        out += sa::show("Keys K (" + sa::shape(keys) + "):", keys, tokens, sa::feature_labels(keys.cols()), digits);
        out += sa::show("Scores S = Q·Kᵀ (" + sa::shape(scores) +
                            "), rows: the query asking, columns: the key asked about:",
                        scores, tokens, tokens, digits);
        sa::Heatmap heatmap;
        heatmap.title = "Scores S = Q·Kᵀ";
        heatmap.values = scores;
        heatmap.row_labels = heatmap.col_labels = tokens;
        heatmap.row_axis = "query (asking)";
        heatmap.col_axis = "key (asked about)";
        heatmap.precision = digits;
        sa::write_figure(example.figures, "scores.svg", sa::heatmap_svg(heatmap));
        return out;
    });
}
