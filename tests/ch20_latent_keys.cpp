// Chapter 20, Latent keys and values: keys and values from one latent per token, the cache that holds
// the latent, the up-projections folded into the query and output side, and the rotary part kept apart.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "gradient_check.hpp"
#include "helpers.hpp"
#include "latent_attention.hpp"
#include "latent_model.hpp"
#include "masking.hpp"
#include "random.hpp"
#include "safetensors.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

using helpers::below;
using helpers::to_eigen;

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;
constexpr double infinity = std::numeric_limits<double>::infinity();

struct LatentShapes {
    std::size_t n, m, heads, d, latent, head, rotary, value, out, position;
};

LatentShapes random_latent_shapes(sa::SplitMix64& generator, bool causal)
{
    LatentShapes s{};
    s.n = 1 + below(generator, 4);
    s.m = causal ? s.n : 1 + below(generator, 4);
    s.heads = 1 + below(generator, 3);
    s.d = 2 + below(generator, 3);
    s.latent = 1 + below(generator, s.d);  // 1 ≤ d_c ≤ d
    s.head = 1 + below(generator, 3);
    s.rotary = 2 * (1 + below(generator, 2));
    s.value = 1 + below(generator, 3);
    s.out = 1 + below(generator, 3);
    s.position = below(generator, 5);
    return s;
}

sa::LatentWeights random_weights(sa::SplitMix64& generator, const LatentShapes& s)
{
    sa::LatentWeights w;
    w.w_query = sa::random_matrix(s.d, s.heads * s.head, generator);
    w.w_query_rotary = sa::random_matrix(s.d, s.heads * s.rotary, generator);
    w.w_down = sa::random_matrix(s.d, s.latent, generator);
    w.w_up_key = sa::random_matrix(s.latent, s.heads * s.head, generator);
    w.w_up_value = sa::random_matrix(s.latent, s.heads * s.value, generator);
    w.w_key_rotary = sa::random_matrix(s.d, s.rotary, generator);
    w.w_out = sa::random_matrix(s.heads * s.value, s.out, generator);
    return w;
}

std::string describe(const LatentShapes& s)
{
    return fmt::format("n = {}, m = {}, h = {}, d = {}, d_c = {}, d_h = {}, d_R = {}, d_v = {}, d_out = {}, "
                       "first query at {}", s.n, s.m, s.heads, s.d, s.latent, s.head, s.rotary, s.value, s.out,
                       s.position);
}

// Su et al.'s turn, written out: pair (2i, 2i+1) of a w-wide vector at position p turns by p·10000^(−2i/w).
Eigen::MatrixXd turned(const Eigen::MatrixXd& rows, std::size_t first)
{
    Eigen::MatrixXd out = rows;
    const auto w = static_cast<double>(rows.cols());
    for (Eigen::Index r = 0; r < rows.rows(); ++r) {
        for (Eigen::Index i = 0; 2 * i < rows.cols(); ++i) {
            const double angle = static_cast<double>(first + static_cast<std::size_t>(r)) *
                                 std::pow(10000.0, -2.0 * static_cast<double>(i) / w);
            out(r, 2 * i) = rows(r, 2 * i) * std::cos(angle) - rows(r, 2 * i + 1) * std::sin(angle);
            out(r, 2 * i + 1) = rows(r, 2 * i) * std::sin(angle) + rows(r, 2 * i + 1) * std::cos(angle);
        }
    }
    return out;
}

// Latent attention from the definition, in Eigen: every head's keys and values rebuilt from the latent,
// its scores the content dot product plus the rotary one, over √(d_h + d_R).
Eigen::MatrixXd reference(const Eigen::MatrixXd& x_query, std::size_t position, const Eigen::MatrixXd& x_keys,
                          const sa::LatentWeights& w, const Eigen::MatrixXd& mask, const LatentShapes& s)
{
    const auto h = static_cast<Eigen::Index>(s.heads);
    const auto dh = static_cast<Eigen::Index>(s.head);
    const auto dr = static_cast<Eigen::Index>(s.rotary);
    const auto dv = static_cast<Eigen::Index>(s.value);
    const Eigen::MatrixXd latent = x_keys * to_eigen(w.w_down);
    const Eigen::MatrixXd rotary_key = turned(x_keys * to_eigen(w.w_key_rotary), 0);
    Eigen::MatrixXd joined(x_query.rows(), h * dv);
    for (Eigen::Index a = 0; a < h; ++a) {
        const Eigen::MatrixXd q = x_query * to_eigen(w.w_query).middleCols(a * dh, dh);
        const Eigen::MatrixXd qr = turned(x_query * to_eigen(w.w_query_rotary).middleCols(a * dr, dr), position);
        const Eigen::MatrixXd k = latent * to_eigen(w.w_up_key).middleCols(a * dh, dh);
        const Eigen::MatrixXd v = latent * to_eigen(w.w_up_value).middleCols(a * dv, dv);
        const Eigen::MatrixXd scores =
            (q * k.transpose() + qr * rotary_key.transpose()) / std::sqrt(static_cast<double>(s.head + s.rotary)) +
            mask;
        Eigen::MatrixXd weights = Eigen::MatrixXd::Zero(scores.rows(), scores.cols());
        for (Eigen::Index i = 0; i < scores.rows(); ++i) {
            const double row_max = scores.row(i).maxCoeff();
            if (row_max == -infinity) {
                continue;
            }
            const Eigen::ArrayXXd shifted = (scores.row(i).array() - row_max).exp();
            weights.row(i) = (shifted / shifted.sum()).matrix();
        }
        joined.middleCols(a * dv, dv) = weights * v;
    }
    return joined * to_eigen(w.w_out);
}

sa::Matrix zeros(std::size_t rows, std::size_t cols)
{
    return sa::Matrix(rows, cols, 0.0);
}

double largest_difference(const sa::Matrix& got, const Eigen::MatrixXd& expected)
{
    return (to_eigen(got) - expected).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("Latent attention equals its definition: keys and values rebuilt from the latent, rotary part apart",
          "[ch20]")
{
    const auto seed = GENERATE(range(1, 13));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(2000 + seed));
    const LatentShapes s = random_latent_shapes(generator, false);
    const sa::LatentWeights w = random_weights(generator, s);
    const sa::Matrix queries = sa::random_matrix(s.n, s.d, generator);
    const sa::Matrix keys = sa::random_matrix(s.m, s.d, generator);
    const sa::Matrix mask = seed % 3 == 0 ? sa::causal_mask_bottom_right(s.n, s.m) : zeros(s.n, s.m);
    const sa::LatentCache cache = sa::latent_cache(keys, w, 0);
    INFO(describe(s) << ": the scores are q^C·k^C + q^R·k^R over √(d_h + d_R), the values C W_UV");
    CHECK(largest_difference(sa::latent_attention(queries, s.position, cache, w, mask, s.heads),
                             reference(to_eigen(queries), s.position, to_eigen(keys), w, to_eigen(mask), s)) < 1e-12);
}

TEST_CASE("The cache holds C = X W_DKV and the rotary key turned at each token's position", "[ch20]")
{
    sa::SplitMix64 generator(2020);
    const LatentShapes s{4, 4, 2, 3, 2, 2, 4, 1, 2, 0};
    const sa::LatentWeights w = random_weights(generator, s);
    const sa::Matrix x = sa::random_matrix(4, 3, generator);
    const sa::LatentCache cache = sa::latent_cache(x, w, 5);
    INFO("d_c + d_R = 2 + 4 numbers per token; row r at position 5 + r");
    CHECK(cache.latent.cols() + cache.rotary_keys.cols() == 6);
    CHECK(largest_difference(cache.latent, to_eigen(x) * to_eigen(w.w_down)) < 1e-15);
    CHECK(largest_difference(cache.rotary_keys, turned(to_eigen(x) * to_eigen(w.w_key_rotary), 5)) < 1e-12);
}

TEST_CASE("Folded and unfolded forms agree to 1e-12, for queries at later positions than the cache", "[ch20]")
{
    const auto seed = GENERATE(range(1, 13));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(2100 + seed));
    const bool causal = seed % 2 == 0;
    const LatentShapes s = random_latent_shapes(generator, causal);
    const sa::LatentWeights w = random_weights(generator, s);
    const sa::Matrix queries = sa::random_matrix(s.n, s.d, generator);
    const sa::LatentCache cache = sa::latent_cache(sa::random_matrix(s.m, s.d, generator), w, 0);
    const sa::Matrix mask = causal ? sa::causal_mask(s.n, s.m) : zeros(s.n, s.m);
    const sa::Matrix unfolded = sa::latent_attention(queries, s.position, cache, w, mask, s.heads);
    const sa::Matrix folded =
        sa::latent_attention_folded(queries, s.position, cache, w, sa::fold_latent(w, s.heads), mask, s.heads);
    INFO(describe(s) << ": (x W_Q,a)·(c W_UK,a) = x (W_Q,a W_UK,aᵀ)·c and (A C W_UV,a) W_O,a = A C (W_UV,a W_O,a): "
                        "the same sums in another order");
    CHECK(sa::largest_difference(folded, unfolded) < 1e-12);
}

TEST_CASE("fold_latent: W_Q,a W_UK,aᵀ side by side and W_UV,a W_O,a one under another", "[ch20]")
{
    sa::SplitMix64 generator(2200);
    const LatentShapes s{1, 1, 3, 4, 2, 2, 2, 2, 3, 0};
    const sa::LatentWeights w = random_weights(generator, s);
    const sa::FoldedWeights folded = sa::fold_latent(w, 3);
    const Eigen::MatrixXd wq = to_eigen(w.w_query);
    const Eigen::MatrixXd wuk = to_eigen(w.w_up_key);
    const Eigen::MatrixXd wuv = to_eigen(w.w_up_value);
    const Eigen::MatrixXd wo = to_eigen(w.w_out);
    CHECK(folded.w_query_latent.rows() == 4);
    CHECK(folded.w_query_latent.cols() == 3 * 2);
    CHECK(folded.w_out_latent.rows() == 3 * 2);
    CHECK(folded.w_out_latent.cols() == 3);
    for (Eigen::Index a = 0; a < 3; ++a) {
        INFO("head " << a << ": d×d_c = 4×2 and d_c×d_out = 2×3");
        const Eigen::MatrixXd query = wq.middleCols(a * 2, 2) * wuk.middleCols(a * 2, 2).transpose();
        const Eigen::MatrixXd out = wuv.middleCols(a * 2, 2) * wo.middleRows(a * 2, 2);
        CHECK((to_eigen(folded.w_query_latent).middleCols(a * 2, 2) - query).cwiseAbs().maxCoeff() < 1e-15);
        CHECK((to_eigen(folded.w_out_latent).middleRows(a * 2, 2) - out).cwiseAbs().maxCoeff() < 1e-15);
    }
}

TEST_CASE("A turned content key cannot be folded: the matrix between x_i and c_j depends on j − i", "[ch20]")
{
    sa::SplitMix64 generator(2300);
    const sa::Matrix wq = sa::random_matrix(3, 4, generator);
    const sa::Matrix wuk = sa::random_matrix(2, 4, generator);
    const sa::Matrix fixed = sa::multiply_transposed_rhs(wq, wuk);
    INFO("R_i R_iᵀ = I: at distance 0 it is the fixed fold W_Q W_UKᵀ, at any position");
    CHECK(sa::largest_difference(sa::rotated_fold(wq, wuk, 0, 0), fixed) < 1e-15);
    CHECK(sa::largest_difference(sa::rotated_fold(wq, wuk, 7, 7), fixed) < 1e-12);
    INFO("R_i R_jᵀ = R_(i−j): the same at (3, 1) and (5, 3), another at (1, 0)");
    CHECK(sa::largest_difference(sa::rotated_fold(wq, wuk, 3, 1), sa::rotated_fold(wq, wuk, 5, 3)) < 1e-12);
    CHECK(sa::largest_difference(sa::rotated_fold(wq, wuk, 1, 0), fixed) > 0.1);
    // From the turn itself: x W_Q R_i · c W_UK R_j for one x and c.
    const sa::Matrix x = sa::random_matrix(1, 3, generator);
    const sa::Matrix c = sa::random_matrix(1, 2, generator);
    const Eigen::MatrixXd q = turned(to_eigen(x) * to_eigen(wq), 4);
    const Eigen::MatrixXd k = turned(to_eigen(c) * to_eigen(wuk), 1);
    const double score = (q * k.transpose())(0, 0);
    CHECK_THAT((to_eigen(x) * to_eigen(sa::rotated_fold(wq, wuk, 4, 1)) * to_eigen(c).transpose())(0, 0),
               WithinAbs(score, 1e-12));
}

TEST_CASE("rope_heads_backward is the transpose of rope_heads: ⟨rope(x), g⟩ = ⟨x, back(g)⟩", "[ch20]")
{
    sa::SplitMix64 generator(2400);
    const sa::Matrix x = sa::random_matrix(3, 8, generator);
    const sa::Matrix g = sa::random_matrix(3, 8, generator);
    const Eigen::MatrixXd forward = to_eigen(sa::rope_heads(x, 2, 3));
    const Eigen::MatrixXd back = to_eigen(sa::rope_heads_backward(g, 2, 3));
    INFO("a rotation's transpose is its inverse, so the two inner products are one number");
    CHECK_THAT((forward.array() * to_eigen(g).array()).sum(), WithinAbs((to_eigen(x).array() * back.array()).sum(), 1e-12));
    INFO("each head turns on its own: head 1 of rope_heads is rope of head 1 alone");
    CHECK((forward.middleCols(4, 4) - turned(to_eigen(x).middleCols(4, 4), 3)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("Backward through the latent agrees with central differences, for X and every matrix", "[ch20]")
{
    const auto seed = GENERATE(range(1, 9));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(2500 + seed));
    LatentShapes s = random_latent_shapes(generator, true);
    s.position = 0;
    sa::LatentWeights w = random_weights(generator, s);
    const sa::Matrix x = sa::random_matrix(s.n, s.d, generator);
    const sa::Matrix mask = seed % 2 == 0 ? sa::causal_mask(s.n, s.n) : zeros(s.n, s.n);
    const sa::Matrix d_outputs = sa::random_matrix(s.n, s.out, generator);
    const sa::LatentGrads grads = sa::latent_self_attention_backward(x, w, mask, s.heads, d_outputs);
    constexpr double step = 1e-5;
    // Entries of size 1: the central difference is off by about step²/6 from the curvature and
    // ε/step from rounding, both near 1e-11, far below 1e-7 of the largest entry.
    INFO(describe(s) << ": the shared rotary key adds every head's share, the latent both K's and V's");
    CHECK(sa::relative_difference(
              grads.d_inputs,
              sa::numeric_gradient(
                  [&](const sa::Matrix& at) {
                      return sa::upstream_loss(sa::latent_self_attention(at, w, mask, s.heads), d_outputs);
                  },
                  x, step)) < 1e-7);
    const std::vector<std::pair<const char*, sa::Matrix sa::LatentWeights::*>> matrices = {
        {"W_Q", &sa::LatentWeights::w_query},         {"W_QR", &sa::LatentWeights::w_query_rotary},
        {"W_DKV", &sa::LatentWeights::w_down},        {"W_UK", &sa::LatentWeights::w_up_key},
        {"W_UV", &sa::LatentWeights::w_up_value},     {"W_KR", &sa::LatentWeights::w_key_rotary},
        {"W_O", &sa::LatentWeights::w_out}};
    for (const auto& [name, member] : matrices) {
        const auto loss = [&, member = member](const sa::Matrix& at) {
            sa::LatentWeights changed = w;
            changed.*member = at;
            return sa::upstream_loss(sa::latent_self_attention(x, changed, mask, s.heads), d_outputs);
        };
        INFO("d" << name);
        CHECK(sa::relative_difference(grads.d_weights.*member, sa::numeric_gradient(loss, w.*member, step)) < 1e-7);
    }
}

TEST_CASE("A fully masked row gives a zero output row in both forms, never NaN", "[ch20]")
{
    sa::SplitMix64 generator(2600);
    const LatentShapes s{2, 3, 2, 3, 2, 2, 2, 2, 2, 0};
    const sa::LatentWeights w = random_weights(generator, s);
    const sa::Matrix x = sa::random_matrix(2, 3, generator);
    const sa::LatentCache cache = sa::latent_cache(sa::random_matrix(3, 3, generator), w, 0);
    sa::Matrix mask = zeros(2, 3);
    for (std::size_t j = 0; j < 3; ++j) {
        mask(1, j) = -infinity;
    }
    for (const sa::Matrix& y : {sa::latent_attention(x, 4, cache, w, mask, 2),
                                sa::latent_attention_folded(x, 4, cache, w, sa::fold_latent(w, 2), mask, 2)}) {
        CHECK(y(1, 0) == 0.0);
        CHECK(y(1, 1) == 0.0);
        CHECK(std::isfinite(y(0, 0)));
    }
}

TEST_CASE("The latent cache: n_layers·(d_c + d_R)·t·σ bytes, and DeepSeek-V2's beside its multi-head form", "[ch20]")
{
    INFO("the book's model, d_c = 16, d_R = 8, one layer, F64: (16 + 8)·8 = 192 bytes per position");
    CHECK(sa::latent_cache_bytes(1, 16, 8, 1, 8) == 192);
    INFO("DeepSeek-V2: 60 layers, d_c = 512, d_R = 64, 16-bit numbers: 60·576·2 = 69120 bytes per token");
    CHECK(sa::latent_cache_bytes(60, 512, 64, 1, 2) == 69120);
    INFO("its 128 heads of width 128 as multi-head attention: 2·60·128·128·2 = 3932160 bytes, 56.9 times more");
    CHECK(2ULL * 60 * 128 * 128 * 2 == 3932160ULL);
    CHECK_THAT(3932160.0 / 69120.0, WithinAbs(56.889, printed));
    INFO("(d_c + d_R) / (2 d_h) = 576 / 256 = 2.25 key/value heads' worth, as the paper says");
    CHECK_THAT((512.0 + 64.0) / (2.0 * 128.0), WithinAbs(2.25, 1e-15));
    INFO("past 4 GiB at 128K positions it does not wrap: 60·576·131072·2");
    CHECK(sa::latent_cache_bytes(60, 512, 64, 131072, 2) == 60ULL * 576ULL * 131072ULL * 2ULL);
}

TEST_CASE("Latent widths that do not fit are refused, naming the problem and the shape expected", "[ch20]")
{
    sa::SplitMix64 generator(2700);
    const LatentShapes s{2, 2, 2, 3, 2, 2, 2, 2, 2, 0};
    const sa::LatentWeights w = random_weights(generator, s);
    sa::LatentWeights wide = w;
    wide.w_down = sa::random_matrix(3, 4, generator);
    CHECK_THROWS_WITH(sa::latent_widths(wide, 2), Contains("a latent of d_c = 4 for d = 3") &&
                                                      Contains("1 ≤ d_c ≤ d"));
    sa::LatentWeights odd = w;
    odd.w_key_rotary = sa::random_matrix(3, 3, generator);
    CHECK_THROWS_WITH(sa::latent_widths(odd, 2), Contains("d_R must be even"));
    sa::LatentWeights short_up = w;
    short_up.w_up_key = sa::random_matrix(3, 4, generator);
    CHECK_THROWS_WITH(sa::latent_widths(short_up, 2), Contains("W_UK needs 2 rows (one per latent feature, d_c = 2)"));
    CHECK_THROWS_WITH(sa::latent_widths(w, 0), Contains("at least 1"));
    CHECK_THROWS_WITH(sa::latent_widths(w, 3), Contains("does not split into 3 heads"));
    const sa::LatentCache cache = sa::latent_cache(sa::random_matrix(2, 3, generator), w, 0);
    CHECK_THROWS_WITH(sa::latent_attention(sa::random_matrix(2, 3, generator), 0, cache, w, zeros(2, 3), 2),
                      Contains("the mask needs to be 2×2"));
    CHECK_THROWS_WITH(sa::rope_heads(sa::random_matrix(1, 6, generator), 2, 0), Contains("even width"));
}

namespace {

// The chapter's example: "Mouse eats cheese", E = [2, 0; 1, 2; 2, 0] at positions 0, 1, 2; h = 2 heads,
// W_Q = [swap | I], a latent of one number (the mean of the features), W_UK = [1, 0, 1, 0], W_UV = [1, 2],
// W_KR = I, W_QR = [I | swap], W_O = I.
struct Example {
    sa::Matrix embeddings{{2, 0}, {1, 2}, {2, 0}};
    sa::LatentWeights weights{sa::Matrix{{0, 1, 1, 0}, {1, 0, 0, 1}}, sa::Matrix{{1, 0, 0, 1}, {0, 1, 1, 0}},
                              sa::Matrix{{0.5}, {0.5}},             sa::Matrix{{1, 0, 1, 0}},
                              sa::Matrix{{1, 2}},                   sa::Matrix{{1, 0}, {0, 1}},
                              sa::Matrix{{1, 0}, {0, 1}}};
};

// Softmax of three scores, and the weighted sum of three values.
double mixed(const std::vector<double>& scores, const std::vector<double>& values)
{
    double total = 0.0;
    double sum = 0.0;
    for (std::size_t j = 0; j < scores.size(); ++j) {
        total += std::exp(scores[j]);
        sum += std::exp(scores[j]) * values[j];
    }
    return sum / total;
}

}  // namespace

TEST_CASE("The worked example: the latent, the shared rotary key and Mouse's outputs by hand", "[ch20]")
{
    const Example example;
    const sa::LatentCache cache = sa::latent_cache(example.embeddings, example.weights, 0);
    INFO("c = (x1 + x2)/2: Mouse 1, Eats 1.5, Cheese 1");
    CHECK_THAT(cache.latent(1, 0), WithinAbs(1.5, 1e-15));
    const double c1 = std::cos(1.0);
    const double s1 = std::sin(1.0);
    INFO("k^R = rope(x): Eats (1, 2) turned by 1 radian, Cheese (2, 0) by 2");
    CHECK_THAT(cache.rotary_keys(1, 0), WithinAbs(c1 - 2 * s1, 1e-15));
    CHECK_THAT(cache.rotary_keys(1, 0), WithinAbs(-1.143, printed));
    CHECK_THAT(cache.rotary_keys(1, 1), WithinAbs(1.922, printed));
    CHECK_THAT(cache.rotary_keys(2, 0), WithinAbs(-0.832, printed));
    CHECK_THAT(cache.rotary_keys(2, 1), WithinAbs(1.819, printed));
    const sa::Matrix outputs = sa::latent_attention(example.embeddings, 0, cache, example.weights,
                                                    zeros(3, 3), 2);
    // Head 0, Mouse: q^C = (0, 2) meets k^C = (c, 0): 0; q^R = (2, 0) meets k^R: 2·k^R_1. Over √(2 + 2) = 2.
    const std::vector<double> head0 = {2.0, c1 - 2 * s1, 2 * std::cos(2.0)};
    INFO("head 0, Mouse: weights ∝ e², e^(cos 1 − 2 sin 1), e^(2 cos 2) ≈ 0.907, 0.039, 0.053; v = c");
    CHECK_THAT(std::exp(head0[0]) / (std::exp(head0[0]) + std::exp(head0[1]) + std::exp(head0[2])),
               WithinAbs(0.907, printed));
    CHECK_THAT(outputs(0, 0), WithinAbs(mixed(head0, {1.0, 1.5, 1.0}), 1e-12));
    CHECK_THAT(outputs(0, 0), WithinAbs(1.020, printed));
    // Head 1, Mouse: q^C = (2, 0) meets (c, 0): 2c; q^R = rope((0, 2)) at 0 meets k^R: 2·k^R_2.
    const std::vector<double> head1 = {(2.0 + 0.0) / 2, (3.0 + 2 * (s1 + 2 * c1)) / 2,
                                       (2.0 + 2 * 2 * std::sin(2.0)) / 2};
    INFO("head 1, Mouse: scores 1, 1.5 + sin 1 + 2 cos 1, 1 + 2 sin 2; v = 2c");
    CHECK_THAT(outputs(0, 1), WithinAbs(mixed(head1, {2.0, 3.0, 2.0}), 1e-12));
    CHECK_THAT(outputs(0, 1), WithinAbs(2.611, printed));
}

TEST_CASE("The worked example folded: W~_Q and W~_O by hand, and the same outputs", "[ch20]")
{
    const Example example;
    const sa::FoldedWeights folded = sa::fold_latent(example.weights, 2);
    INFO("W~_Q,0 = swap·(1, 0)ᵀ = (0, 1)ᵀ; W~_Q,1 = I·(1, 0)ᵀ = (1, 0)ᵀ");
    CHECK(sa::identical(folded.w_query_latent, sa::Matrix{{0, 1}, {1, 0}}));
    INFO("W~_O,0 = 1·(1, 0); W~_O,1 = 2·(0, 1)");
    CHECK(sa::identical(folded.w_out_latent, sa::Matrix{{1, 0}, {0, 2}}));
    const sa::LatentCache cache = sa::latent_cache(example.embeddings, example.weights, 0);
    for (const bool causal : {false, true}) {
        const sa::Matrix mask = causal ? sa::causal_mask(3, 3) : zeros(3, 3);
        CHECK(sa::largest_difference(
                  sa::latent_attention_folded(example.embeddings, 0, cache, example.weights, folded, mask, 2),
                  sa::latent_attention(example.embeddings, 0, cache, example.weights, mask, 2)) < 1e-12);
    }
}

TEST_CASE("The worked example's turned content key: (−sin Δ, cos Δ) at distance Δ, never one matrix", "[ch20]")
{
    const Example example;
    const sa::Matrix swap{{0, 1}, {1, 0}};
    const sa::Matrix first{{1, 0}};
    INFO("row (0, 1) of the swap turned by Δ is (−sin Δ, cos Δ); row (1, 0) is (cos Δ, sin Δ); W_UK,0 reads feature 1");
    for (const std::size_t distance : {0, 1, 2}) {
        const sa::Matrix fold = sa::rotated_fold(swap, first, distance + 3, 3);
        const auto delta = static_cast<double>(distance);
        CHECK_THAT(fold(0, 0), WithinAbs(-std::sin(delta), 1e-12));
        CHECK_THAT(fold(1, 0), WithinAbs(std::cos(delta), 1e-12));
    }
    CHECK_THAT(-std::sin(1.0), WithinAbs(-0.841, printed));
    CHECK_THAT(std::cos(1.0), WithinAbs(0.540, printed));
    CHECK_THAT(-std::sin(2.0), WithinAbs(-0.909, printed));
    CHECK_THAT(std::cos(2.0), WithinAbs(-0.416, printed));
    INFO("from distance 0, (0, 1): sin 1 ≈ 0.841 apart at distance 1, 1 − cos 2 ≈ 1.416 at distance 2");
    CHECK_THAT(std::max(std::sin(1.0), 1 - std::cos(1.0)), WithinAbs(0.841, printed));
    CHECK_THAT(std::max(std::sin(2.0), 1 - std::cos(2.0)), WithinAbs(1.416, printed));
}

TEST_CASE("The worked example's backward: dW_DKV and dW_KR from central differences of the definition", "[ch20]")
{
    const Example example;
    const LatentShapes s{3, 3, 2, 2, 1, 2, 2, 1, 2, 0};
    const sa::Matrix ones(3, 2, 1.0);
    const sa::LatentGrads grads =
        sa::latent_self_attention_backward(example.embeddings, example.weights, zeros(3, 3), 2, ones);
    // The loss is the sum of the outputs; the Eigen reference above computes it from the definition.
    const auto loss = [&](const sa::LatentWeights& w) {
        return reference(to_eigen(example.embeddings), 0, to_eigen(example.embeddings), w, Eigen::MatrixXd::Zero(3, 3),
                         s).sum();
    };
    const auto numeric = [&](sa::Matrix sa::LatentWeights::*member, std::size_t r, std::size_t c) {
        constexpr double step = 1e-5;
        sa::LatentWeights up = example.weights;
        sa::LatentWeights down = example.weights;
        (up.*member)(r, c) += step;
        (down.*member)(r, c) -= step;
        return (loss(up) - loss(down)) / (2 * step);
    };
    INFO("central differences of the definition, step 1e-5: off by about 1e-10 at entries of size 10");
    CHECK_THAT(grads.d_weights.w_down(0, 0), WithinAbs(numeric(&sa::LatentWeights::w_down, 0, 0), 1e-7));
    CHECK_THAT(grads.d_weights.w_down(1, 0), WithinAbs(numeric(&sa::LatentWeights::w_down, 1, 0), 1e-7));
    CHECK_THAT(numeric(&sa::LatentWeights::w_down, 0, 0), WithinAbs(12.454, printed));
    CHECK_THAT(numeric(&sa::LatentWeights::w_down, 1, 0), WithinAbs(11.093, printed));
    const std::vector<double> rotary = {-0.832, 0.420, 0.774, 1.149};
    for (std::size_t k = 0; k < 4; ++k) {
        CHECK_THAT(grads.d_weights.w_key_rotary(k / 2, k % 2),
                   WithinAbs(numeric(&sa::LatentWeights::w_key_rotary, k / 2, k % 2), 1e-7));
        CHECK_THAT(numeric(&sa::LatentWeights::w_key_rotary, k / 2, k % 2), WithinAbs(rotary[k], printed));
    }
}

TEST_CASE("The cache tables: the book's model and DeepSeek-V2, from 2·n_layers·h_kv·d_h·σ and n_layers·(d_c + d_R)·σ",
          "[ch20]")
{
    INFO("the book's model: one layer, d_h = 16, F64, t = 64");
    CHECK(2 * 1 * 4 * 16 * 8 == 1024);
    CHECK(sa::latent_cache_bytes(1, 8, 8, 1, 8) == (8 + 8) * 8);
    CHECK(sa::latent_cache_bytes(1, 32, 8, 64, 8) == 40 * 8 * 64);
    CHECK(sa::latent_cache_bytes(1, 32, 8, 64, 8) == 20480);
    INFO("(d_c + d_R)/(2 d_h): 16/32 = 0.5, 24/32 = 0.75, 40/32 = 1.25 key/value heads' worth");
    CHECK_THAT(40.0 / 32.0, WithinAbs(1.25, 1e-15));
    INFO("DeepSeek-V2: 60 layers, 16-bit numbers, t = 4096");
    CHECK(2ULL * 60 * 32 * 128 * 2 == 983040ULL);
    CHECK(2ULL * 60 * 1 * 128 * 2 == 30720ULL);
    CHECK(sa::latent_cache_bytes(60, 512, 64, 4096, 2) == 283115520ULL);
    CHECK(2ULL * 60 * 128 * 128 * 2 * 4096 == 16106127360ULL);
}


namespace {

sa::Batch small_batch(sa::SplitMix64& generator, std::size_t vocabulary, std::size_t windows, std::size_t window)
{
    sa::Batch batch{{}, {}, window};
    for (std::size_t i = 0; i < windows * window; ++i) {
        batch.inputs.push_back(below(generator, vocabulary));
        batch.targets.push_back(below(generator, vocabulary));
    }
    return batch;
}

// The model from its definition: each window through latent_self_attention() (the plain steps) under a causal
// mask, added to the stream, then W_U.
sa::Matrix plain_logits(const sa::LatentModel& model, const std::vector<std::size_t>& tokens, std::size_t window)
{
    const sa::Matrix x = sa::embed(model.embedding, tokens);
    sa::Matrix stream = x;
    for (std::size_t first = 0; first < tokens.size(); first += window) {
        const std::size_t rows = std::min(window, tokens.size() - first);
        sa::Matrix part(rows, x.cols());
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < x.cols(); ++c) {
                part(r, c) = x(first + r, c);
            }
        }
        const sa::Matrix y = sa::latent_self_attention(part, model.layer, sa::causal_mask(rows, rows), model.shape.heads);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < x.cols(); ++c) {
                stream(first + r, c) += y(r, c);
            }
        }
    }
    return sa::multiply(stream, model.unembedding);
}

}  // namespace

TEST_CASE("Latent model: its logits are the plain steps window by window, through chapter 14's tiled kernel",
          "[ch20]")
{
    sa::SplitMix64 generator(2800);
    const sa::LatentModelShape shape{7, 8, 2, 6, 3, 4};
    const sa::LatentModel model = sa::random_latent_model(shape, generator);
    std::vector<std::size_t> tokens;
    for (std::size_t i = 0; i < 6 + 6 + 4; ++i) {  // two windows of 6 and a last one of 4
        tokens.push_back(below(generator, 7));
    }
    INFO("the values padded with d_R zeros make the kernel's heads d_h + d_R wide: its root is the latent's scale");
    CHECK(sa::largest_difference(sa::latent_logits(model, tokens, 6), plain_logits(model, tokens, 6)) < 1e-12);
}

TEST_CASE("Latent model: the gradient of every parameter agrees with central differences of the loss", "[ch20]")
{
    sa::SplitMix64 generator(2900);
    const sa::LatentModelShape shape{5, 8, 2, 4, 3, 2};
    sa::LatentModel model = sa::random_latent_model(shape, generator);
    for (sa::Matrix* parameter : sa::latent_parameters(model)) {  // W_U at 0.01 would leave the layers' gradients tiny
        for (std::size_t i = 0; i < parameter->rows() * parameter->cols(); ++i) {
            parameter->data()[i] *= 3.0;
        }
    }
    const sa::Batch batch = small_batch(generator, 5, 2, 4);
    sa::LatentModel grads = sa::latent_gradient(model, batch, nullptr);
    sa::LatentModel changed = model;
    const std::vector<sa::Matrix*> at = sa::latent_parameters(changed);
    const std::vector<sa::Matrix*> analytic = sa::latent_parameters(grads);
    const std::vector<std::string> names = sa::latent_parameter_names();
    constexpr double step = 1e-5;
    for (std::size_t p = 0; p < at.size(); ++p) {
        const sa::Matrix numeric = sa::numeric_gradient(
            [&](const sa::Matrix& value) {
                const sa::Matrix kept = *at[p];
                *at[p] = value;
                const double loss = sa::cross_entropy(plain_logits(changed, batch.inputs, 4), batch.targets).loss;
                *at[p] = kept;
                return loss;
            },
            *at[p], step);
        INFO(names[p] << ": the loss from the plain steps, its gradient from the tiled kernel and the chain above");
        CHECK(sa::relative_difference(*analytic[p], numeric) < 1e-6);
    }
}

TEST_CASE("Latent model: parameters from the shape, names in the order of the matrices, sizes refused", "[ch20]")
{
    INFO("V = 63, d = 64, h = 4, d_c = 16, d_R = 8: 2·63·64 + 2·64² + 64·4·8 + 64·8 + 64·16 + 2·16·64");
    CHECK(sa::latent_parameter_count({63, 64, 4, 64, 16, 8}) == 8064 + 8192 + 2048 + 512 + 1024 + 2048);
    CHECK(sa::latent_parameter_count({63, 64, 4, 64, 32, 8}) == 24960);
    sa::SplitMix64 generator(3000);
    sa::LatentModel model = sa::random_latent_model({63, 64, 4, 64, 16, 8}, generator);
    std::size_t entries = 0;
    for (const sa::Matrix* parameter : sa::latent_parameters(model)) {
        entries += parameter->rows() * parameter->cols();
    }
    CHECK(entries == 21888);
    CHECK(sa::latent_parameter_names().size() == sa::latent_parameters(model).size());
    CHECK_THROWS_WITH(sa::random_latent_model({63, 64, 4, 64, 65, 8}, generator),
                      Contains("d_c = 65 for d = 64") && Contains("1 ≤ d_c ≤ d"));
    CHECK_THROWS_WITH(sa::random_latent_model({63, 64, 4, 64, 0, 8}, generator), Contains("d_c = 0"));
    CHECK_THROWS_WITH(sa::random_latent_model({63, 64, 4, 64, 16, 3}, generator), Contains("d_R = 3"));
}

TEST_CASE("Latent model file: saved and loaded bit for bit, and malformed files refused in one line", "[ch20]")
{
    sa::SplitMix64 generator(3100);
    const sa::LatentModel model = sa::random_latent_model({4, 8, 2, 6, 3, 2}, generator);
    const std::string bytes = sa::save_latent_safetensors(model, "abcd");
    const sa::SavedLatentModel loaded = sa::load_latent_safetensors(bytes);
    CHECK(loaded.vocabulary == "abcd");
    CHECK(loaded.model.shape.latent == 3);
    CHECK(loaded.model.shape.rotary == 2);
    CHECK(loaded.model.shape.context == 6);
    sa::LatentModel original = model;
    sa::LatentModel back = loaded.model;
    const std::vector<sa::Matrix*> expected = sa::latent_parameters(original);
    const std::vector<sa::Matrix*> got = sa::latent_parameters(back);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO(sa::latent_parameter_names()[i] << ": every double written and read as its 8 bytes");
        CHECK(sa::identical(*got[i], *expected[i]));
    }
    INFO("a file one byte short, chapter 14's model, a latent wider than d, a NaN: each one line");
    CHECK_THROWS_WITH(sa::load_latent_safetensors(bytes.substr(0, bytes.size() - 1)),
                      Contains("truncated or has bytes to spare"));
    sa::SplitMix64 other(3101);
    const std::string chapter14 = sa::save_safetensors(sa::random_model({4, 8, 2, 1, 6}, other), "abcd");
    CHECK_THROWS_WITH(sa::load_latent_safetensors(chapter14), Contains("the header has 6 tensors; a latent model has 9"));
    std::string wide = bytes;
    const std::size_t at = wide.find("\"latent\":\"3\"");
    REQUIRE(at != std::string::npos);
    wide[at + 10] = '9';  // d_c = 9 for d = 8
    CHECK_THROWS_WITH(sa::load_latent_safetensors(wide), Contains("gives latent = 9; expected 1 to 8"));
    std::string not_finite = bytes;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(nan);
    for (std::size_t b = 0; b < 8; ++b) {  // the last entry of W_U
        not_finite[not_finite.size() - 8 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
    }
    CHECK_THROWS_WITH(sa::load_latent_safetensors(not_finite), Contains("tensor \"unembedding\" holds nan"));
}
