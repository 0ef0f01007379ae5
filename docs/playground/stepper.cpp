// The stepper's entry point (docs/_static/stepper.js): chapter 7's worked example, "Mouse eats
// cheese", run through the library's own steps as chapters/07-attention/main.cpp runs it, with
// every number the stepper shows (each matrix, and the terms of each dot product, exponential
// and weighted sum) as one JSON text. Every number is a string printed by format_number() at the
// example's precision, as the chapter programs print their tables, so the page shows their digits
// and never formats a number itself. Linked only into chapter 7's playground module
// (docs/playground/playground.cmake).
#include <emscripten/bind.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "example.hpp"
#include "masking.hpp"
#include "matrix.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

namespace {

// A JSON string of a name or a printed number (neither holds a quote, a backslash or a control character).
std::string quoted(const std::string& text)
{
    return "\"" + text + "\"";
}

// A list of JSON values.
std::string list(const std::vector<std::string>& items)
{
    std::string json = "[";
    for (std::size_t k = 0; k < items.size(); ++k) {
        json += (k == 0 ? "" : ",") + items[k];
    }
    return json + "]";
}

std::string names(const std::vector<std::string>& labels)
{
    std::vector<std::string> items;
    for (const auto& label : labels) {
        items.push_back(quoted(label));
    }
    return list(items);
}

// A matrix as rows of printed numbers.
std::string printed(const Matrix& matrix, int precision)
{
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < matrix.rows(); ++i) {
        std::vector<std::string> row;
        for (std::size_t j = 0; j < matrix.cols(); ++j) {
            row.push_back(quoted(format_number(matrix(i, j), precision)));
        }
        rows.push_back(list(row));
    }
    return list(rows);
}

// The terms of each entry of left·right, [i][j][t] = left(i, t)·right(t, j), printed: the products
// that the dot product of row i of left and column j of right adds up.
std::string products(const Matrix& left, const Matrix& right, int precision)
{
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < left.rows(); ++i) {
        std::vector<std::string> entries;
        for (std::size_t j = 0; j < right.cols(); ++j) {
            std::vector<std::string> terms;
            for (std::size_t t = 0; t < left.cols(); ++t) {
                terms.push_back(quoted(format_number(left(i, t) * right(t, j), precision)));
            }
            entries.push_back(list(terms));
        }
        rows.push_back(list(entries));
    }
    return list(rows);
}

// The softmax of each row as its formula is written, e^{s_j} / Σ_l e^{s_l}: the exponentials
// (e^{-inf} = 0 for a masked entry) and their sum, added in the order of the row.
Matrix exponentials(const Matrix& scores)
{
    Matrix terms(scores.rows(), scores.cols() + 1);
    for (std::size_t i = 0; i < scores.rows(); ++i) {
        double total = 0.0;
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            terms(i, j) = std::exp(scores(i, j));
            total += terms(i, j);
        }
        terms(i, scores.cols()) = total;
    }
    return terms;
}

// Chapter 7's example through the steps of chapters 1 to 6, as its main.cpp calls them:
// {"tokens", "features", "dk", "rootDk", "causal", "E", "WQ", "WK", "WV", "Q", "K", "V", "S",
// "scaled", "M", "masked", "exponentials" (each row's e^s, then their sum), "A", "O",
// "projectionTerms" {"Q", "K", "V"}, "scoreTerms", "outputTerms" ([i][j][c] = A(i, j)·V(j, c))}.
std::string attention_steps()
{
    const Example example = mouse_eats_cheese();
    const int digits = example.precision;
    const Matrix queries = project(example.embeddings, example.w_query);
    const Matrix keys = project(example.embeddings, example.w_key);
    const Matrix values = project(example.embeddings, example.w_value);
    const Matrix mask = example.causal ? causal_mask(queries.rows(), keys.rows())
                                       : Matrix(queries.rows(), keys.rows(), 0.0);
    const Matrix raw_scores = scores(queries, keys);
    const Matrix scaled = scale(raw_scores, queries.cols());
    const Matrix masked = apply_mask(scaled, mask);
    const Matrix weights = softmax_rows(masked);
    const Matrix outputs = mix(weights, values);

    std::vector<std::string> output_terms;  // [i][j][c]: row i's term from key j, A(i, j)·v_j
    for (std::size_t i = 0; i < weights.rows(); ++i) {
        Matrix terms(values.rows(), values.cols());
        for (std::size_t j = 0; j < values.rows(); ++j) {
            for (std::size_t c = 0; c < values.cols(); ++c) {
                terms(j, c) = weights(i, j) * values(j, c);
            }
        }
        output_terms.push_back(printed(terms, digits));
    }
    const double root = std::sqrt(static_cast<double>(queries.cols()));
    return fmt::format(
        "{{\"tokens\":{},\"features\":{},\"dk\":{},\"rootDk\":{},\"causal\":{},\"E\":{},\"WQ\":{},\"WK\":{},"
        "\"WV\":{},\"Q\":{},\"K\":{},\"V\":{},\"S\":{},\"scaled\":{},\"M\":{},\"masked\":{},\"exponentials\":{},"
        "\"A\":{},\"O\":{},\"projectionTerms\":{{\"Q\":{},\"K\":{},\"V\":{}}},\"scoreTerms\":{},\"outputTerms\":{}}}",
        names(example.tokens), names(feature_labels(example.embeddings.cols())), queries.cols(),
        quoted(format_number(root, digits)), example.causal, printed(example.embeddings, digits),
        printed(example.w_query, digits), printed(example.w_key, digits), printed(example.w_value, digits),
        printed(queries, digits), printed(keys, digits), printed(values, digits), printed(raw_scores, digits),
        printed(scaled, digits), printed(mask, digits), printed(masked, digits),
        printed(exponentials(masked), digits), printed(weights, digits), printed(outputs, digits),
        products(example.embeddings, example.w_query, digits), products(example.embeddings, example.w_key, digits),
        products(example.embeddings, example.w_value, digits), products(queries, transpose(keys), digits),
        list(output_terms));
}

}  // namespace

}  // namespace sa

EMSCRIPTEN_BINDINGS(book_stepper)
{
    emscripten::function("attention_steps", &sa::attention_steps);
}
