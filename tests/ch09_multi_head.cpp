// Chapter 9, Multi-head attention: heads on column slices, side by side, then W_O; cross-attention.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "attention.hpp"
#include "cli.hpp"
#include "example.hpp"
#include "fitting_options.hpp"
#include "helpers.hpp"
#include "labels.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "random.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

using helpers::below;
using helpers::to_eigen;

namespace {

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;
constexpr double infinity = std::numeric_limits<double>::infinity();

// The chapter's worked example, written out here so that the test does not read the program.
const sa::Matrix& embeddings()
{
    static const sa::Matrix matrix = sa::mouse_eats_cheese().embeddings;  // Mouse [2,0], Eats [1,2], Cheese [2,0]
    return matrix;
}
const sa::Matrix w_query{{0, 1, 1, 0}, {1, 0, 0, 1}};  // head 0 swaps the features, head 1 keeps them
const sa::Matrix w_key{{1, 0, 1, 0}, {0, 1, 0, 1}};    // both heads keep them
const sa::Matrix w_value{{1, 0, 0, 1}, {0, 1, 1, 0}};  // head 0 keeps them, head 1 swaps them
const sa::Matrix w_out{{1, 0}, {0, 1}, {1, 0}, {0, 1}};  // adds the two heads
const sa::Matrix source{{1, 2}, {2, 0}};               // the sequence cross-attention reads

sa::Matrix zeros(std::size_t rows, std::size_t cols)
{
    return sa::Matrix(rows, cols, 0.0);
}

// Two weights from two scaled scores: e^a/(e^a + e^b) = 1/(1 + e^(b - a)).
double share(double a, double b)
{
    return 1.0 / (1.0 + std::exp(b - a));
}

// An independent reference written from the formula with Eigen's block operations:
// head i reads columns [i·d, (i+1)·d) of Q, K and V and writes the same columns of the output.
Eigen::MatrixXd reference_multi_head(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v,
                                     const Eigen::MatrixXd& mask, Eigen::Index heads, const Eigen::MatrixXd& w_o)
{
    const Eigen::Index d_k = q.cols() / heads;
    const Eigen::Index d_v = v.cols() / heads;
    Eigen::MatrixXd joined = Eigen::MatrixXd::Zero(q.rows(), v.cols());
    for (Eigen::Index head = 0; head < heads; ++head) {
        const Eigen::MatrixXd scaled = q.middleCols(head * d_k, d_k) * k.middleCols(head * d_k, d_k).transpose() /
                                           std::sqrt(static_cast<double>(d_k)) + mask;
        Eigen::MatrixXd weights = Eigen::MatrixXd::Zero(scaled.rows(), scaled.cols());
        for (Eigen::Index i = 0; i < scaled.rows(); ++i) {
            const double row_max = scaled.row(i).maxCoeff();
            if (row_max == -infinity) {
                continue;  // no key to use: zero weights
            }
            const Eigen::ArrayXXd shifted = (scaled.row(i).array() - row_max).exp();
            weights.row(i) = (shifted / shifted.sum()).matrix();
        }
        joined.middleCols(head * d_v, d_v) = weights * v.middleCols(head * d_v, d_v);
    }
    return joined * w_o;
}

// The reshape mistake written out with a flat list of numbers, as a reshape sees them:
// x.view(h, n, d/h) on a row-major n×d matrix, and the merge x.view(n, h·d/h) back.
std::vector<sa::Matrix> reshape_into_heads(const sa::Matrix& matrix, std::size_t heads)
{
    std::vector<double> flat;
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            flat.push_back(matrix(r, c));
        }
    }
    const std::size_t width = matrix.cols() / heads;
    std::vector<sa::Matrix> blocks(heads, sa::Matrix(matrix.rows(), width));
    for (std::size_t index = 0; index < flat.size(); ++index) {
        const std::size_t head = index / (matrix.rows() * width);
        blocks[head]((index / width) % matrix.rows(), index % width) = flat[index];
    }
    return blocks;
}

sa::Matrix reshape_back(const std::vector<sa::Matrix>& heads)
{
    std::vector<double> flat;
    for (const sa::Matrix& head : heads) {
        for (std::size_t r = 0; r < head.rows(); ++r) {
            for (std::size_t c = 0; c < head.cols(); ++c) {
                flat.push_back(head(r, c));
            }
        }
    }
    sa::Matrix merged(heads.front().rows(), heads.size() * heads.front().cols());
    for (std::size_t index = 0; index < flat.size(); ++index) {
        merged(index / merged.cols(), index % merged.cols()) = flat[index];
    }
    return merged;
}

void check_close(const sa::Matrix& got, const Eigen::MatrixXd& expected, double tolerance)
{
    REQUIRE(got.rows() == static_cast<std::size_t>(expected.rows()));
    REQUIRE(got.cols() == static_cast<std::size_t>(expected.cols()));
    for (std::size_t i = 0; i < got.rows(); ++i) {
        for (std::size_t j = 0; j < got.cols(); ++j) {
            INFO("entry (" << i << "," << j << ")");
            CHECK_THAT(got(i, j), WithinAbs(expected(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)),
                                            tolerance));
        }
    }
}

}  // namespace

TEST_CASE("Heads are column slices: head i owns columns i·d_head to (i+1)·d_head", "[ch09]")
{
    const sa::Matrix queries = sa::project(embeddings(), w_query);
    INFO("Q = E·W_Q: Mouse [2,0] gives [0,2 | 2,0], Eats [1,2] gives [2,1 | 1,2], Cheese as Mouse");
    CHECK(queries == sa::Matrix{{0, 2, 2, 0}, {2, 1, 1, 2}, {0, 2, 2, 0}});
    const std::vector<sa::Matrix> heads = sa::split_heads(queries, 2);
    REQUIRE(heads.size() == 2);
    INFO("head 0 is columns 0 and 1 (chapter 7's queries), head 1 is columns 2 and 3 (the embeddings)");
    CHECK(heads[0] == sa::Matrix{{0, 2}, {2, 1}, {0, 2}});
    CHECK(heads[1] == sa::Matrix{{2, 0}, {1, 2}, {2, 0}});
    INFO("concat_heads writes them back side by side: the inverse of split_heads");
    CHECK(sa::identical(sa::concat_heads(heads), queries));
    INFO("one head is the whole matrix; four heads of width one are its four columns");
    CHECK(sa::identical(sa::split_heads(queries, 1).at(0), queries));
    CHECK(sa::split_heads(queries, 4).at(3) == sa::Matrix{{0}, {2}, {0}});
    INFO("the keys are [E | E] and the values [E | E with its features swapped]");
    CHECK(sa::project(embeddings(), w_key) == sa::Matrix{{2, 0, 2, 0}, {1, 2, 1, 2}, {2, 0, 2, 0}});
    CHECK(sa::project(embeddings(), w_value) == sa::Matrix{{2, 0, 0, 2}, {1, 2, 2, 1}, {2, 0, 0, 2}});
    INFO("the column labels the program prints: h0 f1, h0 f2, h1 f1, h1 f2");
    CHECK(sa::head_labels(2, {"f1", "f2"}) == std::vector<std::string>{"h0 f1", "h0 f2", "h1 f1", "h1 f2"});
}

TEST_CASE("split_heads refuses a matrix with no columns", "[ch09]")
{
    INFO("0 columns split into 2 heads of 0 columns each: a head with no feature is no head");
    CHECK_THROWS_AS(sa::split_heads(sa::Matrix(), 2), sa::ShapeError);
}

TEST_CASE("The worked example: head 0 repeats chapter 7, head 1 attends by likeness", "[ch09]")
{
    const sa::Matrix queries = sa::project(embeddings(), w_query);
    const sa::Matrix keys = sa::project(embeddings(), w_key);
    const std::vector<sa::Matrix> weights = sa::head_weights(queries, keys, zeros(3, 3), 2);
    REQUIRE(weights.size() == 2);
    const double root2 = std::sqrt(2.0);
    // Head 0: q_Mouse = [0,2] scores 0, 4, 0, scaled 0, 2√2, 0.
    const double eats_weight = std::exp(2 * root2) / (2 + std::exp(2 * root2));
    INFO("head 0, Mouse: [1, e^(2√2), 1]/(2 + e^(2√2)) ≈ [0.053, 0.894, 0.053], chapter 7's row");
    CHECK_THAT(weights[0](0, 1), WithinAbs(eats_weight, 1e-12));
    CHECK_THAT(weights[0](0, 1), WithinAbs(0.894, printed));
    CHECK_THAT(weights[0](0, 0), WithinAbs(0.053, printed));
    INFO("head 0, Eats: q = [2,1] scores 4 against every key, so 1/3 each");
    CHECK_THAT(weights[0](1, 0), WithinAbs(1.0 / 3.0, 1e-12));
    // Head 1: q = k = the embedding, so the scores are E·Eᵀ = [[4,2,4],[2,5,2],[4,2,4]].
    const double mouse_self = 1.0 / (2.0 + std::exp(-root2));  // e^(4/√2) over 2e^(4/√2) + e^(2/√2)
    INFO("head 1, Mouse: scores 4, 2, 4 scale to 2√2, √2, 2√2: Mouse and Cheese get 1/(2 + e^-√2) ≈ 0.446, "
         "Eats 0.108");
    CHECK_THAT(weights[1](0, 0), WithinAbs(mouse_self, 1e-12));
    CHECK_THAT(weights[1](0, 0), WithinAbs(0.446, printed));
    CHECK_THAT(weights[1](0, 1), WithinAbs(0.108, printed));
    CHECK_THAT(weights[1](0, 2), WithinAbs(0.446, printed));
    INFO("head 1, Eats: scores 2, 5, 2 scale to √2, 5/√2, √2: itself 1/(1 + 2e^(-3/√2)) ≈ 0.807, the others 0.097");
    CHECK_THAT(weights[1](1, 1), WithinAbs(1.0 / (1.0 + 2.0 * std::exp(-3.0 / root2)), 1e-12));
    CHECK_THAT(weights[1](1, 1), WithinAbs(0.807, printed));
    CHECK_THAT(weights[1](1, 0), WithinAbs(0.097, printed));
    INFO("Cheese has Mouse's embedding, so it gets Mouse's row in both heads");
    CHECK(weights[1](2, 0) == weights[1](0, 0));
    CHECK(weights[0](2, 1) == weights[0](0, 1));
}

TEST_CASE("The worked example: each head's outputs, side by side, and after W_O", "[ch09]")
{
    const sa::Matrix queries = sa::project(embeddings(), w_query);
    const sa::Matrix keys = sa::project(embeddings(), w_key);
    const sa::Matrix values = sa::project(embeddings(), w_value);
    const std::vector<sa::Matrix> q = sa::split_heads(queries, 2);
    const std::vector<sa::Matrix> k = sa::split_heads(keys, 2);
    const std::vector<sa::Matrix> v = sa::split_heads(values, 2);
    const sa::Matrix head1 = sa::attention(q[0], k[0], v[0]);
    const sa::Matrix head2 = sa::attention(q[1], k[1], v[1]);
    INFO("head 0 is chapter 7 exactly: Mouse [1.106, 1.789], Eats [5/3, 2/3] ≈ [1.667, 0.667]");
    CHECK_THAT(head1(0, 0), WithinAbs(1.106, printed));
    CHECK_THAT(head1(0, 1), WithinAbs(1.789, printed));
    CHECK_THAT(head1(1, 0), WithinAbs(5.0 / 3.0, 1e-12));
    CHECK_THAT(head1(1, 1), WithinAbs(2.0 / 3.0, 1e-12));
    const double a = 1.0 / (2.0 + std::exp(-std::sqrt(2.0)));  // head 1's weight of Mouse and of Cheese in Mouse's row
    INFO("head 1, Mouse: 0.446·[0,2] + 0.108·[2,1] + 0.446·[0,2] = [2·0.108, 4·0.446 + 0.108] ≈ [0.217, 1.892]");
    CHECK_THAT(head2(0, 0), WithinAbs(2.0 * (1.0 - 2.0 * a), 1e-12));
    CHECK_THAT(head2(0, 0), WithinAbs(0.217, printed));
    CHECK_THAT(head2(0, 1), WithinAbs(4.0 * a + (1.0 - 2.0 * a), 1e-12));
    CHECK_THAT(head2(0, 1), WithinAbs(1.892, printed));
    const double self = 1.0 / (1.0 + 2.0 * std::exp(-3.0 / std::sqrt(2.0)));
    const double other = (1.0 - self) / 2.0;
    INFO("head 1, Eats: 0.097·[0,2] + 0.807·[2,1] + 0.097·[0,2] ≈ [1.613, 1.193]");
    CHECK_THAT(head2(1, 0), WithinAbs(2.0 * self, 1e-12));
    CHECK_THAT(head2(1, 0), WithinAbs(1.613, printed));
    CHECK_THAT(head2(1, 1), WithinAbs(self + 4.0 * other, 1e-12));
    CHECK_THAT(head2(1, 1), WithinAbs(1.193, printed));
    const sa::Matrix concatenated = sa::concat_heads({head1, head2});
    INFO("concatenated: [head 0 | head 1], row by row");
    CHECK(concatenated(0, 2) == head2(0, 0));
    CHECK(concatenated(1, 1) == head1(1, 1));
    const sa::Matrix outputs = sa::multi_head_attention(queries, keys, values, zeros(3, 3), 2, w_out);
    INFO("W_O = [I; I] adds the heads: Mouse [1.106 + 0.217, 1.789 + 1.892] ≈ [1.322, 3.680]");
    CHECK_THAT(outputs(0, 0), WithinAbs(head1(0, 0) + head2(0, 0), 1e-12));
    CHECK_THAT(outputs(0, 0), WithinAbs(1.322, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(3.680, printed));
    INFO("Eats: [1.667 + 1.613, 0.667 + 1.193] ≈ [3.280, 1.860]; Cheese as Mouse");
    CHECK_THAT(outputs(1, 0), WithinAbs(3.280, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(1.860, printed));
    CHECK(outputs(2, 0) == outputs(0, 0));
    CHECK(outputs(2, 1) == outputs(0, 1));
    INFO("the one call runs the same steps as the program's loop, so it agrees bit for bit");
    CHECK(sa::identical(outputs, sa::project(concatenated, w_out)));
}

TEST_CASE("One head with W_O = I is chapter 7's attention, bit for bit", "[ch09]")
{
    const auto seed = GENERATE(range(1, 21));
    const bool causal = GENERATE(false, true);
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 1 + below(generator, 5);
    const std::size_t m = causal ? n : 1 + below(generator, 5);
    const std::size_t d_k = 1 + below(generator, 4);
    const std::size_t d_v = 1 + below(generator, 4);
    const sa::Matrix queries = sa::random_matrix(n, d_k, generator);
    const sa::Matrix keys = sa::random_matrix(m, d_k, generator);
    const sa::Matrix values = sa::random_matrix(m, d_v, generator);
    const sa::Matrix mask = causal ? sa::causal_mask(n, m) : zeros(n, m);
    INFO("seed " << seed << ", n = " << n << ", m = " << m << ", d_k = " << d_k << ", d_v = " << d_v
                 << ": the only head is the whole matrix, x·1 + y·0 = x for finite numbers");
    CHECK(sa::identical(sa::multi_head_attention(queries, keys, values, mask, 1, sa::identity(d_v)),
                        sa::attention(queries, keys, values, mask)));
    INFO("with one head the reshape has nothing to mix up");
    CHECK(sa::identical(sa::multi_head_attention_by_reshape(queries, keys, values, mask, 1, sa::identity(d_v)),
                        sa::attention(queries, keys, values, mask)));
}

TEST_CASE("Permuting the heads with the matching row blocks of W_O leaves the output unchanged", "[ch09]")
{
    const auto seed = GENERATE(range(1, 16));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t heads = 2 + below(generator, 3);
    const std::size_t head_k = 1 + below(generator, 3);
    const std::size_t head_v = 1 + below(generator, 3);
    const std::size_t n = 1 + below(generator, 4);
    const std::size_t m = 1 + below(generator, 4);
    const sa::Matrix queries = sa::random_matrix(n, heads * head_k, generator);
    const sa::Matrix keys = sa::random_matrix(m, heads * head_k, generator);
    const sa::Matrix values = sa::random_matrix(m, heads * head_v, generator);
    const sa::Matrix w_o = sa::random_matrix(heads * head_v, 3, generator);
    // Reverse the heads: head i takes the place of head h-1-i in Q, K, V and in W_O's rows.
    const auto reverse_blocks = [&](const sa::Matrix& matrix, std::size_t width, bool rows) {
        sa::Matrix result(matrix.rows(), matrix.cols());
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c < matrix.cols(); ++c) {
                const std::size_t index = rows ? r : c;
                const std::size_t moved = (heads - 1 - index / width) * width + index % width;
                result(rows ? moved : r, rows ? c : moved) = matrix(r, c);
            }
        }
        return result;
    };
    const sa::Matrix outputs = sa::multi_head_attention(queries, keys, values, zeros(n, m), heads, w_o);
    const sa::Matrix permuted = sa::multi_head_attention(
        reverse_blocks(queries, head_k, false), reverse_blocks(keys, head_k, false),
        reverse_blocks(values, head_v, false), zeros(n, m), heads, reverse_blocks(w_o, head_v, true));
    INFO("seed " << seed << ", " << heads << " heads: O = Σ_i head_i·W_O,i, a sum whose terms only change order "
                 << "(so equal to 1e-12, not bit for bit)");
    check_close(permuted, to_eigen(outputs), 1e-12);
    INFO("reversing the heads without W_O's rows moves each head's output onto another head's rows of W_O");
    const sa::Matrix mismatched = sa::multi_head_attention(
        reverse_blocks(queries, head_k, false), reverse_blocks(keys, head_k, false),
        reverse_blocks(values, head_v, false), zeros(n, m), heads, w_o);
    CHECK_FALSE(sa::identical(mismatched, outputs));
}

TEST_CASE("Width-one heads (H = d_k) agree with a reference written from the formula", "[ch09]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t heads = 1 + below(generator, 4);
    const std::size_t n = 1 + below(generator, 5);
    const std::size_t m = 1 + below(generator, 5);
    const sa::Matrix queries = sa::random_matrix(n, heads, generator);
    const sa::Matrix keys = sa::random_matrix(m, heads, generator);
    const sa::Matrix values = sa::random_matrix(m, 2 * heads, generator);
    const sa::Matrix w_o = sa::random_matrix(2 * heads, 2, generator);
    INFO("seed " << seed << ", " << heads << " heads of width 1: each score is one product q_i·k_i divided by √1");
    check_close(sa::multi_head_attention(queries, keys, values, zeros(n, m), heads, w_o),
                reference_multi_head(to_eigen(queries), to_eigen(keys), to_eigen(values), to_eigen(zeros(n, m)),
                                     static_cast<Eigen::Index>(heads), to_eigen(w_o)),
                1e-12);
}

TEST_CASE("Cross-attention with n ≠ m and d_k ≠ d_v agrees with the reference, causal or not", "[ch09]")
{
    struct Shape {
        std::size_t n, m, heads, head_k, head_v, d_out;
        bool causal;
    };
    const Shape shape = GENERATE(Shape{3, 2, 2, 2, 2, 2, false}, Shape{4, 6, 2, 3, 1, 5, false},
                                 Shape{5, 2, 3, 1, 2, 2, false}, Shape{2, 7, 4, 2, 3, 3, true},
                                 Shape{6, 4, 2, 2, 3, 4, true}, Shape{3, 3, 3, 2, 2, 6, true});
    const auto seed = GENERATE(range(1, 6));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const sa::Matrix queries = sa::random_matrix(shape.n, shape.heads * shape.head_k, generator);
    const sa::Matrix keys = sa::random_matrix(shape.m, shape.heads * shape.head_k, generator);
    const sa::Matrix values = sa::random_matrix(shape.m, shape.heads * shape.head_v, generator);
    const sa::Matrix w_o = sa::random_matrix(shape.heads * shape.head_v, shape.d_out, generator);
    const sa::Matrix mask = shape.causal ? sa::causal_mask(shape.n, shape.m) : zeros(shape.n, shape.m);
    INFO("seed " << seed << ": " << shape.n << " queries, " << shape.m << " keys, " << shape.heads << " heads of d_k "
                 << shape.head_k << " and d_v " << shape.head_v << (shape.causal ? ", causal" : "")
                 << "; the output is n×d_out = " << shape.n << "×" << shape.d_out);
    check_close(sa::multi_head_attention(queries, keys, values, mask, shape.heads, w_o),
                reference_multi_head(to_eigen(queries), to_eigen(keys), to_eigen(values), to_eigen(mask),
                                     static_cast<Eigen::Index>(shape.heads), to_eigen(w_o)),
                1e-12);
}

TEST_CASE("The worked cross-attention: the sentence asks, a two-token source answers", "[ch09]")
{
    const sa::Matrix queries = sa::project(embeddings(), w_query);
    const sa::Matrix keys = sa::project(source, w_key);      // [s | s]
    const sa::Matrix values = sa::project(source, w_value);  // [s | s swapped]
    const std::vector<sa::Matrix> weights = sa::head_weights(queries, keys, zeros(3, 2), 2);
    REQUIRE(weights[0].rows() == 3);
    REQUIRE(weights[0].cols() == 2);
    const double root2 = std::sqrt(2.0);
    INFO("head 0, Mouse asks [0,2]: s1 = [1,2] scores 4, s2 = [2,0] scores 0; 1/(1 + e^(-2√2)) ≈ 0.944");
    CHECK_THAT(weights[0](0, 0), WithinAbs(share(2 * root2, 0), 1e-12));
    CHECK_THAT(weights[0](0, 0), WithinAbs(0.944, printed));
    CHECK_THAT(weights[0](0, 1), WithinAbs(0.056, printed));
    INFO("head 0, Eats asks [2,1]: 2 + 2 = 4 against s1, 4 against s2, so one half each");
    CHECK(weights[0](1, 0) == 0.5);
    INFO("head 1, Mouse asks [2,0]: 2 against s1, 4 against s2; s2 gets 1/(1 + e^(-√2)) ≈ 0.804");
    CHECK_THAT(weights[1](0, 1), WithinAbs(share(2 * root2, root2), 1e-12));
    CHECK_THAT(weights[1](0, 1), WithinAbs(0.804, printed));
    CHECK_THAT(weights[1](0, 0), WithinAbs(0.196, printed));
    INFO("head 1, Eats asks [1,2]: 5 against s1, 2 against s2; s1 gets 1/(1 + e^(-3/√2)) ≈ 0.893");
    CHECK_THAT(weights[1](1, 0), WithinAbs(share(5 / root2, 2 / root2), 1e-12));
    CHECK_THAT(weights[1](1, 0), WithinAbs(0.893, printed));
    CHECK_THAT(weights[1](1, 1), WithinAbs(0.107, printed));
    const sa::Matrix outputs = sa::multi_head_attention(queries, keys, values, zeros(3, 2), 2, w_out);
    REQUIRE(outputs.rows() == 3);
    REQUIRE(outputs.cols() == 2);
    const double h0 = share(2 * root2, 0);
    const double h1 = share(2 * root2, root2);
    INFO("Mouse: head 0 " << h0 << "·[1,2] + (1-" << h0 << ")·[2,0], head 1 (1-" << h1 << ")·[2,1] + " << h1
                          << "·[0,2], added by W_O: ≈ [1.447, 3.693]");
    CHECK_THAT(outputs(0, 0), WithinAbs(h0 + 2 * (1 - h0) + 2 * (1 - h1), 1e-12));
    CHECK_THAT(outputs(0, 0), WithinAbs(1.447, printed));
    CHECK_THAT(outputs(0, 1), WithinAbs(2 * h0 + (1 - h1) + 2 * h1, 1e-12));
    CHECK_THAT(outputs(0, 1), WithinAbs(3.693, printed));
    const double e2 = share(5 / root2, 2 / root2);
    INFO("Eats: head 0 [1.5, 1], head 1 " << e2 << "·[2,1] + (1-" << e2 << ")·[0,2]: ≈ [3.286, 2.107]");
    CHECK_THAT(outputs(1, 0), WithinAbs(1.5 + 2 * e2, 1e-12));
    CHECK_THAT(outputs(1, 0), WithinAbs(3.286, printed));
    CHECK_THAT(outputs(1, 1), WithinAbs(1.0 + e2 + 2 * (1 - e2), 1e-12));
    CHECK_THAT(outputs(1, 1), WithinAbs(2.107, printed));
    CHECK(outputs(2, 0) == outputs(0, 0));
}

TEST_CASE("Causal masks for n ≠ m: the book aligns top-left, the other convention bottom-right", "[ch09]")
{
    const sa::Matrix top_left = sa::causal_mask(3, 2);
    const sa::Matrix bottom_right = sa::causal_mask_bottom_right(3, 2);
    INFO("top-left: query i may use keys 0..i; query 0 sees key 0 only, queries 1 and 2 see both");
    CHECK(top_left == sa::Matrix{{0, -infinity}, {0, 0}, {0, 0}});
    INFO("bottom-right: the last query sees the last key, j ≤ i + (m - n) = i - 1; query 0 sees nothing");
    CHECK(bottom_right == sa::Matrix{{-infinity, -infinity}, {0, -infinity}, {0, 0}});
    INFO("with 2 queries and 5 keys, bottom-right: query i may use keys 0..i+3");
    CHECK(sa::causal_mask_bottom_right(2, 5) ==
          sa::Matrix{{0, 0, 0, 0, -infinity}, {0, 0, 0, 0, 0}});
    const auto size = GENERATE(range(1, 6));
    INFO("for n = m = " << size << " the two alignments are the same mask");
    CHECK(sa::causal_mask_bottom_right(static_cast<std::size_t>(size), static_cast<std::size_t>(size)) ==
          sa::causal_mask(static_cast<std::size_t>(size), static_cast<std::size_t>(size)));
}

TEST_CASE("A fully masked row is all zeros in every head and after W_O, never NaN", "[ch09]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t heads = 1 + below(generator, 3);
    const std::size_t n = 3 + below(generator, 3);
    const std::size_t m = 1 + below(generator, 2);  // fewer keys than queries
    const sa::Matrix queries = sa::random_matrix(n, 2 * heads, generator);
    const sa::Matrix keys = sa::random_matrix(m, 2 * heads, generator);
    const sa::Matrix values = sa::random_matrix(m, 3 * heads, generator);
    const sa::Matrix w_o = sa::random_matrix(3 * heads, 2, generator);
    const sa::Matrix mask = sa::causal_mask_bottom_right(n, m);
    const sa::Matrix outputs = sa::multi_head_attention(queries, keys, values, mask, heads, w_o);
    const std::vector<sa::Matrix> weights = sa::head_weights(queries, keys, mask, heads);
    for (std::size_t i = 0; i < n; ++i) {
        const bool blind = i < n - m;
        for (std::size_t d = 0; d < outputs.cols(); ++d) {
            INFO("seed " << seed << ", " << n << " queries, " << m << " keys, bottom-right: row " << i
                         << (blind ? " sees no key, so 0 weights, 0 from every head and 0·W_O = 0"
                                   : " sees a key, so it is a finite number"));
            CHECK_FALSE(std::isnan(outputs(i, d)));
            if (blind) {
                CHECK(outputs(i, d) == 0.0);
            }
        }
        for (std::size_t head = 0; head < heads; ++head) {
            INFO("head " << head + 1 << ", row " << i << ": weights sum to " << (blind ? "0" : "1"));
            double total = 0.0;
            for (std::size_t j = 0; j < m; ++j) {
                total += weights[head](i, j);
            }
            CHECK_THAT(total, WithinAbs(blind ? 0.0 : 1.0, 1e-12));
        }
    }
}

TEST_CASE("With the causal mask, a later token cannot change an earlier output in any head", "[ch09]")
{
    const auto seed = GENERATE(range(1, 11));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(seed));
    const std::size_t n = 2 + below(generator, 4);
    const sa::Matrix queries = sa::random_matrix(n, 4, generator);
    sa::Matrix keys = sa::random_matrix(n, 4, generator);
    sa::Matrix values = sa::random_matrix(n, 6, generator);
    const sa::Matrix w_o = sa::random_matrix(6, 3, generator);
    const sa::Matrix mask = sa::causal_mask(n, n);
    const sa::Matrix outputs = sa::multi_head_attention(queries, keys, values, mask, 2, w_o);
    const std::size_t changed = 1 + below(generator, n - 1);
    for (std::size_t c = 0; c < 4; ++c) {
        keys(changed, c) = 100.0 + static_cast<double>(c);
    }
    for (std::size_t c = 0; c < 6; ++c) {
        values(changed, c) = -50.0;
    }
    const sa::Matrix altered = sa::multi_head_attention(queries, keys, values, mask, 2, w_o);
    for (std::size_t i = 0; i < changed; ++i) {
        for (std::size_t d = 0; d < 3; ++d) {
            INFO("seed " << seed << ": token " << changed << " changed; row " << i
                         << " gives it weight exactly 0 in both heads, so no bit of the row moves");
            CHECK(altered(i, d) == outputs(i, d));
        }
    }
}

TEST_CASE("The classic mistake: a reshape without the transpose gives other numbers", "[ch09]")
{
    const sa::Matrix queries = sa::project(embeddings(), w_query);
    const sa::Matrix keys = sa::project(embeddings(), w_key);
    const sa::Matrix values = sa::project(embeddings(), w_value);
    const std::vector<sa::Matrix> wrong_heads = sa::split_heads_by_reshape(queries, 2);
    INFO("Q row by row is 0,2,2,0, 2,1,1,2, 0,2,2,0; a reshape to 2×3×2 gives head 0 the first six numbers: "
         "[0,2], [2,0], [2,1], pieces of Mouse and Eats");
    CHECK(wrong_heads[0] == sa::Matrix{{0, 2}, {2, 0}, {2, 1}});
    CHECK(wrong_heads[1] == sa::Matrix{{1, 2}, {0, 2}, {2, 0}});
    INFO("the library's mistake is the same as a flat list cut into blocks, for any shape");
    sa::SplitMix64 generator(9);
    const sa::Matrix odd = sa::random_matrix(5, 6, generator);
    CHECK(sa::split_heads_by_reshape(odd, 3) == reshape_into_heads(odd, 3));
    CHECK(sa::concat_heads_by_reshape(sa::split_heads(odd, 2)) == reshape_back(sa::split_heads(odd, 2)));
    const sa::Matrix right = sa::multi_head_attention(queries, keys, values, zeros(3, 3), 2, w_out);
    const sa::Matrix wrong = sa::multi_head_attention_by_reshape(queries, keys, values, zeros(3, 3), 2, w_out);
    std::vector<sa::Matrix> heads;
    const std::vector<sa::Matrix> q = reshape_into_heads(queries, 2);
    const std::vector<sa::Matrix> k = reshape_into_heads(keys, 2);
    const std::vector<sa::Matrix> v = reshape_into_heads(values, 2);
    for (std::size_t head = 0; head < 2; ++head) {
        heads.push_back(sa::attention(q[head], k[head], v[head]));
    }
    const sa::Matrix expected = sa::project(reshape_back(heads), w_out);
    INFO("wrong head 0, Mouse asks [0,2] of keys [2,0], [2,0], [1,2]: weights 0.053, 0.053, 0.894 on values "
         "[2,0], [0,2], [1,2], giving [1.0, 1.894]");
    CHECK_THAT(heads[0](0, 0), WithinAbs(1.0, 1e-12));
    INFO("the wrong outputs, as the reshape computes them: Mouse [2.000, 3.003], Eats [2.807, 2.333], "
         "Cheese [3.003, 2.000]");
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t d = 0; d < 2; ++d) {
            CHECK_THAT(wrong(i, d), WithinAbs(expected(i, d), 1e-12));
        }
    }
    CHECK_THAT(wrong(0, 0), WithinAbs(2.000, printed));
    CHECK_THAT(wrong(0, 1), WithinAbs(3.003, printed));
    CHECK_THAT(wrong(1, 0), WithinAbs(2.807, printed));
    CHECK_THAT(wrong(1, 1), WithinAbs(2.333, printed));
    CHECK_THAT(wrong(2, 0), WithinAbs(3.003, printed));
    CHECK_THAT(wrong(2, 1), WithinAbs(2.000, printed));
    INFO("the telltale sign: Mouse and Cheese are the same token, yet the wrong split gives them different rows");
    CHECK(wrong(0, 0) != wrong(2, 0));
    CHECK_FALSE(sa::identical(wrong, right));
}

TEST_CASE("Shapes that do not split or fit are named in the error", "[ch09]")
{
    const sa::Matrix queries(3, 4, 1.0);
    const sa::Matrix keys(2, 4, 1.0);
    const sa::Matrix values(2, 6, 1.0);
    INFO("d_model = 4 does not split into 3 heads");
    CHECK_THROWS_AS(sa::split_heads(queries, 3), sa::ShapeError);
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, values, zeros(3, 2), 3, sa::Matrix(6, 2, 1.0)),
                      Contains("multi_head_attention") && Contains("Q is 3×4") && Contains("3 heads"));
    INFO("d_v = 6 does not split into 4 heads, although d_k = 4 does");
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, values, zeros(3, 2), 4, sa::Matrix(6, 2, 1.0)),
                      Contains("V is 2×6") && Contains("4 heads"));
    INFO("W_O needs one row per column of V: 6, not 4");
    CHECK_THROWS_AS(sa::multi_head_attention(queries, keys, values, zeros(3, 2), 2, sa::Matrix(4, 2, 1.0)),
                    sa::ShapeError);
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, values, zeros(3, 2), 2, sa::Matrix(4, 2, 1.0)),
                      Contains("multi_head_attention") && Contains("V is 2×6") && Contains("W_O is 4×2"));
    INFO("nor 8: a W_O with more rows than V has columns is refused too, not read in part");
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, values, zeros(3, 2), 2, sa::Matrix(8, 2, 1.0)),
                      Contains("V is 2×6") && Contains("W_O is 8×2") && Contains("one row per column of V"));
    INFO("the mask must be n×m = 3×2, and K and V need the same number of rows");
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, values, zeros(3, 3), 2, sa::Matrix(6, 2, 1.0)),
                      Contains("multi_head_attention") && Contains("mask is 3×3"));
    CHECK_THROWS_WITH(sa::multi_head_attention(queries, keys, sa::Matrix(3, 6, 1.0), zeros(3, 2), 2,
                                               sa::Matrix(6, 2, 1.0)),
                      Contains("multi_head_attention") && Contains("K is 2×4") && Contains("V is 3×6"));
    INFO("zero heads is not a number of heads");
    CHECK_THROWS_AS(sa::split_heads(queries, 0), std::invalid_argument);
    INFO("heads of different heights cannot stand side by side");
    CHECK_THROWS_AS(sa::concat_heads({sa::Matrix(3, 2, 0.0), sa::Matrix(2, 2, 0.0)}), sa::ShapeError);
    INFO("whichever is the taller: a later head with more rows than head 0 is refused as well");
    CHECK_THROWS_AS(sa::concat_heads({sa::Matrix(2, 2, 0.0), sa::Matrix(3, 2, 0.0)}), sa::ShapeError);
    INFO("the reshape needs heads of one shape: rows alone or columns alone that differ are refused");
    CHECK_THROWS_WITH(sa::concat_heads_by_reshape({sa::Matrix(2, 2, 0.0), sa::Matrix(3, 2, 0.0)}),
                      Contains("head 0 is 2×2 but another head is 3×2"));
    CHECK_THROWS_WITH(sa::concat_heads_by_reshape({sa::Matrix(2, 2, 0.0), sa::Matrix(2, 3, 0.0)}),
                      Contains("head 0 is 2×2 but another head is 2×3"));
}

TEST_CASE("side_by_side_labels repeats the labels under each prefix, left first", "[ch09][support]")
{
    CHECK(sa::side_by_side_labels({"right", "wrong"}, {"f1", "f2"}) ==
          std::vector<std::string>{"right f1", "right f2", "wrong f1", "wrong f2"});
    INFO("head_labels is the same with the prefixes h0, h1, ...");
    CHECK(sa::side_by_side_labels({"h0", "h1"}, {"s1"}) == sa::head_labels(2, {"s1"}));
}

TEST_CASE("heads_option takes a number of heads that divides d_k and d_v, or says which it does not divide",
          "[ch09][support]")
{
    const sa::ProgramOption option{"--heads", "H", "number of heads", "2"};
    sa::Example example = sa::mouse_eats_cheese();  // d_k = d_v = 2
    example.options = {{"--heads", "2"}};
    CHECK(sa::heads_option(example, option) == 2);
    example.options = {{"--heads", "3"}};
    INFO("3 does not divide d_k = 2, and the reader chose 3");
    CHECK_THROWS_AS(sa::heads_option(example, option), sa::UsageError);
    CHECK_THROWS_WITH(sa::heads_option(example, option),
                      "--heads: 3 does not divide the 2 columns of --wq; choose a divisor of 2");
    example.w_query = sa::Matrix{{1, 0, 0, 0}, {0, 1, 0, 0}};  // d_k = 4, d_v = 2
    example.options = {{"--heads", "4"}};
    INFO("4 divides d_k = 4 but not d_v = 2");
    CHECK_THROWS_WITH(sa::heads_option(example, option),
                      "--heads: 4 does not divide the 2 columns of --wv; choose a divisor of 2");
    const sa::ProgramOption four{"--heads", "H", "number of heads", "4"};
    INFO("the default 4 fitted another example; the reader is asked for their own");
    CHECK_THROWS_WITH(sa::heads_option(example, four),
                      "--heads: the default 4 does not divide the 2 columns of --wv; pass your own --heads");
}

TEST_CASE("fitting_matrix_option checks rows or columns, and says when the default no longer fits",
          "[ch09][support]")
{
    const sa::ProgramOption option{"--wo", "M", "W_O", "1,0;0,1;1,0;0,1"};
    sa::Example example = sa::mouse_eats_cheese();
    example.options = {{"--wo", "1,0;0,1"}};
    CHECK(sa::identical(sa::fitting_matrix_option(example, option, 2, sa::Along::rows, "one per column of --wv"),
                        sa::Matrix{{1, 0}, {0, 1}}));
    INFO("the reader's 2×2 matrix has 2 columns, not 3");
    CHECK_THROWS_AS(sa::fitting_matrix_option(example, option, 3, sa::Along::columns, "one per feature"),
                    sa::UsageError);
    CHECK_THROWS_WITH(sa::fitting_matrix_option(example, option, 3, sa::Along::columns, "one per feature"),
                      "--wo: expected 3 columns (one per feature), got 2");
    example.options = {{"--wo", "1,0;0,1;1,0;0,1"}};
    INFO("the default has 4 rows, the example needs 1");
    CHECK_THROWS_WITH(sa::fitting_matrix_option(example, option, 1, sa::Along::rows, "one per column of --wv"),
                      "--wo: expected 1 row (one per column of --wv), but the default has 4; pass your own --wo");
}
