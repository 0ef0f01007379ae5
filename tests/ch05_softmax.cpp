// Chapter 5, Softmax: each row becomes positive weights that sum to one, computed stably.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "experiment.hpp"
#include "hints.hpp"
#include "random.hpp"
#include "softmax.hpp"
#include "worked_example.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

using worked::big_weight;
using worked::cheese;
using worked::eats;
using worked::mouse;
using worked::printed;
using worked::small_weight;
using worked::token_names;
using worked::two_root_two;

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

// sa::softmax_rows, with an index outside S named in the hint.
sa::Matrix softmax_of(const sa::Matrix& scores)
{
    return hints::reading("softmax_rows", {{"S", &scores, "one row per query", "one column per key"}},
                          [&] { return sa::softmax_rows(scores); });
}
}  // namespace

TEST_CASE("Softmax of the worked example: Mouse and Cheese favour Eats, Eats splits evenly", "[ch05]")
{
    const sa::Matrix scaled{{0, two_root_two, 0}, {two_root_two, two_root_two, two_root_two}, {0, two_root_two, 0}};
    const sa::Matrix weights = softmax_of(scaled);
    REQUIRE(weights.rows() == 3);
    REQUIRE(weights.cols() == 3);
    for (const std::size_t row : {mouse, cheese}) {
        INFO("row " << token_names[row] << " is [0, 2√2, 0]: e^0/(2 + e^{2√2}) with e^{2√2} ≈ 16.9188 gives 1/18.9188 "
             "≈ 0.0529 for Mouse and Cheese");
        CHECK_THAT(weights(row, mouse), WithinAbs(small_weight, printed));
        CHECK_THAT(weights(row, cheese), WithinAbs(small_weight, printed));
        INFO("row " << token_names[row] << ", column Eats: e^{2√2}/(2 + e^{2√2}) = 16.9188/18.9188 ≈ 0.8943");
        CHECK_THAT(weights(row, eats), WithinAbs(big_weight, printed));
    }
    INFO("Eats scores every key 2√2, so each term is e^0 = 1 after the max is subtracted: exactly 1/3 each, as the "
         "chapter says (1/3 rounded once to a double)");
    for (std::size_t column = 0; column < 3; ++column) {
        INFO("row Eats, column " << token_names[column] << ": e^0 / (1 + 1 + 1) = 1/3");
        CHECK(weights(eats, column) == 1.0 / 3.0);
    }
}

TEST_CASE("Softmax of the causally masked worked example: -inf becomes a weight of exactly 0", "[ch05]")
{
    const sa::Matrix masked{{0, -infinity, -infinity}, {two_root_two, two_root_two, -infinity}, {0, two_root_two, 0}};
    const sa::Matrix weights = softmax_of(masked);
    INFO("row Mouse: one finite score, so it takes all the weight: [1, 0, 0]");
    CHECK_THAT(weights(mouse, mouse), WithinAbs(1.0, printed));
    CHECK(weights(mouse, eats) == 0.0);
    CHECK(weights(mouse, cheese) == 0.0);
    INFO("row Eats: two equal finite scores share the weight: [0.5, 0.5, 0]");
    CHECK_THAT(weights(eats, mouse), WithinAbs(0.5, printed));
    CHECK_THAT(weights(eats, eats), WithinAbs(0.5, printed));
    CHECK(weights(eats, cheese) == 0.0);
    INFO("row Cheese: nothing masked, so [1, e^{2√2}, 1] / (2 + e^{2√2}) as without the mask");
    CHECK_THAT(weights(cheese, mouse), WithinAbs(small_weight, printed));
    CHECK_THAT(weights(cheese, eats), WithinAbs(big_weight, printed));
    CHECK_THAT(weights(cheese, cheese), WithinAbs(small_weight, printed));
}

TEST_CASE("The chapter's shifted rows: 1000 added or taken away gives the same weights", "[ch05]")
{
    const sa::Matrix shifted{{0, two_root_two, 0},
                             {1000, 1000 + two_root_two, 1000},
                             {-1000, -1000 + two_root_two, -1000}};
    const sa::Matrix weights = softmax_of(shifted);
    for (std::size_t row = 0; row < 3; ++row) {
        INFO("row " << row + 1 << " (shifted by " << (row == 0 ? "0" : row == 1 ? "+1000" : "-1000")
                    << "): e^{s+c} = e^c·e^s and e^c cancels, so [1, e^{2√2}, 1] / (2 + e^{2√2}) every time");
        CHECK_THAT(weights(row, 0), WithinAbs(small_weight, printed));
        CHECK_THAT(weights(row, 1), WithinAbs(big_weight, printed));
        CHECK_THAT(weights(row, 2), WithinAbs(small_weight, printed));
    }
}

TEST_CASE("Softmax of [1000, 1] is finite and correct", "[ch05]")
{
    const sa::Matrix weights = softmax_of(sa::Matrix{{1000, 1}});
    INFO("e^1000 overflows a double, but subtracting the maximum gives [e^0, e^-999] / (1 + e^-999)");
    REQUIRE(std::isfinite(weights(0, 0)));
    REQUIRE(std::isfinite(weights(0, 1)));
    INFO("e^-999 ≈ 1e-434 is far below anything a double can hold, so the weights are 1 and 0");
    CHECK_THAT(weights(0, 0), WithinAbs(1.0, 1e-12));
    CHECK_THAT(weights(0, 1), WithinAbs(0.0, 1e-12));
    CHECK(weights(0, 1) >= 0.0);
}

TEST_CASE("Softmax of [-1000, -1001] is finite and correct", "[ch05]")
{
    const sa::Matrix weights = softmax_of(sa::Matrix{{-1000, -1001}});
    INFO("e^-1000 underflows to 0 (0/0 would be nan); shifted by the maximum the row is [0, -1]");
    REQUIRE(std::isfinite(weights(0, 0)));
    REQUIRE(std::isfinite(weights(0, 1)));
    INFO("1/(1 + e^-1) = 0.7310585786 and e^-1/(1 + e^-1) = 0.2689414214");
    CHECK_THAT(weights(0, 0), WithinRel(0.7310585786300049, 1e-12));
    CHECK_THAT(weights(0, 1), WithinRel(0.2689414213699951, 1e-12));
}

TEST_CASE("Adding a constant to a row does not change its softmax", "[ch05]")
{
    const double constant = GENERATE(-1000.0, -37.5, 0.25, 3.0, 700.0);
    sa::SplitMix64 generator(2017);
    // Scores in sixteenths from -10 to 10: a score plus the constant is exact in a double,
    // so the only thing being tested is the softmax, not rounding in the test itself.
    std::vector<double> row(7);
    for (double& score : row) {
        score = (static_cast<double>(generator.next() % 321U) - 160.0) / 16.0;
    }
    sa::Matrix plain(1, row.size());
    sa::Matrix shifted(1, row.size());
    for (std::size_t j = 0; j < row.size(); ++j) {
        plain(0, j) = row[j];
        shifted(0, j) = row[j] + constant;
    }
    const sa::Matrix expected = softmax_of(plain);
    const sa::Matrix actual = softmax_of(shifted);
    for (std::size_t j = 0; j < row.size(); ++j) {
        INFO("constant " << constant << ", entry " << j + 1 << ": e^{s+c} / Σ e^{s+c} = e^s / Σ e^s, the e^c cancels");
        CHECK_THAT(actual(0, j), WithinAbs(expected(0, j), 1e-12));
    }
}

TEST_CASE("Every weight row sums to 1 and every weight lies in [0, 1]", "[ch05]")
{
    const unsigned seed = GENERATE(range(1u, 21u));
    sa::SplitMix64 generator(seed);
    const std::size_t queries = 1 + generator.next() % 9U;
    const std::size_t keys = 1 + generator.next() % 9U;
    sa::Matrix scores(queries, keys);
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = 0; j < keys; ++j) {
            scores(i, j) = -50.0 + 100.0 * generator.uniform();  // uniform on [-50, 50)
        }
    }
    const sa::Matrix weights = softmax_of(scores);
    REQUIRE(weights.rows() == queries);
    REQUIRE(weights.cols() == keys);
    for (std::size_t i = 0; i < queries; ++i) {
        double total = 0.0;
        for (std::size_t j = 0; j < keys; ++j) {
            INFO("seed " << seed << ", row " << i + 1 << ", key " << j + 1 << ": e^x > 0 divided by a larger sum");
            CHECK(weights(i, j) >= 0.0);
            CHECK(weights(i, j) <= 1.0);
            total += weights(i, j);
        }
        INFO("seed " << seed << ", row " << i + 1 << " (" << keys << " keys): Σ_j e^{s_j} / Σ_l e^{s_l} = 1");
        CHECK_THAT(total, WithinAbs(1.0, 1e-12));
    }
}

TEST_CASE("A fully masked row gets all-zero weights, never nan, and the other rows are untouched", "[ch05]")
{
    const sa::Matrix scores{{0.5, -1.25, 2.0}, {-infinity, -infinity, -infinity}, {3.0, 3.0, -infinity}};
    const sa::Matrix weights = softmax_of(scores);
    INFO("row 2 has no key left; 0/0 would be nan, the rule is zeros (as PyTorch does)");
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(weights(1, j) == 0.0);
    }
    INFO("rows 1 and 3 are exactly what they are without the masked row between them");
    const sa::Matrix alone = softmax_of(sa::Matrix{{0.5, -1.25, 2.0}, {3.0, 3.0, -infinity}});
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(weights(0, j) == alone(0, j));
        CHECK(weights(2, j) == alone(1, j));
    }
}

TEST_CASE("A nan anywhere in a row makes every weight of that row nan, and other rows stay finite", "[ch05]")
{
    const sa::Matrix scores{{1.0, not_a_number, 2.0},
                            {0.0, 1.0, 2.0},
                            {not_a_number, -infinity, -infinity},
                            {infinity, not_a_number, 0.0}};
    const sa::Matrix weights = softmax_of(scores);
    for (const std::size_t row : {std::size_t{0}, std::size_t{2}, std::size_t{3}}) {
        for (std::size_t j = 0; j < 3; ++j) {
            INFO("row " << row + 1 << " holds a nan, even next to -inf or +inf: a broken score must never look like a weight");
            CHECK(std::isnan(weights(row, j)));
        }
    }
    INFO("row 2 has no nan: finite weights e^{0,1,2} / (1 + e + e^2) summing to 1");
    double total = 0.0;
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(std::isfinite(weights(1, j)));
        total += weights(1, j);
    }
    CHECK_THAT(total, WithinAbs(1.0, 1e-12));
    CHECK_THAT(weights(1, 2), WithinRel(0.6652409557748219, 1e-12));
}

TEST_CASE("+inf in a row splits the weight equally among the +inf entries", "[ch05]")
{
    const sa::Matrix scores{{infinity, 0.0, infinity, -infinity}, {1.0, infinity, 3.0, 1e300}};
    const sa::Matrix weights = softmax_of(scores);
    INFO("two +inf entries: the limit of two equal scores growing without bound is 1/2 each, the rest 0");
    CHECK_THAT(weights(0, 0), WithinAbs(0.5, 1e-12));
    CHECK(weights(0, 1) == 0.0);
    CHECK_THAT(weights(0, 2), WithinAbs(0.5, 1e-12));
    CHECK(weights(0, 3) == 0.0);
    INFO("one +inf entry takes everything, even against a huge finite score");
    CHECK(weights(1, 0) == 0.0);
    CHECK_THAT(weights(1, 1), WithinAbs(1.0, 1e-12));
    CHECK(weights(1, 2) == 0.0);
    CHECK(weights(1, 3) == 0.0);
}

TEST_CASE("With n ≠ m each query's row is normalised over the keys, not the columns over the queries", "[ch05]")
{
    // 2 queries, 4 keys. The second row is [ln 1, ln 2, ln 3, ln 4], so e^s is [1, 2, 3, 4].
    const sa::Matrix scores{{0, 0, 0, 0}, {0, std::log(2.0), std::log(3.0), std::log(4.0)}};
    const sa::Matrix weights = softmax_of(scores);
    REQUIRE(weights.rows() == 2);
    REQUIRE(weights.cols() == 4);
    INFO("row 1: four equal scores, 1/4 each");
    for (std::size_t j = 0; j < 4; ++j) {
        CHECK_THAT(weights(0, j), WithinAbs(0.25, 1e-12));
    }
    INFO("row 2: [1, 2, 3, 4] / 10; a softmax down the columns would give something else");
    CHECK_THAT(weights(1, 0), WithinAbs(0.1, 1e-12));
    CHECK_THAT(weights(1, 1), WithinAbs(0.2, 1e-12));
    CHECK_THAT(weights(1, 2), WithinAbs(0.3, 1e-12));
    CHECK_THAT(weights(1, 3), WithinAbs(0.4, 1e-12));
}

TEST_CASE("softmax_rows agrees with the shortcut of chapter 3's experiment, largest_weight", "[ch05]")
{
    // Chapter 3's experiment takes a shortcut to the largest weight; it must agree with softmax_rows.
    sa::SplitMix64 generator(2017);
    for (int trial = 0; trial < 50; ++trial) {
        const sa::Matrix scores = sa::random_matrix(1, 8, generator);
        const sa::Matrix weights = softmax_of(scores);
        double largest = 0.0;
        for (std::size_t j = 0; j < weights.cols(); ++j) {
            largest = std::max(largest, weights(0, j));
        }
        INFO("trial " << trial << ": 1 / Σ e^{s_j - s_max} is softmax evaluated at the largest score");
        CHECK_THAT(sa::largest_weight(scores, 0), WithinRel(largest, 1e-12));
    }
}
