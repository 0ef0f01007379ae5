// Chapter 8, Keys and values are different jobs: the keys decide the weights, the values what is delivered.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "attention.hpp"
#include "attention_weights.hpp"
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

namespace {

// The chapter's example, "Cat chases mouse", written out again here so that the test
// states its own inputs: Cat [2,0], Chases [1,1], Mouse [0,2]; W_Q = I.
const sa::Matrix embeddings{{2, 0}, {1, 1}, {0, 2}};
const sa::Matrix identity{{1, 0}, {0, 1}};
const sa::Matrix w_key{{0, 1}, {1, 0}};         // swaps the two features
const sa::Matrix w_value{{1, 0}, {0, 3}};       // triples the second feature
const sa::Matrix new_w_value{{2, 0}, {0, 1}};   // doubles the first feature instead
const sa::Matrix new_w_key = identity;          // each key is the embedding itself

// The three weights of Cat's row. Cat asks q = [2,0]; against the keys [0,2], [1,1], [2,0]
// it scores 0, 2 and 4, scaled by √2 to 0, √2 and 2√2.
const double e_root2 = std::exp(std::sqrt(2.0));         // ≈ 4.113
const double e_2root2 = worked::e_two_root_two;         // ≈ 16.919
const double total = 1.0 + e_root2 + e_2root2;
const double a = 1.0 / total;       // ≈ 0.045, on the token scored 0
const double b = e_root2 / total;   // ≈ 0.187, on the token scored 2
const double c = e_2root2 / total;  // ≈ 0.768, on the token scored 4

// sa::attention_weights, with an index outside Q, K or M named in the hint.
sa::Matrix weights_of(const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& mask)
{
    return hints::reading("attention_weights",
                          {{"Q", &queries, "one row per query", "one column per feature (d_k)"},
                           {"K", &keys, "one row per key (not transposed)", "one column per feature (d_k)"},
                           {"M", &mask, "one row per query", "one column per key"}},
                          [&] { return sa::attention_weights(queries, keys, mask); });
}

// Without a mask: every query may use every key.
sa::Matrix weights_of(const sa::Matrix& queries, const sa::Matrix& keys)
{
    return weights_of(queries, keys, sa::Matrix(queries.rows(), keys.rows(), 0.0));
}

void check_row(const sa::Matrix& matrix, std::size_t row, std::initializer_list<double> expected, double tolerance)
{
    std::size_t col = 0;
    for (const double value : expected) {
        CHECK_THAT(matrix(row, col), WithinAbs(value, tolerance));
        ++col;
    }
}

}  // namespace

TEST_CASE("The same embedding gets one set of coordinates to be found and another to deliver", "[ch08]")
{
    const sa::Matrix keys = sa::project(embeddings, w_key);
    const sa::Matrix values = sa::project(embeddings, w_value);
    INFO("k = [e1, e2]·W_K = [e2, e1]: Cat [0,2], Chases [1,1], Mouse [2,0]");
    check_row(keys, 0, {0, 2}, printed);
    check_row(keys, 1, {1, 1}, printed);
    check_row(keys, 2, {2, 0}, printed);
    INFO("v = [e1, e2]·W_V = [e1, 3·e2]: Cat [2,0], Chases [1,3], Mouse [0,6]");
    check_row(values, 0, {2, 0}, printed);
    check_row(values, 1, {1, 3}, printed);
    check_row(values, 2, {0, 6}, printed);
    for (std::size_t token = 0; token < 3; ++token) {
        INFO((token == 0 ? "Cat" : token == 1 ? "Chases" : "Mouse") << ": its key and its value differ");
        CHECK_FALSE((keys(token, 0) == values(token, 0) && keys(token, 1) == values(token, 1)));
    }
}

TEST_CASE("Base case: Cat and Mouse find each other, Chases spreads evenly", "[ch08]")
{
    const sa::Matrix queries = sa::project(embeddings, identity);
    const sa::Matrix keys = sa::project(embeddings, w_key);
    const sa::Matrix weights = weights_of(queries, keys);
    INFO("Cat: q = [2,0] scores [0, 2, 4] -> scaled [0, √2, 2√2] -> [1, e^√2, e^2√2]/sum ≈ [0.045, 0.187, 0.768]");
    check_row(weights, 0, {a, b, c}, 1e-12);
    check_row(weights, 0, {0.045, 0.187, 0.768}, printed);
    INFO("Chases: q = [1,1] scores 2 against every key, so 1/3 each");
    check_row(weights, 1, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-12);
    INFO("Mouse: q = [0,2] scores [4, 2, 0], Cat's row reversed");
    check_row(weights, 2, {0.768, 0.187, 0.045}, printed);

    const sa::Matrix outputs = sa::attention(queries, keys, sa::project(embeddings, w_value));
    INFO("Cat = a·[2,0] + b·[1,3] + c·[0,6] = [2a + b, 3b + 6c] ≈ [0.277, 5.168]");
    check_row(outputs, 0, {2 * a + b, 3 * b + 6 * c}, 1e-12);
    check_row(outputs, 0, {0.277, 5.168}, printed);
    INFO("Chases = ([2,0] + [1,3] + [0,6])/3 = [1, 3]");
    check_row(outputs, 1, {1.0, 3.0}, printed);
    INFO("Mouse = c·[2,0] + b·[1,3] + a·[0,6] = [2c + b, 3b + 6a] ≈ [1.723, 0.832]");
    check_row(outputs, 2, {2 * c + b, 3 * b + 6 * a}, 1e-12);
    check_row(outputs, 2, {1.723, 0.832}, printed);
}

TEST_CASE("A new W_V: the weights stay exactly the same, the outputs move", "[ch08]")
{
    const sa::Matrix queries = sa::project(embeddings, identity);
    const sa::Matrix keys = sa::project(embeddings, w_key);
    INFO("the weights are softmax(Q·Kᵀ/√d_k): W_V appears nowhere in them, so Cat's row is still [a, b, c]");
    check_row(weights_of(queries, keys), 0, {a, b, c}, 1e-12);
    const sa::Matrix new_values = sa::project(embeddings, new_w_value);
    INFO("new v = [2·e1, e2]: Cat [4,0], Chases [2,1], Mouse [0,2]");
    check_row(new_values, 0, {4, 0}, printed);
    check_row(new_values, 1, {2, 1}, printed);
    check_row(new_values, 2, {0, 2}, printed);
    const sa::Matrix outputs = sa::attention(queries, keys, new_values);
    INFO("Cat = a·[4,0] + b·[2,1] + c·[0,2] = [4a + 2b, b + 2c] ≈ [0.555, 1.723]");
    check_row(outputs, 0, {4 * a + 2 * b, b + 2 * c}, 1e-12);
    check_row(outputs, 0, {0.555, 1.723}, printed);
    INFO("Chases = ([4,0] + [2,1] + [0,2])/3 = [2, 1]");
    check_row(outputs, 1, {2.0, 1.0}, printed);
    INFO("Mouse = c·[4,0] + b·[2,1] + a·[0,2] = [4c + 2b, b + 2a] ≈ [3.445, 0.277]");
    check_row(outputs, 2, {4 * c + 2 * b, b + 2 * a}, 1e-12);
    check_row(outputs, 2, {3.445, 0.277}, printed);
}

TEST_CASE("A new W_K: the weights move, and with them who gets what", "[ch08]")
{
    const sa::Matrix queries = sa::project(embeddings, identity);
    const sa::Matrix new_keys = sa::project(embeddings, new_w_key);
    const sa::Matrix weights = weights_of(queries, new_keys);
    INFO("with k = e, Cat's q = [2,0] scores [4, 2, 0]: it now looks mostly at itself, [c, b, a]");
    check_row(weights, 0, {0.768, 0.187, 0.045}, printed);
    INFO("Chases still scores 2 everywhere");
    check_row(weights, 1, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-12);
    INFO("Mouse's q = [0,2] scores [0, 2, 4]: [a, b, c]");
    check_row(weights, 2, {0.045, 0.187, 0.768}, printed);
    CHECK_FALSE(weights == weights_of(queries, sa::project(embeddings, w_key)));
    const sa::Matrix outputs = sa::attention(queries, new_keys, sa::project(embeddings, w_value));
    INFO("Cat now gets Mouse's base output: c·[2,0] + b·[1,3] + a·[0,6] = [2c + b, 3b + 6a] ≈ [1.723, 0.832]");
    check_row(outputs, 0, {1.723, 0.832}, printed);
    INFO("Chases is unchanged at [1, 3]");
    check_row(outputs, 1, {1.0, 3.0}, printed);
    INFO("Mouse now gets Cat's base output, [2a + b, 3b + 6c] ≈ [0.277, 5.168]");
    check_row(outputs, 2, {0.277, 5.168}, printed);
}

TEST_CASE("Attention with the identity as values returns the weights themselves", "[ch08]")
{
    const auto seed = GENERATE(range(1, 21));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 1 + static_cast<std::size_t>(generator.next() % 5);
    const std::size_t m = 1 + static_cast<std::size_t>(generator.next() % 5);
    const sa::Matrix queries = sa::random_matrix(n, 3, generator);
    const sa::Matrix keys = sa::random_matrix(m, 3, generator);
    sa::Matrix unit_values(m, m, 0.0);
    for (std::size_t j = 0; j < m; ++j) {
        unit_values(j, j) = 1.0;
    }
    INFO("seed " << seed << ": if value j is the j-th unit vector, output i = sum_j A_ij e_j = row i of A; "
                    "the values only read out the weights that Q and K decided");
    CHECK(sa::attention(queries, keys, unit_values) == weights_of(queries, keys));
}

TEST_CASE("The outputs are linear in the values, whatever the keys decided", "[ch08]")
{
    const auto seed = GENERATE(range(1, 21));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const sa::Matrix queries = sa::random_matrix(4, 2, generator);
    const sa::Matrix keys = sa::random_matrix(5, 2, generator);
    const sa::Matrix first = sa::random_matrix(5, 3, generator);
    const sa::Matrix second = sa::random_matrix(5, 3, generator);
    sa::Matrix sum(5, 3);
    for (std::size_t j = 0; j < 5; ++j) {
        for (std::size_t d = 0; d < 3; ++d) {
            sum(j, d) = first(j, d) + second(j, d);
        }
    }
    const sa::Matrix out_first = sa::attention(queries, keys, first);
    const sa::Matrix out_second = sa::attention(queries, keys, second);
    const sa::Matrix out_sum = sa::attention(queries, keys, sum);
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t d = 0; d < 3; ++d) {
            INFO("seed " << seed << ": the same weights A blend both sets of values, so A·(V1 + V2) = A·V1 + A·V2");
            CHECK_THAT(out_sum(i, d), WithinAbs(out_first(i, d) + out_second(i, d), 1e-12));
        }
    }
}

TEST_CASE("attention_weights is the first four steps, and attention blends V with exactly these weights", "[ch08]")
{
    const auto seed = GENERATE(range(1, 11));
    const bool causal = GENERATE(false, true);
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 1 + static_cast<std::size_t>(generator.next() % 5);
    const std::size_t m = causal ? n : 1 + static_cast<std::size_t>(generator.next() % 5);
    const sa::Matrix queries = sa::random_matrix(n, 3, generator);
    const sa::Matrix keys = sa::random_matrix(m, 3, generator);
    const sa::Matrix values = sa::random_matrix(m, 2, generator);
    const sa::Matrix mask = causal ? sa::causal_mask(n, m) : sa::Matrix(n, m, 0.0);
    const sa::Matrix weights = weights_of(queries, keys, mask);
    INFO("seed " << seed << (causal ? ", causal" : "") << ": Q " << n << "×3, K " << m
                 << "×3, so A = softmax(Q·Kᵀ/√3 + M) is " << n << "×" << m << ", the steps in the order of chapter 7");
    REQUIRE(weights.rows() == n);
    REQUIRE(weights.cols() == m);
    CHECK(weights == sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(queries, keys), 3), mask)));
    INFO("seed " << seed << ": attention(Q, K, V, M) = A·V with the same A, bit for bit; V (" << m
                 << "×2, d_v ≠ d_k) enters only here");
    CHECK(sa::attention(queries, keys, values, mask) == sa::mix(weights, values));
}

TEST_CASE("A W_V chosen for a given output delivers it, and the weights do not move", "[ch08]")
{
    // Cat's weights [a, b, c] are fixed by Q and K. Its output is [a, b, c]·E·W_V =
    // [2a + b, b + 2c]·W_V, so a diagonal W_V = diag(t1/(2a + b), t2/(b + 2c)) delivers any
    // target t = [t1, t2]: here Cat's output is to be [1, 1].
    const sa::Matrix queries = sa::project(embeddings, identity);
    const sa::Matrix keys = sa::project(embeddings, w_key);
    const sa::Matrix weights = weights_of(queries, keys);
    INFO("Cat's row, from Q and K alone: [1, e^√2, e^2√2]/sum ≈ [0.045, 0.187, 0.768]");
    check_row(weights, 0, {a, b, c}, 1e-12);
    const double first = weights(0, 0) * 2 + weights(0, 1);   // Cat's blend of the embeddings' first feature
    const double second = weights(0, 1) + weights(0, 2) * 2;  // and of the second
    const sa::Matrix chosen_w_value{{1.0 / first, 0}, {0, 1.0 / second}};
    const sa::Matrix values = sa::project(embeddings, chosen_w_value);
    INFO("the weights are the same bit for bit: W_V is not an input of attention_weights");
    CHECK(weights_of(queries, keys) == weights);
    const sa::Matrix outputs = sa::attention(queries, keys, values);
    INFO("Cat's output = [2a + b, b + 2c]·diag(1/(2a + b), 1/(b + 2c)) = [1, 1]");
    check_row(outputs, 0, {1.0, 1.0}, 1e-12);
}

TEST_CASE("attention_weights rejects a mask of the wrong shape, and a Q and K of different widths", "[ch08]")
{
    const sa::Matrix queries(3, 2, 1.0);
    const sa::Matrix keys(4, 2, 1.0);
    INFO("3 queries and 4 keys need a 3×4 mask: one row per query, one column per key");
    CHECK_THROWS_AS(sa::attention_weights(queries, keys, sa::Matrix(4, 3, 0.0)), sa::ShapeError);
    CHECK_THROWS_WITH(sa::attention_weights(queries, keys, sa::Matrix(4, 3, 0.0)),
                      Contains("attention_weights") && Contains("mask is 4×3") && Contains("3×4"));
    INFO("a mask wrong in one dimension only is as wrong: 3×3 has the rows but not the columns, 4×4 the columns "
         "but not the rows, and attention_weights must say so itself, before any step runs");
    CHECK_THROWS_WITH(sa::attention_weights(queries, keys, sa::Matrix(3, 3, 0.0)),
                      Contains("attention_weights") && Contains("mask is 3×3") && Contains("3×4"));
    CHECK_THROWS_WITH(sa::attention_weights(queries, keys, sa::Matrix(4, 4, 0.0)),
                      Contains("attention_weights") && Contains("mask is 4×4") && Contains("3×4"));
    INFO("Q is 3×2 but K is 4×3: a query and a key must have the same width d_k to be dotted");
    CHECK_THROWS_AS(sa::attention_weights(queries, sa::Matrix(4, 3, 1.0), sa::Matrix(3, 4, 0.0)), sa::ShapeError);
}
