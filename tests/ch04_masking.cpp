// Chapter 4, Masking: additive masks, 0 = takes part, -inf = masked out, added before the softmax.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "masking.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using worked::cheese;
using worked::eats;
using worked::mouse;
using worked::printed;
using worked::two_root_two;

namespace {
constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

bool is_masked_out(double entry)
{
    return std::isinf(entry) && entry < 0.0;
}

// The worked example's scaled scores: Mouse and Cheese ask [0,2], Eats asks [2,1],
// the keys are [2,0], [1,2], [2,0]; each dot product of 4 became 2√2.
sa::Matrix worked_scaled_scores()
{
    return sa::Matrix{{0, two_root_two, 0}, {two_root_two, two_root_two, two_root_two}, {0, two_root_two, 0}};
}

}  // namespace

TEST_CASE("Causal mask: query i may use keys 1..i, every key after i is -inf", "[ch04]")
{
    const sa::Matrix mask = sa::causal_mask(3, 3);
    REQUIRE(mask.rows() == 3);
    REQUIRE(mask.cols() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
            if (j <= i) {
                INFO("query " << i << ", key " << j << ": the key is not in the future (j <= i), so the entry is 0");
                CHECK(mask(i, j) == 0.0);
            } else {
                INFO("query " << i << ", key " << j << ": the key comes later (j > i), so the entry is -inf");
                CHECK(is_masked_out(mask(i, j)));
            }
        }
    }
}

TEST_CASE("Causal mask with n ≠ m keeps the lower triangle (tril, not triu)", "[ch04]")
{
    SECTION("2 queries, 4 keys")
    {
        const sa::Matrix mask = sa::causal_mask(2, 4);
        REQUIRE(mask.rows() == 2);
        REQUIRE(mask.cols() == 4);
        INFO("query 0 may use key 0 only: [0, -inf, -inf, -inf]");
        CHECK(mask(0, 0) == 0.0);
        CHECK(is_masked_out(mask(0, 1)));
        CHECK(is_masked_out(mask(0, 2)));
        CHECK(is_masked_out(mask(0, 3)));
        INFO("query 1 may use keys 0 and 1: [0, 0, -inf, -inf]");
        CHECK(mask(1, 0) == 0.0);
        CHECK(mask(1, 1) == 0.0);
        CHECK(is_masked_out(mask(1, 2)));
        CHECK(is_masked_out(mask(1, 3)));
    }
    SECTION("4 queries, 2 keys")
    {
        const sa::Matrix mask = sa::causal_mask(4, 2);
        REQUIRE(mask.rows() == 4);
        REQUIRE(mask.cols() == 2);
        INFO("query 0 may use key 0 only; queries 1, 2 and 3 come after both keys and may use both");
        CHECK(mask(0, 0) == 0.0);
        CHECK(is_masked_out(mask(0, 1)));
        for (std::size_t i = 1; i < 4; ++i) {
            CHECK(mask(i, 0) == 0.0);
            CHECK(mask(i, 1) == 0.0);
        }
    }
}

TEST_CASE("apply_mask on the worked example hides the future and leaves the rest as it was", "[ch04]")
{
    const sa::Matrix scaled = worked_scaled_scores();
    const sa::Matrix masked = sa::apply_mask(scaled, sa::causal_mask(3, 3));
    REQUIRE(masked.rows() == 3);
    REQUIRE(masked.cols() == 3);
    INFO("Mouse, the first token, may only use itself: [0, -inf, -inf]");
    CHECK_THAT(masked(mouse, mouse), WithinAbs(0.0, printed));
    CHECK(is_masked_out(masked(mouse, eats)));
    CHECK(is_masked_out(masked(mouse, cheese)));
    INFO("Eats may use Mouse and itself, each scored 4/√2 = 2√2 ≈ 2.8284: [2.828, 2.828, -inf]");
    CHECK_THAT(masked(eats, mouse), WithinAbs(2.82842712, printed));
    CHECK_THAT(masked(eats, eats), WithinAbs(2.82842712, printed));
    CHECK(is_masked_out(masked(eats, cheese)));
    INFO("Cheese, the last token, sees the whole sentence: its row [0, 2√2, 0] is unchanged");
    CHECK_THAT(masked(cheese, mouse), WithinAbs(0.0, printed));
    CHECK_THAT(masked(cheese, eats), WithinAbs(2.82842712, printed));
    CHECK_THAT(masked(cheese, cheese), WithinAbs(0.0, printed));
    INFO("adding a mask entry of 0 changes nothing, so every unmasked score is the same double as before");
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
            CHECK(masked(i, j) == scaled(i, j));
        }
    }
}

TEST_CASE("Padding mask: a padding key is masked out in every row, real keys take part", "[ch04]")
{
    SECTION("the chapter's padding: the first key is padding")
    {
        const sa::Matrix mask = sa::padding_mask(3, {false, true, true});
        REQUIRE(mask.rows() == 3);
        REQUIRE(mask.cols() == 3);
        for (std::size_t i = 0; i < 3; ++i) {
            INFO("row " << i << ": key 0 is padding (-inf), keys 1 and 2 are real (0)");
            CHECK(is_masked_out(mask(i, 0)));
            CHECK(mask(i, 1) == 0.0);
            CHECK(mask(i, 2) == 0.0);
        }
    }
    SECTION("2 queries, 4 keys, the last key padding: one flag per key, one row per query")
    {
        const sa::Matrix mask = sa::padding_mask(2, {true, true, true, false});
        REQUIRE(mask.rows() == 2);
        REQUIRE(mask.cols() == 4);
        for (std::size_t i = 0; i < 2; ++i) {
            INFO("row " << i << ": [0, 0, 0, -inf]");
            CHECK(mask(i, 0) == 0.0);
            CHECK(mask(i, 1) == 0.0);
            CHECK(mask(i, 2) == 0.0);
            CHECK(is_masked_out(mask(i, 3)));
        }
    }
    SECTION("no real key masks every entry")
    {
        const sa::Matrix mask = sa::padding_mask(2, {false, false});
        for (std::size_t i = 0; i < 2; ++i) {
            for (std::size_t j = 0; j < 2; ++j) {
                INFO("every key is padding, so entry (" << i << ", " << j << ") is -inf");
                CHECK(is_masked_out(mask(i, j)));
            }
        }
    }
}

TEST_CASE("Two masks combine by applying one after the other", "[ch04]")
{
    // Causal plus a padding first key, as the chapter shows: the first row loses its only key.
    const sa::Matrix both = sa::apply_mask(sa::apply_mask(worked_scaled_scores(), sa::causal_mask(3, 3)),
                                           sa::padding_mask(3, {false, true, true}));
    INFO("Mouse: its only key (itself) is padding, so the whole row is -inf");
    CHECK(is_masked_out(both(mouse, mouse)));
    CHECK(is_masked_out(both(mouse, eats)));
    CHECK(is_masked_out(both(mouse, cheese)));
    INFO("Eats keeps only itself: [-inf, 2√2, -inf]");
    CHECK(is_masked_out(both(eats, mouse)));
    CHECK_THAT(both(eats, eats), WithinAbs(2.82842712, printed));
    CHECK(is_masked_out(both(eats, cheese)));
    INFO("Cheese keeps Eats and itself: [-inf, 2√2, 0]");
    CHECK(is_masked_out(both(cheese, mouse)));
    CHECK_THAT(both(cheese, eats), WithinAbs(2.82842712, printed));
    CHECK_THAT(both(cheese, cheese), WithinAbs(0.0, printed));
}

TEST_CASE("apply_mask rejects a mask of another shape, naming the operation and both shapes", "[ch04]")
{
    const sa::Matrix scaled = worked_scaled_scores();
    INFO("the scores are 3×3, so a 3×2 mask cannot be added to them");
    CHECK_THROWS_AS(sa::apply_mask(scaled, sa::causal_mask(3, 2)), sa::ShapeError);
    CHECK_THROWS_WITH(sa::apply_mask(scaled, sa::causal_mask(3, 2)),
                      Contains("apply_mask") && Contains("3×3") && Contains("3×2"));
}

TEST_CASE("apply_mask rejects entries that are neither 0 nor -inf, such as a boolean mask's 1", "[ch04]")
{
    const sa::Matrix scaled{{1, 2}, {3, 4}};
    INFO("1 is what a boolean 'True' becomes; the book's masks are additive, so it must be rejected");
    CHECK_THROWS_AS(sa::apply_mask(scaled, sa::Matrix{{0, 1}, {0, 0}}), std::invalid_argument);
    INFO("+inf would give a masked position all the weight instead of none");
    CHECK_THROWS_AS(sa::apply_mask(scaled, sa::Matrix{{0, std::numeric_limits<double>::infinity()}, {0, 0}}),
                    std::invalid_argument);
    INFO("-1e9, the 'large negative number' some code adds instead of -inf, is neither: e^(4 - 1e9) is 0 in "
         "doubles, but a score of 1e9 would undo it, so the book's masks hold exactly 0 or -inf");
    CHECK_THROWS_AS(sa::apply_mask(scaled, sa::Matrix{{0, 0}, {-1e9, 0}}), std::invalid_argument);
}

TEST_CASE("A masked-out score becomes -inf even when it was nan or +inf", "[ch04]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double plus_infinity = std::numeric_limits<double>::infinity();
    const sa::Matrix scores{{1, nan}, {2, plus_infinity}};
    const sa::Matrix masked = sa::apply_mask(scores, sa::causal_mask(2, 2));
    INFO("row 0 cannot see key 1, so its nan must not survive: nan + (-inf) would still be nan");
    CHECK(is_masked_out(masked(0, 1)));
    CHECK(masked(0, 0) == 1.0);
    INFO("row 1 sees both keys, so its +inf is kept for the softmax to handle");
    CHECK(masked(1, 1) == plus_infinity);
    CHECK(masked(1, 0) == 2.0);
}
