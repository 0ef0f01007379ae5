// Chapter 7, The whole formula: Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k + M)·V in one call.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include <Eigen/Dense>

#include "attention.hpp"
#include "example.hpp"
#include "helpers.hpp"
#include "hints.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using worked::printed;

using helpers::below;
using helpers::Inputs;
using helpers::random_inputs;
using helpers::to_eigen;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

void copy_row(const sa::Matrix& from, std::size_t from_row, sa::Matrix& to, std::size_t to_row)
{
    for (std::size_t c = 0; c < from.cols(); ++c) {
        to(to_row, c) = from(from_row, c);
    }
}

bool row_equal(const sa::Matrix& lhs, const sa::Matrix& rhs, std::size_t row)
{
    for (std::size_t c = 0; c < lhs.cols(); ++c) {
        if (!(lhs(row, c) == rhs(row, c))) {
            return false;
        }
    }
    return true;
}

// An independent reference, written straight from the formula with Eigen's matrix
// operations and its own row-wise softmax (shifted by the row maximum; a row with no
// usable key gets zero weights).
Eigen::MatrixXd reference_attention(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v,
                                    const Eigen::MatrixXd& mask)
{
    const Eigen::MatrixXd scaled = (q * k.transpose()) / std::sqrt(static_cast<double>(q.cols())) + mask;
    Eigen::MatrixXd weights = Eigen::MatrixXd::Zero(scaled.rows(), scaled.cols());
    for (Eigen::Index i = 0; i < scaled.rows(); ++i) {
        const double row_max = scaled.row(i).maxCoeff();
        if (row_max == -infinity) {
            continue;
        }
        const Eigen::ArrayXXd shifted = (scaled.row(i).array() - row_max).exp();
        weights.row(i) = (shifted / shifted.sum()).matrix();
    }
    return weights * v;
}

// sa::attention, with an index outside Q, K, V or M named in the hint.
sa::Matrix attention_of(const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& values,
                        const sa::Matrix& mask)
{
    return hints::reading("attention",
                          {{"Q", &queries, "one row per query", "one column per feature (d_k)"},
                           {"K", &keys, "one row per key (not transposed)", "one column per feature (d_k)"},
                           {"V", &values, "one row per key", "one column per value feature (d_v)"},
                           {"M", &mask, "one row per query", "one column per key"}},
                          [&] { return sa::attention(queries, keys, values, mask); });
}

sa::Matrix attention_of(const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& values)
{
    return hints::reading("attention",
                          {{"Q", &queries, "one row per query", "one column per feature (d_k)"},
                           {"K", &keys, "one row per key (not transposed)", "one column per feature (d_k)"},
                           {"V", &values, "one row per key", "one column per value feature (d_v)"}},
                          [&] { return sa::attention(queries, keys, values); });
}

const sa::Matrix& worked_queries()
{
    static const sa::Matrix queries = sa::project(sa::mouse_eats_cheese().embeddings, sa::mouse_eats_cheese().w_query);
    return queries;
}
const sa::Matrix& worked_keys()
{
    static const sa::Matrix keys = sa::project(sa::mouse_eats_cheese().embeddings, sa::mouse_eats_cheese().w_key);
    return keys;
}
const sa::Matrix& worked_values()
{
    static const sa::Matrix values = sa::project(sa::mouse_eats_cheese().embeddings, sa::mouse_eats_cheese().w_value);
    return values;
}

}  // namespace

TEST_CASE("The worked example: one call gives the outputs of chapters 2 to 6", "[ch07]")
{
    const sa::Matrix outputs = attention_of(worked_queries(), worked_keys(), worked_values());
    REQUIRE(outputs.rows() == 3);
    REQUIRE(outputs.cols() == 2);
    // Mouse asks q = [0,2]; against k_Mouse = k_Cheese = [2,0] it scores 0, against
    // k_Eats = [1,2] it scores 4, which scales to 4/√2 = 2√2 ≈ 2.828.
    const double small_weight = worked::small_weight;  // 1/(2 + e^(2√2)) ≈ 0.053
    const double big_weight = worked::big_weight;      // e^(2√2)/(2 + e^(2√2)) ≈ 0.894
    INFO("Mouse = 0.053·[2,0] + 0.894·[1,2] + 0.053·[2,0] = [4·0.053 + 0.894, 2·0.894] ≈ [1.106, 1.789]");
    CHECK_THAT(outputs(0, 0), WithinAbs(4.0 * small_weight + big_weight, 1e-12));
    CHECK_THAT(outputs(0, 0), WithinAbs(1.106, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(1.789, printed));
    INFO("Eats asks [2,1] and scores 4 against every key: weights 1/3 each, ([2,0]+[1,2]+[2,0])/3 = [5/3, 2/3]");
    CHECK_THAT(outputs(1, 0), WithinAbs(5.0 / 3.0, 1e-12));
    CHECK_THAT(outputs(1, 0), WithinAbs(1.667, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(0.667, printed));
    INFO("Cheese has Mouse's embedding, so it asks the same question and gets the same output");
    CHECK(outputs(2, 0) == outputs(0, 0));
    CHECK(outputs(2, 1) == outputs(0, 1));
}

TEST_CASE("The worked example: the intermediate matrices the program prints", "[ch07]")
{
    const sa::Matrix raw = sa::scores(worked_queries(), worked_keys());
    const sa::Matrix scaled = sa::scale(raw, 2);
    const sa::Matrix weights = sa::softmax_rows(scaled);
    const double expected_scores[3][3] = {{0, 4, 0}, {4, 4, 4}, {0, 4, 0}};
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
            INFO("row " << worked::token_names[i] << ", column " << worked::token_names[j] << ": q_Mouse = q_Cheese = [0,2] meets only k_Eats = [1,2] (0·1 + 2·2 = 4); "
                      "q_Eats = [2,1] scores 2·2 = 4 against [2,0] and 2·1 + 1·2 = 4 against [1,2]");
            CHECK_THAT(raw(i, j), WithinAbs(expected_scores[i][j], printed));
            INFO("scaled: 4/√2 = 2√2 ≈ 2.828, 0 stays 0");
            CHECK_THAT(scaled(i, j), WithinAbs(expected_scores[i][j] == 4 ? 2.828 : 0.0, printed));
        }
    }
    INFO("Mouse row: [1, e^(2√2), 1]/(2 + e^(2√2)) ≈ [0.053, 0.894, 0.053]; Eats row: 1/3 each");
    CHECK_THAT(weights(0, 0), WithinAbs(0.053, printed));
    CHECK_THAT(weights(0, 1), WithinAbs(0.894, printed));
    CHECK_THAT(weights(1, 2), WithinAbs(0.333, printed));
}

TEST_CASE("The worked example under the causal mask", "[ch07]")
{
    const sa::Matrix mask = sa::causal_mask(3, 3);
    const sa::Matrix outputs = attention_of(worked_queries(), worked_keys(), worked_values(), mask);
    const sa::Matrix unmasked = attention_of(worked_queries(), worked_keys(), worked_values());
    INFO("Mouse may only see itself: weight 1 on v_Mouse = [2,0]");
    CHECK_THAT(outputs(0, 0), WithinAbs(2.0, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(0.0, printed));
    INFO("Eats sees Mouse and itself with equal scores 2.828: (v_Mouse + v_Eats)/2 = ([2,0] + [1,2])/2 = [1.5, 1.0]");
    CHECK_THAT(outputs(1, 0), WithinAbs(1.5, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(1.0, printed));
    INFO("Cheese is last and sees every token either way, so its row is the unmasked one, bit for bit");
    CHECK(row_equal(outputs, unmasked, 2));
    CHECK_THAT(outputs(2, 0), WithinAbs(1.106, printed));
    CHECK_THAT(outputs(2, 1), WithinAbs(1.789, printed));
}

TEST_CASE("One call equals the five steps bit for bit", "[ch07]")
{
    const auto seed = GENERATE(range(1, 21));
    const bool causal = GENERATE(false, true);
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 1 + below(generator, 6);
    const std::size_t m = causal ? n : 1 + below(generator, 6);
    const Inputs in = random_inputs(generator, n, m, 1 + below(generator, 4), 1 + below(generator, 4));
    const sa::Matrix mask = causal ? sa::causal_mask(n, m) : sa::Matrix(n, m, 0.0);
    const sa::Matrix steps =
        sa::mix(sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(in.queries, in.keys), in.queries.cols()), mask)),
                in.values);
    INFO("seed " << seed << (causal ? ", causal" : "") << ": attention runs the same steps in the same order");
    CHECK(attention_of(in.queries, in.keys, in.values, mask) == steps);
    if (!causal) {
        INFO("without a mask, the three-argument overload is the same as an all-zero mask");
        CHECK(attention_of(in.queries, in.keys, in.values) == steps);
    }
}

TEST_CASE("Without a mask, permuting the tokens permutes the outputs the same way", "[ch07]")
{
    const auto seed = GENERATE(range(1, 31));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 6);
    const Inputs in = random_inputs(generator, n, n, 3, 4);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (std::size_t i = n - 1; i > 0; --i) {  // Fisher–Yates with our own generator
        std::swap(order[i], order[below(generator, i + 1)]);
    }
    Inputs permuted = in;
    for (std::size_t i = 0; i < n; ++i) {
        copy_row(in.queries, order[i], permuted.queries, i);
        copy_row(in.keys, order[i], permuted.keys, i);
        copy_row(in.values, order[i], permuted.values, i);
    }
    const sa::Matrix outputs = attention_of(in.queries, in.keys, in.values);
    const sa::Matrix permuted_outputs = attention_of(permuted.queries, permuted.keys, permuted.values);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t d = 0; d < outputs.cols(); ++d) {
            INFO("seed " << seed << ": token " << order[i] << " moved to position " << i
                         << "; it asks the same question of the same keys and gets the same values, only the sums "
                            "run in another order (hence 1e-12, not bit for bit)");
            CHECK_THAT(permuted_outputs(i, d), WithinAbs(outputs(order[i], d), 1e-12));
        }
    }
}

TEST_CASE("With the causal mask, a later token cannot change an earlier output", "[ch07]")
{
    const auto seed = GENERATE(range(1, 31));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 6);
    const Inputs in = random_inputs(generator, n, n, 2, 3);
    const std::size_t changed = 1 + below(generator, n - 1);  // any token but the first
    Inputs altered = in;
    const Inputs replacement = random_inputs(generator, 1, 1, 2, 3);
    copy_row(replacement.queries, 0, altered.queries, changed);
    copy_row(replacement.keys, 0, altered.keys, changed);
    copy_row(replacement.values, 0, altered.values, changed);
    const sa::Matrix mask = sa::causal_mask(n, n);
    const sa::Matrix outputs = attention_of(in.queries, in.keys, in.values, mask);
    const sa::Matrix altered_outputs = attention_of(altered.queries, altered.keys, altered.values, mask);
    for (std::size_t i = 0; i < changed; ++i) {
        INFO("seed " << seed << ": token " << changed << " changed; row " << i
                     << " gives it the score -inf, so weight exactly 0, and adding 0·v changes no bit");
        CHECK(row_equal(outputs, altered_outputs, i));
    }
}

TEST_CASE("With the causal mask, a nan key of a later token does not reach an earlier output", "[ch07]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double infinity = std::numeric_limits<double>::infinity();
    const sa::Matrix queries{{0, 2}, {2, 1}, {0, 2}};
    const sa::Matrix keys{{2, 0}, {1, 2}, {nan, infinity}};
    const sa::Matrix values{{2, 0}, {1, 2}, {2, 0}};
    const sa::Matrix outputs = attention_of(queries, keys, values, sa::causal_mask(3, 3));
    INFO("rows 0 and 1 cannot see Cheese: its nan scores are set to -inf, so its weight is exactly 0");
    CHECK(outputs(0, 0) == 2.0);
    CHECK(outputs(0, 1) == 0.0);
    INFO("Eats sees Mouse and itself with equal scores 4/√2, so it gets [1.5, 1.0] as in chapter 4");
    CHECK_THAT(outputs(1, 0), Catch::Matchers::WithinAbs(1.5, 1e-12));
    CHECK_THAT(outputs(1, 1), Catch::Matchers::WithinAbs(1.0, 1e-12));
    INFO("Cheese sees its own nan key, so its whole row is nan");
    CHECK(std::isnan(outputs(2, 0)));
    CHECK(std::isnan(outputs(2, 1)));
}

TEST_CASE("A nan value is never hidden, not by a mask and not by a weight that underflows to 0", "[ch07]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    INFO("scores 1600/√2 and 0: e^(0 - 1131) underflows to exactly 0, yet key 1 is visible and its value is nan");
    const sa::Matrix unmasked = attention_of(sa::Matrix{{40, 0}}, sa::Matrix{{40, 0}, {0, 0}},
                                              sa::Matrix{{1, 1}, {nan, nan}});
    CHECK(std::isnan(unmasked(0, 0)));
    CHECK(std::isnan(unmasked(0, 1)));
    INFO("under the causal mask row 0 cannot see key 1, but 0·nan is still nan: the nan shows rather than hides");
    const sa::Matrix masked = attention_of(sa::Matrix{{1, 0}, {0, 1}}, sa::Matrix{{1, 0}, {0, 1}},
                                            sa::Matrix{{1, 1}, {nan, nan}}, sa::causal_mask(2, 2));
    CHECK(std::isnan(masked(0, 0)));
    CHECK(std::isnan(masked(1, 0)));
}

TEST_CASE("sa::attention agrees with an Eigen reference written from the formula", "[ch07]")
{
    struct Shape {
        std::size_t n, m, d_k, d_v;
        bool causal;
    };
    const Shape shape = GENERATE(Shape{3, 3, 2, 2, false}, Shape{4, 6, 3, 5, false}, Shape{5, 2, 4, 1, false},
                                 Shape{2, 7, 1, 3, false}, Shape{4, 6, 3, 5, true}, Shape{6, 4, 2, 3, true});
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const Inputs in = random_inputs(generator, shape.n, shape.m, shape.d_k, shape.d_v);
    const sa::Matrix mask = shape.causal ? sa::causal_mask(shape.n, shape.m) : sa::Matrix(shape.n, shape.m, 0.0);
    const sa::Matrix outputs = attention_of(in.queries, in.keys, in.values, mask);
    const Eigen::MatrixXd expected =
        reference_attention(to_eigen(in.queries), to_eigen(in.keys), to_eigen(in.values), to_eigen(mask));
    REQUIRE(outputs.rows() == shape.n);
    REQUIRE(outputs.cols() == shape.d_v);
    for (std::size_t i = 0; i < shape.n; ++i) {
        for (std::size_t d = 0; d < shape.d_v; ++d) {
            INFO("seed " << seed << ", Q " << shape.n << "×" << shape.d_k << ", K " << shape.m << "×" << shape.d_k
                         << ", V " << shape.m << "×" << shape.d_v << (shape.causal ? ", causal" : "")
                         << ": softmax(Q·Kᵀ/√d_k + M)·V computed independently; output (" << i << "," << d << ")");
            CHECK_THAT(outputs(i, d),
                       WithinAbs(expected(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d)), 1e-12));
        }
    }
}

TEST_CASE("A fully masked row gives zeros, not NaN, and leaves the other rows alone", "[ch07]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 4);
    const std::size_t m = 1 + below(generator, 5);
    const Inputs in = random_inputs(generator, n, m, 3, 2);
    const std::size_t blind = below(generator, n);
    sa::Matrix mask(n, m, 0.0);
    for (std::size_t j = 0; j < m; ++j) {
        mask(blind, j) = -infinity;
    }
    const sa::Matrix outputs = attention_of(in.queries, in.keys, in.values, mask);
    const sa::Matrix unmasked = attention_of(in.queries, in.keys, in.values);
    for (std::size_t i = 0; i < n; ++i) {
        if (i == blind) {
            INFO("seed " << seed << ": row " << i << " may use no key: its weights are all 0, so its output is 0·V = 0");
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                CHECK_FALSE(std::isnan(outputs(i, d)));
                CHECK(outputs(i, d) == 0.0);
            }
        } else {
            INFO("seed " << seed << ": row " << i << " has no masked key; each row is computed on its own");
            CHECK(row_equal(outputs, unmasked, i));
        }
    }
}

TEST_CASE("A padding mask with no real key gives all-zero outputs", "[ch07]")
{
    sa::SplitMix64 generator(7);
    const Inputs in = random_inputs(generator, 3, 4, 2, 2);
    const sa::Matrix outputs = attention_of(in.queries, in.keys, in.values, sa::padding_mask(3, {false, false, false, false}));
    INFO("every key is padding: no query has anything to attend to, and the answer is 0, never NaN");
    CHECK(outputs == sa::Matrix(3, 2, 0.0));
}

TEST_CASE("A NaN in the inputs shows up as NaN in the outputs it reaches", "[ch07]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 3;
    const std::size_t m = 4;
    const Inputs in = random_inputs(generator, n, m, 2, 3);
    const sa::Matrix clean = attention_of(in.queries, in.keys, in.values);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::size_t query = below(generator, n);
    const std::size_t key = below(generator, m);
    const std::size_t feature = below(generator, 3);

    SECTION("in a query: that query's output row, and only it")
    {
        Inputs broken = in;
        broken.queries(query, 1) = nan;
        const sa::Matrix outputs = attention_of(broken.queries, broken.keys, broken.values);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                INFO("seed " << seed << ": q_" << query << " is NaN, so all its scores and weights are NaN");
                CHECK(std::isnan(outputs(i, d)) == (i == query));
            }
            if (i != query) {
                INFO("row " << i << " never reads q_" << query);
                CHECK(row_equal(outputs, clean, i));
            }
        }
    }
    SECTION("in a key: every output row, since every query scores against it")
    {
        Inputs broken = in;
        broken.keys(key, 0) = nan;
        const sa::Matrix outputs = attention_of(broken.queries, broken.keys, broken.values);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                INFO("seed " << seed << ": k_" << key << " is NaN, so score (" << i << "," << key
                                    << ") is NaN and softmax makes the whole row NaN");
                CHECK(std::isnan(outputs(i, d)));
            }
        }
    }
    SECTION("in a value: that feature of every output row")
    {
        Inputs broken = in;
        broken.values(key, feature) = nan;
        const sa::Matrix outputs = attention_of(broken.queries, broken.keys, broken.values);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                INFO("seed " << seed << ": v_" << key << " feature " << feature
                                    << " is NaN; every weight is positive, so every output's feature " << feature
                                    << " blends it in; the other features never read it");
                if (d == feature) {
                    CHECK(std::isnan(outputs(i, d)));
                } else {
                    CHECK(outputs(i, d) == clean(i, d));
                }
            }
        }
    }
}

TEST_CASE("Shapes that do not fit are named in the error", "[ch07]")
{
    const sa::Matrix queries(3, 2, 1.0);
    const sa::Matrix keys(3, 2, 1.0);
    const sa::Matrix values(4, 2, 1.0);
    INFO("K has 3 rows but V has 4: every key needs exactly one value");
    CHECK_THROWS_AS(sa::attention(queries, keys, values), sa::ShapeError);
    CHECK_THROWS_WITH(sa::attention(queries, keys, values),
                      Contains("attention") && Contains("K is 3×2") && Contains("V is 4×2"));
    INFO("3 queries and 3 keys need a 3×3 mask, not 2×3");
    const sa::Matrix short_mask(2, 3, 0.0);
    CHECK_THROWS_AS(sa::attention(queries, keys, sa::Matrix(3, 2, 1.0), short_mask), sa::ShapeError);
    CHECK_THROWS_WITH(sa::attention(queries, keys, sa::Matrix(3, 2, 1.0), short_mask),
                      Contains("attention") && Contains("mask is 2×3") && Contains("3×3"));
    INFO("Q is 3×2 but K is 3×4: a query and a key must have the same width d_k to be dotted");
    CHECK_THROWS_AS(sa::attention(queries, sa::Matrix(3, 4, 1.0), sa::Matrix(3, 2, 1.0)), sa::ShapeError);
    CHECK_THROWS_WITH(sa::attention(queries, sa::Matrix(3, 4, 1.0), sa::Matrix(3, 2, 1.0)),
                      Contains("attention") && Contains("Q is 3×2") && Contains("K is 3×4"));
}
