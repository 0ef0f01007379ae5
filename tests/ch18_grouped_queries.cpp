// Chapter 18, Grouped queries: h query heads share h_kv key/value heads; its backward; the KV cache.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "attention.hpp"
#include "circuits.hpp"
#include "cli.hpp"
#include "cross_entropy.hpp"
#include "example.hpp"
#include "generation.hpp"
#include "gradient_check.hpp"
#include "grouped_query.hpp"
#include "helpers.hpp"
#include "language_model.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "safetensors.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using helpers::below;
using helpers::to_eigen;

namespace {

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;
constexpr double infinity = std::numeric_limits<double>::infinity();

// The chapter's worked example, written out here so that the test does not read the program.
const sa::Matrix embeddings{{2, 0}, {1, 2}, {2, 0}};     // Mouse, Eats, Cheese
const sa::Matrix w_query{{0, 1, 1, 0}, {1, 0, 0, 1}};    // query head 0 swaps the features, head 1 keeps them
const sa::Matrix w_out{{1, 0}, {0, 1}, {1, 0}, {0, 1}};  // adds the two query heads' outputs

sa::Matrix zeros(std::size_t rows, std::size_t cols)
{
    return sa::Matrix(rows, cols, 0.0);
}

// An independent reference written from the formula with Eigen's block operations: query head a
// reads columns [a·w, (a+1)·w) of Q and the columns of key/value head b = a / (h/h_kv) of K and V.
Eigen::MatrixXd reference_grouped(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v,
                                  const Eigen::MatrixXd& mask, Eigen::Index heads, Eigen::Index kv_heads,
                                  const Eigen::MatrixXd& w_o)
{
    const Eigen::Index width = q.cols() / heads;
    const Eigen::Index value_width = v.cols() / kv_heads;
    Eigen::MatrixXd joined = Eigen::MatrixXd::Zero(q.rows(), heads * value_width);
    for (Eigen::Index a = 0; a < heads; ++a) {
        const Eigen::Index b = a / (heads / kv_heads);
        const Eigen::MatrixXd scaled = q.middleCols(a * width, width) * k.middleCols(b * width, width).transpose() /
                                           std::sqrt(static_cast<double>(width)) +
                                       mask;
        Eigen::MatrixXd weights = Eigen::MatrixXd::Zero(scaled.rows(), scaled.cols());
        for (Eigen::Index i = 0; i < scaled.rows(); ++i) {
            const double row_max = scaled.row(i).maxCoeff();
            if (row_max == -infinity) {
                continue;  // no key to use: zero weights
            }
            const Eigen::ArrayXXd shifted = (scaled.row(i).array() - row_max).exp();
            weights.row(i) = (shifted / shifted.sum()).matrix();
        }
        joined.middleCols(a * value_width, value_width) = weights * v.middleCols(b * value_width, value_width);
    }
    return joined * w_o;
}

// Random shapes for h query heads and h_kv key/value heads: n ≠ m and w ≠ w_v in general.
struct Shapes {
    std::size_t n, m, heads, kv_heads, width, value_width, d_out;
};

Shapes random_shapes(sa::SplitMix64& generator, bool causal)
{
    const std::vector<std::size_t> divisors_of_12 = {1, 2, 3, 4, 6, 12};
    Shapes shapes{};
    shapes.n = 1 + below(generator, 5);
    shapes.m = causal ? shapes.n : 1 + below(generator, 5);
    shapes.heads = std::vector<std::size_t>{1, 2, 4, 6}[below(generator, 4)];
    do {
        shapes.kv_heads = divisors_of_12[below(generator, divisors_of_12.size())];
    } while (shapes.heads % shapes.kv_heads != 0);
    shapes.width = 1 + below(generator, 3);
    shapes.value_width = 1 + below(generator, 3);
    shapes.d_out = 1 + below(generator, 3);
    return shapes;
}

struct GroupedInputs {
    sa::Matrix queries, keys, values, mask, w_out;
};

GroupedInputs random_grouped(sa::SplitMix64& generator, const Shapes& s, bool causal)
{
    GroupedInputs inputs;
    inputs.queries = sa::random_matrix(s.n, s.heads * s.width, generator);
    inputs.keys = sa::random_matrix(s.m, s.kv_heads * s.width, generator);
    inputs.values = sa::random_matrix(s.m, s.kv_heads * s.value_width, generator);
    inputs.mask = causal ? sa::causal_mask(s.n, s.m) : zeros(s.n, s.m);
    inputs.w_out = sa::random_matrix(s.heads * s.value_width, s.d_out, generator);
    return inputs;
}

double largest_difference(const sa::Matrix& got, const Eigen::MatrixXd& expected)
{
    return (to_eigen(got) - expected).cwiseAbs().maxCoeff();
}

std::string describe(const Shapes& s)
{
    return fmt::format("n = {}, m = {}, h = {}, h_kv = {}, head width {}, value width {}, d_out = {}", s.n, s.m,
                       s.heads, s.kv_heads, s.width, s.value_width, s.d_out);
}

}  // namespace

TEST_CASE("Query head a reads key/value head a / (h/h_kv): groups of consecutive query heads", "[ch18]")
{
    INFO("h = 4, h_kv = 2: heads 0 and 1 form group 0, heads 2 and 3 group 1");
    CHECK(sa::kv_head_of(0, 4, 2) == 0);
    CHECK(sa::kv_head_of(1, 4, 2) == 0);
    CHECK(sa::kv_head_of(2, 4, 2) == 1);
    CHECK(sa::kv_head_of(3, 4, 2) == 1);
    INFO("h_kv = h: each query head its own; h_kv = 1: all read head 0");
    CHECK(sa::kv_head_of(3, 4, 4) == 3);
    CHECK(sa::kv_head_of(3, 4, 1) == 0);
    INFO("Llama 2 70B: 64 query heads in 8 groups of 8, so query head 17 reads key/value head 2");
    CHECK(sa::kv_head_of(17, 64, 8) == 2);
    CHECK_THROWS_AS(sa::kv_head_of(4, 4, 2), std::invalid_argument);
}

TEST_CASE("repeat_kv_heads copies each key/value head once per query head of its group", "[ch18]")
{
    // Two heads of width 2: head 0 holds 1, 2 in its columns, head 1 holds 3, 4 (row r adds 10·r).
    const sa::Matrix keys{{1, 2, 3, 4}, {11, 12, 13, 14}};
    const sa::Matrix repeated = sa::repeat_kv_heads(keys, 2, 4);
    INFO("h = 4, h_kv = 2: [head 0 | head 0 | head 1 | head 1], every row with its token");
    CHECK(sa::identical(repeated, sa::Matrix{{1, 2, 1, 2, 3, 4, 3, 4}, {11, 12, 11, 12, 13, 14, 13, 14}}));
    INFO("h_kv = h copies nothing twice: the matrix as it is");
    CHECK(sa::identical(sa::repeat_kv_heads(keys, 2, 2), keys));
    INFO("h_kv = 1: the whole matrix is one head, repeated h times");
    CHECK(sa::identical(sa::repeat_kv_heads(sa::Matrix{{1, 2}}, 1, 3), sa::Matrix{{1, 2, 1, 2, 1, 2}}));
    INFO("the repeat is PyTorch's repeat_interleave over the heads (each head's copies side by side), not repeat, "
         "which would give [head 0 | head 1 | head 0 | head 1]");
    CHECK_FALSE(sa::identical(repeated, sa::Matrix{{1, 2, 3, 4, 1, 2, 3, 4}, {11, 12, 13, 14, 11, 12, 13, 14}}));
}

TEST_CASE("sum_kv_heads adds each group's copies: the backward of repeat_kv_heads", "[ch18]")
{
    const sa::Matrix gradient{{1, 2, 3, 4, 5, 6, 7, 8}};  // four query heads of width 2
    INFO("h = 4, h_kv = 2: head 0 gets [1 + 3, 2 + 4], head 1 gets [5 + 7, 6 + 8]");
    CHECK(sa::identical(sa::sum_kv_heads(gradient, 2, 4), sa::Matrix{{4, 6, 12, 14}}));
    INFO("h_kv = 1: all four added, [1 + 3 + 5 + 7, 2 + 4 + 6 + 8]");
    CHECK(sa::identical(sa::sum_kv_heads(gradient, 1, 4), sa::Matrix{{16, 20}}));
    // The adjoint: <repeat(x), y> = <x, sum(y)> for every x and y, which is what makes it the backward.
    sa::SplitMix64 generator(18);
    const sa::Matrix x = sa::random_matrix(3, 6, generator);   // h_kv = 2 heads of width 3
    const sa::Matrix y = sa::random_matrix(3, 18, generator);  // h = 6 heads of width 3
    const sa::Matrix repeated = sa::repeat_kv_heads(x, 2, 6);
    const sa::Matrix summed = sa::sum_kv_heads(y, 2, 6);
    double left = 0.0;
    double right = 0.0;
    for (std::size_t r = 0; r < 3; ++r) {
        for (std::size_t c = 0; c < 18; ++c) {
            left += repeated(r, c) * y(r, c);
        }
        for (std::size_t c = 0; c < 6; ++c) {
            right += x(r, c) * summed(r, c);
        }
    }
    INFO("<repeat(x), y> = <x, sum(y)>: each entry of x meets the sum of its copies' partners");
    CHECK_THAT(left, WithinAbs(right, 1e-12));
}

TEST_CASE("The worked example: two query heads share one key/value head, K = V = E", "[ch18]")
{
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const sa::Matrix& keys = embeddings;    // W_K = I
    const sa::Matrix& values = embeddings;  // W_V = I
    const double root2 = std::sqrt(2.0);
    const sa::Matrix outputs = sa::grouped_query_attention(queries, keys, values, zeros(3, 3), 2, 1, w_out);
    // Query head 0 is chapter 7's head: Mouse's weights [0.053, 0.894, 0.053], its output [1.106, 1.789].
    const double eats_weight = std::exp(2 * root2) / (2 + std::exp(2 * root2));
    const double head0_mouse_f1 = 2 * (1 - eats_weight) + eats_weight;  // 2·0.053·2 + 0.894·1
    const double head0_mouse_f2 = 2 * eats_weight;
    CHECK_THAT(head0_mouse_f1, WithinAbs(1.106, printed));
    CHECK_THAT(head0_mouse_f2, WithinAbs(1.789, printed));
    // Query head 1 reads E with q = e: chapter 9's head 1 weights, Mouse [0.446, 0.108, 0.446].
    const double a = 1.0 / (2.0 + std::exp(-root2));
    const double head1_mouse_f1 = 4 * a + (1 - 2 * a);  // 0.446·2 + 0.108·1 + 0.446·2
    const double head1_mouse_f2 = 2 * (1 - 2 * a);      // 0.108·2
    INFO("query head 1 reads the shared V = E, not chapter 9's swapped values: its Mouse row is chapter 9's head 1 row "
         "[0.217, 1.892] with the features back in order, [1.892, 0.217]");
    CHECK_THAT(head1_mouse_f1, WithinAbs(1.892, printed));
    CHECK_THAT(head1_mouse_f2, WithinAbs(0.217, printed));
    INFO("W_O = [I; I] adds the heads: Mouse [1.106 + 1.892, 1.789 + 0.217] ≈ [2.997, 2.005]");
    CHECK_THAT(outputs(0, 0), WithinAbs(head0_mouse_f1 + head1_mouse_f1, 1e-12));
    CHECK_THAT(outputs(0, 1), WithinAbs(head0_mouse_f2 + head1_mouse_f2, 1e-12));
    CHECK_THAT(outputs(0, 0), WithinAbs(2.997, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(2.005, printed));
    // Eats: query head 0 gives 1/3 each, so the mean of E, [5/3, 2/3]; head 1 its own row 0.807, others 0.097.
    const double self = 1.0 / (1.0 + 2.0 * std::exp(-3.0 / root2));
    const double other = (1.0 - self) / 2.0;
    INFO("Eats: [5/3, 2/3] + [4·0.097 + 0.807, 2·0.807] ≈ [1.667 + 1.193, 0.667 + 1.613] = [2.860, 2.280]");
    CHECK_THAT(4 * other + self, WithinAbs(1.193, printed));
    CHECK_THAT(2 * self, WithinAbs(1.613, printed));
    CHECK_THAT(outputs(1, 0), WithinAbs(5.0 / 3.0 + 4 * other + self, 1e-12));
    CHECK_THAT(outputs(1, 1), WithinAbs(2.0 / 3.0 + 2 * self, 1e-12));
    CHECK_THAT(outputs(1, 0), WithinAbs(2.860, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(2.280, printed));
    INFO("Cheese has Mouse's embedding, so Mouse's outputs");
    CHECK(outputs(2, 0) == outputs(0, 0));
    CHECK(outputs(2, 1) == outputs(0, 1));
    INFO("the program's weights: query head 1, Eats row [0.097, 0.807, 0.097]; head 0, Eats 1/3 each");
    const std::vector<sa::Matrix> weights = sa::head_weights(queries, sa::repeat_kv_heads(keys, 1, 2), zeros(3, 3), 2);
    CHECK_THAT(weights[1](1, 1), WithinAbs(0.807, printed));
    CHECK_THAT(weights[1](1, 0), WithinAbs(0.097, printed));
    CHECK_THAT(weights[1](0, 0), WithinAbs(0.446, printed));
    CHECK_THAT(weights[1](0, 1), WithinAbs(0.108, printed));
    CHECK_THAT(weights[0](1, 2), WithinAbs(1.0 / 3.0, 1e-12));
    CHECK_THAT(weights[0](0, 0), WithinAbs(0.053, printed));
}

TEST_CASE("Grouped-query attention is chapter 9's heads on K and V repeated, bit for bit", "[ch18]")
{
    const auto seed = GENERATE(range(1, 31));
    const bool causal = GENERATE(false, true);
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const Shapes shapes = random_shapes(generator, causal);
    const GroupedInputs in = random_grouped(generator, shapes, causal);
    const sa::Matrix grouped =
        sa::grouped_query_attention(in.queries, in.keys, in.values, in.mask, shapes.heads, shapes.kv_heads, in.w_out);
    INFO("seed " << seed << ", " << describe(shapes)
                 << ": each query head runs chapter 7 on the same numbers whether its key/value head is shared or "
                    "copied, so the outputs agree to the last bit");
    CHECK(sa::identical(grouped, sa::multi_head_attention(in.queries,
                                                          sa::repeat_kv_heads(in.keys, shapes.kv_heads, shapes.heads),
                                                          sa::repeat_kv_heads(in.values, shapes.kv_heads, shapes.heads),
                                                          in.mask, shapes.heads, in.w_out)));
    INFO("and both agree with a reference written from the formula with Eigen");
    const Eigen::MatrixXd expected = reference_grouped(to_eigen(in.queries), to_eigen(in.keys), to_eigen(in.values),
                                                       to_eigen(in.mask), static_cast<Eigen::Index>(shapes.heads),
                                                       static_cast<Eigen::Index>(shapes.kv_heads), to_eigen(in.w_out));
    CHECK(largest_difference(grouped, expected) <= 1e-12);
}

TEST_CASE("With h_kv = h it is chapter 9's multi-head attention: chapter 9's worked example", "[ch18]")
{
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const sa::Matrix keys = sa::project(embeddings, sa::Matrix{{1, 0, 1, 0}, {0, 1, 0, 1}});    // chapter 9's W_K
    const sa::Matrix values = sa::project(embeddings, sa::Matrix{{1, 0, 0, 1}, {0, 1, 1, 0}});  // chapter 9's W_V
    const sa::Matrix grouped = sa::grouped_query_attention(queries, keys, values, zeros(3, 3), 2, 2, w_out);
    INFO("two key/value heads for two query heads: each its own, as in chapter 9, bit for bit");
    CHECK(sa::identical(grouped, sa::multi_head_attention(queries, keys, values, zeros(3, 3), 2, w_out)));
    INFO("chapter 9's printed outputs: Mouse [1.322, 3.680], Eats [3.280, 1.860]");
    CHECK_THAT(grouped(0, 0), WithinAbs(1.322, printed));
    CHECK_THAT(grouped(0, 1), WithinAbs(3.680, printed));
    CHECK_THAT(grouped(1, 0), WithinAbs(3.280, printed));
    CHECK_THAT(grouped(1, 1), WithinAbs(1.860, printed));
    INFO("and on random inputs of every shape, h_kv = h is multi_head_attention bit for bit");
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        sa::SplitMix64 generator(seed);
        Shapes shapes = random_shapes(generator, false);
        shapes.kv_heads = shapes.heads;
        shapes.value_width = shapes.width;  // chapter 9 splits V into heads as it splits Q
        const GroupedInputs in = random_grouped(generator, shapes, false);
        INFO("seed " << seed << ", " << describe(shapes));
        CHECK(sa::identical(
            sa::grouped_query_attention(in.queries, in.keys, in.values, in.mask, shapes.heads, shapes.heads, in.w_out),
            sa::multi_head_attention(in.queries, in.keys, in.values, in.mask, shapes.heads, in.w_out)));
    }
}

TEST_CASE("Sharing by hand: with every query 0, each head averages its group's values", "[ch18]")
{
    // The program's case: h = 4, h_kv = 2, V = [E | E with its features reversed], W_O = I.
    const sa::Matrix values{{2, 0, 0, 2}, {1, 2, 2, 1}, {2, 0, 0, 2}};
    const sa::Matrix heads =
        sa::grouped_query_attention(zeros(3, 4), zeros(3, 2), values, zeros(3, 3), 4, 2, sa::identity(8));
    INFO("every score is 0, so every weight is 1/3: heads 0 and 1 give the mean of E, (2 + 1 + 2)/3 = 5/3 and (0 + 2 + "
         "0)/3 = 2/3; heads 2 and 3 the mean of E reversed, [2/3, 5/3], in every row");
    for (std::size_t row = 0; row < 3; ++row) {
        for (std::size_t head = 0; head < 4; ++head) {
            const bool group0 = head < 2;
            CHECK_THAT(heads(row, 2 * head), WithinAbs(group0 ? 5.0 / 3.0 : 2.0 / 3.0, 1e-12));
            CHECK_THAT(heads(row, 2 * head + 1), WithinAbs(group0 ? 2.0 / 3.0 : 5.0 / 3.0, 1e-12));
        }
    }
    CHECK_THAT(heads(0, 0), WithinAbs(1.667, printed));
    CHECK_THAT(heads(0, 1), WithinAbs(0.667, printed));
    INFO("with the causal mask, row i averages rows 0 to i: Eats [(2 + 1)/2, (0 + 2)/2] = [1.5, 1] in heads 0 and 1, "
         "Mouse only itself, [2, 0]");
    const sa::Matrix causal =
        sa::grouped_query_attention(zeros(3, 4), zeros(3, 2), values, sa::causal_mask(3, 3), 4, 2, sa::identity(8));
    CHECK_THAT(causal(0, 0), WithinAbs(2.0, 1e-12));
    CHECK_THAT(causal(0, 3), WithinAbs(0.0, 1e-12));
    CHECK_THAT(causal(1, 2), WithinAbs(1.5, 1e-12));
    CHECK_THAT(causal(1, 7), WithinAbs(1.5, 1e-12));  // head 3, feature 2: E reversed, (2 + 1)/2
}

TEST_CASE("A fully masked row gives zeros in every query head, never NaN", "[ch18]")
{
    sa::Matrix mask = zeros(2, 3);
    for (std::size_t j = 0; j < 3; ++j) {
        mask(1, j) = -infinity;  // the second query may see no key
    }
    sa::SplitMix64 generator(7);
    const sa::Matrix queries = sa::random_matrix(2, 4, generator);
    const sa::Matrix keys = sa::random_matrix(3, 2, generator);
    const sa::Matrix values = sa::random_matrix(3, 2, generator);
    const sa::Matrix out = sa::grouped_query_attention(queries, keys, values, mask, 2, 1, sa::identity(4));
    INFO("attention (chapter 7) gives an all-zero row for a row with no key, in each query head");
    for (std::size_t c = 0; c < 4; ++c) {
        CHECK(out(1, c) == 0.0);
    }
}

TEST_CASE("Backward: a shared head's gradient is the sum over its query heads, as in the repeated form", "[ch18]")
{
    const auto seed = GENERATE(range(1, 21));
    const bool causal = GENERATE(false, true);
    sa::SplitMix64 generator(static_cast<std::uint64_t>(100 + seed));
    const Shapes shapes = random_shapes(generator, causal);
    const GroupedInputs in = random_grouped(generator, shapes, causal);
    const sa::Matrix d_outputs = sa::random_matrix(shapes.n, shapes.d_out, generator);
    const sa::MultiHeadGrads grouped = sa::grouped_query_backward(in.queries, in.keys, in.values, in.mask, shapes.heads,
                                                                  shapes.kv_heads, in.w_out, d_outputs);
    const sa::MultiHeadGrads repeated = sa::multi_head_backward(
        in.queries, sa::repeat_kv_heads(in.keys, shapes.kv_heads, shapes.heads),
        sa::repeat_kv_heads(in.values, shapes.kv_heads, shapes.heads), in.mask, shapes.heads, in.w_out, d_outputs);
    INFO("seed " << seed << ", " << describe(shapes)
                 << ": the repeat copies K and V, so its backward adds the copies' gradients; the same numbers are "
                    "added in the same order (query head by query head, from 0), so bit for bit");
    CHECK(sa::identical(grouped.d_keys, sa::sum_kv_heads(repeated.d_keys, shapes.kv_heads, shapes.heads)));
    CHECK(sa::identical(grouped.d_values, sa::sum_kv_heads(repeated.d_values, shapes.kv_heads, shapes.heads)));
    INFO("dQ and dW_O do not pass through the sharing: the same as chapter 14's");
    CHECK(sa::identical(grouped.d_queries, repeated.d_queries));
    CHECK(sa::identical(grouped.d_w_out, repeated.d_w_out));
    CHECK(grouped.d_keys.cols() == in.keys.cols());
    CHECK(grouped.d_values.cols() == in.values.cols());
}

TEST_CASE("Backward: grouped_query_backward agrees with central differences", "[ch18]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(200 + seed));
    const bool causal = seed % 2 == 0;
    const Shapes shapes = random_shapes(generator, causal);
    const GroupedInputs in = random_grouped(generator, shapes, causal);
    const sa::Matrix d_outputs = sa::random_matrix(shapes.n, shapes.d_out, generator);
    const sa::MultiHeadGrads grads = sa::grouped_query_backward(in.queries, in.keys, in.values, in.mask, shapes.heads,
                                                                shapes.kv_heads, in.w_out, d_outputs);
    const auto loss = [&](const sa::Matrix& q, const sa::Matrix& k, const sa::Matrix& v, const sa::Matrix& w_o) {
        return sa::upstream_loss(sa::grouped_query_attention(q, k, v, in.mask, shapes.heads, shapes.kv_heads, w_o),
                                 d_outputs);
    };
    constexpr double step = 1e-5;
    // Entries of size 1 and a loss of a few terms of size 1: the central difference is off by about
    // h²/6 ≈ 2e-11 from the curvature and ε/h ≈ 2e-11 from rounding, far below 1e-7 of the largest entry.
    INFO("seed " << seed << ", " << describe(shapes) << ": dK of a shared head must hold every query head's share");
    CHECK(sa::relative_difference(
              grads.d_keys,
              sa::numeric_gradient([&](const sa::Matrix& x) { return loss(in.queries, x, in.values, in.w_out); },
                                   in.keys, step)) < 1e-7);
    CHECK(sa::relative_difference(
              grads.d_values,
              sa::numeric_gradient([&](const sa::Matrix& x) { return loss(in.queries, in.keys, x, in.w_out); },
                                   in.values, step)) < 1e-7);
    CHECK(sa::relative_difference(
              grads.d_queries,
              sa::numeric_gradient([&](const sa::Matrix& x) { return loss(x, in.keys, in.values, in.w_out); },
                                   in.queries, step)) < 1e-7);
    CHECK(sa::relative_difference(
              grads.d_w_out,
              sa::numeric_gradient([&](const sa::Matrix& x) { return loss(in.queries, in.keys, in.values, x); },
                                   in.w_out, step)) < 1e-7);
}

TEST_CASE("Backward on the worked example: dV adds the weights' columns of both query heads", "[ch18]")
{
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const sa::Matrix d_outputs(3, 2, 1.0);  // dY = 1, so each head's dO = dY·W_Oᵀ is 1 too
    const sa::MultiHeadGrads grads =
        sa::grouped_query_backward(queries, embeddings, embeddings, zeros(3, 3), 2, 1, w_out, d_outputs);
    const std::vector<sa::Matrix> weights =
        sa::head_weights(queries, sa::repeat_kv_heads(embeddings, 1, 2), zeros(3, 3), 2);
    // dV = Σ_a A_aᵀ·dO_a with dO_a = 1: row j, either feature, is the sum of column j of A_0 and of A_1.
    const double root2 = std::sqrt(2.0);
    const double eats_weight = std::exp(2 * root2) / (2 + std::exp(2 * root2));
    const double head0_mouse = (1 - eats_weight) / 2 + 1.0 / 3.0 + (1 - eats_weight) / 2;  // 0.053 + 1/3 + 0.053
    const double head0_eats = 2 * eats_weight + 1.0 / 3.0;                                 // 0.894 + 1/3 + 0.894
    const double a = 1.0 / (2.0 + std::exp(-root2));
    const double self = 1.0 / (1.0 + 2.0 * std::exp(-3.0 / root2));
    const double head1_mouse = 2 * a + (1 - self) / 2;  // 0.446 + 0.097 + 0.446
    const double head1_eats = 2 * (1 - 2 * a) + self;   // 0.108 + 0.807 + 0.108
    INFO("query head 0's share: Mouse 0.053 + 0.333 + 0.053 ≈ 0.439, Eats 0.894 + 0.333 + 0.894 ≈ 2.122");
    CHECK_THAT(head0_mouse, WithinAbs(0.439, printed));
    CHECK_THAT(head0_eats, WithinAbs(2.122, printed));
    INFO("query head 1's share: Mouse 0.446 + 0.097 + 0.446 ≈ 0.988, Eats 0.108 + 0.807 + 0.108 ≈ 1.023");
    CHECK_THAT(head1_mouse, WithinAbs(0.988, printed));
    CHECK_THAT(head1_eats, WithinAbs(1.023, printed));
    INFO("the shared head gets both: Mouse 0.439 + 0.988 ≈ 1.427, Eats 2.122 + 1.023 ≈ 3.145, Cheese as Mouse");
    CHECK_THAT(grads.d_values(0, 0), WithinAbs(head0_mouse + head1_mouse, 1e-12));
    CHECK_THAT(grads.d_values(0, 1), WithinAbs(head0_mouse + head1_mouse, 1e-12));
    CHECK_THAT(grads.d_values(1, 0), WithinAbs(head0_eats + head1_eats, 1e-12));
    CHECK_THAT(grads.d_values(0, 0), WithinAbs(1.427, printed));
    CHECK_THAT(grads.d_values(1, 0), WithinAbs(3.145, printed));
    CHECK(grads.d_values(2, 0) == grads.d_values(0, 0));
    INFO("the weights the shares come from are the program's: their columns add to the same");
    CHECK_THAT(weights[0](0, 0) + weights[0](1, 0) + weights[0](2, 0), WithinAbs(head0_mouse, 1e-12));
    CHECK_THAT(weights[1](0, 1) + weights[1](1, 1) + weights[1](2, 1), WithinAbs(head1_eats, 1e-12));
}

// dK of one query head written from the formulas of chapter 11 with Eigen: dA = dO·V_bᵀ,
// dS' = A ∘ (dA − rowsum(dA ∘ A)), dK^(a) = dS'ᵀ·Q_a / √w.
Eigen::MatrixXd reference_d_keys(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v,
                                 const Eigen::MatrixXd& d_o)
{
    const double root = std::sqrt(static_cast<double>(q.cols()));
    Eigen::MatrixXd scaled = q * k.transpose() / root;
    Eigen::MatrixXd weights(scaled.rows(), scaled.cols());
    for (Eigen::Index i = 0; i < scaled.rows(); ++i) {
        const Eigen::ArrayXXd shifted = (scaled.row(i).array() - scaled.row(i).maxCoeff()).exp();
        weights.row(i) = (shifted / shifted.sum()).matrix();
    }
    const Eigen::MatrixXd d_weights = d_o * v.transpose();
    Eigen::MatrixXd d_scores = weights.cwiseProduct(d_weights);
    for (Eigen::Index i = 0; i < d_scores.rows(); ++i) {
        d_scores.row(i) -= weights.row(i) * d_scores.row(i).sum();
    }
    return d_scores.transpose() * q / root;
}

TEST_CASE("Backward on the worked example: dK of the shared head, from the softmax's backward", "[ch18]")
{
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const Eigen::MatrixXd q = to_eigen(queries);
    const Eigen::MatrixXd e = to_eigen(embeddings);
    const Eigen::MatrixXd ones = Eigen::MatrixXd::Ones(3, 2);  // dY = 1 and W_O = [I; I]: each head's dO is 1
    const sa::MultiHeadGrads grads =
        sa::grouped_query_backward(queries, embeddings, embeddings, zeros(3, 3), 2, 1, w_out, sa::Matrix(3, 2, 1.0));
    const Eigen::MatrixXd expected =
        reference_d_keys(q.leftCols(2), e, e, ones) + reference_d_keys(q.rightCols(2), e, e, ones);
    INFO("dK of the shared head = query head 0's share + query head 1's, each from chapter 11's formulas");
    CHECK(largest_difference(grads.d_keys, expected) <= 1e-12);
    INFO("the program's Mouse row [-0.349, -0.323]; each row of dS' sums to 0, so the rows of dK add to 0, and with "
         "Cheese = Mouse, Eats is −2 times Mouse: [0.698, 0.645]");
    CHECK_THAT(grads.d_keys(0, 0), WithinAbs(-0.349, printed));
    CHECK_THAT(grads.d_keys(0, 1), WithinAbs(-0.323, printed));
    CHECK_THAT(grads.d_keys(1, 0), WithinAbs(-2 * grads.d_keys(0, 0), 1e-12));
    CHECK_THAT(grads.d_keys(1, 1), WithinAbs(-2 * grads.d_keys(0, 1), 1e-12));
    CHECK_THAT(grads.d_keys(1, 0), WithinAbs(0.698, printed));
    CHECK_THAT(grads.d_keys(1, 1), WithinAbs(0.645, printed));
    CHECK(grads.d_keys(2, 0) == grads.d_keys(0, 0));
    // The try-it command: chapter 9's W_K and W_V, h_kv = h = 2, so each key head has one query head.
    const sa::Matrix keys = sa::project(embeddings, sa::Matrix{{1, 0, 1, 0}, {0, 1, 0, 1}});
    const sa::Matrix values = sa::project(embeddings, sa::Matrix{{1, 0, 0, 1}, {0, 1, 1, 0}});
    const sa::MultiHeadGrads own =
        sa::grouped_query_backward(queries, keys, values, zeros(3, 3), 2, 2, w_out, sa::Matrix(3, 2, 1.0));
    const Eigen::MatrixXd v = to_eigen(values);
    INFO("try-it: key head 0 gets query head 0's share alone, [-0.157, -0.212] for Mouse; key head 1 query head "
         "1's, [-0.192, -0.110]; Eats −2 times Mouse in each");
    CHECK(largest_difference(own.d_keys,
                             (Eigen::MatrixXd(3, 4) << reference_d_keys(q.leftCols(2), e, v.leftCols(2), ones),
                              reference_d_keys(q.rightCols(2), e, v.rightCols(2), ones))
                                 .finished()) <= 1e-12);
    CHECK_THAT(own.d_keys(0, 0), WithinAbs(-0.157, printed));
    CHECK_THAT(own.d_keys(0, 1), WithinAbs(-0.212, printed));
    CHECK_THAT(own.d_keys(0, 2), WithinAbs(-0.192, printed));
    CHECK_THAT(own.d_keys(0, 3), WithinAbs(-0.110, printed));
    CHECK_THAT(own.d_keys(1, 2), WithinAbs(0.384, printed));
    CHECK_THAT(own.d_keys(1, 3), WithinAbs(0.221, printed));
    INFO("try-it dV: each head's own column sums of its weights, 0.439 and 2.122 (head 0), 0.988 and 1.023 (head 1)");
    CHECK_THAT(own.d_values(0, 0), WithinAbs(0.439, printed));
    CHECK_THAT(own.d_values(1, 1), WithinAbs(2.122, printed));
    CHECK_THAT(own.d_values(0, 2), WithinAbs(0.988, printed));
    CHECK_THAT(own.d_values(1, 3), WithinAbs(1.023, printed));
}

TEST_CASE("The KV cache in bytes: 2·n_layers·h_kv·w·t·σ, whatever h", "[ch18]")
{
    INFO("the book's model (chapter 14): 1 layer, h = 4 heads of w = 16, F64 (σ = 8): 2·1·4·16·8 = 1024 bytes a "
         "position, and 64 positions 65536 bytes, chapter 16's cache at its fullest");
    CHECK(sa::kv_cache_bytes(1, 4, 16, 1, 8) == 1024);
    CHECK(sa::kv_cache_bytes(1, 4, 16, 64, 8) == 65536);
    INFO("one key/value head (h_kv = h/4 = 1): a quarter, 256 and 16384");
    CHECK(sa::kv_cache_bytes(1, 1, 16, 1, 8) == 256);
    CHECK(sa::kv_cache_bytes(1, 1, 16, 64, 8) == 16384);
    INFO("chapter 15's two layers: twice each, 2048 and 131072; 512 and 32768");
    CHECK(sa::kv_cache_bytes(2, 4, 16, 1, 8) == 2048);
    CHECK(sa::kv_cache_bytes(2, 4, 16, 64, 8) == 131072);
    CHECK(sa::kv_cache_bytes(2, 1, 16, 1, 8) == 512);
    CHECK(sa::kv_cache_bytes(2, 1, 16, 64, 8) == 32768);
    INFO("Llama 2 70B: 80 layers, heads of 128, 2 bytes a number: 2·80·128·2 = 40960 bytes per key/value head and "
         "position; times 64, 16, 8 and 1 heads; times 4096 positions");
    CHECK(sa::kv_cache_bytes(80, 1, 128, 1, 2) == 40960);
    CHECK(sa::kv_cache_bytes(80, 64, 128, 1, 2) == 64 * 40960);
    CHECK(sa::kv_cache_bytes(80, 64, 128, 1, 2) == 2621440);
    CHECK(sa::kv_cache_bytes(80, 16, 128, 1, 2) == 655360);
    CHECK(sa::kv_cache_bytes(80, 8, 128, 1, 2) == 327680);
    INFO("10 GiB does not fit 32 bits: the count is 64 bits wide on every platform, WebAssembly's too");
    STATIC_REQUIRE(sizeof(sa::kv_cache_bytes(1, 1, 1, 1, 1)) == 8);
    CHECK(sa::kv_cache_bytes(80, 64, 128, 4096, 2) == 10737418240ULL);  // 10 GiB: 10·2^30
    CHECK(sa::kv_cache_bytes(80, 16, 128, 4096, 2) == 2684354560ULL);
    CHECK(sa::kv_cache_bytes(80, 8, 128, 4096, 2) == 1342177280ULL);  // 1.25 GiB
    CHECK(sa::kv_cache_bytes(80, 1, 128, 4096, 2) == 167772160ULL);
    INFO("Mistral 7B: 32 layers, heads of 128, 2 bytes: 2·32·128·2 = 16384 bytes per key/value head and position; "
         "times 32 and 8 heads; times 4096 positions");
    CHECK(sa::kv_cache_bytes(32, 1, 128, 1, 2) == 16384);
    CHECK(sa::kv_cache_bytes(32, 32, 128, 1, 2) == 524288);
    CHECK(sa::kv_cache_bytes(32, 8, 128, 1, 2) == 131072);
    CHECK(sa::kv_cache_bytes(32, 32, 128, 4096, 2) == 2147483648ULL);  // 2 GiB
    CHECK(sa::kv_cache_bytes(32, 8, 128, 4096, 2) == 536870912ULL);
    CHECK(sa::kv_cache_bytes(32, 1, 128, 4096, 2) == 67108864ULL);
}

TEST_CASE("Counts and shapes that do not fit are refused, naming the problem and the shape expected", "[ch18]")
{
    const sa::Matrix queries(3, 8, 1.0);  // 4 query heads of width 2
    const sa::Matrix keys(2, 4, 1.0);     // 2 key heads of width 2
    const sa::Matrix values(2, 6, 1.0);   // 2 value heads of width 3
    const sa::Matrix w_o(12, 2, 1.0);     // 4 query heads · 3
    CHECK_NOTHROW(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 4, 2, w_o));
    INFO("h_kv = 0 is no number of key/value heads");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 4, 0, w_o),
                      Contains("grouped_query_attention") && Contains("key/value heads must be at least 1"));
    CHECK_THROWS_AS(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 0, 1, w_o), std::invalid_argument);
    INFO("3 key/value heads cannot split 4 query heads into equal groups");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 4, 3, w_o),
                      Contains("4 query heads do not split into 3 equal groups"));
    INFO("with 1 key/value head of the query heads' width 2, K must be 2×2, not 2×4");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 4, 1, sa::Matrix(24, 2, 1.0)),
                      Contains("Q is 3×8, 4 query heads of width 2") && Contains("(2×2)") && Contains("K is 2×4"));
    INFO("V's 6 columns do not split into 4 value heads");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, sa::Matrix(2, 8, 1.0), values, zeros(3, 2), 4, 4, w_o),
                      Contains("V is 2×6") && Contains("4 value heads"));
    INFO("W_O needs 4·3 = 12 rows");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, values, zeros(3, 2), 4, 2, sa::Matrix(6, 2, 1.0)),
                      Contains("W_O needs 12 rows") && Contains("W_O is 6×2"));
    INFO("the mask must be n×m = 3×2, and K and V need one row per key each");
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, values, zeros(3, 3), 4, 2, w_o),
                      Contains("mask needs to be 3×2") && Contains("it is 3×3"));
    CHECK_THROWS_WITH(sa::grouped_query_attention(queries, keys, sa::Matrix(3, 6, 1.0), zeros(3, 2), 4, 2, w_o),
                      Contains("K is 2×4 but V is 3×6"));
    INFO("the backward refuses the same, and a dY that is not n×d_out");
    CHECK_THROWS_WITH(sa::grouped_query_backward(queries, keys, values, zeros(3, 2), 4, 3, w_o, zeros(3, 2)),
                      Contains("grouped_query_backward") && Contains("3 equal groups"));
    CHECK_THROWS_WITH(sa::grouped_query_backward(queries, keys, values, zeros(3, 2), 4, 2, w_o, zeros(2, 2)),
                      Contains("the outputs are 3×2 but dY is 2×2"));
    INFO("repeat_kv_heads and sum_kv_heads check the same counts");
    CHECK_THROWS_AS(sa::repeat_kv_heads(keys, 3, 6), sa::ShapeError);
    CHECK_THROWS_AS(sa::repeat_kv_heads(keys, 2, 3), std::invalid_argument);
    CHECK_THROWS_AS(sa::sum_kv_heads(keys, 0, 2), std::invalid_argument);
}

TEST_CASE("A program with grouped keys keeps a narrower default W_K and takes --wk of another width", "[ch18][support]")
{
    sa::Example example = sa::mouse_eats_cheese();
    example.w_query = w_query;  // 2×4: two query heads of width 2; the default W_K stays 2×2
    sa::ProgramInfo info{"ch18-test", "test", example};
    info.grouped_keys = true;
    const sa::Example kept = sa::parse_arguments(info, {});
    INFO("the default W_K (2×2) fits the embeddings, so it is kept beside W_Q (2×4)");
    CHECK(kept.w_key.cols() == 2);
    const sa::Example own = sa::parse_arguments(info, {"--wq", "1,0,0,0,0,1;0,1,0,0,1,0", "--wk", "1,0,0;0,1,0"});
    INFO("--wk of 3 columns beside --wq of 6: one key head of width 3 for two query heads");
    CHECK(own.w_key.cols() == 3);
    const sa::Example beside = sa::parse_arguments(info, {"--wq", "1,0,0,0,0,1;0,1,0,0,1,0"});
    INFO("beside the reader's own --wq, the default W_K becomes the identity of its width, 2×6");
    CHECK(beside.w_key.cols() == 6);
    INFO("without grouped keys, --wk must have --wq's columns, as before");
    info.grouped_keys = false;
    CHECK_THROWS_AS(sa::parse_arguments(info, {"--wq", "1,0,0,0,0,1;0,1,0,0,1,0", "--wk", "1,0,0;0,1,0"}),
                    sa::UsageError);
}

// Chapter 14's language model with h_kv key/value heads: small enough for central differences.
namespace {

sa::ModelShape small_shape(std::size_t kv_heads)
{
    return {5, 8, 4, 2, 6, kv_heads};  // V = 5, d = 8, h = 4 heads of width 2, two layers, context 6
}

struct SmallBatch {
    std::vector<std::size_t> inputs, targets;
};

SmallBatch small_batch(std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    SmallBatch batch;
    for (std::size_t i = 0; i < 12; ++i) {  // two windows of 6
        batch.inputs.push_back(below(generator, 5));
        batch.targets.push_back(below(generator, 5));
    }
    return batch;
}

double model_loss(const sa::LanguageModel& model, const SmallBatch& batch)
{
    return sa::cross_entropy(sa::forward(model, batch.inputs, 6).logits, batch.targets).loss;
}

sa::LanguageModel model_gradient(const sa::LanguageModel& model, const SmallBatch& batch)
{
    const sa::ForwardTrace trace = sa::forward(model, batch.inputs, 6);
    return sa::backward(model, trace, sa::cross_entropy(trace.logits, batch.targets).d_logits);
}

// The same model written with a key/value head per query head: W_K and W_V repeated (chapter 9's form).
sa::LanguageModel repeated_form(const sa::LanguageModel& shared)
{
    sa::LanguageModel repeated = shared;
    repeated.shape.kv_heads = 0;
    for (sa::AttentionLayer& layer : repeated.layers) {
        layer.w_key = sa::repeat_kv_heads(layer.w_key, sa::kv_head_count(shared.shape), shared.shape.heads);
        layer.w_value = sa::repeat_kv_heads(layer.w_value, sa::kv_head_count(shared.shape), shared.shape.heads);
    }
    return repeated;
}

}  // namespace

TEST_CASE("Language model: h_kv = h, given or left at its default, is chapter 14's model bit for bit", "[ch18]")
{
    sa::SplitMix64 first(18);
    sa::SplitMix64 second(18);
    const sa::LanguageModel chapter_14 = sa::random_model(small_shape(0), first);
    const sa::LanguageModel given = sa::random_model(small_shape(4), second);
    INFO("kv_heads = 0 means h: 4 key/value heads, W_K and W_V d×d as in chapter 14");
    CHECK(sa::kv_head_count(chapter_14.shape) == 4);
    CHECK(chapter_14.layers[0].w_key.cols() == 8);
    sa::LanguageModel a = chapter_14;
    sa::LanguageModel b = given;
    const std::vector<sa::Matrix*> drawn = sa::parameters(a);
    const std::vector<sa::Matrix*> drawn_given = sa::parameters(b);
    for (std::size_t p = 0; p < drawn.size(); ++p) {
        CHECK(sa::identical(*drawn[p], *drawn_given[p]));  // the same draws in the same order
    }
    const SmallBatch batch = small_batch(7);
    CHECK(model_loss(chapter_14, batch) == model_loss(given, batch));
    sa::LanguageModel gradient = model_gradient(chapter_14, batch);
    sa::LanguageModel gradient_given = model_gradient(given, batch);
    const std::vector<sa::Matrix*> grads = sa::parameters(gradient);
    const std::vector<sa::Matrix*> grads_given = sa::parameters(gradient_given);
    for (std::size_t p = 0; p < grads.size(); ++p) {
        CHECK(sa::identical(*grads[p], *grads_given[p]));
    }
}

TEST_CASE("Language model: shared heads compute the repeated form's logits, and their gradient is its sum over each "
          "group", "[ch18]")
{
    sa::SplitMix64 generator(1823);
    const sa::LanguageModel shared = sa::random_model(small_shape(2), generator);
    INFO("h_kv = 2: W_K and W_V hold 2 heads of width 2, d×4");
    CHECK(shared.layers[1].w_key.cols() == 4);
    CHECK(shared.layers[1].w_value.cols() == 4);
    const sa::LanguageModel repeated = repeated_form(shared);
    const SmallBatch batch = small_batch(11);
    INFO("each query head reads the same numbers in the same order: the logits are equal bit for bit");
    CHECK(sa::identical(sa::forward(shared, batch.inputs, 6).logits, sa::forward(repeated, batch.inputs, 6).logits));
    sa::LanguageModel d_shared = model_gradient(shared, batch);
    const sa::LanguageModel d_repeated = model_gradient(repeated, batch);
    for (std::size_t l = 0; l < 2; ++l) {
        INFO("layer " << l << ": dW_K of a shared head = the sum of its copies' dW_K in the repeated form; "
             "X^T (dK_a + dK_b) = X^T dK_a + X^T dK_b, equal up to the order of the sums");
        CHECK(sa::relative_difference(d_shared.layers[l].w_key,
                                      sa::sum_kv_heads(d_repeated.layers[l].w_key, 2, 4)) < 1e-12);
        CHECK(sa::relative_difference(d_shared.layers[l].w_value,
                                      sa::sum_kv_heads(d_repeated.layers[l].w_value, 2, 4)) < 1e-12);
        CHECK(sa::relative_difference(d_shared.layers[l].w_query, d_repeated.layers[l].w_query) < 1e-12);
        CHECK(sa::relative_difference(d_shared.layers[l].w_out, d_repeated.layers[l].w_out) < 1e-12);
    }
    CHECK(sa::relative_difference(d_shared.embedding, d_repeated.embedding) < 1e-12);
    CHECK(sa::relative_difference(d_shared.unembedding, d_repeated.unembedding) < 1e-12);
}

TEST_CASE("Language model: the gradient of shared key and value heads agrees with central differences", "[ch18]")
{
    for (const std::size_t kv_heads : {std::size_t{1}, std::size_t{2}}) {
        sa::SplitMix64 generator(180 + kv_heads);
        const sa::LanguageModel model = sa::random_model(small_shape(kv_heads), generator);
        const SmallBatch batch = small_batch(3);
        const sa::LanguageModel gradient = model_gradient(model, batch);
        for (std::size_t l = 0; l < 2; ++l) {
            INFO("h_kv = " << kv_heads << ", layer " << l << ": dW_K, dW_V and dW_Q against central differences "
                 "(step 1e-5)");
            const auto numeric = [&](sa::Matrix sa::AttentionLayer::*matrix) {
                return sa::numeric_gradient(
                    [&](const sa::Matrix& at) {
                        sa::LanguageModel changed = model;
                        changed.layers[l].*matrix = at;
                        return model_loss(changed, batch);
                    },
                    model.layers[l].*matrix, 1e-5);
            };
            CHECK(sa::relative_difference(gradient.layers[l].w_key, numeric(&sa::AttentionLayer::w_key)) < 1e-7);
            CHECK(sa::relative_difference(gradient.layers[l].w_value, numeric(&sa::AttentionLayer::w_value)) < 1e-7);
            CHECK(sa::relative_difference(gradient.layers[l].w_query, numeric(&sa::AttentionLayer::w_query)) < 1e-7);
        }
    }
}

TEST_CASE("Mean pooling: h_kv = h changes nothing, and each pooled head is its group's mean", "[ch18]")
{
    sa::SplitMix64 generator(2023);
    const sa::LanguageModel model = sa::random_model(small_shape(0), generator);
    sa::LanguageModel same = sa::mean_pooled_model(model, 4);
    sa::LanguageModel original = model;
    const std::vector<sa::Matrix*> kept = sa::parameters(same);
    const std::vector<sa::Matrix*> before = sa::parameters(original);
    for (std::size_t p = 0; p < kept.size(); ++p) {
        CHECK(sa::identical(*kept[p], *before[p]));
    }
    const sa::LanguageModel pairs = sa::mean_pooled_model(model, 2);
    const sa::LanguageModel one = sa::mean_pooled_model(model, 1);
    CHECK(sa::kv_head_count(pairs.shape) == 2);
    CHECK(sa::kv_head_count(one.shape) == 1);
    for (std::size_t l = 0; l < 2; ++l) {
        for (const auto matrix : {&sa::AttentionLayer::w_key, &sa::AttentionLayer::w_value}) {
            const sa::Matrix& w = model.layers[l].*matrix;
            INFO("head width 2: heads 0 and 1 are columns 0-1 and 2-3, heads 2 and 3 columns 4-5 and 6-7");
            for (std::size_t r = 0; r < 8; ++r) {
                for (std::size_t c = 0; c < 2; ++c) {
                    CHECK((pairs.layers[l].*matrix)(r, c) == (w(r, c) + w(r, 2 + c)) / 2);
                    CHECK((pairs.layers[l].*matrix)(r, 2 + c) == (w(r, 4 + c) + w(r, 6 + c)) / 2);
                    CHECK((one.layers[l].*matrix)(r, c) == (w(r, c) + w(r, 2 + c) + w(r, 4 + c) + w(r, 6 + c)) / 4);
                }
            }
        }
        INFO("W_Q and W_O are copied");
        CHECK(sa::identical(pairs.layers[l].w_query, model.layers[l].w_query));
        CHECK(sa::identical(one.layers[l].w_out, model.layers[l].w_out));
    }
    CHECK(sa::identical(one.embedding, model.embedding));
    CHECK(sa::identical(one.unembedding, model.unembedding));
}

TEST_CASE("Mean pooling heads that are already equal in each group leaves the logits as they were", "[ch18]")
{
    sa::SplitMix64 generator(44);
    const sa::LanguageModel pooled = sa::random_model(small_shape(2), generator);
    const sa::LanguageModel equal_pairs = repeated_form(pooled);  // heads 0 = 1 and 2 = 3 in W_K and W_V
    const SmallBatch batch = small_batch(5);
    INFO("the mean of two equal heads is that head, (x + x)/2 = x exactly");
    CHECK(sa::identical(sa::forward(sa::mean_pooled_model(equal_pairs, 2), batch.inputs, 6).logits,
                        sa::forward(equal_pairs, batch.inputs, 6).logits));
}

TEST_CASE("Parameters and cache bytes of chapter 14's model with h_kv key/value heads, from the shape", "[ch18]")
{
    for (const std::size_t kv_heads : {std::size_t{4}, std::size_t{2}, std::size_t{1}}) {
        const sa::ModelShape shape{63, 64, 4, 1, 64, kv_heads};
        const std::size_t formula = 63 * 64 + 2 * 64 * 64 + 2 * 64 * (kv_heads * 64 / 4) + 64 * 63;
        INFO("h_kv = " << kv_heads << ": V d + 2 d² (W_Q, W_O) + 2 d h_kv d/h (W_K, W_V) + d V = " << formula);
        CHECK(sa::parameter_count(shape) == formula);
        sa::SplitMix64 generator(1);
        sa::LanguageModel model = sa::random_model(shape, generator);
        std::size_t entries = 0;
        for (const sa::Matrix* parameter : sa::parameters(model)) {
            entries += parameter->rows() * parameter->cols();
        }
        CHECK(entries == formula);
        INFO("the cache: 2 · 1 layer · h_kv · 16 · 8 bytes per position");
        CHECK(sa::kv_cache_bytes(1, sa::kv_head_count(shape), 64 / 4, 1, 8) == 2 * kv_heads * 16 * 8);
    }
    CHECK(sa::parameter_count({63, 64, 4, 1, 64, 4}) == 24448);  // chapter 14's printed count
}

TEST_CASE("Shared heads that do not fit, and the steps written for a head per query head, are refused in one line",
          "[ch18]")
{
    sa::SplitMix64 generator(9);
    CHECK_THROWS_WITH(sa::random_model(small_shape(3), generator),
                      Contains("h = 4 query heads do not split into h_kv = 3 equal groups"));
    CHECK_THROWS_AS(sa::random_model(small_shape(8), generator), std::invalid_argument);
    const sa::LanguageModel model = sa::random_model(small_shape(0), generator);
    CHECK_THROWS_WITH(sa::mean_pooled_model(model, 0),
                      Contains("mean_pooled_model") && Contains("key/value heads must be at least 1"));
    CHECK_THROWS_WITH(sa::mean_pooled_model(model, 3), Contains("4 key/value heads do not pool into 3 equal groups"));
    const sa::LanguageModel shared = sa::mean_pooled_model(model, 2);
    INFO("chapter 15's circuits hold one key/value head per query head (chapter 16's cache and the model file take "
         "shared heads: the tests below)");
    CHECK_THROWS_WITH(sa::ov_circuit(shared, 0, 0), Contains("ov_circuit") && Contains("share 2"));
}

namespace {

std::vector<std::size_t> random_tokens(std::size_t count, std::size_t vocabulary, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    std::vector<std::size_t> tokens;
    for (std::size_t i = 0; i < count; ++i) {
        tokens.push_back(below(generator, vocabulary));
    }
    return tokens;
}

}  // namespace

TEST_CASE("Chapter 16's cache holds h_kv heads, and decoding with it gives the repeated form's recomputed logits "
          "bit for bit", "[ch18]")
{
    for (const std::size_t kv_heads : {std::size_t{4}, std::size_t{2}, std::size_t{1}}) {
        sa::SplitMix64 generator(60 + kv_heads);
        const sa::LanguageModel shared = sa::random_model(small_shape(kv_heads), generator);
        const sa::LanguageModel repeated = repeated_form(shared);  // a key/value head per query head
        const std::vector<std::size_t> tokens = random_tokens(9, 5, kv_heads);  // past the context of 6 too
        sa::GenerationCache cache = sa::empty_cache(shared);
        sa::GenerationCache repeated_cache = sa::empty_cache(repeated);
        INFO("h_kv = " << kv_heads << ": each of the 2 layers caches h_kv heads of width d/h = 2");
        REQUIRE(cache.layers.size() == 2);
        CHECK(cache.layers[1].size() == kv_heads);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const sa::DecodedStep step = sa::decode_next(shared, cache, tokens[i]);
            const std::vector<std::size_t> text(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(i + 1));
            INFO("after " << i + 1 << " tokens");
            CHECK(step.logits == sa::recomputed_logits(repeated, text));
            CHECK(step.logits == sa::recomputed_logits(shared, text));
            const sa::DecodedStep own_heads = sa::decode_next(repeated, repeated_cache, tokens[i]);
            CHECK(step.logits == own_heads.logits);
            for (std::size_t l = 0; l < 2; ++l) {
                CHECK(sa::identical(step.weights[l], own_heads.weights[l]));  // h rows each: every query head's
            }
            CHECK(cache.layers[0][kv_heads - 1].keys.size() == (i + 1) * 2);
            INFO("the numbers cached: 2 · n_layers · h_kv · d/h · t");
            CHECK(sa::cache_numbers(shared, i + 1) == 2 * 2 * kv_heads * 2 * (i + 1));
        }
        const sa::GenerationCache filled = sa::prefill(shared, tokens);
        for (std::size_t l = 0; l < 2; ++l) {
            for (std::size_t b = 0; b < kv_heads; ++b) {
                CHECK(filled.layers[l][b].keys == cache.layers[l][b].keys);
                CHECK(filled.layers[l][b].values == cache.layers[l][b].values);
            }
        }
    }
}

TEST_CASE("Chapter 16's generation with the cache writes what recomputing writes, with shared heads", "[ch18]")
{
    sa::SplitMix64 generator(61);
    const sa::LanguageModel shared = sa::random_model(small_shape(1), generator);
    for (const sa::Window window : {sa::Window::sliding, sa::Window::whole}) {
        CHECK(sa::generate_text(shared, {1, 2}, 12, {}, 7, true, window).tokens ==
              sa::generate_text(shared, {1, 2}, 12, {}, 7, false, window).tokens);
    }
}

namespace {

// The header's JSON, to read and to edit in place (an edit of the same length keeps the file's layout).
std::string& replaced(std::string& bytes, const std::string& from, const std::string& to)
{
    const std::size_t at = bytes.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(from.size() == to.size());
    bytes.replace(at, from.size(), to);
    return bytes;
}

std::string refusal(const std::string& bytes)
{
    try {
        static_cast<void>(sa::load_safetensors(bytes));
    } catch (const std::invalid_argument& error) {
        return error.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("A model with shared heads saves and loads bit for bit, with kv_heads in the file's metadata", "[ch18]")
{
    for (const std::size_t kv_heads : {std::size_t{2}, std::size_t{1}}) {
        sa::SplitMix64 generator(70 + kv_heads);
        const sa::LanguageModel model = sa::random_model(small_shape(kv_heads), generator);
        const std::string bytes = sa::save_safetensors(model, "abcde");
        INFO("h_kv = " << kv_heads << ": W_K and W_V are [d, h_kv · d/h] = [8, " << kv_heads * 2 << "]");
        CHECK(bytes.find(fmt::format("\"kv_heads\":\"{}\"", kv_heads)) != std::string::npos);
        CHECK(bytes.find(fmt::format("\"layers.1.w_value\":{{\"dtype\":\"F64\",\"shape\":[8,{}]", kv_heads * 2)) !=
              std::string::npos);
        const sa::SavedModel loaded = sa::load_safetensors(bytes);
        CHECK(sa::kv_head_count(loaded.model.shape) == kv_heads);
        CHECK(loaded.vocabulary == "abcde");
        sa::LanguageModel copy = loaded.model;
        sa::LanguageModel original = model;
        const std::vector<sa::Matrix*> read = sa::parameters(copy);
        const std::vector<sa::Matrix*> written = sa::parameters(original);
        for (std::size_t i = 0; i < read.size(); ++i) {
            CHECK(sa::identical(*read[i], *written[i]));
        }
        CHECK(sa::save_safetensors(loaded.model, loaded.vocabulary) == bytes);
    }
    sa::SplitMix64 generator(72);
    INFO("a model with a key/value head per query head: chapter 14's file, no kv_heads");
    CHECK(sa::save_safetensors(sa::random_model(small_shape(0), generator), "abcde").find("kv_heads") ==
          std::string::npos);
}

TEST_CASE("A model file whose key/value heads do not fit is refused in one line naming the tensor and the shape",
          "[ch18]")
{
    sa::SplitMix64 generator(73);
    const std::string good = sa::save_safetensors(sa::random_model(small_shape(2), generator), "abcde");
    std::string bytes = good;
    const std::string three = refusal(replaced(bytes, "\"kv_heads\":\"2\"", "\"kv_heads\":\"3\""));
    INFO(three);
    CHECK_THAT(three, Contains("kv_heads = 3, which does not divide heads = 4") && Contains("\"layers.0.w_key\"") &&
                          Contains("[8, 2] [8, 4] [8, 8]"));
    CHECK(three.find('\n') == std::string::npos);
    bytes = good;
    CHECK_THAT(refusal(replaced(bytes, "\"kv_heads\":\"2\"", "\"kv_heads\":\"0\"")),
               Contains("kv_heads = 0; expected 1 to 4"));
    bytes = good;
    CHECK_THAT(refusal(replaced(bytes, "\"kv_heads\":\"2\"", "\"kv_heads\":\"8\"")),
               Contains("kv_heads = 8; expected 1 to 4"));
    bytes = good;
    const std::string one = refusal(replaced(bytes, "\"kv_heads\":\"2\"", "\"kv_heads\":\"1\""));
    INFO(one);
    CHECK_THAT(one, Contains("tensor \"layers.0.w_key\" does not have the shape [8, 2] the model needs (h_kv = 1 "
                             "key/value head of width d/h = 2)"));
    bytes = good;
    const std::string without = refusal(replaced(bytes, ",\"kv_heads\":\"2\"", std::string(15, ' ')));
    INFO("without kv_heads, every query head has its own: W_K must be [8, 8]");
    CHECK_THAT(without, Contains("tensor \"layers.0.w_key\" does not have the shape [8, 8]") &&
                            Contains("one per query head"));
}

TEST_CASE("Validation windows lie halfway between the test windows and share no character with them", "[ch18]")
{
    std::vector<std::size_t> text(1000);
    for (std::size_t i = 0; i < text.size(); ++i) {
        text[i] = i;  // each token is its position, so a window shows where it lies
    }
    const std::size_t window = 10;
    const sa::Batch tested = sa::even_batch(text, 5, window);
    const sa::Batch validation = sa::halfway_batch(text, 5, window);
    REQUIRE(validation.inputs.size() == 4 * window);
    for (std::size_t w = 0; w < 4; ++w) {
        const std::size_t before = tested.inputs[w * window];
        const std::size_t after = tested.inputs[(w + 1) * window];
        const std::size_t start = validation.inputs[w * window];
        INFO("test windows start at ⌊w · (1000 − 11)/4⌋: " << before << " and " << after);
        CHECK(start == (before + after) / 2);
        CHECK(start > before + window);       // past the earlier window and its last target
        CHECK(start + window < after);        // its own last target before the next window
        CHECK(validation.targets[w * window + window - 1] == start + window);
    }
    CHECK_THROWS_AS(sa::halfway_batch(text, 1, window), std::invalid_argument);
    CHECK_THROWS_WITH(sa::halfway_batch(text, 60, window), Contains("halfway_batch") && Contains("too close"));
}
