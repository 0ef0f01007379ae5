// Chapter 6, Mixing: O = A·V, each output row a weighted blend of the value rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "hints.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "softmax.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using worked::cheese;
using worked::eats;
using worked::mouse;
using worked::printed;
using worked::two_root_two;

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();
// The worked example's weights, from the formula: w = 1/(2 + e^{2√2}), W = e^{2√2}/(2 + e^{2√2}).
const double small = worked::small_weight;
const double large = worked::big_weight;
const double third = 1.0 / 3.0;

// sa::mix, with an index outside A or V named in the hint.
sa::Matrix mix_of(const sa::Matrix& weights, const sa::Matrix& values)
{
    return hints::reading("mix",
                          {{"A", &weights, "one row per query", "one column per key"},
                           {"V", &values, "one row per key (not transposed)", "one column per value feature (d_v)"}},
                          [&] { return sa::mix(weights, values); });
}

sa::Matrix worked_weights()
{
    return sa::Matrix{{small, large, small}, {third, third, third}, {small, large, small}};
}

// The worked example's scaled scores: every dot product of 4 became 4/√2 = 2√2.
constexpr double minus_infinity = -infinity;

sa::Matrix worked_scaled_scores()
{
    return sa::Matrix{{0, two_root_two, 0}, {two_root_two, two_root_two, two_root_two}, {0, two_root_two, 0}};
}

// W_V is the identity, so the values are the embeddings.
sa::Matrix worked_values()
{
    return sa::Matrix{{2, 0}, {1, 2}, {2, 0}};
}
}  // namespace

TEST_CASE("Mixing the worked example: Mouse and Cheese move toward Eats, Eats takes an even blend", "[ch06]")
{
    const sa::Matrix outputs = mix_of(worked_weights(), worked_values());
    REQUIRE(outputs.rows() == 3);
    REQUIRE(outputs.cols() == 2);
    for (const std::size_t row : {mouse, cheese}) {
        INFO("row " << worked::token_names[row]
                    << ": w·[2,0] + W·[1,2] + w·[2,0] = [4w + W, 2W] with w ≈ 0.0529, W ≈ 0.8943");
        CHECK_THAT(outputs(row, 0), WithinAbs(4 * small + large, printed));
        CHECK_THAT(outputs(row, 1), WithinAbs(2 * large, printed));
    }
    INFO("Eats: ([2,0] + [1,2] + [2,0]) / 3 = [5/3, 2/3]");
    CHECK_THAT(outputs(eats, 0), WithinAbs(5.0 / 3.0, printed));
    CHECK_THAT(outputs(eats, 1), WithinAbs(2.0 / 3.0, printed));
}

TEST_CASE("One output entry by hand: Mouse's first feature", "[ch06]")
{
    const sa::Matrix outputs = mix_of(worked_weights(), worked_values());
    INFO("o_Mouse,1 = A(Mouse,Mouse)·2 + A(Mouse,Eats)·1 + A(Mouse,Cheese)·2 = 0.1057 + 0.8943 + 0.1057");
    CHECK_THAT(outputs(mouse, 0), WithinAbs(2.0 * small + 1.0 * large + 2.0 * small, 1e-12));
}

TEST_CASE("Mixing the causally masked weights: a one-hot row copies one value", "[ch06]")
{
    const sa::Matrix weights{{1, 0, 0}, {0.5, 0.5, 0}, {small, large, small}};
    const sa::Matrix outputs = mix_of(weights, worked_values());
    INFO("Mouse puts all its weight on itself, so its output is v_Mouse = [2, 0]");
    CHECK_THAT(outputs(mouse, 0), WithinAbs(2.0, printed));
    CHECK_THAT(outputs(mouse, 1), WithinAbs(0.0, printed));
    INFO("Eats halves between Mouse and itself: ([2,0] + [1,2]) / 2 = [1.5, 1.0]");
    CHECK_THAT(outputs(eats, 0), WithinAbs(1.5, printed));
    CHECK_THAT(outputs(eats, 1), WithinAbs(1.0, printed));
    INFO("Cheese sees everything, so its output is the unmasked one, [4w + W, 2W]");
    CHECK_THAT(outputs(cheese, 0), WithinAbs(4 * small + large, printed));
    CHECK_THAT(outputs(cheese, 1), WithinAbs(2 * large, printed));
}

TEST_CASE("n ≠ m and d_k ≠ d_v: 2 queries over 4 keys with 3-wide values give a 2×3 output", "[ch06]")
{
    const sa::Matrix weights{{0.1, 0.2, 0.3, 0.4}, {0.25, 0.25, 0.25, 0.25}};
    const sa::Matrix values{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    const sa::Matrix outputs = mix_of(weights, values);
    REQUIRE(outputs.rows() == 2);
    REQUIRE(outputs.cols() == 3);
    INFO("row 0: 0.1·e1 + 0.2·e2 + 0.3·e3 + 0.4·[1,1,1] = [0.5, 0.6, 0.7]");
    CHECK_THAT(outputs(0, 0), WithinAbs(0.5, 1e-12));
    CHECK_THAT(outputs(0, 1), WithinAbs(0.6, 1e-12));
    CHECK_THAT(outputs(0, 2), WithinAbs(0.7, 1e-12));
    INFO("row 1: a quarter of each value: [0.25 + 0.25, 0.25 + 0.25, 0.25 + 0.25] = [0.5, 0.5, 0.5]");
    CHECK_THAT(outputs(1, 0), WithinAbs(0.5, 1e-12));
    CHECK_THAT(outputs(1, 1), WithinAbs(0.5, 1e-12));
    CHECK_THAT(outputs(1, 2), WithinAbs(0.5, 1e-12));
}

TEST_CASE("mix rejects values without one row per key, naming the operation and both shapes", "[ch06]")
{
    const sa::Matrix weights{{0.5, 0.5, 0}, {0, 0, 1}};
    const sa::Matrix two_values{{1, 0}, {0, 1}};
    INFO("A is 2×3 (3 keys) but V is 2×2 (2 values): V needs 3 rows");
    CHECK_THROWS_AS(mix_of(weights, two_values), sa::ShapeError);
    CHECK_THROWS_WITH(mix_of(weights, two_values), Contains("mix") && Contains("2×3") && Contains("2×2"));
}

TEST_CASE("An all-zero weight row gives an all-zero output row", "[ch06]")
{
    const sa::Matrix weights{{0, 0, 0}, {third, third, third}};
    const sa::Matrix outputs = mix_of(weights, worked_values());
    INFO("Σ_j 0·v_j = 0: a fully masked query receives nothing");
    CHECK(outputs(0, 0) == 0.0);
    CHECK(outputs(0, 1) == 0.0);
    INFO("the other row is still the even blend [5/3, 2/3]");
    CHECK_THAT(outputs(1, 0), WithinAbs(5.0 / 3.0, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(2.0 / 3.0, printed));
}

TEST_CASE("A nan value is never hidden: it reaches every row, even one that gives its key weight 0", "[ch06]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double infinity = std::numeric_limits<double>::infinity();
    const sa::Matrix values{{2, 0}, {nan, infinity}};
    // Row 0's weight for key 1 is exactly 0, as after a mask or after e^s underflows
    // (a score 800 below the row's maximum gives e^-800, which is 0 in a double).
    const sa::Matrix outputs = mix_of(sa::Matrix{{1, 0}, {0.5, 0.5}}, values);
    INFO("0·nan is nan and 0·inf is nan: row 0 must not come out as a plausible [2, 0]");
    CHECK(std::isnan(outputs(0, 0)));
    CHECK(std::isnan(outputs(0, 1)));
    INFO("row 1 weighs key 1 by 0.5: 0.5·nan is nan and 0·0 + 0.5·inf is inf");
    CHECK(std::isnan(outputs(1, 0)));
    CHECK(std::isinf(outputs(1, 1)));
}

TEST_CASE("Full masked path (softmax_rows then mix): a fully masked row gives zeros, other rows bit-identical",
          "[ch06]")
{
    const double s = 4.0 / std::sqrt(2.0);  // 2√2, the worked example's scaled score
    const sa::Matrix scaled{{0, s, 0}, {s, s, s}, {0, s, 0}};
    const sa::Matrix masked{{-infinity, -infinity, -infinity}, {s, s, s}, {0, s, 0}};
    const sa::Matrix plain = mix_of(sa::softmax_rows(scaled), worked_values());
    const sa::Matrix outputs = mix_of(sa::softmax_rows(masked), worked_values());
    INFO("row 0 has every key masked: zero weights, so a zero output and no nan");
    CHECK(outputs(0, 0) == 0.0);
    CHECK(outputs(0, 1) == 0.0);
    INFO("rows 1 and 2 did not change, so their outputs are the same doubles as without the mask");
    for (std::size_t i = 1; i < 3; ++i) {
        CHECK(outputs(i, 0) == plain(i, 0));
        CHECK(outputs(i, 1) == plain(i, 1));
    }
}

TEST_CASE("NaN path (softmax_rows then mix): a nan score makes that output row nan, never a plausible number",
          "[ch06]")
{
    const double s = 4.0 / std::sqrt(2.0);
    const sa::Matrix scores{{0, std::numeric_limits<double>::quiet_NaN(), 0}, {s, s, s}, {0, s, 0}};
    const sa::Matrix outputs = mix_of(sa::softmax_rows(scores), worked_values());
    INFO("row 0 held a nan: every weight is nan, and nan times any value stays nan");
    CHECK(std::isnan(outputs(0, 0)));
    CHECK(std::isnan(outputs(0, 1)));
    INFO("rows 1 and 2 are the worked example's Eats [5/3, 2/3] and Cheese [4w + W, 2W]");
    CHECK_THAT(outputs(eats, 0), WithinAbs(5.0 / 3.0, printed));
    CHECK_THAT(outputs(eats, 1), WithinAbs(2.0 / 3.0, printed));
    CHECK_THAT(outputs(cheese, 0), WithinAbs(4 * small + large, printed));
    CHECK_THAT(outputs(cheese, 1), WithinAbs(2 * large, printed));
}

// Chapter 4 prints what its masks lead to; those numbers need this chapter's mix
// (and chapter 5's softmax), so they are graded here, where both steps exist.

TEST_CASE("Chapter 4's causal mask, mixed: the worked example's weights and outputs", "[ch06]")
{
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(worked_scaled_scores(), sa::causal_mask(3, 3)));
    const sa::Matrix outputs = mix_of(weights, worked_values());
    INFO("Mouse has one key left, itself: weights [1, 0, 0], output v_Mouse = [2, 0]");
    CHECK_THAT(weights(mouse, mouse), WithinAbs(1.0, printed));
    CHECK_THAT(weights(mouse, eats), WithinAbs(0.0, printed));
    CHECK_THAT(weights(mouse, cheese), WithinAbs(0.0, printed));
    CHECK_THAT(outputs(mouse, 0), WithinAbs(2.0, printed));
    CHECK_THAT(outputs(mouse, 1), WithinAbs(0.0, printed));
    INFO("Eats has two equal scores 2√2 left: [0.5, 0.5, 0], output ([2,0] + [1,2]) / 2 = [1.5, 1.0]");
    CHECK_THAT(weights(eats, mouse), WithinAbs(0.5, printed));
    CHECK_THAT(weights(eats, eats), WithinAbs(0.5, printed));
    CHECK_THAT(weights(eats, cheese), WithinAbs(0.0, printed));
    CHECK_THAT(outputs(eats, 0), WithinAbs(1.5, printed));
    CHECK_THAT(outputs(eats, 1), WithinAbs(1.0, printed));
    INFO("Cheese sees everything, as without a mask: [1, e^{2√2}, 1] / (2 + e^{2√2}) with e^{2√2} ≈ 16.9188");
    CHECK_THAT(weights(cheese, mouse), WithinAbs(small, printed));
    CHECK_THAT(weights(cheese, eats), WithinAbs(large, printed));
    CHECK_THAT(weights(cheese, cheese), WithinAbs(small, printed));
    INFO("Cheese's output: 0.0529·[2,0] + 0.8943·[1,2] + 0.0529·[2,0] = [4w + W, 2W] ≈ [1.1057, 1.7886]");
    CHECK_THAT(outputs(cheese, 0), WithinAbs(4 * small + large, printed));
    CHECK_THAT(outputs(cheese, 1), WithinAbs(2 * large, printed));
}

TEST_CASE("Chapter 4's causal plus padding mask, mixed: a fully masked row gives zeros, never nan", "[ch06]")
{
    const sa::Matrix both = sa::apply_mask(sa::apply_mask(worked_scaled_scores(), sa::causal_mask(3, 3)),
                                           sa::padding_mask(3, {false, true, true}));
    const sa::Matrix weights = sa::softmax_rows(both);
    const sa::Matrix outputs = mix_of(weights, worked_values());
    INFO("Mouse has no key left: all-zero weights and an all-zero output, exactly");
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(weights(0, j) == 0.0);
    }
    CHECK(outputs(mouse, 0) == 0.0);
    CHECK(outputs(mouse, 1) == 0.0);
    INFO("Eats has only itself: weights [0, 1, 0], output v_Eats = [1, 2]");
    CHECK_THAT(weights(eats, mouse), WithinAbs(0.0, printed));
    CHECK_THAT(weights(eats, eats), WithinAbs(1.0, printed));
    CHECK_THAT(weights(eats, cheese), WithinAbs(0.0, printed));
    CHECK_THAT(outputs(eats, 0), WithinAbs(1.0, printed));
    CHECK_THAT(outputs(eats, 1), WithinAbs(2.0, printed));
    INFO("Cheese keeps Eats (2√2) and itself (0): e^{2√2}/(1 + e^{2√2}) ≈ 0.9442 and 1/(1 + e^{2√2}) ≈ 0.0558");
    CHECK_THAT(weights(cheese, mouse), WithinAbs(0.0, printed));
    CHECK_THAT(weights(cheese, eats), WithinAbs(0.94419278, printed));
    CHECK_THAT(weights(cheese, cheese), WithinAbs(0.05580722, printed));
    INFO("Cheese's output: 0.9442·[1,2] + 0.0558·[2,0] ≈ [1.0558, 1.8884]");
    CHECK_THAT(outputs(cheese, 0), WithinAbs(1.05580722, printed));
    CHECK_THAT(outputs(cheese, 1), WithinAbs(1.88838556, printed));
}

TEST_CASE("Chapter 4's fully masked row, mixed: the other rows are bit-identical to the unmasked run", "[ch06]")
{
    const sa::Matrix scaled = worked_scaled_scores();
    const sa::Matrix first_row_masked{{minus_infinity, minus_infinity, minus_infinity}, {0, 0, 0}, {0, 0, 0}};
    const sa::Matrix masked_outputs = mix_of(sa::softmax_rows(sa::apply_mask(scaled, first_row_masked)),
                                              worked_values());
    const sa::Matrix plain_outputs = mix_of(sa::softmax_rows(scaled), worked_values());
    INFO("the masked row becomes zeros and nothing of it may leak into the rows below");
    CHECK(masked_outputs(0, 0) == 0.0);
    CHECK(masked_outputs(0, 1) == 0.0);
    for (std::size_t i = 1; i < 3; ++i) {
        for (std::size_t d = 0; d < 2; ++d) {
            CHECK(masked_outputs(i, d) == plain_outputs(i, d));
        }
    }
}
