// Chapter 10, Word order: attention alone ignores it; sinusoidal encodings and rotary embeddings add it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "attention.hpp"
#include "example.hpp"
#include "helpers.hpp"
#include "plots.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "scores.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using helpers::below;

namespace {

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;

double dot(const sa::Matrix& lhs, const sa::Matrix& rhs)
{
    double sum = 0.0;
    for (std::size_t c = 0; c < lhs.cols(); ++c) {
        sum += lhs(0, c) * rhs(0, c);
    }
    return sum;
}

double length(const sa::Matrix& vector)
{
    return std::sqrt(dot(vector, vector));
}

// An independent reference, written from the formulas with Eigen: softmax(Q·Kᵀ/√d_k)·V.
Eigen::MatrixXd reference_attention(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v)
{
    const Eigen::MatrixXd scaled = (q * k.transpose()) / std::sqrt(static_cast<double>(q.cols()));
    Eigen::MatrixXd weights(scaled.rows(), scaled.cols());
    for (Eigen::Index i = 0; i < scaled.rows(); ++i) {
        const Eigen::ArrayXXd shifted = (scaled.row(i).array() - scaled.row(i).maxCoeff()).exp();
        weights.row(i) = (shifted / shifted.sum()).matrix();
    }
    return weights * v;
}

// The worked example's embeddings, written out so that the test states its own inputs.
Eigen::MatrixXd worked_embeddings(bool swapped)
{
    Eigen::MatrixXd e(3, 2);
    if (swapped) {
        e << 1, 2, 2, 0, 2, 0;  // "Eats Mouse Cheese"
    } else {
        e << 2, 0, 1, 2, 2, 0;  // "Mouse Eats Cheese"
    }
    return e;
}

// W_Q swaps the two features: q = [e2, e1]. W_K and W_V are the identity.
Eigen::MatrixXd swap_features(const Eigen::MatrixXd& x)
{
    Eigen::MatrixXd q(x.rows(), 2);
    q.col(0) = x.col(1);
    q.col(1) = x.col(0);
    return q;
}

// A 2-d vector at position p turned by p radians (θ_0 = 10000^0 = 1 for d = 2), as a rotation matrix.
Eigen::MatrixXd rotate_rows_2d(const Eigen::MatrixXd& x)
{
    Eigen::MatrixXd rotated(x.rows(), 2);
    for (Eigen::Index p = 0; p < x.rows(); ++p) {
        const double angle = static_cast<double>(p);
        Eigen::Matrix2d r;
        r << std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle);
        rotated.row(p) = (r * x.row(p).transpose()).transpose();
    }
    return rotated;
}

void check_rows(const sa::Matrix& outputs, const Eigen::MatrixXd& expected, const char* why)
{
    REQUIRE(outputs.rows() == static_cast<std::size_t>(expected.rows()));
    REQUIRE(outputs.cols() == static_cast<std::size_t>(expected.cols()));
    for (std::size_t i = 0; i < outputs.rows(); ++i) {
        for (std::size_t j = 0; j < outputs.cols(); ++j) {
            INFO(why << ": entry (" << i << "," << j << ")");
            CHECK_THAT(outputs(i, j),
                       WithinAbs(expected(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)), 1e-12));
        }
    }
}

sa::Matrix worked_outputs(const std::vector<std::size_t>& order, const char* positions)
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix e = sa::reorder_rows(example.embeddings, order);
    sa::Matrix x = e;
    if (std::string(positions) == "sinusoidal") {
        x = sa::add_positions(e, sa::sinusoidal_encoding(3, 2));
    }
    sa::Matrix q = sa::project(x, example.w_query);
    sa::Matrix k = sa::project(x, example.w_key);
    if (std::string(positions) == "rope") {
        q = sa::rope(q);
        k = sa::rope(k);
    }
    return sa::attention(q, k, sa::project(x, example.w_value));
}

}  // namespace

TEST_CASE("Sinusoidal encodings: the closed form for d = 4 and d = 2", "[ch10]")
{
    const sa::Matrix table = sa::sinusoidal_encoding(3, 4);
    REQUIRE(table.rows() == 3);
    REQUIRE(table.cols() == 4);
    INFO("position 0: sin 0 = 0 and cos 0 = 1 in every pair");
    CHECK(table(0, 0) == 0.0);
    CHECK(table(0, 1) == 1.0);
    CHECK(table(0, 2) == 0.0);
    CHECK(table(0, 3) == 1.0);
    INFO("position 1, d = 4: pair 0 turns at 1/10000^0 = 1, pair 1 at 1/10000^(2/4) = 1/100: "
         "[sin 1, cos 1, sin 0.01, cos 0.01]");
    CHECK_THAT(table(1, 0), WithinAbs(std::sin(1.0), 1e-15));
    CHECK_THAT(table(1, 1), WithinAbs(std::cos(1.0), 1e-15));
    CHECK_THAT(table(1, 2), WithinAbs(std::sin(0.01), 1e-15));
    CHECK_THAT(table(1, 3), WithinAbs(std::cos(0.01), 1e-15));
    INFO("position 2, d = 4: [sin 2, cos 2, sin 0.02, cos 0.02]");
    CHECK_THAT(table(2, 2), WithinAbs(std::sin(0.02), 1e-15));
    const sa::Matrix two = sa::sinusoidal_encoding(3, 2);
    for (std::size_t pos = 0; pos < 3; ++pos) {
        INFO("d = 2 has only pair 0: row " << pos << " is [sin " << pos << ", cos " << pos << "]");
        CHECK_THAT(two(pos, 0), WithinAbs(std::sin(static_cast<double>(pos)), 1e-15));
        CHECK_THAT(two(pos, 1), WithinAbs(std::cos(static_cast<double>(pos)), 1e-15));
    }
    INFO("the printed table for the worked example: pos 1 [0.841, 0.540], pos 2 [0.909, -0.416]");
    CHECK_THAT(two(1, 0), WithinAbs(0.841, printed));
    CHECK_THAT(two(1, 1), WithinAbs(0.540, printed));
    CHECK_THAT(two(2, 0), WithinAbs(0.909, printed));
    CHECK_THAT(two(2, 1), WithinAbs(-0.416, printed));
}

TEST_CASE("Sinusoidal encodings: the d = 8 table the program prints", "[ch10]")
{
    const sa::Matrix table = sa::sinusoidal_encoding(10, 8);
    REQUIRE(table.rows() == 10);
    REQUIRE(table.cols() == 8);
    for (std::size_t pos = 0; pos < 10; ++pos) {
        for (std::size_t i = 0; i < 4; ++i) {
            const double frequency = std::pow(10.0, -static_cast<double>(i));  // 10000^(-2i/8) = 10^(-i)
            const double angle = static_cast<double>(pos) * frequency;
            INFO("PE(" << pos << ", " << 2 * i << ") = sin(" << pos << " · 10^-" << i << "), and cos for "
                       << 2 * i + 1);
            CHECK_THAT(table(pos, 2 * i), WithinAbs(std::sin(angle), 1e-15));
            CHECK_THAT(table(pos, 2 * i + 1), WithinAbs(std::cos(angle), 1e-15));
        }
    }
    INFO("printed: pos 9 is [0.412, -0.911, 0.783, 0.622, 0.090, 0.996, 0.009, 1.000]; "
         "the last pair turns a thousandth of a radian per position");
    CHECK_THAT(table(9, 0), WithinAbs(0.412, printed));
    CHECK_THAT(table(9, 1), WithinAbs(-0.911, printed));
    CHECK_THAT(table(9, 2), WithinAbs(0.783, printed));
    CHECK_THAT(table(9, 5), WithinAbs(0.996, printed));
    CHECK_THAT(table(9, 6), WithinAbs(0.009, printed));
}

TEST_CASE("Odd or zero d is refused with a message that names the step and d", "[ch10]")
{
    INFO("features come in (sin, cos) pairs, and rope turns pairs: d = 3 cannot be split into pairs");
    CHECK_THROWS_AS(sa::sinusoidal_encoding(2, 3), std::invalid_argument);
    CHECK_THROWS_WITH(sa::sinusoidal_encoding(2, 3), Contains("sinusoidal_encoding") && Contains("d = 3 is odd"));
    CHECK_THROWS_WITH(sa::sinusoidal_encoding(2, 0), Contains("sinusoidal_encoding") && Contains("d = 0"));
    CHECK_THROWS_AS(sa::rope(sa::Matrix(2, 5, 1.0)), std::invalid_argument);
    CHECK_THROWS_WITH(sa::rope(sa::Matrix(2, 5, 1.0)), Contains("rope") && Contains("d = 5 is odd"));
    INFO("E + P needs P with the shape of E");
    CHECK_THROWS_AS(sa::add_positions(sa::Matrix(3, 2), sa::Matrix(3, 4)), sa::ShapeError);
    CHECK_THROWS_WITH(sa::add_positions(sa::Matrix(3, 2), sa::Matrix(3, 4)),
                      Contains("add_positions") && Contains("3×2") && Contains("3×4"));
}

TEST_CASE("Rope at position 0 leaves every vector unchanged, bit for bit", "[ch10]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const sa::Matrix x = sa::random_matrix(1, 2 * (1 + below(generator, 8)), generator);
    INFO("seed " << seed << ": the angle is 0 · θ_i = 0, cos 0 = 1 and sin 0 = 0, so x·1 - y·0 = x exactly");
    CHECK(sa::identical(sa::rope(x, 0, sa::Pairing::adjacent), x));
    CHECK(sa::identical(sa::rope(x, 0, sa::Pairing::halves), x));
}

TEST_CASE("Rope for d = 4 at position 1: both pairings by hand", "[ch10]")
{
    const sa::Matrix x{{1, 2, 3, 4}};
    const sa::Matrix adjacent = sa::rope(x, 1, sa::Pairing::adjacent);
    const sa::Matrix halves = sa::rope(x, 1, sa::Pairing::halves);
    const double c1 = std::cos(1.0);
    const double s1 = std::sin(1.0);
    const double c2 = std::cos(0.01);
    const double s2 = std::sin(0.01);
    INFO("adjacent: (1, 2) turns by θ_0 = 1, (3, 4) by θ_1 = 10000^(-1/2) = 0.01");
    CHECK_THAT(adjacent(0, 0), WithinAbs(1 * c1 - 2 * s1, 1e-15));
    CHECK_THAT(adjacent(0, 1), WithinAbs(1 * s1 + 2 * c1, 1e-15));
    CHECK_THAT(adjacent(0, 2), WithinAbs(3 * c2 - 4 * s2, 1e-15));
    CHECK_THAT(adjacent(0, 3), WithinAbs(3 * s2 + 4 * c2, 1e-15));
    INFO("halves: (f1, f3) = (1, 3) turns by 1, (f2, f4) = (2, 4) by 0.01");
    CHECK_THAT(halves(0, 0), WithinAbs(1 * c1 - 3 * s1, 1e-15));
    CHECK_THAT(halves(0, 2), WithinAbs(1 * s1 + 3 * c1, 1e-15));
    CHECK_THAT(halves(0, 1), WithinAbs(2 * c2 - 4 * s2, 1e-15));
    CHECK_THAT(halves(0, 3), WithinAbs(2 * s2 + 4 * c2, 1e-15));
    INFO("printed: adjacent [-1.143, 1.922, 2.960, 4.030], halves [-1.984, 1.960, 2.462, 4.020]");
    const double adjacent_printed[] = {-1.143, 1.922, 2.960, 4.030};
    const double halves_printed[] = {-1.984, 1.960, 2.462, 4.020};
    for (std::size_t c = 0; c < 4; ++c) {
        CHECK_THAT(adjacent(0, c), WithinAbs(adjacent_printed[c], printed));
        CHECK_THAT(halves(0, c), WithinAbs(halves_printed[c], printed));
    }
    INFO("both keep the length √(1 + 4 + 9 + 16) = √30 ≈ 5.477");
    CHECK_THAT(length(adjacent), WithinAbs(std::sqrt(30.0), 1e-14));
    CHECK_THAT(length(halves), WithinAbs(5.477, printed));
}

TEST_CASE("Rope: the halves pairing is the adjacent one with the features reordered", "[ch10]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t d = 2 * (1 + below(generator, 8));
    const std::size_t half = d / 2;
    const sa::Matrix x = sa::random_matrix(3, d, generator);
    // Interleave the halves: [x_0, x_half, x_1, x_half+1, ...] puts pair (i, i + d/2) side by side.
    std::vector<std::size_t> interleave(d);
    for (std::size_t i = 0; i < half; ++i) {
        interleave[2 * i] = i;
        interleave[2 * i + 1] = i + half;
    }
    const sa::Matrix halves = sa::rope(x, 4, sa::Pairing::halves);
    for (std::size_t r = 0; r < 3; ++r) {
        sa::Matrix moved(1, d);
        for (std::size_t c = 0; c < d; ++c) {
            moved(0, c) = x(r, interleave[c]);
        }
        const sa::Matrix turned = sa::rope(moved, 4 + r, sa::Pairing::adjacent);
        for (std::size_t c = 0; c < d; ++c) {
            INFO("seed " << seed << ", d = " << d << ", row " << r << ": halves rotates (i, i + d/2) by the angle "
                         << "that adjacent uses for (2i, 2i+1); feature " << interleave[c] << " lands in slot " << c);
            CHECK(halves(r, interleave[c]) == turned(0, c));
        }
    }
}

TEST_CASE("Rope: row r of the matrix sits at position first_position + r", "[ch10]")
{
    sa::SplitMix64 generator(11);
    const sa::Matrix x = sa::random_matrix(4, 6, generator);
    const sa::Matrix together = sa::rope(x, 3);
    for (std::size_t r = 0; r < 4; ++r) {
        INFO("row " << r << " rotated on its own at position " << 3 + r);
        CHECK(sa::identical(sa::row_vector(together, r), sa::rope(sa::row_vector(x, r), 3 + r)));
    }
}

TEST_CASE("Rope: the score depends only on the offset b - a", "[ch10]")
{
    const auto seed = GENERATE(range(1, 21));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t d = 2 * (1 + below(generator, 16));
    const sa::Matrix q = sa::random_matrix(1, d, generator);
    const sa::Matrix k = sa::random_matrix(1, d, generator);
    const std::size_t a = below(generator, 50);
    const std::size_t b = below(generator, 50);
    const std::size_t shift = below(generator, 50);
    for (const sa::Pairing pairing : {sa::Pairing::adjacent, sa::Pairing::halves}) {
        const double score = dot(sa::rope(q, a, pairing), sa::rope(k, b, pairing));
        const double shifted = dot(sa::rope(q, a + shift, pairing), sa::rope(k, b + shift, pairing));
        INFO("seed " << seed << ", d = " << d << ": (R_a q)·(R_b k) = q·R_(b-a) k, so positions (" << a << ", " << b
                     << ") and (" << a + shift << ", " << b + shift << ") give the same score");
        CHECK_THAT(shifted, WithinAbs(score, 1e-12));
    }
    INFO("the chapter's pair of positions: (5, 3) and (2, 0), offset -2");
    CHECK_THAT(dot(sa::rope(q, 5), sa::rope(k, 3)), WithinAbs(dot(sa::rope(q, 2), sa::rope(k, 0)), 1e-12));
}

TEST_CASE("Rope keeps the length of every vector", "[ch10]")
{
    const auto seed = GENERATE(range(1, 21));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t d = 2 * (1 + below(generator, 16));
    const sa::Matrix x = sa::random_matrix(1, d, generator);
    const std::size_t position = below(generator, 1000);
    INFO("seed " << seed << ", d = " << d << ", position " << position
                 << ": each pair turns by a rotation, and (x cos t - y sin t)² + (x sin t + y cos t)² = x² + y²");
    CHECK_THAT(length(sa::rope(x, position)), WithinAbs(length(x), 1e-12));
    CHECK_THAT(length(sa::rope(x, position, sa::Pairing::halves)), WithinAbs(length(x), 1e-12));
}

TEST_CASE("The rope score table of the worked example: q_Mouse = [0,2] against k_Eats = [1,2]", "[ch10]")
{
    const sa::Matrix table = sa::rope_score_table(sa::Matrix{{0, 2}}, sa::Matrix{{1, 2}}, 6);
    REQUIRE(table.rows() == 6);
    REQUIRE(table.cols() == 6);
    for (std::size_t a = 0; a < 6; ++a) {
        for (std::size_t b = 0; b < 6; ++b) {
            const double offset = static_cast<double>(b) - static_cast<double>(a);
            INFO("d = 2, θ = 1: R_t k = [cos t - 2 sin t, sin t + 2 cos t], and q·R_t k = 2 sin t + 4 cos t "
                 "with t = b - a = " << offset);
            CHECK_THAT(table(a, b), WithinAbs(2 * std::sin(offset) + 4 * std::cos(offset), 1e-12));
        }
    }
    INFO("printed: 4.000 on the diagonal (no offset: the plain score 0·1 + 2·2 of chapter 2), "
         "-3.483 at (5, 3) and (2, 0), 3.844 at offset 1");
    CHECK_THAT(table(0, 0), WithinAbs(4.0, printed));
    CHECK_THAT(table(5, 3), WithinAbs(-3.483, printed));
    CHECK_THAT(table(2, 0), WithinAbs(-3.483, printed));
    CHECK_THAT(table(0, 1), WithinAbs(3.844, printed));
    CHECK_THAT(table(5, 0), WithinAbs(3.052, printed));
    INFO("rope_score_table needs one-row vectors of the same width");
    CHECK_THROWS_AS(sa::rope_score_table(sa::Matrix(2, 2), sa::Matrix{{1, 2}}, 3), sa::ShapeError);
    INFO("k too: a two-row key is refused, not read by its first row alone");
    CHECK_THROWS_WITH(sa::rope_score_table(sa::Matrix{{1, 2}}, sa::Matrix(2, 2), 3),
                      Catch::Matchers::Contains("q is 1×2 and k is 2×2"));
}

TEST_CASE("Without positions, swapping two words only swaps their outputs", "[ch10]")
{
    const sa::Matrix outputs = worked_outputs({0, 1, 2}, "none");
    const sa::Matrix swapped = worked_outputs({1, 0, 2}, "none");
    INFO("\"Eats Mouse Cheese\": each word asks the same question of the same set of keys and values, so its output "
         "row is the one it had, now in its new place; the sums run over the keys in another order, so only "
         "within rounding in general (here even bit for bit)");
    CHECK(sa::largest_difference(swapped, sa::reorder_rows(outputs, {1, 0, 2})) <= 1e-15);
    INFO("printed: Eats [1.667, 0.667] first, then Mouse and Cheese [1.106, 1.789]");
    CHECK_THAT(swapped(0, 0), WithinAbs(5.0 / 3.0, 1e-12));
    CHECK_THAT(swapped(0, 1), WithinAbs(0.667, printed));
    CHECK_THAT(swapped(1, 0), WithinAbs(1.106, printed));
    CHECK_THAT(swapped(2, 1), WithinAbs(1.789, printed));
}

TEST_CASE("Without positions, any reordering of random tokens permutes the outputs", "[ch10]")
{
    const auto seed = GENERATE(range(1, 21));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 6);
    const sa::Matrix embeddings = sa::random_matrix(n, 4, generator);
    const sa::Matrix w_query = sa::random_matrix(4, 2, generator);
    const sa::Matrix w_key = sa::random_matrix(4, 2, generator);
    const sa::Matrix w_value = sa::random_matrix(4, 3, generator);  // d_v ≠ d_k
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (std::size_t i = n - 1; i > 0; --i) {  // Fisher–Yates with the book's generator
        std::swap(order[i], order[below(generator, i + 1)]);
    }
    const auto outputs_of = [&](const sa::Matrix& e) {
        return sa::attention(sa::project(e, w_query), sa::project(e, w_key), sa::project(e, w_value));
    };
    const sa::Matrix outputs = outputs_of(embeddings);
    const sa::Matrix reordered = outputs_of(sa::reorder_rows(embeddings, order));
    INFO("seed " << seed << ", n = " << n << ": the same rows in the new order, up to the order of the sums");
    CHECK(sa::largest_difference(reordered, sa::reorder_rows(outputs, order)) <= 1e-12);
    INFO("with sinusoidal positions added after the reordering, the inputs themselves are new, "
         "unless the order is the identity");
    const sa::Matrix positions = sa::sinusoidal_encoding(n, 4);
    const sa::Matrix with_positions = outputs_of(sa::add_positions(embeddings, positions));
    const sa::Matrix reordered_with_positions = outputs_of(sa::add_positions(sa::reorder_rows(embeddings, order),
                                                                             positions));
    bool identity = true;
    for (std::size_t i = 0; i < n; ++i) {
        identity = identity && order[i] == i;
    }
    if (!identity) {
        CHECK(sa::largest_difference(reordered_with_positions, sa::reorder_rows(with_positions, order)) > 1e-6);
    }
    INFO("but reordering E + P itself (each word keeps its position vector) still only permutes the outputs");
    CHECK(sa::largest_difference(outputs_of(sa::reorder_rows(sa::add_positions(embeddings, positions), order)),
                                 sa::reorder_rows(with_positions, order)) <= 1e-12);
}

TEST_CASE("With sinusoidal positions, the two orders give different outputs", "[ch10]")
{
    // X = E + P with P row p = [sin p, cos p]; Q = X·W_Q swaps the features; K = V = X.
    Eigen::MatrixXd p(3, 2);
    p << 0, 1, std::sin(1.0), std::cos(1.0), std::sin(2.0), std::cos(2.0);
    for (const bool swapped : {false, true}) {
        const Eigen::MatrixXd x = worked_embeddings(swapped) + p;
        const Eigen::MatrixXd expected = reference_attention(swap_features(x), x, x);
        check_rows(worked_outputs(swapped ? std::vector<std::size_t>{1, 0, 2} : std::vector<std::size_t>{0, 1, 2},
                                  "sinusoidal"),
                   expected, swapped ? "\"Eats Mouse Cheese\" + P" : "\"Mouse Eats Cheese\" + P");
    }
    const sa::Matrix outputs = worked_outputs({0, 1, 2}, "sinusoidal");
    const sa::Matrix swapped = worked_outputs({1, 0, 2}, "sinusoidal");
    INFO("printed: Mouse [1.889, 2.289] and Cheese [1.849, 2.476] differ now: same word, different position");
    CHECK_THAT(outputs(0, 0), WithinAbs(1.889, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(2.289, printed));
    CHECK_THAT(outputs(2, 0), WithinAbs(1.849, printed));
    CHECK_THAT(outputs(2, 1), WithinAbs(2.476, printed));
    INFO("printed: Eats gives [1.980, 2.008] at position 1 and [2.741, 0.376] at position 0");
    CHECK_THAT(outputs(1, 0), WithinAbs(1.980, printed));
    CHECK_THAT(swapped(0, 0), WithinAbs(2.741, printed));
    CHECK_THAT(swapped(0, 1), WithinAbs(0.376, printed));
    INFO("printed largest difference from the old rows in the new order: 1.633");
    CHECK_THAT(sa::largest_difference(swapped, sa::reorder_rows(outputs, {1, 0, 2})), WithinAbs(1.633, printed));
}

TEST_CASE("With rotary positions, the two orders give different outputs", "[ch10]")
{
    for (const bool swapped : {false, true}) {
        const Eigen::MatrixXd e = worked_embeddings(swapped);
        // Q and K turned by their positions 0, 1, 2 (radians, d = 2); V is not turned.
        const Eigen::MatrixXd expected = reference_attention(rotate_rows_2d(swap_features(e)), rotate_rows_2d(e), e);
        check_rows(worked_outputs(swapped ? std::vector<std::size_t>{1, 0, 2} : std::vector<std::size_t>{0, 1, 2},
                                  "rope"),
                   expected, swapped ? "\"Eats Mouse Cheese\" with rope" : "\"Mouse Eats Cheese\" with rope");
    }
    const sa::Matrix outputs = worked_outputs({0, 1, 2}, "rope");
    const sa::Matrix swapped = worked_outputs({1, 0, 2}, "rope");
    INFO("printed: Mouse [1.482, 1.036], Cheese [1.434, 1.132]; after the swap Eats [1.490, 1.020], "
         "Mouse [1.894, 0.212]");
    CHECK_THAT(outputs(0, 0), WithinAbs(1.482, printed));
    CHECK_THAT(outputs(2, 1), WithinAbs(1.132, printed));
    CHECK_THAT(swapped(0, 0), WithinAbs(1.490, printed));
    CHECK_THAT(swapped(1, 0), WithinAbs(1.894, printed));
    CHECK_THAT(swapped(1, 1), WithinAbs(0.212, printed));
    CHECK_THAT(sa::largest_difference(swapped, sa::reorder_rows(outputs, {1, 0, 2})), WithinAbs(0.987, printed));
}

TEST_CASE("With rotary positions, moving the whole sentence along changes no output", "[ch10]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 5);
    const std::size_t m = 2 + below(generator, 5);  // n ≠ m allowed: queries and keys at their own positions
    const sa::Matrix q = sa::random_matrix(n, 4, generator);
    const sa::Matrix k = sa::random_matrix(m, 4, generator);
    const sa::Matrix v = sa::random_matrix(m, 3, generator);
    const std::size_t shift = 1 + below(generator, 100);
    const sa::Matrix outputs = sa::attention(sa::rope(q), sa::rope(k), v);
    const sa::Matrix shifted = sa::attention(sa::rope(q, shift), sa::rope(k, shift), v);
    INFO("seed " << seed << ": every score depends on b - a only, and shifting both by " << shift
                 << " keeps every offset, so every weight and output stays (up to rounding)");
    CHECK(sa::largest_difference(shifted, outputs) <= 1e-12);
}

TEST_CASE("reorder_rows and reorder_tokens write the sentence in a new order", "[ch10][support]")
{
    const sa::Matrix e{{2, 0}, {1, 2}, {0, 5}};
    const sa::Matrix moved = sa::reorder_rows(e, {2, 0, 1});
    INFO("row i of the result is row order[i]: [0,5], [2,0], [1,2]");
    CHECK(moved == sa::Matrix{{0, 5}, {2, 0}, {1, 2}});
    CHECK(sa::reorder_tokens({"Mouse", "Eats", "Cheese"}, {1, 0, 2}) ==
          std::vector<std::string>{"Eats", "Mouse", "Cheese"});
    INFO("an order that repeats a row or misses one is not a permutation");
    CHECK_THROWS_WITH(sa::reorder_rows(e, {0, 0, 1}), Contains("reorder_rows") && Contains("not a permutation"));
    CHECK_THROWS_AS(sa::reorder_rows(e, {0, 1}), std::invalid_argument);
    CHECK_THROWS_AS(sa::reorder_tokens({"A", "B"}, {0, 2}), std::invalid_argument);
}

TEST_CASE("The inputs the program prints: E + P and the rotated queries and keys", "[ch10]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix x = sa::add_positions(example.embeddings, sa::sinusoidal_encoding(3, 2));
    INFO("Mouse [2,0] + [sin 0, cos 0] = [2, 1]; Eats [1,2] + [sin 1, cos 1] ≈ [1.841, 2.540]; "
         "Cheese [2,0] + [sin 2, cos 2] ≈ [2.909, -0.416]");
    CHECK(x(0, 0) == 2.0);
    CHECK(x(0, 1) == 1.0);
    CHECK_THAT(x(1, 0), WithinAbs(1.0 + std::sin(1.0), 1e-15));
    CHECK_THAT(x(1, 1), WithinAbs(2.540, printed));
    CHECK_THAT(x(2, 0), WithinAbs(2.909, printed));
    CHECK_THAT(x(2, 1), WithinAbs(-0.416, printed));
    const sa::Matrix swapped = sa::add_positions(sa::reorder_rows(example.embeddings, {1, 0, 2}),
                                                 sa::sinusoidal_encoding(3, 2));
    INFO("\"Eats Mouse Cheese\": Eats [1,2] + [0,1] = [1, 3]; Mouse [2,0] + [sin 1, cos 1] ≈ [2.841, 0.540]");
    CHECK(swapped(0, 0) == 1.0);
    CHECK(swapped(0, 1) == 3.0);
    CHECK_THAT(swapped(1, 0), WithinAbs(2.841, printed));
    CHECK_THAT(swapped(1, 1), WithinAbs(0.540, printed));

    const sa::Matrix queries = sa::rope(sa::project(example.embeddings, example.w_query));
    const sa::Matrix keys = sa::rope(sa::project(example.embeddings, example.w_key));
    INFO("q_Eats = [2,1] at position 1 turns by 1 radian: [2 cos 1 - sin 1, 2 sin 1 + cos 1] ≈ [0.239, 2.223]");
    CHECK_THAT(queries(1, 0), WithinAbs(2 * std::cos(1.0) - std::sin(1.0), 1e-15));
    CHECK_THAT(queries(1, 0), WithinAbs(0.239, printed));
    CHECK_THAT(queries(1, 1), WithinAbs(2.223, printed));
    INFO("q_Cheese = [0,2] at position 2: [-2 sin 2, 2 cos 2] ≈ [-1.819, -0.832]; Mouse at 0 is not turned");
    CHECK_THAT(queries(2, 0), WithinAbs(-1.819, printed));
    CHECK_THAT(queries(2, 1), WithinAbs(-0.832, printed));
    CHECK(queries(0, 0) == 0.0);
    CHECK(queries(0, 1) == 2.0);
    INFO("k_Eats = [1,2] at position 1: [cos 1 - 2 sin 1, sin 1 + 2 cos 1] ≈ [-1.143, 1.922]; "
         "k_Cheese = [2,0] at 2: [2 cos 2, 2 sin 2] ≈ [-0.832, 1.819]");
    CHECK_THAT(keys(1, 0), WithinAbs(-1.143, printed));
    CHECK_THAT(keys(1, 1), WithinAbs(1.922, printed));
    CHECK_THAT(keys(2, 0), WithinAbs(2 * std::cos(2.0), 1e-15));
    CHECK_THAT(keys(2, 1), WithinAbs(1.819, printed));
}

TEST_CASE("rope_offset_plot reads the first cell of each diagonal of the score table", "[ch10][support]")
{
    // A 3×3 table whose cell (a, b) holds 10·a + b, so each point names the cell it came from.
    sa::Matrix table(3, 3);
    for (std::size_t a = 0; a < 3; ++a) {
        for (std::size_t b = 0; b < 3; ++b) {
            table(a, b) = static_cast<double>(10 * a + b);
        }
    }
    const sa::LinePlot plot = sa::rope_offset_plot(table, 7.0);
    REQUIRE(plot.series.size() == 2);
    INFO("offsets -2..2: cells (2,0), (1,0), (0,0), (0,1), (0,2)");
    CHECK(plot.series[0].x == std::vector<double>{-2, -1, 0, 1, 2});
    CHECK(plot.series[0].y == std::vector<double>{20, 10, 0, 1, 2});
    CHECK(plot.series[1].x == plot.series[0].x);
    CHECK(plot.series[1].y == std::vector<double>(5, 7.0));
    CHECK_THROWS_AS(sa::rope_offset_plot(sa::Matrix(2, 3), 0.0), sa::ShapeError);
    CHECK_THROWS_AS(sa::rope_offset_plot(sa::Matrix(), 0.0), sa::ShapeError);
}
