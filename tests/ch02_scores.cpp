// Chapter 2, Scores: S = Q·Kᵀ, row i for the query that asks, column j for the key asked about.
#include <catch2/catch.hpp>

#include "hints.hpp"
#include "scores.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using worked::cheese;
using worked::eats;
using worked::mouse;
using worked::printed;  // every score here is a sum of products of small integers, exact in double

namespace {
// sa::scores, with an index outside Q or K named in the hint.
sa::Matrix scores_of(const sa::Matrix& queries, const sa::Matrix& keys)
{
    return hints::reading("scores",
                          {{"Q", &queries, "one row per query", "one column per feature (d_k)"},
                           {"K", &keys, "one row per key (K is not transposed)", "one column per feature (d_k)"}},
                          [&] { return sa::scores(queries, keys); });
}

// The worked example after chapter 1: Q = E·W_Q swaps the features, K = E.
const sa::Matrix mouse_eats_cheese_queries{{0, 2}, {2, 1}, {0, 2}};
const sa::Matrix mouse_eats_cheese_keys{{2, 0}, {1, 2}, {2, 0}};
}  // namespace

TEST_CASE("Scores of the worked example: S = Q·Kᵀ is 3×3", "[ch02]")
{
    const sa::Matrix scores = scores_of(mouse_eats_cheese_queries, mouse_eats_cheese_keys);
    INFO("3 queries against 3 keys give one score per pair: 3×3");
    REQUIRE(scores.rows() == 3);
    REQUIRE(scores.cols() == 3);
    INFO("row Mouse: q_Mouse = [0,2] against k_Mouse = k_Cheese = [2,0] gives 0·2 + 2·0 = 0");
    CHECK_THAT(scores(mouse, mouse), WithinAbs(0.0, printed));
    CHECK_THAT(scores(mouse, cheese), WithinAbs(0.0, printed));
    INFO("row Mouse, column Eats (the chapter's row 1, column 2): q_Mouse · k_Eats = [0,2]·[1,2] = 0·1 + 2·2 = 4");
    CHECK_THAT(scores(mouse, eats), WithinAbs(4.0, printed));
    INFO("row Eats: q_Eats = [2,1] matches every key equally: 2·2 + 1·0 = 4, 2·1 + 1·2 = 4, 2·2 + 1·0 = 4");
    CHECK_THAT(scores(eats, mouse), WithinAbs(4.0, printed));
    CHECK_THAT(scores(eats, eats), WithinAbs(4.0, printed));
    CHECK_THAT(scores(eats, cheese), WithinAbs(4.0, printed));
    INFO("row Cheese: q_Cheese = q_Mouse, so the Cheese row repeats the Mouse row: 0, 4, 0");
    CHECK_THAT(scores(cheese, mouse), WithinAbs(0.0, printed));
    CHECK_THAT(scores(cheese, eats), WithinAbs(4.0, printed));
    CHECK_THAT(scores(cheese, cheese), WithinAbs(0.0, printed));
}

TEST_CASE("Scores: rows are the query that asks, columns the key asked about", "[ch02]")
{
    // Two queries against four keys, d_k = 3. K·Qᵀ instead of Q·Kᵀ would be 4×2, and
    // a K that is not transposed cannot be multiplied with Q at all (3 columns, 4 rows).
    const sa::Matrix queries{{1, 0, 2}, {0, 1, -1}};
    const sa::Matrix keys{{1, 1, 1}, {2, 0, 0}, {0, 3, 1}, {1, -1, 2}};
    const sa::Matrix scores = scores_of(queries, keys);
    INFO("n = 2 queries and m = 4 keys give a 2×4 matrix: one row per query");
    REQUIRE(scores.rows() == 2);
    REQUIRE(scores.cols() == 4);
    INFO("q_1 = [1,0,2]: with k_1 = [1,1,1] 1+0+2 = 3, k_2 = [2,0,0] 2, k_3 = [0,3,1] 0+0+2 = 2, k_4 = [1,-1,2] 1+0+4 = 5");
    CHECK_THAT(scores(0, 0), WithinAbs(3.0, printed));
    CHECK_THAT(scores(0, 1), WithinAbs(2.0, printed));
    CHECK_THAT(scores(0, 2), WithinAbs(2.0, printed));
    CHECK_THAT(scores(0, 3), WithinAbs(5.0, printed));
    INFO("q_2 = [0,1,-1]: with k_1 0+1-1 = 0, k_2 0, k_3 0+3-1 = 2, k_4 0-1-2 = -3");
    CHECK_THAT(scores(1, 0), WithinAbs(0.0, printed));
    CHECK_THAT(scores(1, 1), WithinAbs(0.0, printed));
    CHECK_THAT(scores(1, 2), WithinAbs(2.0, printed));
    CHECK_THAT(scores(1, 3), WithinAbs(-3.0, printed));
}

TEST_CASE("Scores are not symmetric in general: S_ij = q_i·k_j but S_ji = q_j·k_i", "[ch02]")
{
    // Queries and keys of the same tokens differ, so asking and being asked are different questions.
    const sa::Matrix queries{{1, 0}, {0, 1}};
    const sa::Matrix keys{{0, 1}, {0, 2}};
    const sa::Matrix scores = scores_of(queries, keys);
    REQUIRE(scores.rows() == 2);
    REQUIRE(scores.cols() == 2);
    INFO("S_12 = q_1·k_2 = [1,0]·[0,2] = 0, while S_21 = q_2·k_1 = [0,1]·[0,1] = 1");
    CHECK_THAT(scores(0, 1), WithinAbs(0.0, printed));
    CHECK_THAT(scores(1, 0), WithinAbs(1.0, printed));
    INFO("S_22 = q_2·k_2 = [0,1]·[0,2] = 2 and S_11 = q_1·k_1 = [1,0]·[0,1] = 0");
    CHECK_THAT(scores(1, 1), WithinAbs(2.0, printed));
    CHECK_THAT(scores(0, 0), WithinAbs(0.0, printed));
}

TEST_CASE("Scores reject a Q and a K of different widths", "[ch02]")
{
    const sa::Matrix queries{{0, 2}, {2, 1}, {0, 2}};
    const sa::Matrix keys{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
    INFO("a dot product needs q and k of the same length d_k: Q is 3×2, K is 3×4; the message names the operation and both shapes");
    CHECK_THROWS_AS(sa::scores(queries, keys), sa::ShapeError);
    CHECK_THROWS_WITH(sa::scores(queries, keys), Contains("scores") && Contains("Q is 3×2") && Contains("K is 3×4"));
}
