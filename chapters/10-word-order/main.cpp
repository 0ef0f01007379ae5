// Chapter 10, Word order: attention alone cannot see it; sinusoidal encodings and rotary embeddings add it.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attention.hpp"
#include "cli.hpp"
#include "plots.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scores.hpp"

namespace {

// One order of the words, run through attention with one way of adding positions.
struct Sentence {
    std::vector<std::string> tokens = {};
    sa::Matrix inputs = {};   // E, or E + P with sinusoidal positions
    sa::Matrix queries = {};  // rotated, with rotary positions
    sa::Matrix keys = {};     // rotated, with rotary positions
    sa::Matrix outputs = {};
};

Sentence run(const sa::Example& example, const std::string& positions, const std::vector<std::size_t>& order)
{
    const sa::Matrix embeddings = sa::reorder_rows(example.embeddings, order);  // the words in this order
    //> positions
    const std::size_t n = embeddings.rows();
    sa::Matrix inputs = embeddings;   // "none": the embeddings alone
    if (positions == "sinusoidal") {  // absolute: X = E + P, row p of P encodes position p
        inputs = sa::add_positions(embeddings, sa::sinusoidal_encoding(n, embeddings.cols()));
    }
    sa::Matrix queries = sa::project(inputs, example.w_query);
    sa::Matrix keys = sa::project(inputs, example.w_key);
    const sa::Matrix values = sa::project(inputs, example.w_value);
    if (positions == "rope") {  // relative: turn each query and key by its position, not V
        queries = sa::rope(queries);
        keys = sa::rope(keys);
    }
    const sa::Matrix outputs = sa::attention(queries, keys, values);
    //< positions
    return {sa::reorder_tokens(example.tokens, order), inputs, queries, keys, outputs};
}

std::string quoted(const std::vector<std::string>& tokens)
{
    return fmt::format("\"{}\"", fmt::join(tokens, " "));
}

// Attention on both orders, with one way of adding positions, and whether the outputs merely moved.
void compare_orders(sa::Report& report, const sa::Example& example, const std::string& positions)
{
    const std::size_t key_dim = example.w_query.cols();
    const std::size_t width = example.embeddings.cols();
    std::string why_not;  // a run this section cannot make on the reader's numbers, and why
    if (example.tokens.size() < 2) {
        why_not = "One token has no other order: this comparison needs at least 2 tokens.";
    } else if (positions == "rope" && key_dim % 2 != 0) {
        why_not = fmt::format("Rotary positions turn pairs of features, so they need an even d_k; yours is {}.",
                              key_dim);
    } else if (positions == "sinusoidal" && width % 2 != 0) {
        why_not = fmt::format("Sinusoidal encodings come in (sin, cos) pairs, so they need an even d_model; yours "
                              "is {}.", width);
    }
    if (!why_not.empty()) {
        report.text(fmt::format("== Positions: {} ==\n\n{}\n\n", positions, why_not));
        return;
    }
    //> two-orders
    std::vector<std::size_t> same(example.tokens.size());
    std::iota(same.begin(), same.end(), std::size_t{0});  // 0, 1, 2, ...: as written
    std::vector<std::size_t> order = same;
    std::swap(order[0], order[1]);  // 1, 0, 2, ...: the first two words trade places
    const Sentence original = run(example, positions, same);
    const Sentence reordered = run(example, positions, order);
    const sa::Matrix moved = sa::reorder_rows(original.outputs, order);  // old outputs, new order
    const double difference = sa::largest_difference(reordered.outputs, moved);
    //< two-orders
    const auto features = [](const sa::Matrix& matrix) { return sa::feature_labels(matrix.cols()); };
    report.text(fmt::format("== Positions: {} ==\n\n", positions));
    if (positions == "sinusoidal") {
        const sa::Matrix encodings = sa::sinusoidal_encoding(order.size(), example.embeddings.cols());
        report.table(fmt::format("Sinusoidal encodings P, d = {}", encodings.cols()), encodings,
                     sa::numbered_labels("pos ", order.size(), 0), features(encodings));
    }
    for (const Sentence* sentence : {&original, &reordered}) {
        const std::string name = quoted(sentence->tokens);
        if (positions == "sinusoidal") {
            report.table("Inputs X = E + P, " + name, sentence->inputs, sentence->tokens, features(sentence->inputs));
        }
        if (positions == "rope") {
            report.table("Rotated queries, " + name, sentence->queries, sentence->tokens, features(sentence->queries));
            report.table("Rotated keys, " + name, sentence->keys, sentence->tokens, features(sentence->keys));
        }
        report.table("Outputs, " + name, sentence->outputs, sentence->tokens, features(sentence->outputs));
    }
    report.table("Outputs of " + quoted(original.tokens) + ", rows in the new order", moved, reordered.tokens,
                 features(moved));
    report.text(fmt::format("The new outputs are the old rows in the new order\n"
                            "  within 1e-15: {}; bit for bit: {}; largest difference: {}\n\n",
                            difference <= 1e-15, sa::identical(reordered.outputs, moved),
                            sa::format_number(difference, example.precision)));
}

// Sinusoidal encodings on their own: the table for d = 8.
void encodings_on_their_own(sa::Report& report)
{
    //> table
    const sa::Matrix encodings = sa::sinusoidal_encoding(10, 8);  // positions 0 to 9, d = 8
    //< table
    const auto positions = sa::numbered_labels("pos ", 10, 0);  // pos 0, pos 1, ...
    report.text("== Sinusoidal encodings on their own ==\n\n");
    report.table("P for d = 8, frequencies 1, 1/10, 1/100, 1/1000", encodings, positions, sa::feature_labels(8));
    report.heatmap("sinusoidal.svg", {.title = "Sinusoidal encodings, d = 8", .values = encodings,
                                      .row_labels = positions, .col_labels = sa::feature_labels(8),
                                      .row_axis = "position", .col_axis = "feature", .scale_label = "encoding"});
}

// One query and one key at every pair of positions (d_k even).
void rotate_one_query(sa::Report& report, const sa::Example& example)
{
    //> relative
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const std::size_t found = std::min<std::size_t>(1, keys.rows() - 1);  // the second token (the first if alone)
    const sa::Matrix query = sa::row_vector(queries, 0);  // the first token asks ...
    const sa::Matrix key = sa::row_vector(keys, found);   // ... and the second is found
    const sa::Matrix table = sa::rope_score_table(query, key, 6);  // (a, b): q at a, k at b
    const double late = sa::scores(sa::rope(query, 5), sa::rope(key, 3))(0, 0);   // b − a = −2
    const double early = sa::scores(sa::rope(query, 2), sa::rope(key, 0))(0, 0);  // b − a = −2
    //< relative
    const auto format = [&example](double value) { return sa::format_number(value, example.precision); };
    const auto a_labels = sa::numbered_labels("a = ", 6, 0);
    const auto b_labels = sa::numbered_labels("b = ", 6, 0);
    report.table("q, the query of " + example.tokens[0], query, {"q"}, sa::feature_labels(query.cols()));
    report.table("k, the key of " + example.tokens[found], key, {"k"}, sa::feature_labels(key.cols()));
    report.table("Scores (R_a q)·(R_b k), q at position a, k at position b", table, a_labels, b_labels);
    report.text(fmt::format("Score at (a, b) = (5, 3): {}; at (2, 0): {}; within 1e-12: {}\n", format(late),
                            format(early), std::abs(late - early) <= 1e-12));
    report.text(fmt::format("Length of q: {} at position 0, {} at position 5\n\n",
                            format(sa::vector_length(query)), format(sa::vector_length(sa::rope(query, 5)))));
    report.heatmap("rope-scores.svg", {.title = "Rotary scores (R_a q)·(R_b k)", .values = table,
                                       .row_labels = a_labels, .col_labels = b_labels, .row_axis = "query position a",
                                       .col_axis = "key position b", .scale_label = "score"});
    report.line_plot("rope-offset.svg", sa::rope_offset_plot(table, sa::scores(query, key)(0, 0)));
}

// Rotary embeddings on their own: one query and one key at every pair of positions, and the two pairings.
void rotation_on_its_own(sa::Report& report, const sa::Example& example)
{
    report.text("== Rotary embeddings on their own ==\n\n");
    if (example.w_query.cols() % 2 == 0) {
        rotate_one_query(report, example);
    } else {
        report.text(fmt::format("Rotary positions turn pairs of features, so they need an even d_k; yours is {}.\n\n",
                                example.w_query.cols()));
    }
    //> pairings
    const sa::Matrix x{{1, 2, 3, 4}};  // d = 4: θ_0 = 1, θ_1 = 1/100
    const sa::Matrix adjacent = sa::rope(x, 1, sa::Pairing::adjacent);  // pairs (f1, f2), (f3, f4)
    const sa::Matrix halves = sa::rope(x, 1, sa::Pairing::halves);      // pairs (f1, f3), (f2, f4)
    //< pairings
    const auto format = [&example](double value) { return sa::format_number(value, example.precision); };
    report.table("One vector at position 1, rotated with each pairing", sa::stack_rows({x, adjacent, halves}),
                 {"x", "adjacent", "halves"}, sa::feature_labels(4));
    report.text(fmt::format("Lengths: x {}, adjacent {}, halves {}\n", format(sa::vector_length(x)),
                            format(sa::vector_length(adjacent)), format(sa::vector_length(halves))));
}

std::string word_order_chapter(const sa::Example& example)
{
    const std::string positions = sa::choice_option(example, "--positions", {"none", "sinusoidal", "rope"});
    sa::Report report(example);
    report.table("Embeddings E", example.embeddings, example.tokens, sa::feature_labels(example.embeddings.cols()));
    compare_orders(report, example, "none");
    if (positions != "none") {
        compare_orders(report, example, positions);
    }
    encodings_on_their_own(report);
    rotation_on_its_own(report, example);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch10-word-order", "reorder the sentence: attention alone cannot tell, positions can",
                         sa::mouse_eats_cheese()};
    info.unused_options = {{"--causal", "the orders are compared without a mask (a causal mask already depends on "
                                        "the order)"}};
    info.options = {{"--positions", "KIND", "none, sinusoidal or rope: how the sentences get positions",
                     "sinusoidal"}};
    return sa::run_program(info, argc, argv, word_order_chapter);
}
