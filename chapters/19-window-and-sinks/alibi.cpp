// Chapter 19, A window and its sinks, its last part: ALiBi. No positions in the inputs; a bias on the
// scores that grows with the distance, one slope per head, beside chapter 10's ways of giving positions
// on the same worked example. Its output follows ch19-window-and-sinks's in the chapter's.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "dense.hpp"
#include "masking.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "sliding_window.hpp"
#include "softmax.hpp"

namespace {

// A slope as the paper writes it: 1/4 for 2^-2, or 2^-0.5 where the power is not whole (exact for h up to 64).
std::string slope_text(double slope)
{
    const double power = std::round(-std::log2(slope) * 1024.0) / 1024.0;
    if (power == std::round(power)) {
        return fmt::format("1/{}", static_cast<long long>(std::exp2(power)));
    }
    return fmt::format("2^-{}", power);
}

std::string slopes_line(std::size_t heads)
{
    std::vector<std::string> slopes;
    for (std::size_t a = 0; a < heads; ++a) {
        slopes.push_back(slope_text(sa::alibi_slope(a, heads)));
    }
    return fmt::format("  h = {}: {}\n", heads, fmt::join(slopes, ", "));
}

// Chapter 7's scaled scores with ALiBi's bias for head a of h heads added, in place of the causal mask.
sa::Matrix alibi_scores(const sa::Example& example, std::size_t head, std::size_t heads)
{
    const std::size_t n = example.embeddings.rows();
    //> alibi-example
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);  // no position in E, Q or K
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    sa::Matrix biased = sa::scale(sa::scores(queries, keys), keys.cols());
    sa::add_in_place(biased, sa::alibi_bias(n, n, head, heads));  // -m_a (i - j), and -inf after i: causal
    return biased;
    //< alibi-example
}

// Chapter 7's causal weights with one of chapter 10's ways of giving positions: none, sinusoidal
// encodings added to E, or rotary queries and keys.
sa::Matrix positioned_weights(const sa::Example& example, const std::string& positions)
{
    const std::size_t n = example.embeddings.rows();
    //> schemes
    sa::Matrix inputs = example.embeddings;
    if (positions == "sinusoidal") {  // X = E + P
        inputs = sa::add_positions(inputs, sa::sinusoidal_encoding(n, inputs.cols()));
    }
    sa::Matrix queries = sa::project(inputs, example.w_query);
    sa::Matrix keys = sa::project(inputs, example.w_key);
    if (positions == "rotary") {  // R_i q and R_j k
        queries = sa::rope(queries);
        keys = sa::rope(keys);
    }
    const sa::Matrix scaled = sa::scale(sa::scores(queries, keys), keys.cols());
    return sa::softmax_rows(sa::apply_mask(scaled, sa::causal_mask(n, n)));
    //< schemes
}

// The last query's weights each way, one row per way; a way the reader's widths rule out is left out.
void compare_schemes(sa::Report& report, const sa::Example& example, std::size_t heads)
{
    const std::size_t n = example.embeddings.rows();
    std::vector<sa::Matrix> rows;
    std::vector<std::string> names;
    using Way = std::pair<std::string, std::string>;  // chapter 10's name, and the row's
    for (const auto& [positions, name] : {Way{"none", "no positions"}, Way{"sinusoidal", "sinusoidal, X = E + P"},
                                          Way{"rotary", "rotary, R_i q, R_j k"}}) {
        const std::size_t width = positions == "rotary" ? example.w_query.cols() : example.embeddings.cols();
        if (positions != "none" && width % 2 != 0) {
            report.text(fmt::format("({} left out: it turns pairs of features, and the width is {}.)\n", name, width));
            continue;
        }
        rows.push_back(sa::row_vector(positioned_weights(example, positions), n - 1));
        names.push_back(name);
    }
    std::vector<std::size_t> shown = {0};  // the steepest slope, and the gentlest
    if (heads > 1) {
        shown.push_back(heads - 1);
    }
    for (const std::size_t a : shown) {
        rows.push_back(sa::row_vector(sa::softmax_rows(alibi_scores(example, a, heads)), n - 1));
        names.push_back(fmt::format("ALiBi, head {}, m_{} = {}", a, a, slope_text(sa::alibi_slope(a, heads))));
    }
    const sa::Matrix table = sa::stack_rows(rows);
    report.table(fmt::format("{}'s weights on the same inputs, each way of giving positions, all causal",
                             example.tokens.back()), table, names, example.tokens);
    report.heatmap("alibi-schemes.svg", {.title = fmt::format("{}'s weights, each way of giving positions",
                                                              example.tokens.back()),
                                         .values = table, .row_labels = names, .col_labels = example.tokens,
                                         .row_axis = "positions", .scale_label = "weight"});
}

// ALiBi on the worked example: the slopes, head 0's bias, scores and weights, the last query's
// weights beside chapter 10's schemes, and how far each head's slope lets a key be read.
std::string alibi_chapter(const sa::Example& example)
{
    const auto heads = static_cast<std::size_t>(sa::whole_option(example, "--alibi-heads", 1, 64));
    const std::size_t n = example.embeddings.rows();
    sa::Report report(example);
    report.text("ALiBi: no positions in the inputs; a bias B_a on the scores of head a, (B_a)_ij = -m_a (i - j) for\n"
                "j <= i and -inf after i, with one slope m_a per head: m_a = 2^(-8(a+1)/h) for h heads, h a power of\n"
                "two; for other h the slopes of the power of two below, then every other slope of twice it.\n");
    std::vector<std::size_t> shown = {4, 6, 8};
    if (std::find(shown.begin(), shown.end(), heads) == shown.end()) {
        shown.insert(std::upper_bound(shown.begin(), shown.end(), heads), heads);
    }
    for (const std::size_t h : shown) {
        report.text(slopes_line(h));
    }
    const sa::Matrix bias = sa::alibi_bias(n, n, 0, heads);  // head 0, the steepest slope
    const sa::Matrix biased = alibi_scores(example, 0, heads);
    const sa::Matrix weights = sa::softmax_rows(biased);
    const std::string slope = slope_text(sa::alibi_slope(0, heads));
    report.text("\n");
    report.table(fmt::format("Bias B_0, head 0 of {}, m_0 = {}", heads, slope), bias, example.tokens, example.tokens);
    report.table("Scores Q·Kᵀ/√d_k + B_0", biased, example.tokens, example.tokens);
    report.table("Weights softmax(Q·Kᵀ/√d_k + B_0)", weights, example.tokens, example.tokens);
    compare_schemes(report, example, heads);
    report.text(fmt::format("How far each head of {} reads: a key d back is weighed e^(-m_a d) against the same "
                            "score at d = 0.\n  {:>4}   {:>8}   {:>13}   {:>15}\n", heads, "head", "m_a",
                            "halved at d =", "1/100 at d ="));
    for (std::size_t a = 0; a < heads; ++a) {
        const double m = sa::alibi_slope(a, heads);
        report.text(fmt::format("  {:>4}   {:>8}   {:>13.{}f}   {:>15.{}f}\n", a, slope_text(m), std::log(2.0) / m,
                                example.precision, std::log(100.0) / m, example.precision));
    }
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch19-alibi",
                         "ALiBi: a bias on the scores that grows with the distance, in place of positions",
                         sa::mouse_eats_cheese()};
    info.options = {{"--alibi-heads", "H", "the heads whose ALiBi slopes the worked example shows, 1 to 64", "8"}};
    info.unused_options = {{"--causal", "ALiBi's bias is causal already, and so is every way beside it"},
                           {"--wv", "ALiBi changes the scores and the weights, and this program mixes no values"}};
    return sa::run_program(info, argc, argv, alibi_chapter);
}
