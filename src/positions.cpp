#include "positions.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "exercise.hpp"
#include "scores.hpp"

namespace sa {

namespace {

void check_permutation(const char* operation, std::size_t count, const std::vector<std::size_t>& order)
{
    std::vector<bool> seen(count, false);
    bool valid = order.size() == count;
    for (const std::size_t index : order) {
        if (!valid || index >= count || seen[index]) {
            valid = false;
            break;
        }
        seen[index] = true;
    }
    if (!valid) {
        std::string listed;  // by hand: with fmt::join this file, a learner's exercise, compiles half again as long
        for (const std::size_t index : order) {
            listed += (listed.empty() ? "" : ", ") + std::to_string(index);
        }
        throw std::invalid_argument(fmt::format("{}: the order [{}] is not a permutation of 0 to {}; name each of "
                                                "the {} rows exactly once",
                                                operation, listed, count == 0 ? 0 : count - 1, count));
    }
}

// Used only inside the exercises, so a workspace of stubs leaves it unused.
[[maybe_unused]] void check_even_width(const char* operation, std::size_t width, const char* why)
{
    if (width == 0 || width % 2 != 0) {
        throw std::invalid_argument(fmt::format("{}: d = {} is {}; {}, so d must be even and at least 2", operation,
                                                width, width == 0 ? "zero" : "odd", why));
    }
}

}  // namespace

Matrix reorder_rows(const Matrix& rows, const std::vector<std::size_t>& order)
{
    check_permutation("reorder_rows", rows.rows(), order);
    Matrix reordered(rows.rows(), rows.cols());
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (std::size_t c = 0; c < rows.cols(); ++c) {
            reordered(i, c) = rows(order[i], c);
        }
    }
    return reordered;
}

std::vector<std::string> reorder_tokens(const std::vector<std::string>& tokens, const std::vector<std::size_t>& order)
{
    check_permutation("reorder_tokens", tokens.size(), order);
    std::vector<std::string> reordered;
    for (const std::size_t index : order) {
        reordered.push_back(tokens[index]);
    }
    return reordered;
}

//> sinusoidal
Matrix sinusoidal_encoding(std::size_t positions, std::size_t width)
{
    // BEGIN SOLUTION sinusoidal_encoding: chapter 10, Word order
    check_even_width("sinusoidal_encoding", width, "the features come in (sin, cos) pairs");
    const double d = static_cast<double>(width);
    Matrix encodings(positions, width);
    for (std::size_t pos = 0; pos < positions; ++pos) {
        for (std::size_t i = 0; i < width / 2; ++i) {
            // PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
            const double angle = static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(i) / d);
            encodings(pos, 2 * i) = std::sin(angle);
            encodings(pos, 2 * i + 1) = std::cos(angle);
        }
    }
    return encodings;
    // END SOLUTION
}
//< sinusoidal

Matrix add_positions(const Matrix& embeddings, const Matrix& encodings)
{
    if (embeddings.rows() != encodings.rows() || embeddings.cols() != encodings.cols()) {
        throw ShapeError(fmt::format("add_positions: E is {} but P is {}; they need one row per token and the same "
                                     "number of features",
                                     shape(embeddings), shape(encodings)));
    }
    Matrix sum(embeddings.rows(), embeddings.cols());
    for (std::size_t i = 0; i < embeddings.rows(); ++i) {
        for (std::size_t j = 0; j < embeddings.cols(); ++j) {
            sum(i, j) = embeddings(i, j) + encodings(i, j);
        }
    }
    return sum;
}

//> rope
Matrix rope(const Matrix& vectors, std::size_t first_position, Pairing pairing)
{
    // BEGIN SOLUTION rope: chapter 10, Word order
    check_even_width("rope", vectors.cols(), "rotary embeddings turn pairs of features");
    const std::size_t half = vectors.cols() / 2;
    const double d = static_cast<double>(vectors.cols());
    Matrix rotated = vectors;
    for (std::size_t r = 0; r < vectors.rows(); ++r) {
        const double position = static_cast<double>(first_position + r);
        for (std::size_t i = 0; i < half; ++i) {
            // Pair i: features (2i, 2i+1) side by side, or (i, i + d/2) from the two halves.
            const std::size_t x = pairing == Pairing::adjacent ? 2 * i : i;
            const std::size_t y = pairing == Pairing::adjacent ? 2 * i + 1 : i + half;
            const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / d);
            const double cosine = std::cos(position * theta);
            const double sine = std::sin(position * theta);
            rotated(r, x) = vectors(r, x) * cosine - vectors(r, y) * sine;
            rotated(r, y) = vectors(r, x) * sine + vectors(r, y) * cosine;
        }
    }
    return rotated;
    // END SOLUTION
}
//< rope

Matrix rope_score_table(const Matrix& query, const Matrix& key, std::size_t positions)
{
    if (query.rows() != 1 || key.rows() != 1 || query.cols() != key.cols()) {
        throw ShapeError(fmt::format("rope_score_table: q is {} and k is {}; both must be one row of the same width",
                                     shape(query), shape(key)));
    }
    if (positions == 0) {
        throw std::invalid_argument("rope_score_table: 0 positions; the table needs at least one");
    }
    Matrix table(positions, positions);
    for (std::size_t a = 0; a < positions; ++a) {
        for (std::size_t b = 0; b < positions; ++b) {
            table(a, b) = scores(rope(query, a), rope(key, b))(0, 0);
        }
    }
    return table;
}

}  // namespace sa
