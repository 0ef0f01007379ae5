// Chapter 11, Gradients: the backward pass of every step, checked against central finite differences.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attention.hpp"
#include "attention_weights.hpp"
#include "example.hpp"
#include "gradient_check.hpp"
#include "gradient_experiment.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// The finite-difference step and the tolerance, and why they go together. A central
// difference (L(x+h) − L(x−h)) / 2h is off by about h²·L'''/6 from the curvature and by about
// ε·|L|/h from rounding, with ε = 2.2e-16. The losses here and their derivatives are of size 1
// to 10, so with h = 1e-5 both errors are near 1e-10 or below, and a relative difference of
// 1e-7 leaves a margin of a hundred or more. A real mistake (a missing transpose, a missing
// term, a wrong sign) gives a relative difference of order 1.
constexpr double step = 1e-5;
constexpr double agree = 1e-7;

// The loss L = Σ dO∘O has dL/dO = dO exactly, so any upstream gradient can be checked.
double loss_of(const sa::Matrix& outputs, const sa::Matrix& upstream)
{
    return sa::upstream_loss(outputs, upstream);
}

void require_agree(const std::string& what, const sa::Matrix& analytic, const sa::Matrix& numeric)
{
    INFO(what << ": analytic and central-difference gradients (h = 1e-5) must agree to 1e-7 relative");
    REQUIRE(analytic.rows() == numeric.rows());
    REQUIRE(analytic.cols() == numeric.cols());
    CHECK(sa::relative_difference(analytic, numeric) < agree);
}

sa::Matrix gradient_of(const std::function<double(const sa::Matrix&)>& loss, const sa::Matrix& at)
{
    return sa::numeric_gradient(loss, at, step);
}

// Scores and weights of the worked example, from the formula: the Mouse row gives
// w = 1/(2 + e^{2√2}) to Mouse and Cheese and W = e^{2√2}/(2 + e^{2√2}) to Eats.
const double e_two_root_two = std::exp(2.0 * std::sqrt(2.0));
const double small = 1.0 / (2.0 + e_two_root_two);
const double large = e_two_root_two / (2.0 + e_two_root_two);
const double third = 1.0 / 3.0;

}  // namespace

// ---------------------------------------------------------------------------------------
// mix_backward: O = A·V, dA = dO·Vᵀ, dV = Aᵀ·dO

TEST_CASE("mix_backward by hand: dA is dO dotted with each value, dV gathers dO by the weights", "[ch11]")
{
    const sa::Matrix weights{{0.25, 0.75}};     // one query, two keys
    const sa::Matrix values{{1, 2, 3}, {4, 5, 6}};  // d_v = 3
    const sa::Matrix upstream{{1, 0, -1}};
    const sa::MixGrads grads = sa::mix_backward(weights, values, upstream);
    REQUIRE(grads.d_weights.rows() == 1);
    REQUIRE(grads.d_weights.cols() == 2);
    REQUIRE(grads.d_values.rows() == 2);
    REQUIRE(grads.d_values.cols() == 3);
    INFO("dA_00 = dO_0 · v_0 = 1*1 + 0*2 - 1*3 = -2; dA_01 = 1*4 - 1*6 = -2");
    CHECK(grads.d_weights(0, 0) == -2.0);
    CHECK(grads.d_weights(0, 1) == -2.0);
    INFO("dV_jd = A_0j · dO_0d: row 0 is 0.25·[1, 0, -1], row 1 is 0.75·[1, 0, -1]");
    CHECK(grads.d_values(0, 0) == 0.25);
    CHECK(grads.d_values(0, 2) == -0.25);
    CHECK(grads.d_values(1, 0) == 0.75);
    CHECK(grads.d_values(1, 1) == 0.0);
}

TEST_CASE("mix_backward agrees with finite differences with n ≠ m and d_k ≠ d_v", "[ch11]")
{
    sa::SplitMix64 generator(1101);
    const sa::Matrix weights = sa::softmax_rows(sa::random_matrix(2, 4, generator));  // n = 2, m = 4
    const sa::Matrix values = sa::random_matrix(4, 3, generator);                      // d_v = 3
    const sa::Matrix upstream = sa::random_matrix(2, 3, generator);
    const sa::MixGrads grads = sa::mix_backward(weights, values, upstream);
    require_agree("dA", grads.d_weights,
                  gradient_of([&](const sa::Matrix& a) { return loss_of(sa::mix(a, values), upstream); }, weights));
    require_agree("dV", grads.d_values,
                  gradient_of([&](const sa::Matrix& v) { return loss_of(sa::mix(weights, v), upstream); }, values));
}

TEST_CASE("mix_backward rejects shapes that do not fit, naming the operation and both shapes", "[ch11]")
{
    const sa::Matrix weights(3, 3, third);
    CHECK_THROWS_WITH(sa::mix_backward(weights, sa::Matrix(2, 2), sa::Matrix(3, 2)),
                      Contains("mix_backward") && Contains("3×3") && Contains("2×2"));
    CHECK_THROWS_WITH(sa::mix_backward(weights, sa::Matrix(3, 2), sa::Matrix(2, 2)),
                      Contains("mix_backward") && Contains("dO is 2×2") && Contains("3×2"));
    CHECK_THROWS_AS(sa::mix_backward(weights, sa::Matrix(3, 2), sa::Matrix(3, 3)), sa::ShapeError);
}

// ---------------------------------------------------------------------------------------
// softmax_rows_backward: dS' = A ∘ (dA − rowsum(dA ∘ A))

TEST_CASE("softmax_rows_backward of two scores is p(1−p) times the difference of the blames", "[ch11]")
{
    // With two entries, A = [p, 1−p] and rowsum(dA∘A) = p·dA_0 + (1−p)·dA_1, so
    // dS'_0 = p(dA_0 − p·dA_0 − (1−p)·dA_1) = p(1−p)(dA_0 − dA_1), and dS'_1 is its negative:
    // the factor p(1−p) of chapter 3.
    const double p = 0.8;
    const sa::Matrix weights{{p, 1.0 - p}};
    const sa::Matrix blame{{3.0, 1.0}};
    const sa::Matrix result = sa::softmax_rows_backward(weights, blame);
    INFO("p(1−p)(dA_0 − dA_1) = 0.8·0.2·2 = 0.32");
    CHECK_THAT(result(0, 0), WithinAbs(0.32, 1e-15));
    CHECK_THAT(result(0, 1), WithinAbs(-0.32, 1e-15));
}

TEST_CASE("softmax_rows_backward agrees with finite differences on random rows with n ≠ m", "[ch11]")
{
    sa::SplitMix64 generator(1102);
    const sa::Matrix scores = sa::random_matrix(3, 5, generator);
    const sa::Matrix blame = sa::random_matrix(3, 5, generator);
    const sa::Matrix weights = sa::softmax_rows(scores);
    const sa::Matrix analytic = sa::softmax_rows_backward(weights, blame);
    require_agree("dS'", analytic,
                  gradient_of([&](const sa::Matrix& s) { return loss_of(sa::softmax_rows(s), blame); }, scores));
}

TEST_CASE("softmax_rows_backward gives masked entries exactly 0 and a fully masked row all zeros", "[ch11]")
{
    sa::SplitMix64 generator(1103);
    sa::Matrix scores = sa::random_matrix(3, 4, generator);
    scores(0, 1) = -infinity;
    scores(0, 3) = -infinity;
    for (std::size_t j = 0; j < 4; ++j) {
        scores(2, j) = -infinity;  // query 2 may use no key at all
    }
    const sa::Matrix blame = sa::random_matrix(3, 4, generator);
    const sa::Matrix weights = sa::softmax_rows(scores);
    const sa::Matrix analytic = sa::softmax_rows_backward(weights, blame);
    INFO("a masked entry has weight 0, and 0·(dA − c) = 0 for finite dA");
    CHECK(analytic(0, 1) == 0.0);
    CHECK(analytic(0, 3) == 0.0);
    for (std::size_t j = 0; j < 4; ++j) {
        CHECK(analytic(2, j) == 0.0);
    }
    INFO("the entries that take part still get their gradient");
    require_agree("dS' with a mask", analytic,
                  gradient_of([&](const sa::Matrix& s) { return loss_of(sa::softmax_rows(s), blame); }, scores));
}

TEST_CASE("Shifting a whole score row changes nothing, so its gradient along the shift is 0", "[ch11]")
{
    sa::SplitMix64 generator(1104);
    const sa::Matrix scores = sa::random_matrix(4, 6, generator);
    const sa::Matrix blame = sa::random_matrix(4, 6, generator);
    const sa::Matrix analytic = sa::softmax_rows_backward(sa::softmax_rows(scores), blame);
    for (std::size_t i = 0; i < scores.rows(); ++i) {
        // dL/dt of L(S + t·1 in row i) is the sum of row i of dS'.
        double along_shift = 0.0;
        double size = 0.0;
        for (std::size_t j = 0; j < scores.cols(); ++j) {
            along_shift += analytic(i, j);
            size += std::fabs(analytic(i, j));
        }
        INFO("row " << i << ": softmax(s + t) = softmax(s), so the entries of dS' cancel (sum of |entries| "
                    << size << ")");
        CHECK_THAT(along_shift, WithinAbs(0.0, 1e-15));
        // And the loss itself does not move when the row is shifted by ±1000.
        const auto shifted = [&](double by) {
            sa::Matrix moved = scores;
            for (std::size_t j = 0; j < moved.cols(); ++j) {
                moved(i, j) += by;
            }
            return loss_of(sa::softmax_rows(moved), blame);
        };
        CHECK_THAT(shifted(1000.0) - shifted(-1000.0), WithinAbs(0.0, 1e-12));
    }
}

TEST_CASE("softmax_rows_backward rejects a gradient of another shape", "[ch11]")
{
    CHECK_THROWS_WITH(sa::softmax_rows_backward(sa::Matrix(3, 3, third), sa::Matrix(3, 2)),
                      Contains("softmax_rows_backward") && Contains("3×3") && Contains("3×2"));
}

// ---------------------------------------------------------------------------------------
// apply_mask_backward: pass where M = 0, exactly 0 where M = −∞

TEST_CASE("apply_mask_backward passes the gradient where the mask is 0 and gives exactly 0 where it is -inf",
          "[ch11]")
{
    const sa::Matrix mask = sa::causal_mask(2, 3);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const sa::Matrix blame{{0.5, nan, -2.0}, {1.5, -0.25, 7.0}};
    const sa::Matrix result = sa::apply_mask_backward(blame, mask);
    INFO("apply_mask sets a masked score to -inf whatever it was, so its derivative there is 0, even for NaN");
    CHECK(result(0, 0) == 0.5);
    CHECK(result(0, 1) == 0.0);
    CHECK(result(0, 2) == 0.0);
    CHECK(result(1, 0) == 1.5);
    CHECK(result(1, 1) == -0.25);
    CHECK(result(1, 2) == 0.0);
    // A masked score is -inf, so check the mask together with the softmax that follows it.
    const sa::Matrix scaled{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
    const sa::Matrix finite_blame{{0.5, 1.0, -2.0}, {1.5, -0.25, 7.0}};
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(scaled, mask));
    require_agree("through the mask and the softmax",
                  sa::apply_mask_backward(sa::softmax_rows_backward(weights, finite_blame), mask),
                  gradient_of([&](const sa::Matrix& s) {
                      return loss_of(sa::softmax_rows(sa::apply_mask(s, mask)), finite_blame); }, scaled));
}

TEST_CASE("apply_mask_backward rejects another shape and a mask entry that is not 0 or -inf", "[ch11]")
{
    CHECK_THROWS_WITH(sa::apply_mask_backward(sa::Matrix(3, 3), sa::Matrix(3, 2)),
                      Contains("apply_mask_backward") && Contains("3×3") && Contains("3×2"));
    CHECK_THROWS_AS(sa::apply_mask_backward(sa::Matrix(2, 2), sa::Matrix(2, 2, 1.0)), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// scale_backward: dS = dS_scaled / √d_k

TEST_CASE("scale_backward divides by √d_k, like scale itself", "[ch11]")
{
    const sa::Matrix blame{{4.0, -8.0}, {2.0, 0.0}, {1.0, 3.0}};
    const sa::Matrix result = sa::scale_backward(blame, 16);
    INFO("√16 = 4, so every entry is divided by 4, exactly");
    CHECK(result(0, 0) == 1.0);
    CHECK(result(0, 1) == -2.0);
    CHECK(result(1, 0) == 0.5);
    CHECK(result(2, 1) == 0.75);
    sa::SplitMix64 generator(1105);
    const sa::Matrix raw = sa::random_matrix(2, 5, generator);
    const sa::Matrix random_blame = sa::random_matrix(2, 5, generator);
    require_agree("dS", sa::scale_backward(random_blame, 7),
                  gradient_of([&](const sa::Matrix& s) { return loss_of(sa::scale(s, 7), random_blame); }, raw));
    CHECK_THROWS_WITH(sa::scale_backward(blame, 0), Contains("scale_backward") && Contains("d_k"));
}

// ---------------------------------------------------------------------------------------
// scores_backward: dQ = dS·K, dK = dSᵀ·Q

TEST_CASE("scores_backward by hand: dq_i sums the keys weighted by dS, dk_j sums the queries", "[ch11]")
{
    const sa::Matrix queries{{1, 2}};           // n = 1
    const sa::Matrix keys{{3, 0}, {0, 5}, {1, 1}};  // m = 3
    const sa::Matrix blame{{1, -1, 2}};
    const sa::ScoreGrads grads = sa::scores_backward(queries, keys, blame);
    INFO("dq = 1·[3, 0] − 1·[0, 5] + 2·[1, 1] = [5, −3]");
    CHECK(grads.d_queries(0, 0) == 5.0);
    CHECK(grads.d_queries(0, 1) == -3.0);
    INFO("dk_j = dS_0j · q: [1, 2], [−1, −2], [2, 4]");
    CHECK(grads.d_keys(0, 1) == 2.0);
    CHECK(grads.d_keys(1, 0) == -1.0);
    CHECK(grads.d_keys(2, 1) == 4.0);
}

TEST_CASE("scores_backward agrees with finite differences with n ≠ m", "[ch11]")
{
    sa::SplitMix64 generator(1106);
    const sa::Matrix queries = sa::random_matrix(2, 3, generator);  // n = 2, d_k = 3
    const sa::Matrix keys = sa::random_matrix(5, 3, generator);     // m = 5
    const sa::Matrix blame = sa::random_matrix(2, 5, generator);
    const sa::ScoreGrads grads = sa::scores_backward(queries, keys, blame);
    require_agree("dQ", grads.d_queries,
                  gradient_of([&](const sa::Matrix& q) { return loss_of(sa::scores(q, keys), blame); }, queries));
    require_agree("dK", grads.d_keys,
                  gradient_of([&](const sa::Matrix& k) { return loss_of(sa::scores(queries, k), blame); }, keys));
}

TEST_CASE("scores_backward rejects shapes that do not fit, naming the operation and both shapes", "[ch11]")
{
    CHECK_THROWS_WITH(sa::scores_backward(sa::Matrix(3, 2), sa::Matrix(3, 4), sa::Matrix(3, 3)),
                      Contains("scores_backward") && Contains("3×2") && Contains("3×4"));
    CHECK_THROWS_WITH(sa::scores_backward(sa::Matrix(3, 2), sa::Matrix(4, 2), sa::Matrix(3, 3)),
                      Contains("scores_backward") && Contains("dS is 3×3") && Contains("3×4"));
}

// ---------------------------------------------------------------------------------------
// project_backward: dW = Eᵀ·dP, dE = dP·Wᵀ

TEST_CASE("project_backward by hand: dW is Eᵀ·dP and dE is dP·Wᵀ", "[ch11]")
{
    const sa::Matrix embeddings{{2, 0}, {1, 2}};        // n = 2, d_model = 2
    const sa::Matrix weights{{1, 0, 2}, {0, 1, -1}};  // d_out = 3
    const sa::Matrix blame{{1, 0, 0}, {0, 0, 1}};
    const sa::ProjectionGrads grads = sa::project_backward(embeddings, weights, blame);
    REQUIRE(grads.d_weights.rows() == 2);
    REQUIRE(grads.d_weights.cols() == 3);
    INFO("dW_fo = Σ_t E_tf dP_to: dW_00 = 2·1 + 1·0 = 2, dW_02 = 2·0 + 1·1 = 1, dW_12 = 0·0 + 2·1 = 2");
    CHECK(grads.d_weights(0, 0) == 2.0);
    CHECK(grads.d_weights(0, 2) == 1.0);
    CHECK(grads.d_weights(1, 2) == 2.0);
    CHECK(grads.d_weights(1, 0) == 0.0);
    INFO("dE_tf = Σ_o dP_to W_fo: token 1 blames column 2 of W, [2, −1]");
    CHECK(grads.d_embeddings(1, 0) == 2.0);
    CHECK(grads.d_embeddings(1, 1) == -1.0);
    CHECK(grads.d_embeddings(0, 0) == 1.0);
}

TEST_CASE("project_backward agrees with finite differences when d_model ≠ d_out", "[ch11]")
{
    sa::SplitMix64 generator(1107);
    const sa::Matrix embeddings = sa::random_matrix(3, 4, generator);
    const sa::Matrix weights = sa::random_matrix(4, 2, generator);
    const sa::Matrix blame = sa::random_matrix(3, 2, generator);
    const sa::ProjectionGrads grads = sa::project_backward(embeddings, weights, blame);
    require_agree("dW", grads.d_weights,
                  gradient_of([&](const sa::Matrix& w) { return loss_of(sa::project(embeddings, w), blame); },
                              weights));
    require_agree("dE", grads.d_embeddings,
                  gradient_of([&](const sa::Matrix& e) { return loss_of(sa::project(e, weights), blame); },
                              embeddings));
    CHECK_THROWS_WITH(sa::project_backward(embeddings, sa::Matrix(3, 2), blame),
                      Contains("project_backward") && Contains("3×4") && Contains("3×2"));
    CHECK_THROWS_WITH(sa::project_backward(embeddings, weights, sa::Matrix(3, 3)),
                      Contains("project_backward") && Contains("dP is 3×3"));
}

// ---------------------------------------------------------------------------------------
// The chain of steps from Q, K, V, with n ≠ m, and the whole layer

TEST_CASE("The backward steps chained from Q, K and V agree with finite differences, n ≠ m, causal and not",
          "[ch11]")
{
    sa::SplitMix64 generator(1108);
    const std::size_t n = 3;
    const std::size_t m = 5;
    const sa::Matrix queries = sa::random_matrix(n, 4, generator);  // d_k = 4
    const sa::Matrix keys = sa::random_matrix(m, 4, generator);
    const sa::Matrix values = sa::random_matrix(m, 2, generator);   // d_v = 2
    const sa::Matrix upstream = sa::random_matrix(n, 2, generator);
    for (const bool causal : {false, true}) {
        INFO((causal ? "causal mask, query i sees keys 0..i" : "no mask"));
        const sa::Matrix mask = causal ? sa::causal_mask(n, m) : sa::Matrix(n, m, 0.0);
        const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(queries, keys), 4), mask));
        const sa::MixGrads mixed = sa::mix_backward(weights, values, upstream);
        const sa::Matrix d_scores = sa::scale_backward(
            sa::apply_mask_backward(sa::softmax_rows_backward(weights, mixed.d_weights), mask), 4);
        const sa::ScoreGrads scored = sa::scores_backward(queries, keys, d_scores);
        const auto loss = [&](const sa::Matrix& q, const sa::Matrix& k, const sa::Matrix& v) {
            return loss_of(sa::attention(q, k, v, mask), upstream);
        };
        require_agree("dQ", scored.d_queries,
                      gradient_of([&](const sa::Matrix& q) { return loss(q, keys, values); }, queries));
        require_agree("dK", scored.d_keys,
                      gradient_of([&](const sa::Matrix& k) { return loss(queries, k, values); }, keys));
        require_agree("dV", mixed.d_values,
                      gradient_of([&](const sa::Matrix& v) { return loss(queries, keys, v); }, values));
        if (causal) {
            INFO("query 0 sees key 0 only: its weight is 1 whatever the scores, so its score row gets no blame");
            for (std::size_t j = 0; j < m; ++j) {
                CHECK(d_scores(0, j) == 0.0);
            }
            INFO("keys 3 and 4 come after every query: masked everywhere, they get no blame at all");
            for (std::size_t d = 0; d < 4; ++d) {
                CHECK(scored.d_keys(3, d) == 0.0);
                CHECK(scored.d_keys(4, d) == 0.0);
            }
        }
    }
}

TEST_CASE("attention_backward agrees with finite differences on every gradient, d_k ≠ d_v, causal and not",
          "[ch11]")
{
    sa::SplitMix64 generator(1109);
    const std::size_t n = 4;
    const sa::Matrix embeddings = sa::random_matrix(n, 5, generator);  // d_model = 5
    const sa::Matrix w_query = sa::random_matrix(5, 3, generator);     // d_k = 3
    const sa::Matrix w_key = sa::random_matrix(5, 3, generator);
    const sa::Matrix w_value = sa::random_matrix(5, 2, generator);     // d_v = 2
    const sa::Matrix upstream = sa::random_matrix(n, 2, generator);
    for (const bool causal : {false, true}) {
        INFO((causal ? "causal mask" : "no mask"));
        const sa::Matrix mask = causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
        const auto checks = sa::gradient_checks(embeddings, w_query, w_key, w_value, mask, upstream, step);
        REQUIRE(checks.size() == 10);
        for (const auto& check : checks) {
            require_agree(check.name, check.analytic, check.numeric);
        }
        // And once more without gradient_checks: the weights and the embeddings nudged directly.
        const sa::AttentionGrads grads = sa::attention_backward(embeddings, w_query, w_key, w_value, mask, upstream);
        const auto layer = [&](const sa::Matrix& e, const sa::Matrix& wq, const sa::Matrix& wk, const sa::Matrix& wv) {
            return loss_of(sa::attention(sa::project(e, wq), sa::project(e, wk), sa::project(e, wv), mask), upstream);
        };
        require_agree("dW_Q", grads.d_w_query, gradient_of([&](const sa::Matrix& w) {
                          return layer(embeddings, w, w_key, w_value); }, w_query));
        require_agree("dW_K", grads.d_w_key, gradient_of([&](const sa::Matrix& w) {
                          return layer(embeddings, w_query, w, w_value); }, w_key));
        require_agree("dW_V", grads.d_w_value, gradient_of([&](const sa::Matrix& w) {
                          return layer(embeddings, w_query, w_key, w); }, w_value));
        require_agree("dE", grads.d_embeddings, gradient_of([&](const sa::Matrix& e) {
                          return layer(e, w_query, w_key, w_value); }, embeddings));
    }
}

TEST_CASE("attention_backward is the backward steps called one at a time, bit for bit", "[ch11]")
{
    sa::SplitMix64 generator(1110);
    const sa::Matrix embeddings = sa::random_matrix(4, 3, generator);
    const sa::Matrix w_query = sa::random_matrix(3, 2, generator);
    const sa::Matrix w_key = sa::random_matrix(3, 2, generator);
    const sa::Matrix w_value = sa::random_matrix(3, 5, generator);
    const sa::Matrix upstream = sa::random_matrix(4, 5, generator);
    const sa::Matrix mask = sa::causal_mask(4, 4);
    const sa::AttentionGrads grads = sa::attention_backward(embeddings, w_query, w_key, w_value, mask, upstream);
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const sa::Matrix keys = sa::project(embeddings, w_key);
    const sa::Matrix values = sa::project(embeddings, w_value);
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(sa::scale(sa::scores(queries, keys), 2), mask));
    const sa::MixGrads mixed = sa::mix_backward(weights, values, upstream);
    const sa::Matrix d_masked = sa::softmax_rows_backward(weights, mixed.d_weights);
    const sa::Matrix d_scaled = sa::apply_mask_backward(d_masked, mask);
    const sa::Matrix d_scores = sa::scale_backward(d_scaled, 2);
    const sa::ScoreGrads scored = sa::scores_backward(queries, keys, d_scores);
    CHECK(sa::identical(grads.d_weights, mixed.d_weights));
    CHECK(sa::identical(grads.d_values, mixed.d_values));
    CHECK(sa::identical(grads.d_masked, d_masked));
    CHECK(sa::identical(grads.d_scaled, d_scaled));
    CHECK(sa::identical(grads.d_scores, d_scores));
    CHECK(sa::identical(grads.d_queries, scored.d_queries));
    CHECK(sa::identical(grads.d_keys, scored.d_keys));
    CHECK(sa::identical(grads.d_w_query, sa::project_backward(embeddings, w_query, scored.d_queries).d_weights));
    CHECK(sa::identical(grads.d_w_key, sa::project_backward(embeddings, w_key, scored.d_keys).d_weights));
    CHECK(sa::identical(grads.d_w_value, sa::project_backward(embeddings, w_value, mixed.d_values).d_weights));
    CHECK(grads.d_embeddings.rows() == 4);
    CHECK(grads.d_embeddings.cols() == 3);
}

TEST_CASE("A fully masked query passes nothing back to the scores, the keys or the values", "[ch11]")
{
    sa::SplitMix64 generator(1111);
    const sa::Matrix embeddings = sa::random_matrix(3, 2, generator);
    const sa::Matrix w_query = sa::random_matrix(2, 2, generator);
    const sa::Matrix w_key = sa::random_matrix(2, 2, generator);
    const sa::Matrix w_value = sa::random_matrix(2, 3, generator);
    sa::Matrix mask(3, 3, 0.0);
    for (std::size_t j = 0; j < 3; ++j) {
        mask(1, j) = -infinity;  // query 1 may use no key
    }
    const sa::Matrix upstream = sa::random_matrix(3, 3, generator);
    sa::Matrix without_row = upstream;
    for (std::size_t d = 0; d < 3; ++d) {
        without_row(1, d) = 0.0;  // the same loss, minus output row 1's share
    }
    const sa::AttentionGrads grads = sa::attention_backward(embeddings, w_query, w_key, w_value, mask, upstream);
    const sa::AttentionGrads others = sa::attention_backward(embeddings, w_query, w_key, w_value, mask, without_row);
    INFO("output row 1 is all zeros whatever the inputs, so its own rows of dS', dS and dQ are exactly 0");
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK(grads.d_masked(1, j) == 0.0);
        CHECK(grads.d_scores(1, j) == 0.0);
    }
    CHECK(grads.d_queries(1, 0) == 0.0);
    CHECK(grads.d_queries(1, 1) == 0.0);
    INFO("and the blame on its output adds nothing to the keys, the values or the projections");
    CHECK(sa::identical(grads.d_keys, others.d_keys));
    CHECK(sa::identical(grads.d_values, others.d_values));
    CHECK(sa::identical(grads.d_w_query, others.d_w_query));
    CHECK(sa::identical(grads.d_w_value, others.d_w_value));
}

TEST_CASE("attention_backward rejects shapes that do not fit, naming the operation and both shapes", "[ch11]")
{
    const sa::Matrix embeddings(3, 2, 1.0);
    const sa::Matrix square(2, 2, 1.0);
    const sa::Matrix mask(3, 3, 0.0);
    CHECK_THROWS_WITH(sa::attention_backward(embeddings, square, square, square, mask, sa::Matrix(2, 2)),
                      Contains("attention_backward") && Contains("dO is 2×2") && Contains("3×2"));
    CHECK_THROWS_WITH(sa::attention_backward(embeddings, square, sa::Matrix(2, 3), square, mask, sa::Matrix(3, 2)),
                      Contains("attention_backward") && Contains("W_Q is 2×2") && Contains("2×3"));
    INFO("W_Q wider than W_K, the other way round: refused by the same check, not by a later product");
    CHECK_THROWS_WITH(sa::attention_backward(embeddings, sa::Matrix(2, 3), square, square, mask, sa::Matrix(3, 2)),
                      Contains("attention_backward") && Contains("W_Q is 2×3") && Contains("W_K is 2×2"));
    CHECK_THROWS_WITH(sa::attention_backward(embeddings, square, square, square, sa::Matrix(3, 2), sa::Matrix(3, 2)),
                      Contains("attention_backward") && Contains("mask is 3×2"));
    CHECK_THROWS_WITH(sa::attention_backward(embeddings, sa::Matrix(3, 2), square, square, mask, sa::Matrix(3, 2)),
                      Contains("attention_backward") && Contains("E is 3×2") && Contains("3×2"));
}

TEST_CASE("rowsum(dA ∘ A) equals rowsum(dO ∘ O) in every row", "[ch11]")
{
    // rowsum(dA∘A)_i = Σ_j A_ij (Σ_d dO_id V_jd) = Σ_d dO_id (Σ_j A_ij V_jd) = Σ_d dO_id O_id.
    sa::SplitMix64 generator(1112);
    const sa::Matrix scores = sa::random_matrix(3, 5, generator);
    const sa::Matrix values = sa::random_matrix(5, 2, generator);
    const sa::Matrix upstream = sa::random_matrix(3, 2, generator);
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(scores, sa::causal_mask(3, 5)));
    const sa::Matrix outputs = sa::mix(weights, values);
    const sa::Matrix blame = sa::mix_backward(weights, values, upstream).d_weights;
    for (std::size_t i = 0; i < 3; ++i) {
        double over_weights = 0.0;
        for (std::size_t j = 0; j < 5; ++j) {
            over_weights += blame(i, j) * weights(i, j);
        }
        double over_outputs = 0.0;
        for (std::size_t d = 0; d < 2; ++d) {
            over_outputs += upstream(i, d) * outputs(i, d);
        }
        INFO("row " << i << ": the two sums regroup the same products, so they differ by rounding only");
        CHECK_THAT(over_weights, WithinAbs(over_outputs, 1e-14));
    }
}

// ---------------------------------------------------------------------------------------
// The chapter's worked example: L = o_Mouse,f2, so dO is 1 at (Mouse, f2) and 0 elsewhere

namespace {

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;
const double root_two = std::sqrt(2.0);
// The Mouse row of dS' works out to 2wW·[−1, 2, −1] (see the first test below); every later
// gradient of the example is a multiple of this one number.
const double blame = 2.0 * small * large;

struct Worked {
    sa::Example example = sa::mouse_eats_cheese();
    sa::Matrix mask = sa::Matrix(3, 3, 0.0);
    sa::Matrix upstream = sa::Matrix{{0, 1}, {0, 0}, {0, 0}};
    sa::AttentionGrads grads = {};
};

Worked worked(bool causal, const sa::Matrix& upstream)
{
    Worked run;
    run.mask = causal ? sa::causal_mask(3, 3) : sa::Matrix(3, 3, 0.0);
    run.upstream = upstream;
    run.grads = sa::attention_backward(run.example.embeddings, run.example.w_query, run.example.w_key,
                                       run.example.w_value, run.mask, run.upstream);
    return run;
}

void check_row(const sa::Matrix& matrix, std::size_t row, const std::vector<double>& expected)
{
    REQUIRE(matrix.cols() == expected.size());
    for (std::size_t j = 0; j < expected.size(); ++j) {
        INFO("row " << row << ", column " << j);
        CHECK_THAT(matrix(row, j), WithinAbs(expected[j], printed));
    }
}

}  // namespace

TEST_CASE("Worked example: the weights and outputs printed above the gradients, unmasked and causal", "[ch11]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    const sa::Matrix scaled = sa::scale(sa::scores(queries, keys), 2);
    const sa::Matrix weights = sa::softmax_rows(scaled);
    const sa::Matrix outputs = sa::mix(weights, values);
    INFO("Mouse and Cheese: [w, W, w]; Eats: a third each (chapter 7)");
    check_row(weights, 0, {small, large, small});
    check_row(weights, 1, {third, third, third});
    INFO("o_Mouse = w·[2, 0] + W·[1, 2] + w·[2, 0] = [4w + W, 2W]; o_Eats = [5/3, 2/3]");
    check_row(outputs, 0, {4.0 * small + large, 2.0 * large});
    check_row(outputs, 1, {5.0 / 3.0, 2.0 / 3.0});
    CHECK_THAT(4.0 * small + large, WithinAbs(1.106, printed));
    const sa::Matrix causal_weights = sa::softmax_rows(sa::apply_mask(scaled, sa::causal_mask(3, 3)));
    const sa::Matrix causal_outputs = sa::mix(causal_weights, values);
    INFO("causal: Mouse sees itself only, Eats sees Mouse and Eats with equal scores, Cheese sees all three");
    check_row(causal_weights, 0, {1.0, 0.0, 0.0});
    check_row(causal_weights, 1, {0.5, 0.5, 0.0});
    check_row(causal_weights, 2, {small, large, small});
    check_row(causal_outputs, 0, {2.0, 0.0});
    check_row(causal_outputs, 1, {1.5, 1.0});
    INFO("rowsum(dO∘O) for dO at (Eats, f2) is o_Eats,f2 = 1, and so is rowsum(dA∘A) = ½·0 + ½·2");
    const sa::Matrix upstream{{0, 0}, {0, 1}, {0, 0}};
    const sa::Matrix blame = sa::mix_backward(causal_weights, values, upstream).d_weights;
    CHECK(sa::rowsum_product(blame, causal_weights)(1, 0) == 1.0);
    CHECK(sa::rowsum_product(upstream, causal_outputs)(1, 0) == 1.0);
}

TEST_CASE("Worked example: dA and dV for L = o_Mouse,f2", "[ch11]")
{
    const Worked run = worked(false, sa::Matrix{{0, 1}, {0, 0}, {0, 0}});
    INFO("dA = dO·Vᵀ: only Mouse's row, and it is the second feature of each value: [0, 2, 0]");
    check_row(run.grads.d_weights, 0, {0.0, 2.0, 0.0});
    check_row(run.grads.d_weights, 1, {0.0, 0.0, 0.0});
    check_row(run.grads.d_weights, 2, {0.0, 0.0, 0.0});
    INFO("dV = Aᵀ·dO: the second column is Mouse's weights [w, W, w] = [0.053, 0.894, 0.053]");
    check_row(run.grads.d_values, 0, {0.0, small});
    check_row(run.grads.d_values, 1, {0.0, large});
    check_row(run.grads.d_values, 2, {0.0, small});
    CHECK_THAT(small, WithinAbs(0.053, printed));
    CHECK_THAT(large, WithinAbs(0.894, printed));
}

TEST_CASE("Worked example: dS' is 2wW·[−1, 2, −1] in Mouse's row and dS is that over √2", "[ch11]")
{
    const Worked run = worked(false, sa::Matrix{{0, 1}, {0, 0}, {0, 0}});
    // rowsum(dA∘A) = 2W, so dS'_Mouse = [w(0 − 2W), W(2 − 2W), w(0 − 2W)]; and 2 − 2W = 2(1 − W) = 4w.
    INFO("dS'_Mouse = [−2wW, 4wW, −2wW] with 2wW = 0.0946");
    check_row(run.grads.d_masked, 0, {-blame, 2.0 * blame, -blame});
    CHECK_THAT(blame, WithinAbs(0.095, printed));
    check_row(run.grads.d_masked, 1, {0.0, 0.0, 0.0});
    INFO("dS = dS'/√2");
    check_row(run.grads.d_scores, 0, {-blame / root_two, 2.0 * blame / root_two, -blame / root_two});
    CHECK_THAT(blame / root_two, WithinAbs(0.067, printed));
    CHECK_THAT(2.0 * blame / root_two, WithinAbs(0.134, printed));
    check_row(run.grads.d_scores, 2, {0.0, 0.0, 0.0});
}

TEST_CASE("Worked example: dQ, dK and the three weight gradients", "[ch11]")
{
    const Worked run = worked(false, sa::Matrix{{0, 1}, {0, 0}, {0, 0}});
    const double unit = blame / root_two;  // dS_Mouse = unit·[−1, 2, −1]
    INFO("dq_Mouse = unit·(−[2, 0] + 2·[1, 2] − [2, 0]) = unit·[−2, 4]");
    check_row(run.grads.d_queries, 0, {-2.0 * unit, 4.0 * unit});
    check_row(run.grads.d_queries, 1, {0.0, 0.0});
    INFO("dk_j = dS_Mouse,j · q_Mouse = dS_Mouse,j · [0, 2]");
    check_row(run.grads.d_keys, 0, {0.0, -2.0 * unit});
    check_row(run.grads.d_keys, 1, {0.0, 4.0 * unit});
    check_row(run.grads.d_keys, 2, {0.0, -2.0 * unit});
    INFO("dW_Q = Eᵀ·dQ = [2, 0]ᵀ·dq_Mouse");
    check_row(run.grads.d_w_query, 0, {-4.0 * unit, 8.0 * unit});
    check_row(run.grads.d_w_query, 1, {0.0, 0.0});
    INFO("dW_K = Eᵀ·dK: feature 1 is 2·(−2) + 1·4 + 2·(−2) = −4 units, feature 2 is 2·4 = 8 units");
    check_row(run.grads.d_w_key, 0, {0.0, -4.0 * unit});
    check_row(run.grads.d_w_key, 1, {0.0, 8.0 * unit});
    INFO("dW_V = Eᵀ·dV: feature 1 is 2w + W + 2w = o_Mouse,f1 and feature 2 is 2W = o_Mouse,f2");
    check_row(run.grads.d_w_value, 0, {0.0, 4.0 * small + large});
    check_row(run.grads.d_w_value, 1, {0.0, 2.0 * large});
    INFO("dE = dQ·W_Qᵀ (W_Q swaps the features) + dK + dV (W_K and W_V are the identity)");
    check_row(run.grads.d_embeddings, 0, {4.0 * unit, -2.0 * unit - 2.0 * unit + small});
    check_row(run.grads.d_embeddings, 1, {0.0, 4.0 * unit + large});
    check_row(run.grads.d_embeddings, 2, {0.0, -2.0 * unit + small});
}

TEST_CASE("Worked example: rowsum(dA∘A) is 2W = 1.789 for Mouse, the same as rowsum(dO∘O) = o_Mouse,f2", "[ch11]")
{
    const Worked run = worked(false, sa::Matrix{{0, 1}, {0, 0}, {0, 0}});
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    const sa::Matrix weights = sa::softmax_rows(sa::scale(sa::scores(queries, keys), 2));
    const sa::Matrix outputs = sa::mix(weights, values);
    const sa::Matrix over_weights = sa::rowsum_product(run.grads.d_weights, weights);
    const sa::Matrix over_outputs = sa::rowsum_product(run.upstream, outputs);
    INFO("Mouse: 2·W = 2·0.894; the other rows have dO = 0");
    CHECK_THAT(over_weights(0, 0), WithinAbs(2.0 * large, 1e-15));
    CHECK_THAT(over_outputs(0, 0), WithinAbs(2.0 * large, 1e-15));
    CHECK_THAT(2.0 * large, WithinAbs(1.789, printed));
    CHECK(over_weights(1, 0) == 0.0);
    CHECK(over_outputs(2, 0) == 0.0);
}

TEST_CASE("Worked example, causal, L = o_Eats,f2: Eats splits 1/2 and 1/2, so dS' is [−1/2, 1/2, 0]", "[ch11]")
{
    const Worked run = worked(true, sa::Matrix{{0, 0}, {0, 1}, {0, 0}});
    INFO("Eats sees Mouse and Eats with equal scores 4/√2: A_Eats = [1/2, 1/2, 0]; dA_Eats = [0, 2, 0]; "
         "rowsum(dA∘A) = 1; dS'_Eats = [½(0 − 1), ½(2 − 1), 0]");
    check_row(run.grads.d_masked, 1, {-0.5, 0.5, 0.0});
    INFO("the masked entry gets exactly 0, and so does every entry of the other rows (their dO is 0)");
    CHECK(run.grads.d_masked(1, 2) == 0.0);
    CHECK(run.grads.d_scaled(0, 1) == 0.0);
    CHECK(run.grads.d_scaled(0, 2) == 0.0);
    const double half_root = 0.5 / root_two;  // dS = dS'/√2 = ±1/(2√2) = ±0.354
    check_row(run.grads.d_scores, 1, {-half_root, half_root, 0.0});
    INFO("dq_Eats = (1/(2√2))·(−[2, 0] + [1, 2]) = (1/(2√2))·[−1, 2]");
    check_row(run.grads.d_queries, 1, {-half_root, 2.0 * half_root});
    INFO("dk_Mouse = −(1/(2√2))·q_Eats = −(1/(2√2))·[2, 1], dk_Eats the opposite, Cheese masked: 0");
    check_row(run.grads.d_keys, 0, {-2.0 * half_root, -half_root});
    check_row(run.grads.d_keys, 1, {2.0 * half_root, half_root});
    check_row(run.grads.d_keys, 2, {0.0, 0.0});
    check_row(run.grads.d_values, 0, {0.0, 0.5});
    check_row(run.grads.d_values, 1, {0.0, 0.5});
    INFO("dW_Q = e_Eatsᵀ·dq_Eats = [1, 2]ᵀ·(1/(2√2))[−1, 2]");
    check_row(run.grads.d_w_query, 0, {-half_root, 2.0 * half_root});
    check_row(run.grads.d_w_query, 1, {-2.0 * half_root, 4.0 * half_root});
    INFO("dW_K = [2, 0]ᵀ·dk_Mouse + [1, 2]ᵀ·dk_Eats = (1/(2√2))·[−1, 2]ᵀ·[2, 1]");
    check_row(run.grads.d_w_key, 0, {-2.0 * half_root, -half_root});
    check_row(run.grads.d_w_key, 1, {4.0 * half_root, 2.0 * half_root});
    INFO("dW_V = [2, 0]ᵀ·[0, ½] + [1, 2]ᵀ·[0, ½] = [[0, 1.5], [0, 1]]");
    check_row(run.grads.d_w_value, 0, {0.0, 1.5});
    check_row(run.grads.d_w_value, 1, {0.0, 1.0});
    INFO("dE_Mouse = dk_Mouse + dv_Mouse; dE_Eats = dq_Eats swapped + dk_Eats + dv_Eats");
    check_row(run.grads.d_embeddings, 0, {-2.0 * half_root, -half_root + 0.5});
    check_row(run.grads.d_embeddings, 1, {4.0 * half_root, 0.5});
    check_row(run.grads.d_embeddings, 2, {0.0, 0.0});
}

TEST_CASE("Worked example: every gradient the program prints agrees with central differences", "[ch11]")
{
    for (const bool causal : {false, true}) {
        INFO((causal ? "causal, L = o_Eats,f2" : "no mask, L = o_Mouse,f2"));
        const sa::Example example = sa::mouse_eats_cheese();
        const sa::Matrix upstream = causal ? sa::Matrix{{0, 0}, {0, 1}, {0, 0}} : sa::Matrix{{0, 1}, {0, 0}, {0, 0}};
        const sa::Matrix mask = causal ? sa::causal_mask(3, 3) : sa::Matrix(3, 3, 0.0);
        const auto checks = sa::gradient_checks(example.embeddings, example.w_query, example.w_key, example.w_value,
                                                mask, upstream, step);
        for (const auto& check : checks) {
            require_agree(check.name, check.analytic, check.numeric);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The experiment: the seed's claim that large scores starve the gradients

namespace {

std::vector<sa::StarvationRow> chapter_experiment()
{
    // Exactly as the program draws it: seed 2017, 8 keys, d_model = 8, d_v = 4, 101 queries.
    sa::SplitMix64 generator(2017);
    std::vector<sa::StarvationRow> rows;
    for (const std::size_t key_dim : {2, 16, 64, 256, 1024}) {
        rows.push_back(sa::gradient_starvation(key_dim, 8, 8, 4, 101, generator));
    }
    return rows;
}

}  // namespace

TEST_CASE("Experiment: without scaling the typical gradient collapses by orders of magnitude", "[ch11]")
{
    const auto rows = chapter_experiment();
    REQUIRE(rows.size() == 5);
    const sa::GradientSize& small_dim = rows.front().raw;
    const sa::GradientSize& large_dim = rows.back().raw;
    INFO("at d_k = 1024 the raw scores are about 32 times unit normals. The gap g between the two largest of 8 unit "
         "normals has median 0.44, so half the queries have a gap of 32·0.44 = 14 or more and 1 − p below e^{−14}, "
         "about 1e-6; their dS' is that small, against about 0.6 at d_k = 2, where nothing saturates");
    CHECK(large_dim.scores_median < 1e-4);
    CHECK(small_dim.scores_median > 0.3);
    INFO("dq = Σ_j dS_j k_j with |k_j| about 32 and |e| about √8 multiplies dS' by a few hundred at most, "
         "so the median |dW_Q| falls by at least a factor 100 as well");
    CHECK(large_dim.w_query_median < small_dim.w_query_median / 100.0);
    INFO("the median falls from one d_k to the next from 16 on: the gap grows like √d_k and 1 − p like e^{−gap}");
    for (std::size_t i = 2; i < rows.size(); ++i) {
        CHECK(rows[i].raw.scores_median < rows[i - 1].raw.scores_median);
    }
}

TEST_CASE("Experiment: without scaling the mean gradient to W_Q does not collapse: rare near-ties carry it", "[ch11]")
{
    const auto rows = chapter_experiment();
    const sa::GradientSize& large_dim = rows.back().raw;
    INFO("a gap below 1/32 has probability about 1.42/32 = 4.4% and leaves p(1−p) near 1/4; such a query sends "
         "|dq| of order 32·|dS'|, with |dS'| of order 1/2, and |dW_Q| = |e|·|dq| of order 40; averaged over all "
         "queries that is above 1, while the median query sends almost nothing");
    CHECK(large_dim.w_query_mean > 1.0);
    CHECK(large_dim.w_query_mean > 1000.0 * large_dim.w_query_median);
}

TEST_CASE("Experiment: with scaling the gradients stay the same size at every d_k", "[ch11]")
{
    const auto rows = chapter_experiment();
    for (const sa::StarvationRow& row : rows) {
        INFO("d_k = " << row.key_dim << ": scaled scores have variance 1 at every d_k, so the softmax and dS' "
             "see the same distribution; over 101 queries the median |dS'| (about 0.6) varies by about ±0.05 from "
             "seed to seed, so [0.45, 0.8] is more than 3 standard errors on each side");
        CHECK(row.scaled.scores_median > 0.45);
        CHECK(row.scaled.scores_median < 0.8);
        INFO("dS = dS'/√d_k and |k_j| ≈ √d_k cancel in dq = Σ dS_j k_j, so |dW_Q| has the same scale at every d_k: "
             "about 1.6 from d_k = 16 on (±0.15 from seed to seed), a little lower at d_k = 2");
        if (row.key_dim >= 16) {
            CHECK(row.scaled.w_query_median > 1.1);
            CHECK(row.scaled.w_query_median < 2.2);
        }
    }
}

TEST_CASE("Experiment's summary: the mean of two trials is their median, as (a + b)/2 both", "[ch11][support]")
{
    for (const std::uint64_t seed : {1, 2, 3}) {
        sa::SplitMix64 generator(seed);
        const sa::StarvationRow row = sa::gradient_starvation(4, 3, 2, 2, 2, generator);
        INFO("seed " << seed << ": two numbers a and b have the median (a + b)/2, and their mean is the same sum "
             "over the same count, so the two agree to the bit; a mean taken as (a + b)·2 would be 4 times it");
        for (const sa::GradientSize* size : {&row.raw, &row.scaled}) {
            REQUIRE(size->w_query_median > 0.0);
            CHECK(size->w_query_mean == size->w_query_median);
            REQUIRE(size->scores_median > 0.0);
            CHECK(size->scores_mean == size->scores_median);
        }
    }
}

TEST_CASE("Experiment's edges: one key sends no gradient at all, and one feature and one trial are enough",
          "[ch11][support]")
{
    sa::SplitMix64 generator(2017);
    INFO("with one key the softmax gives it weight 1 whatever its score, so dS' = A∘(dA − rowsum(dA∘A)) = "
         "1·(x − x) = 0 exactly, and dW_Q, built from dS', is 0 as well");
    const sa::StarvationRow one_key = sa::gradient_starvation(3, 1, 2, 2, 5, generator);
    CHECK(one_key.keys == 1);
    for (const sa::GradientSize* size : {&one_key.raw, &one_key.scaled}) {
        CHECK(size->scores_median == 0.0);
        CHECK(size->scores_mean == 0.0);
        CHECK(size->w_query_median == 0.0);
        CHECK(size->w_query_mean == 0.0);
    }
    INFO("d_model = 1, d_k = 1, d_v = 1 and one trial: every size at its smallest is a valid experiment; with two keys "
         "the weights are strictly between 0 and 1, so the gradients are not 0");
    const sa::StarvationRow smallest = sa::gradient_starvation(1, 2, 1, 1, 1, generator);
    CHECK(smallest.key_dim == 1);
    CHECK(smallest.trials == 1);
    CHECK(smallest.raw.scores_median > 0.0);
    CHECK(std::isfinite(smallest.raw.w_query_mean));
    CHECK(smallest.raw.w_query_mean > 0.0);
    INFO("and 0 of any of them is refused, naming the sizes");
    for (const auto& [key_dim, keys, model_dim, value_dim, trials] :
         std::vector<std::array<std::size_t, 5>>{{0, 1, 1, 1, 1}, {1, 0, 1, 1, 1}, {1, 1, 0, 1, 1}, {1, 1, 1, 0, 1},
                                                 {1, 1, 1, 1, 0}}) {
        CHECK_THROWS_WITH(sa::gradient_starvation(key_dim, keys, model_dim, value_dim, trials, generator),
                          Contains("each must be at least 1"));
    }
}

// ---------------------------------------------------------------------------------------
// The checker itself (support code, not an exercise)

TEST_CASE("numeric_gradient of a quadratic is exact up to rounding, and relative_difference measures it",
          "[ch11][support]")
{
    // L(X) = Σ X_ij² + X_00·X_01 has dL/dX_00 = 2X_00 + X_01, dL/dX_01 = 2X_01 + X_00, dL/dX_10 = 2X_10.
    // A central difference is exact for a quadratic, so only rounding is left.
    const sa::Matrix at{{1.0, -2.0}, {0.5, 3.0}};
    const auto loss = [](const sa::Matrix& x) {
        return x(0, 0) * x(0, 0) + x(0, 1) * x(0, 1) + x(1, 0) * x(1, 0) + x(1, 1) * x(1, 1) + x(0, 0) * x(0, 1);
    };
    const sa::Matrix numeric = sa::numeric_gradient(loss, at, step);
    const sa::Matrix exact{{0.0, -3.0}, {1.0, 6.0}};
    CHECK_THAT(numeric(0, 0), WithinAbs(0.0, 1e-9));
    CHECK_THAT(numeric(0, 1), WithinAbs(-3.0, 1e-9));
    CHECK_THAT(numeric(1, 1), WithinAbs(6.0, 1e-9));
    CHECK(sa::relative_difference(exact, numeric) < 1e-9);
    INFO("a largest gap of 1 against a largest entry of 6 is 1/6");
    CHECK_THAT(sa::relative_difference(exact, sa::Matrix{{1.0, -3.0}, {1.0, 6.0}}), WithinRel(1.0 / 6.0, 1e-15));
    CHECK(sa::relative_difference(sa::Matrix(2, 2), sa::Matrix(2, 2)) == 0.0);
    CHECK_THROWS_AS(sa::numeric_gradient(loss, at, 0.0), std::invalid_argument);
    CHECK_THROWS_AS(sa::relative_difference(exact, sa::Matrix(2, 3)), sa::ShapeError);
}

TEST_CASE("frobenius_norm, median and rowsum_product on numbers worked by hand", "[ch11][support]")
{
    INFO("√(3² + 4²) = 5");
    CHECK(sa::frobenius_norm(sa::Matrix{{3.0, 0.0}, {0.0, -4.0}}) == 5.0);
    CHECK(sa::frobenius_norm(sa::Matrix()) == 0.0);
    CHECK(sa::median({3.0, 1.0, 2.0}) == 2.0);
    CHECK(sa::median({4.0, 1.0, 3.0, 2.0}) == 2.5);
    CHECK_THROWS_AS(sa::median({}), std::invalid_argument);
    const sa::Matrix sums = sa::rowsum_product(sa::Matrix{{1, 2}, {3, 4}}, sa::Matrix{{5, 6}, {7, 8}});
    INFO("1·5 + 2·6 = 17, 3·7 + 4·8 = 53");
    CHECK(sums(0, 0) == 17.0);
    CHECK(sums(1, 0) == 53.0);
    CHECK_THROWS_AS(sa::rowsum_product(sa::Matrix(2, 2), sa::Matrix(2, 3)), sa::ShapeError);
    sa::SplitMix64 generator(1);
    CHECK_THROWS_AS(sa::gradient_starvation(0, 8, 8, 4, 1, generator), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// The check itself: |a − n| ≤ atol + rtol·max(|a|, |n|), from the central difference's budget

namespace {

std::vector<sa::GradientCheck> checks_on(const sa::Matrix& embeddings, const sa::Matrix& upstream, bool causal)
{
    const sa::Matrix identity{{1, 0}, {0, 1}};
    const std::size_t n = embeddings.rows();
    const sa::Matrix mask = causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    return sa::gradient_checks(embeddings, sa::Matrix{{0, 1}, {1, 0}}, identity, identity, mask, upstream, step);
}

}  // namespace

TEST_CASE("The gradient check never flags a right gradient: identical tokens, saturation, scores near 1e4, "
          "tiny gradients", "[ch11][support]")
{
    const sa::Matrix one_hot{{0, 1}, {0, 0}, {0, 0}};
    struct Case {
        const char* what;
        sa::Matrix embeddings;
        sa::Matrix upstream;
    };
    const std::vector<Case> cases = {
        {"identical tokens: uniform weights, dS' is 0 and the numeric one is rounding noise",
         sa::Matrix{{1, 2}, {1, 2}, {1, 2}}, one_hot},
        {"a saturated softmax (scores some 400 apart): gradients through it of e^-400",
         sa::Matrix{{20, 0}, {0, 20}, {20, 20}}, one_hot},
        {"scores near 1e4, saturated", sa::Matrix{{80, 10}, {10, 80}, {70, 70}}, one_hot},
        {"scores near 1e4, identical tokens, so not saturated", sa::Matrix{{84, 84}, {84, 84}, {84, 84}}, one_hot},
        {"tiny gradients, 1e-7 to 1e-6", sa::Matrix{{1, 0}, {0, 2}, {1, 1}},
         sa::Matrix{{3e-7, -6e-7}, {0, 3e-7}, {6e-7, 0}}},
    };
    for (const Case& example : cases) {
        for (const bool causal : {false, true}) {
            for (const auto& check : checks_on(example.embeddings, example.upstream, causal)) {
                INFO(example.what << (causal ? ", causal" : "") << "; " << check.name
                     << ": a right gradient differs from a central difference only by truncation (h²) and "
                        "rounding (ε·F/h), which atol + rtol·max(|a|, |n|) allows a hundred times over; used "
                     << check.used << " of it");
                CHECK(check.agrees());
            }
        }
    }
}

TEST_CASE("The gradient check always flags a wrong gradient: an off-by-one, a dropped term, a transposed factor",
          "[ch11][support]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const sa::Matrix upstream{{0, 1}, {0, 0}, {0, 0}};
    const sa::Matrix mask(3, 3, 0.0);
    const auto checks = sa::gradient_checks(example.embeddings, example.w_query, example.w_key, example.w_value, mask,
                                            upstream, step);
    const auto find = [&checks](const std::string& name) {
        for (const auto& check : checks) {
            if (check.name == name) {
                return check;
            }
        }
        FAIL("no check named " << name);
        return checks.front();
    };
    const sa::Matrix weights = sa::attention_weights(sa::project(example.embeddings, example.w_query),
                                                     sa::project(example.embeddings, example.w_key), mask);
    const auto flags = [](const sa::GradientCheck& right, const sa::Matrix& wrong, const char* why) {
        INFO(right.name << ", " << why << ": the mistake moves an entry by far more than the tolerance");
        CHECK(sa::tolerance_used(wrong, right.numeric, right.tolerance) > 1.0);
        CHECK(right.agrees());  // while the right one passes the same check
    };
    // Off by one: the row sum of softmax_rows_backward taken from the next row.
    const sa::GradientCheck d_masked = find("dS'");
    const sa::Matrix d_weights = find("dA").analytic;
    sa::Matrix off_by_one(3, 3);
    for (std::size_t i = 0; i < 3; ++i) {
        const std::size_t row = (i + 1) % 3;
        double sum = 0.0;
        for (std::size_t j = 0; j < 3; ++j) {
            sum += d_weights(row, j) * weights(row, j);
        }
        for (std::size_t j = 0; j < 3; ++j) {
            off_by_one(i, j) = weights(i, j) * (d_weights(i, j) - sum);
        }
    }
    flags(d_masked, off_by_one, "off by one row in softmax_rows_backward");
    // A dropped term: dE without dV·W_Vᵀ.
    const sa::GradientCheck d_embeddings = find("dE");
    sa::Matrix dropped = sa::project(find("dQ").analytic, sa::transpose(example.w_query));
    const sa::Matrix from_keys = sa::project(find("dK").analytic, sa::transpose(example.w_key));
    for (std::size_t i = 0; i < dropped.rows(); ++i) {
        for (std::size_t j = 0; j < dropped.cols(); ++j) {
            dropped(i, j) += from_keys(i, j);
        }
    }
    flags(d_embeddings, dropped, "dE without the term dV·W_Vᵀ");
    // A transposed factor: dV = A·dO instead of Aᵀ·dO.
    flags(find("dV"), sa::project(weights, upstream), "dV = A·dO instead of Aᵀ·dO");
}

TEST_CASE("tolerance_used: exactly at the tolerance agrees, just above does not, and a NaN in either gradient "
          "never agrees", "[ch11][support]")
{
    const sa::Tolerance tolerance{0.25, 0.5};  // powers of two: every sum below is exact
    const sa::Matrix analytic{{1.0, 0.0}};
    INFO("|a − n| = 1.5 = atol + rtol·max(1, 2.5): the rule is ≤, so the boundary agrees");
    CHECK(sa::tolerance_used(analytic, sa::Matrix{{2.5, 0.0}}, tolerance) == 1.0);
    const sa::GradientCheck at_boundary{"dX", analytic, sa::Matrix{{2.5, 0.0}}, tolerance,
                                        sa::tolerance_used(analytic, sa::Matrix{{2.5, 0.0}}, tolerance)};
    CHECK(at_boundary.agrees());
    INFO("one step of 2^-10 beyond it does not");
    CHECK(sa::tolerance_used(analytic, sa::Matrix{{2.5 + 0x1p-10, 0.0}}, tolerance) > 1.0);
    INFO("equal entries use none of a tolerance, even of 0: no 0/0");
    CHECK(sa::tolerance_used(analytic, analytic, sa::Tolerance{}) == 0.0);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const bool in_analytic : {true, false}) {
        INFO("a NaN in the " << (in_analytic ? "analytic" : "numeric") << " gradient only: it is no agreement");
        const sa::Matrix with_nan{{1.0, nan}};
        const double used = in_analytic ? sa::tolerance_used(with_nan, analytic, tolerance)
                                        : sa::tolerance_used(analytic, with_nan, tolerance);
        CHECK(std::isnan(used));
        CHECK_FALSE((sa::GradientCheck{"dX", analytic, analytic, tolerance, used}.agrees()));
        CHECK(std::isnan(in_analytic ? sa::relative_difference(with_nan, analytic)
                                     : sa::relative_difference(analytic, with_nan)));
    }
    CHECK_THROWS_AS(sa::tolerance_used(analytic, sa::Matrix(2, 2), tolerance), sa::ShapeError);
}

TEST_CASE("numeric_gradient divides by the distance the entry really moved: a slope of 1 at 1e4 is exactly 1",
          "[ch11][support]")
{
    // At x = 1e4 the doubles are 2^-39 ≈ 1.8e-12 apart, so x ± 1e-5 is rounded and the
    // nudge is off by up to 1e-7 of itself: dividing by 2h would report a slope of 1 as
    // 1 ± 1e-7. Dividing by (x + h) − (x − h), the distance the entry moved, gives 1.
    const auto itself = [](const sa::Matrix& x) { return x(0, 0); };  // L = x: its slope is 1, no truncation
    for (const double x : {1e4, -3e4, 12345.678, 0.1}) {
        INFO("L = x at x = " << x << ": the slope of a linear L is 1 exactly, whatever the rounding of x ± h");
        CHECK(sa::numeric_gradient(itself, sa::Matrix{{x}}, step)(0, 0) == 1.0);
    }
}
