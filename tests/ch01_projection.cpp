// Chapter 1, Projection: Q = E·W_Q, K = E·W_K, V = E·W_V, tokens as row vectors.
#include <catch2/catch.hpp>

#include "example.hpp"
#include "hints.hpp"
#include "projection.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

// Every number in this chapter is a small integer; a product of integers is exact in
// double, so the tolerance only guards the printing.
using worked::cheese;
using worked::eats;
using worked::mouse;
using worked::printed;

namespace {
// sa::project, with an index outside E or W named in the hint.
sa::Matrix project_of(const sa::Matrix& embeddings, const sa::Matrix& weights)
{
    return hints::reading("project",
                          {{"E", &embeddings, "one row per token", "one column per embedding feature (d_model)"},
                           {"W", &weights, "one row per embedding feature (d_model)", "one column per output feature"}},
                          [&] { return sa::project(embeddings, weights); });
}
}  // namespace

TEST_CASE("Queries: W_Q swaps the two features of each embedding", "[ch01]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix queries = project_of(example.embeddings, example.w_query);
    REQUIRE(queries.rows() == 3);
    REQUIRE(queries.cols() == 2);
    INFO("q_Mouse = [2,0]·W_Q = [2·0 + 0·1, 2·1 + 0·0] = [0, 2]");
    CHECK_THAT(queries(mouse, 0), WithinAbs(0.0, printed));
    CHECK_THAT(queries(mouse, 1), WithinAbs(2.0, printed));
    INFO("q_Eats = [1,2]·W_Q = [1·0 + 2·1, 1·1 + 2·0] = [2, 1]");
    CHECK_THAT(queries(eats, 0), WithinAbs(2.0, printed));
    CHECK_THAT(queries(eats, 1), WithinAbs(1.0, printed));
    INFO("q_Cheese = q_Mouse, because Cheese has the same embedding [2,0]");
    CHECK_THAT(queries(cheese, 0), WithinAbs(0.0, printed));
    CHECK_THAT(queries(cheese, 1), WithinAbs(2.0, printed));
}

TEST_CASE("Keys and values: the identity leaves every embedding as it is", "[ch01]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix keys = project_of(example.embeddings, example.w_key);
    const sa::Matrix values = project_of(example.embeddings, example.w_value);
    REQUIRE(keys.rows() == 3);
    REQUIRE(keys.cols() == 2);
    REQUIRE(values.rows() == 3);
    REQUIRE(values.cols() == 2);
    const double expected[3][2] = {{2, 0}, {1, 2}, {2, 0}};
    for (std::size_t token = 0; token < 3; ++token) {
        for (std::size_t feature = 0; feature < 2; ++feature) {
            INFO("token " << token << ", feature " << feature << ": e·I = e, so k and v equal the embedding");
            CHECK_THAT(keys(token, feature), WithinAbs(expected[token][feature], printed));
            CHECK_THAT(values(token, feature), WithinAbs(expected[token][feature], printed));
        }
    }
}

TEST_CASE("Projection multiplies from the right: n×d_model times d_model×d_out is n×d_out", "[ch01]")
{
    // Two tokens with three features projected to four dimensions: a square-only
    // test would not notice W applied from the left or transposed.
    const sa::Matrix embeddings{{1, 2, 3}, {0, 1, 0}};
    const sa::Matrix weights{{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}};
    const sa::Matrix projected = project_of(embeddings, weights);
    REQUIRE(projected.rows() == 2);
    REQUIRE(projected.cols() == 4);
    INFO("row 0: [1,2,3] picks out each feature in turn, then their sum 1+2+3 = 6");
    CHECK_THAT(projected(0, 0), WithinAbs(1.0, printed));
    CHECK_THAT(projected(0, 1), WithinAbs(2.0, printed));
    CHECK_THAT(projected(0, 2), WithinAbs(3.0, printed));
    CHECK_THAT(projected(0, 3), WithinAbs(6.0, printed));
    INFO("row 1: [0,1,0] picks out column 2 of every output: [0, 1, 0, 1]");
    CHECK_THAT(projected(1, 0), WithinAbs(0.0, printed));
    CHECK_THAT(projected(1, 1), WithinAbs(1.0, printed));
    CHECK_THAT(projected(1, 2), WithinAbs(0.0, printed));
    CHECK_THAT(projected(1, 3), WithinAbs(1.0, printed));
}

TEST_CASE("Projection rejects a W without one row per embedding feature", "[ch01]")
{
    const sa::Matrix embeddings{{2, 0}, {1, 2}, {2, 0}};
    const sa::Matrix three_rows{{1, 0, 0}, {0, 1, 0}, {1, 1, 1}};
    INFO("E is 3×2, so W needs 2 rows, not 3; the message names the operation and both shapes");
    CHECK_THROWS_AS(project_of(embeddings, three_rows), sa::ShapeError);
    CHECK_THROWS_WITH(project_of(embeddings, three_rows), Contains("project") && Contains("E is 3×2") && Contains("W is 3×3"));
}
