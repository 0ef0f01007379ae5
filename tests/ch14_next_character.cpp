// Chapter 14, Predicting the next character: the language model's new steps, its training, its
// file format, the n-gram baselines and the numbers of the chapter's run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "adam.hpp"
#include "char_text.hpp"
#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "gradient_check.hpp"
#include "helpers.hpp"
#include "language_model.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "safetensors.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// The gradient check's criterion: entry by entry, |a − n| ≤ atol + rtol · max(|a|, |n|). A central
// difference with h = 1e-5 is good to about 1e-10 for the sizes here, so atol = 1e-8 and
// rtol = 1e-6 leave room for rounding and none for a wrong term.
void check_gradient(const sa::Matrix& analytic, const sa::Matrix& numeric, const std::string& name)
{
    constexpr double atol = 1e-8;
    constexpr double rtol = 1e-6;
    REQUIRE(analytic.rows() == numeric.rows());
    REQUIRE(analytic.cols() == numeric.cols());
    for (std::size_t r = 0; r < analytic.rows(); ++r) {
        for (std::size_t c = 0; c < analytic.cols(); ++c) {
            const double a = analytic(r, c);
            const double n = numeric(r, c);
            INFO(name << " entry (" << r << ", " << c << "): backward " << a << ", central difference " << n);
            CHECK(std::abs(a - n) <= atol + rtol * std::max(std::abs(a), std::abs(n)));
        }
    }
}

sa::Matrix random_entries(std::size_t rows, std::size_t cols, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    return sa::random_matrix(rows, cols, generator);
}

double loss_of(const sa::LanguageModel& model, const sa::Batch& batch)
{
    return sa::cross_entropy(sa::forward(model, batch.inputs, batch.window).logits, batch.targets).loss;
}

// The gradient of the loss at one parameter of the model, by central differences.
sa::Matrix numeric_at(const sa::LanguageModel& model, std::size_t index, const sa::Batch& batch)
{
    sa::LanguageModel copy = model;
    const auto loss = [&](const sa::Matrix& value) {
        *sa::parameters(copy)[index] = value;
        return loss_of(copy, batch);
    };
    const sa::Matrix start = *sa::parameters(copy)[index];  // a copy: the loss changes the model's own
    return sa::numeric_gradient(loss, start, 1e-5);
}

}  // namespace

TEST_CASE("Cross-entropy: zero logits cost ln V, and its gradient is (P - Y) / N", "[ch14]")
{
    // With all logits equal every character has p = 1/V, so -ln p = ln V whatever the target.
    const sa::CrossEntropy uniform = sa::cross_entropy(sa::Matrix(2, 4), {1, 3});
    INFO("d_vocab = 4: L = ln 4");
    CHECK_THAT(uniform.loss, WithinRel(std::log(4.0), 1e-15));
    // dZ = (P − Y) / N with P = 1/4 everywhere and N = 2: 1/8 off target, (1/4 − 1)/2 = −3/8 on it.
    CHECK_THAT(uniform.d_logits(0, 0), WithinAbs(0.125, 1e-16));
    CHECK_THAT(uniform.d_logits(0, 1), WithinAbs(-0.375, 1e-16));
    CHECK_THAT(uniform.d_logits(1, 3), WithinAbs(-0.375, 1e-16));
    // Logits (0, ln 3): p = (1/4, 3/4); target 1 costs -ln(3/4).
    const sa::CrossEntropy two = sa::cross_entropy(sa::Matrix{{0.0, std::log(3.0)}}, {1});
    INFO("p = 3/4 on the target: L = ln(4/3)");
    CHECK_THAT(two.loss, WithinRel(std::log(4.0 / 3.0), 1e-14));
    // A logit of 1000 would overflow exp(); the row's maximum is subtracted first.
    const sa::CrossEntropy big = sa::cross_entropy(sa::Matrix{{1000.0, 0.0}}, {1});
    INFO("logits (1000, 0), target 1: L = 1000 + ln(1 + e^-1000) = 1000");
    CHECK_THAT(big.loss, WithinRel(1000.0, 1e-15));
    INFO("2 rows of logits and 1 target, then a target of 3 where d_vocab = 3 (tokens 0 to 2): the API page gives "
         "both messages");
    CHECK_THROWS_WITH(sa::cross_entropy(sa::Matrix(2, 3), {0}), Contains("one target per row"));
    CHECK_THROWS_WITH(sa::cross_entropy(sa::Matrix(1, 3), {3}), Contains("not below d_vocab = 3"));
}

TEST_CASE("Cross-entropy's gradient agrees with central differences", "[ch14]")
{
    const sa::Matrix logits = random_entries(5, 7, 14);
    const std::vector<std::size_t> targets{0, 6, 3, 3, 1};
    const auto loss = [&](const sa::Matrix& z) { return sa::cross_entropy(z, targets).loss; };
    check_gradient(sa::cross_entropy(logits, targets).d_logits, sa::numeric_gradient(loss, logits, 1e-5), "dZ");
    const sa::Matrix d = sa::cross_entropy(logits, targets).d_logits;
    for (std::size_t i = 0; i < d.rows(); ++i) {
        double sum = 0.0;
        for (std::size_t j = 0; j < d.cols(); ++j) {
            sum += d(i, j);
        }
        INFO("row " << i << ": the probabilities sum to 1 and the one-hot to 1, so (P - Y) sums to 0");
        CHECK_THAT(sum, WithinAbs(0.0, 1e-16));
    }
}

TEST_CASE("Embedding gradient: a scatter-add of each position's gradient into its token's row", "[ch14]")
{
    const sa::Matrix table{{1, 2}, {3, 4}, {5, 6}};
    const std::vector<std::size_t> tokens{2, 0, 2};
    INFO("x_i = W_E[t_i]: rows 2, 0, 2 of the table");
    CHECK(sa::embed(table, tokens) == sa::Matrix{{5, 6}, {1, 2}, {5, 6}});
    const sa::Matrix d_rows{{1, 10}, {100, 1000}, {2, 20}};
    // Token 2 sits at positions 0 and 2, so its row adds (1, 10) and (2, 20); token 1 never occurs.
    INFO("dW_E[0] = dX[1], dW_E[1] = 0, dW_E[2] = dX[0] + dX[2]");
    CHECK(sa::embedding_backward(d_rows, tokens, 3) == sa::Matrix{{100, 1000}, {0, 0}, {3, 30}});
    const auto loss = [&](const sa::Matrix& w) { return sa::upstream_loss(sa::embed(w, tokens), d_rows); };
    check_gradient(sa::embedding_backward(d_rows, tokens, 3), sa::numeric_gradient(loss, table, 1e-5), "dW_E");
    INFO("3 rows of dX and 2 tokens, then a token of 3 where d_vocab = 3: the API page gives both messages");
    CHECK_THROWS_WITH(sa::embedding_backward(d_rows, {0, 1}, 3), Contains("one token per row"));
    CHECK_THROWS_WITH(sa::embedding_backward(d_rows, {0, 1, 3}, 3), Contains("not below d_vocab = 3"));
}

TEST_CASE("Adam: one step and a second against the formula of Kingma and Ba", "[ch14]")
{
    sa::Matrix theta{{1.0, -2.0, 0.5}};
    const sa::Matrix g1{{0.2, -0.01, 0.0}};
    sa::AdamMoments moments = sa::zero_moments(theta);
    const sa::AdamSettings settings{.learning_rate = 0.1, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-8};
    sa::adam_step(theta, g1, moments, 1, settings);
    // Step 1: m = 0.1 g, v = 0.001 g², so m̂ = g and v̂ = g², and θ moves by α g / (|g| + ε).
    INFO("step 1: θ − α · g / (|g| + ε); a zero gradient leaves the entry where it was");
    CHECK(theta(0, 0) == 1.0 - 0.1 * (0.1 * 0.2 / 0.1) / (std::sqrt(0.001 * 0.2 * 0.2 / 0.001) + 1e-8));
    INFO("ε shortens the move a little: α |g| / (|g| + ε) = 0.1 · 0.2 / (0.2 + 1e-8)");
    CHECK_THAT(theta(0, 0), WithinAbs(1.0 - 0.1 * 0.2 / (0.2 + 1e-8), 1e-15));
    CHECK_THAT(theta(0, 1), WithinAbs(-2.0 + 0.1 * 0.01 / (0.01 + 1e-8), 1e-15));
    CHECK(theta(0, 2) == 0.5);
    // Step 2 with g2: m = 0.9 m1 + 0.1 g2, v = 0.999 v1 + 0.001 g2², corrections 1 − 0.9² and 1 − 0.999².
    const sa::Matrix g2{{-0.1, -0.01, 0.3}};
    const double before = theta(0, 0);
    sa::adam_step(theta, g2, moments, 2, settings);
    const double m = 0.9 * (0.1 * 0.2) + 0.1 * -0.1;
    const double v = 0.999 * (0.001 * 0.04) + 0.001 * 0.01;
    const double expected = before - 0.1 * (m / (1 - 0.81)) / (std::sqrt(v / (1 - 0.999 * 0.999)) + 1e-8);
    INFO("step 2: m = " << m << ", v = " << v);
    CHECK_THAT(theta(0, 0), WithinRel(expected, 1e-14));
    CHECK_THAT(moments.first(0, 0), WithinRel(m, 1e-15));
    CHECK_THAT(moments.second(0, 0), WithinRel(v, 1e-14));
    INFO("a gradient of another shape than θ, then step 0: Adam's bias corrections 1 − β^t need t from 1");
    CHECK_THROWS_AS(sa::adam_step(theta, sa::Matrix(1, 2), moments, 3, settings), sa::ShapeError);
    CHECK_THROWS_WITH(sa::adam_step(theta, g2, moments, 0, settings), Contains("counts its steps from 1"));
}

namespace {

// One entry's move at the last of a sequence of Adam steps on its gradients, in units of α.
double last_move(const std::vector<double>& gradients, const sa::AdamSettings& settings)
{
    sa::Matrix theta{{0.0}};
    sa::AdamMoments moments = sa::zero_moments(theta);
    double before = 0.0;
    for (std::size_t s = 1; s <= gradients.size(); ++s) {
        before = theta(0, 0);
        sa::adam_step(theta, sa::Matrix{{gradients[s - 1]}}, moments, s, settings);
    }
    return std::abs(theta(0, 0) - before) / settings.learning_rate;
}

}  // namespace

TEST_CASE("Adam's bounds: a gradient after zeros moves up to sqrt 10 alpha, and Cauchy-Schwarz bounds every move",
          "[ch14][support]")
{
    const sa::AdamSettings settings{.learning_rate = 0.01, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-8};
    // Zeros, then g at step s: m = (1 − β1) g and v = (1 − β2) g², so m̂ / √v̂ is the bound, whatever g.
    for (const std::size_t s : {std::size_t{1}, std::size_t{10}, std::size_t{598}}) {
        std::vector<double> gradients(s, 0.0);
        gradients.back() = -0.3;
        const double c1 = 1.0 - std::pow(0.9, static_cast<double>(s));
        const double c2 = 1.0 - std::pow(0.999, static_cast<double>(s));
        const double expected = (0.1 / c1) * std::sqrt(c2 / 0.001);
        INFO("step " << s << ": (1 - 0.9) / (1 - 0.9^s) * sqrt(1 - 0.999^s) / sqrt(1 - 0.999) = " << expected);
        CHECK_THAT(sa::sparse_move_bound(settings, s), WithinRel(expected, 1e-14));
        // The move itself: m̂ = 0.1 · 0.3 / c1 and √v̂ = √(0.001 · 0.09 / c2), with ε added to the latter.
        const double root = std::sqrt(0.001 * 0.09 / c2);
        INFO("the move is the bound times √v̂ / (√v̂ + ε), √v̂ = " << root);
        CHECK_THAT(last_move(gradients, settings), WithinRel((0.1 * 0.3 / c1) / (root + 1e-8), 1e-12));
        CHECK(last_move(gradients, settings) < expected);
    }
    INFO("step 1: m̂ = g and v̂ = g², a move of exactly α; late steps: 0.1 / sqrt(0.001) = sqrt(10)");
    CHECK_THAT(sa::sparse_move_bound(settings, 1), WithinRel(1.0, 1e-15));
    CHECK_THAT(sa::sparse_move_bound(settings, 100000), WithinRel(std::sqrt(10.0), 1e-12));
    // A gradient that grows by β2/β1 every step meets the Cauchy–Schwarz bound with equality.
    const std::size_t s = 200;
    std::vector<double> growing(s);
    for (std::size_t k = 1; k <= s; ++k) {
        growing[k - 1] = std::pow(0.9 / 0.999, static_cast<double>(s - k));
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < s; ++j) {
        sum += std::pow(0.81 / 0.999, static_cast<double>(j));
    }
    INFO("move_bound = sparse bound * sqrt(sum of (0.81/0.999)^j), j < s; long runs: sqrt(10 / (1 - 0.81/0.999))");
    CHECK_THAT(sa::move_bound(settings, s), WithinRel(sa::sparse_move_bound(settings, s) * std::sqrt(sum), 1e-13));
    const sa::AdamSettings no_epsilon{.learning_rate = 0.01, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 0.0};
    INFO("with ε = 0 (no gradient is 0 here) the growing gradient's move is the bound itself");
    CHECK_THAT(last_move(growing, no_epsilon), WithinRel(sa::move_bound(settings, s), 1e-12));
    CHECK_THAT(sa::move_bound(settings, 100000), WithinRel(std::sqrt(10.0 / (1.0 - 0.81 / 0.999)), 1e-12));
    INFO("at step 1 the sum has one term, 1, and the sparse bound is 1: a first step moves by α exactly "
         "(m̂/√v̂ = g/|g|); at step 2 the sum is 1 + 0.81/0.999");
    CHECK_THAT(sa::move_bound(settings, 1), WithinRel(1.0, 1e-15));
    CHECK_THAT(sa::move_bound(settings, 2),
               WithinRel(sa::sparse_move_bound(settings, 2) * std::sqrt(1.0 + 0.81 / 0.999), 1e-15));
    // Random gradients of any signs and sizes stay inside it at every step.
    sa::SplitMix64 generator(36);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<double> gradients;
        for (std::size_t k = 1; k <= 40; ++k) {
            gradients.push_back(generator.unit_variance() * std::pow(10.0, generator.unit_variance()));
            INFO("trial " << trial << ", step " << k);
            CHECK(last_move(gradients, settings) <= sa::move_bound(settings, k) * (1.0 + 1e-12));
        }
    }
    CHECK_THROWS_WITH(sa::sparse_move_bound(settings, 0), Contains("counts its steps from 1"));
}

TEST_CASE("A step's moves: the largest in units of alpha, where it is, and how many exceed alpha", "[ch14][support]")
{
    sa::SplitMix64 generator(14);
    const sa::ModelShape shape{3, 4, 2, 1, 4};
    sa::LanguageModel before = sa::random_model(shape, generator);
    before.embedding(1, 2) = 1.0;
    before.layers[0].w_out(3, 0) = -2.0;
    before.unembedding(0, 1) = 0.5;
    sa::LanguageModel after = before;
    // With α = 0.25 every move below is exact in binary: 0.5 is 2 α, 0.25 is α, which does not count as above.
    after.embedding(1, 2) = 1.5;
    after.layers[0].w_out(3, 0) = -2.5;
    after.unembedding(0, 1) = 0.75;
    const sa::StepMoves moves = sa::step_moves(before, after, 0.25);
    INFO("two entries moved 2 α; the first, in the order of parameters(), is the embedding's (1, 2)");
    CHECK(moves.largest == 2.0);
    CHECK(moves.parameter == 0);
    CHECK(moves.row == 1);
    CHECK(moves.column == 2);
    CHECK(moves.above_alpha == 2);
    // The first Adam step moves each entry by α |g| / (|g| + ε), just below α.
    const std::string text = "abaabbabaaabbbab";
    const sa::Vocabulary vocabulary = sa::make_vocabulary(text);
    sa::Trainer trainer = sa::make_trainer(sa::random_model({2, 4, 2, 1, 8}, generator), {.learning_rate = 0.01});
    const sa::LanguageModel start = trainer.model;
    (void)sa::training_step(trainer, sa::random_batch(sa::encode(vocabulary, text), 2, 8, generator));
    const sa::StepMoves first = sa::step_moves(start, trainer.model, 0.01);
    INFO("step 1: the largest move is |g| / (|g| + 1e-8) α, within 1e-6 of α, and none exceeds α");
    CHECK(first.largest <= 1.0);
    CHECK(first.largest > 1.0 - 1e-6);
    CHECK(first.above_alpha == 0);
    CHECK_THROWS_AS(sa::step_moves(before, sa::random_model({3, 4, 2, 2, 4}, generator), 0.25), sa::ShapeError);
    CHECK_THROWS_WITH(sa::step_moves(before, after, 0.0), Contains("must be above 0"));
}

TEST_CASE("The parameter count: V d + 4 d^2 per layer + d V", "[ch14][support]")
{
    INFO("V = 63, d = 64, one layer: 63 * 64 + 4 * 64 * 64 + 64 * 63 = 4032 + 16384 + 4032 = 24448");
    CHECK(sa::parameter_count({63, 64, 4, 1, 64}) == 24448);
    sa::SplitMix64 generator(2);
    sa::LanguageModel model = sa::random_model({5, 8, 2, 3, 4}, generator);
    std::size_t entries = 0;
    for (const sa::Matrix* matrix : sa::parameters(model)) {
        entries += matrix->rows() * matrix->cols();
    }
    INFO("three layers: the entries of every matrix parameters() hands out");
    CHECK(sa::parameter_count(model.shape) == entries);
}

TEST_CASE("Multi-head backward agrees with central differences, with a causal mask", "[ch14]")
{
    const sa::Matrix q = random_entries(4, 6, 1);
    const sa::Matrix k = random_entries(4, 6, 2);
    const sa::Matrix v = random_entries(4, 4, 3);
    const sa::Matrix w_out = random_entries(4, 3, 4);
    const sa::Matrix d_y = random_entries(4, 3, 5);
    const sa::Matrix mask = sa::causal_mask(4, 4);
    constexpr std::size_t heads = 2;
    const sa::MultiHeadGrads grads = sa::multi_head_backward(q, k, v, mask, heads, w_out, d_y);
    const auto through = [&](const sa::Matrix& q_, const sa::Matrix& k_, const sa::Matrix& v_, const sa::Matrix& w_) {
        return sa::upstream_loss(sa::multi_head_attention(q_, k_, v_, mask, heads, w_), d_y);
    };
    check_gradient(grads.d_queries, sa::numeric_gradient([&](const sa::Matrix& x) { return through(x, k, v, w_out); },
                                                         q, 1e-5), "dQ");
    check_gradient(grads.d_keys, sa::numeric_gradient([&](const sa::Matrix& x) { return through(q, x, v, w_out); },
                                                      k, 1e-5), "dK");
    check_gradient(grads.d_values, sa::numeric_gradient([&](const sa::Matrix& x) { return through(q, k, x, w_out); },
                                                        v, 1e-5), "dV");
    check_gradient(grads.d_w_out, sa::numeric_gradient([&](const sa::Matrix& x) { return through(q, k, v, x); },
                                                       w_out, 1e-5), "dW_O");
    // The first query sees only the first key: no other key's gradient can come from row 0.
    INFO("with one head and W_O = I, dQ of row 0 is 0: its weights are a single 1 whatever its score");
    const sa::MultiHeadGrads one = sa::multi_head_backward(q, k, v, mask, 1, sa::identity(4), random_entries(4, 4, 6));
    for (std::size_t c = 0; c < 6; ++c) {
        CHECK(one.d_queries(0, c) == 0.0);
    }
}

TEST_CASE("One layer of the model is chapter 9's multi-head attention on chapter 10's rotated slices", "[ch14]")
{
    // The fast layer against the book's step functions: per head, rope() on the head's slices of
    // Q and K (positions 0, 1, ... in each window), then multi_head_attention() with the causal mask.
    sa::SplitMix64 generator(3);
    const sa::ModelShape shape{5, 8, 2, 1, 4};
    const sa::LanguageModel model = sa::random_model(shape, generator);
    const sa::AttentionLayer& layer = model.layers[0];
    const sa::Matrix x = random_entries(4, 8, 9);
    const sa::Matrix fast = sa::layer_forward(layer, x, 2, 4, nullptr);
    std::vector<sa::Matrix> q_heads = sa::split_heads(sa::project(x, layer.w_query), 2);
    std::vector<sa::Matrix> k_heads = sa::split_heads(sa::project(x, layer.w_key), 2);
    for (std::size_t h = 0; h < 2; ++h) {
        q_heads[h] = sa::rope(q_heads[h]);
        k_heads[h] = sa::rope(k_heads[h]);
    }
    const sa::Matrix book = sa::multi_head_attention(sa::concat_heads(q_heads), sa::concat_heads(k_heads),
                                                     sa::project(x, layer.w_value), sa::causal_mask(4, 4), 2,
                                                     layer.w_out);
    INFO("Y = X + MultiHead(rope(X W_Q), rope(X W_K), X W_V) W_O, up to rounding");
    CHECK(sa::largest_difference(fast, sa::add_positions(x, book)) < 1e-13);
}

TEST_CASE("The whole model's backward pass, two layers, agrees with central differences", "[ch14]")
{
    // Two windows of 4 tokens (positions restart in each), two layers, two heads of width 4.
    sa::SplitMix64 generator(21);
    const sa::ModelShape shape{5, 8, 2, 2, 4};
    sa::LanguageModel model = sa::random_model(shape, generator);
    model.unembedding = random_entries(8, 5, 22);  // a larger W_U than the start's, so every gradient is sizeable
    const sa::Batch batch{{0, 3, 1, 4, 2, 2, 0, 1}, {3, 1, 4, 2, 2, 0, 1, 3}, 4};
    const sa::ForwardTrace trace = sa::forward(model, batch.inputs, batch.window);
    sa::LanguageModel grads = sa::backward(model, trace, sa::cross_entropy(trace.logits, batch.targets).d_logits);
    const std::vector<std::string> names = sa::parameter_names(shape);
    for (std::size_t i = 0; i < names.size(); ++i) {
        check_gradient(*sa::parameters(grads)[i], numeric_at(model, i, batch), "d" + names[i]);
    }
}

TEST_CASE("One training step on a two-character text: its gradient and its Adam step", "[ch14]")
{
    const std::string text = "abaabbabaaabbbab";
    const sa::Vocabulary vocabulary = sa::make_vocabulary(text);
    REQUIRE(vocabulary.characters == "ab");
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, text);
    sa::SplitMix64 generator(5);
    const sa::ModelShape shape{2, 4, 2, 1, 8};
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = 0.01});
    const sa::Batch batch = sa::random_batch(tokens, 2, 8, generator);
    const sa::LanguageModel before = trainer.model;
    const sa::ForwardTrace trace = sa::forward(before, batch.inputs, batch.window);
    sa::LanguageModel grads = sa::backward(before, trace, sa::cross_entropy(trace.logits, batch.targets).d_logits);
    const double loss = sa::training_step(trainer, batch);
    INFO("training_step returns the loss before its step");
    CHECK(loss == loss_of(before, batch));
    const std::vector<std::string> names = sa::parameter_names(shape);
    for (std::size_t i = 0; i < names.size(); ++i) {
        const sa::Matrix numeric = numeric_at(before, i, batch);
        check_gradient(*sa::parameters(grads)[i], numeric, "d" + names[i]);
        // The first Adam step moves each entry by α g / (|g| + ε): almost exactly α against the sign of g.
        const sa::Matrix& old_value = *sa::parameters(const_cast<sa::LanguageModel&>(before))[i];
        const sa::Matrix& new_value = *sa::parameters(trainer.model)[i];
        for (std::size_t r = 0; r < old_value.rows(); ++r) {
            for (std::size_t c = 0; c < old_value.cols(); ++c) {
                const double g = (*sa::parameters(grads)[i])(r, c);
                INFO(names[i] << " (" << r << ", " << c << "), gradient " << g);
                CHECK_THAT(new_value(r, c), WithinAbs(old_value(r, c) - 0.01 * g / (std::abs(g) + 1e-8), 1e-15));
            }
        }
    }
}

TEST_CASE("The bigram and the trigram on a tiny text, worked by hand", "[ch14][support]")
{
    // Training "aaab": pairs aa, aa, ab, so count(a) = 3, count(a, a) = 2, count(a, b) = 1, count(b) = 0.
    const sa::Vocabulary vocabulary = sa::make_vocabulary("aaab");
    const sa::BigramCounts counts = sa::count_bigrams(sa::encode(vocabulary, "aaab"), 2);
    INFO("add-one: P(a|a) = (2+1)/(3+2) = 3/5, P(b|a) = (1+1)/(3+2) = 2/5, P(a|b) = (0+1)/(0+2) = 1/2");
    CHECK_THAT(sa::bigram_probability(counts, 0, 0), WithinRel(0.6, 1e-15));
    CHECK_THAT(sa::bigram_probability(counts, 0, 1), WithinRel(0.4, 1e-15));
    CHECK_THAT(sa::bigram_probability(counts, 1, 0), WithinRel(0.5, 1e-15));
    // Held-out "aab": predict a after a (3/5) and b after a (2/5).
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, "aab");
    INFO("L = -(ln 3/5 + ln 2/5) / 2");
    CHECK_THAT(sa::bigram_loss(counts, held_out, sa::all_targets(3)),
               WithinRel(-(std::log(0.6) + std::log(0.4)) / 2.0, 1e-15));
    // Trigram: training triples aaa, aab; count(a, a) = 2 as a context. P(b | a, a) = (1+1)/(2+2) = 1/2.
    INFO("trigram: P(b | aa) = (1 + 1) / (2 + 2)");
    const sa::NgramCounts trigrams = sa::count_ngrams(sa::encode(vocabulary, "aaab"), 3, 2);
    CHECK_THAT(sa::ngram_loss(trigrams, held_out, {2}), WithinRel(std::log(2.0), 1e-15));
    CHECK_THROWS_WITH(sa::bigram_loss(counts, held_out, {0}), Contains("no previous character"));
}

TEST_CASE("Counted n-grams of every order on a tiny text, worked by hand", "[ch14][support]")
{
    // Training "abaab" (a = 0, b = 1), held-out "aabab". Each order's counts, by hand:
    //   n = 1: a 3 times, b 2 times, 5 in all: P(a) = (3+1)/(5+2) = 4/7, P(b) = (2+1)/(5+2) = 3/7.
    //   n = 3: triples aba, baa, aab: each context ab, ba, aa seen once, followed by a, a, b.
    //   n = 5: the one 5-gram abaab, context abaa.
    const sa::Vocabulary vocabulary = sa::make_vocabulary("ab");
    const std::vector<std::size_t> training = sa::encode(vocabulary, "abaab");
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, "aabab");
    const sa::NgramCounts unigrams = sa::count_ngrams(training, 1, 2);
    INFO("unigram on a a b a b: -(3 ln 4/7 + 2 ln 3/7) / 5");
    CHECK_THAT(sa::ngram_probability(unigrams, held_out, 0), WithinRel(4.0 / 7.0, 1e-15));
    CHECK_THAT(sa::ngram_loss(unigrams, held_out, {0, 1, 2, 3, 4}),
               WithinRel(-(3.0 * std::log(4.0 / 7.0) + 2.0 * std::log(3.0 / 7.0)) / 5.0, 1e-15));
    const sa::NgramCounts trigrams = sa::count_ngrams(training, 3, 2);
    INFO("trigram at 2, 3, 4: P(b | aa) = (1+1)/(1+2), P(a | ab) = 2/3, P(b | ba) = (0+1)/(1+2)");
    CHECK_THAT(sa::ngram_probability(trigrams, held_out, 4), WithinRel(1.0 / 3.0, 1e-15));
    CHECK_THAT(sa::ngram_loss(trigrams, held_out, {2, 3, 4}),
               WithinRel(-(2.0 * std::log(2.0 / 3.0) + std::log(1.0 / 3.0)) / 3.0, 1e-15));
    const sa::NgramCounts fivegrams = sa::count_ngrams(training, 5, 2);
    INFO("5-gram: the context aaba of position 4 never occurred in training, so P = (0+1)/(0+2) = 1/2");
    CHECK_THAT(sa::ngram_loss(fivegrams, held_out, {4}), WithinRel(std::log(2.0), 1e-15));
    INFO("5-gram on the training text itself: P(b | abaa) = (1+1)/(1+2)");
    CHECK_THAT(sa::ngram_probability(fivegrams, training, 4), WithinRel(2.0 / 3.0, 1e-15));
    INFO("an order n predicts only positions with n - 1 tokens before them");
    CHECK(sa::positions_with_context({1, 2, 3, 4}, 5) == std::vector<std::size_t>{4});
    CHECK(sa::positions_with_context({0, 1}, 1) == std::vector<std::size_t>{0, 1});
    CHECK_THROWS_WITH(sa::ngram_loss(fivegrams, held_out, {3}), Contains("position 3 does not have the 4 tokens"));
    CHECK_THROWS_WITH(sa::ngram_loss(trigrams, held_out, {5}), Contains("position 5"));
    CHECK_THROWS_WITH(sa::ngram_loss(trigrams, held_out, {}), Contains("no position to predict"));
    CHECK_THROWS_WITH(sa::count_ngrams(training, 0, 2), Contains("order 0"));
    CHECK_THROWS_WITH(sa::count_ngrams(training, 2, 1), Contains("token 1 at position 1 is not below V = 1"));
    CHECK_THROWS_WITH(sa::count_ngrams(training, 9, 256), Contains("does not fit in 64 bits"));
}

TEST_CASE("Counted n-grams are each sequence's and each context's count whatever V^n is", "[ch14][support]")
{
    // count_ngrams counts in an array while V^n is at most 2^20 and straight into its map above that: the
    // counts must be the same either way, each the number of times its sequence (or context) occurs,
    // counted here one position at a time.
    sa::SplitMix64 generator(14);
    std::vector<std::size_t> tokens(3000);
    for (std::size_t& token : tokens) {
        token = static_cast<std::size_t>(generator.uniform() * 5.0);  // tokens 0 to 4: below every V here
    }
    for (const auto& [v, order] : {std::pair<std::size_t, std::size_t>{5, 3}, {1100, 2}, {5, 9}}) {
        const sa::NgramCounts counts = sa::count_ngrams(tokens, order, v);
        std::map<std::uint64_t, double> sequences;
        std::map<std::uint64_t, double> contexts;
        for (std::size_t j = order - 1; j < tokens.size(); ++j) {
            std::uint64_t context = 0;
            for (std::size_t k = j + 1 - order; k < j; ++k) {
                context = context * v + tokens[k];
            }
            sequences[context * v + tokens[j]] += 1.0;
            contexts[context] += 1.0;
        }
        INFO("V = " << v << " and n = " << order << ": V^n = " << std::pow(static_cast<double>(v), order)
                    << " possible sequences");
        CHECK(counts.sequences.size() == sequences.size());
        CHECK(counts.contexts.size() == contexts.size());
        for (const auto& [key, count] : sequences) {
            CHECK(counts.sequences.at(key) == count);
        }
        for (const auto& [key, count] : contexts) {
            CHECK(counts.contexts.at(key) == count);
        }
    }
}

TEST_CASE("Counted n-grams of order 2 are the bigram, to the last bit", "[ch14][support]")
{
    // The same sums of the same counts, (count(a, b) + 1) / (count(a) + V), in the same order.
    const std::string text = "In the beginning God created the heaven and the earth.\nAnd the earth was without form";
    const sa::Vocabulary vocabulary = sa::make_vocabulary(text);
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, text);
    const std::size_t v = vocabulary.characters.size();
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, "the earth was without God");
    const std::vector<std::size_t> targets = sa::all_targets(held_out.size());
    CHECK(sa::ngram_loss(sa::count_ngrams(tokens, 2, v), held_out, targets) ==
          sa::bigram_loss(sa::count_bigrams(tokens, v), held_out, targets));
}

TEST_CASE("A reader's text: every bad file gets one line naming the problem", "[ch14][support]")
{
    std::string ten;
    for (int line = 1; line <= 10; ++line) {
        ten += line == 10 ? "ab\n" : "ba ab\n";
    }
    const sa::TextSplit split = sa::split_every_tenth_line(ten, "--text t");
    INFO("line 10 is held out, lines 1 to 9 train");
    CHECK(split.held_out == "ab\n");
    CHECK(split.training.size() == 9 * 6);
    CHECK_THROWS_WITH(sa::check_plain_text("", "--text e"), Contains("--text e: the file is empty"));
    CHECK_THROWS_WITH(sa::check_plain_text(std::string("ab\ncd\0", 6), "--text b"),
                      Contains("byte 0x00 on line 2 is not plain ASCII"));
    INFO("é in UTF-8 is the bytes 0xC3 0xA9: the first is named by its code, which a terminal shows, and the "
         "message says what the model reads");
    CHECK_THROWS_WITH(sa::check_plain_text("caf\xc3\xa9", "--text u"),
                      Contains("--text u: byte 0xC3 on line 1 is not plain ASCII; the model reads ASCII text only"));
    CHECK_THROWS_WITH(sa::check_ascii("a\nb\ncaf\xc3\xa9", "--prompt"), Contains("--prompt: byte 0xC3 on line 3"));
    CHECK_NOTHROW(sa::check_ascii("", "--prompt"));
    CHECK_THROWS_WITH(sa::split_every_tenth_line("one\ntwo\n", "--text s"),
                      Contains("the text has 2 lines; it needs at least 10"));
    CHECK_THROWS_WITH(sa::split_every_tenth_line("aaaa", "--text a"),
                      Contains("--text a: the text holds one distinct character ('a'); there is nothing to predict"));
    CHECK_THROWS_WITH(sa::split_every_tenth_line(std::string(12, '\n'), "--text n"),
                      Contains("holds one distinct character (a newline)"));
    std::string single = "aaaa";
    for (int line = 1; line < 10; ++line) {
        single += "aaaa";
    }
    CHECK_THROWS_WITH(sa::check_split({single, "aa"}, "--text one"), Contains("holds one distinct character ('a')"));
    std::string unseen;
    for (int line = 1; line <= 10; ++line) {
        unseen += line == 10 ? "abz\n" : "ab\n";
    }
    CHECK_THROWS_WITH(sa::split_every_tenth_line(unseen, "--text z"),
                      Contains("holds 'z' on its line 1, which the training text never uses"));
}

namespace {

sa::LanguageModel small_model(std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    return sa::random_model({4, 8, 2, 2, 6}, generator);
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

void append_bytes(std::string& out, std::uint64_t bits)
{
    for (int byte = 0; byte < 8; ++byte) {
        out += static_cast<char>((bits >> (8 * byte)) & 0xffU);
    }
}

// A safetensors file written from the format's description alone, with the model's tensors in
// the given order: the header's entries and their data in that order, the data of each right
// after the one before, the header after "__metadata__" and padded with spaces to a multiple of 8.
std::string file_in_order(const sa::LanguageModel& model, const std::string& vocabulary,
                          const std::vector<std::size_t>& order)
{
    sa::LanguageModel copy = model;
    const std::vector<sa::Matrix*> tensors = sa::parameters(copy);
    const std::vector<std::string> names = sa::parameter_names(model.shape);
    std::string header = fmt::format("{{\"__metadata__\":{{\"vocabulary\":\"{}\",\"heads\":\"{}\",\"context\":\"{}\"}}",
                                     vocabulary, model.shape.heads, model.shape.context);
    std::string data;
    for (const std::size_t i : order) {
        const sa::Matrix& m = *tensors[i];
        header += fmt::format(",\"{}\":{{\"dtype\":\"F64\",\"shape\":[{},{}],\"data_offsets\":[{},{}]}}", names[i],
                              m.rows(), m.cols(), data.size(), data.size() + 8 * m.rows() * m.cols());
        for (std::size_t k = 0; k < m.rows() * m.cols(); ++k) {
            append_bytes(data, std::bit_cast<std::uint64_t>(m.data()[k]));
        }
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes;
    append_bytes(bytes, header.size());
    return bytes + header + data;
}

// The file with one piece of its header replaced, the header padded again to a multiple of 8
// and its length written again, so that only the replaced text differs.
std::string header_replaced(const std::string& bytes, const std::string& from, const std::string& to)
{
    std::uint64_t length = 0;
    for (int i = 7; i >= 0; --i) {
        length = length * 256 + static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    }
    std::string header = replaced(bytes.substr(8, static_cast<std::size_t>(length)), from, to);
    header.erase(header.find_last_not_of(' ') + 1);
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string out;
    append_bytes(out, header.size());
    return out + header + bytes.substr(8 + static_cast<std::size_t>(length));
}

// Hugging Face's writer (safetensors' serialize) sorts the tensors by dtype, then by name, byte
// by byte; here every dtype is F64, so by name alone.
std::vector<std::size_t> hugging_face_order(const sa::ModelShape& shape)
{
    const std::vector<std::string> names = sa::parameter_names(shape);
    std::vector<std::size_t> order(names.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    return order;
}

}  // namespace

TEST_CASE("Bounds of the text checks: nine lines, the DEL byte, a trigram at position 1, a batch no longer than "
          "its window", "[ch14][support]")
{
    std::string nine;
    for (int line = 1; line <= 9; ++line) {
        nine += "ab\n";
    }
    INFO("9 lines hold no tenth line to hold out, so there would be nothing to measure on");
    CHECK_THROWS_WITH(sa::split_every_tenth_line(nine, "--text 9"),
                      Contains("the text has 9 lines; it needs at least 10"));
    INFO("one line is \"1 line\", in the singular");
    CHECK_THROWS_WITH(sa::split_every_tenth_line("ab\n", "--text 1"), Contains("the text has 1 line; it needs"));
    INFO("10 lines: line 10 is held out");
    CHECK(sa::split_every_tenth_line(nine + "ba\n", "--text 10").held_out == "ba\n");
    INFO("0x7f (DEL) is a control character, not a printable one: printable ASCII is 0x20 to 0x7e");
    CHECK_THROWS_WITH(sa::check_plain_text("ab\x7f", "--text d"), Contains("byte 0x7F on line 1 is not plain ASCII"));
    CHECK_NOTHROW(sa::check_plain_text("~ }", "--text t"));  // 0x7e and 0x20, the last and the first printable
    const sa::Vocabulary vocabulary = sa::make_vocabulary("ab");
    const std::vector<std::size_t> text = sa::encode(vocabulary, "abab");
    INFO("a trigram needs the two characters before position j, so j starts at 2");
    CHECK_THROWS_WITH(sa::ngram_probability(sa::count_ngrams(text, 3, 2), text, 1),
                      Contains("position 1 does not have the 2 tokens before it"));
    INFO("a window of 4 and the character after it need 5 characters");
    sa::SplitMix64 generator(1);
    CHECK_THROWS_WITH(sa::random_batch(text, 1, 4, generator), Contains("has no window of 4"));
}

TEST_CASE("A text with Windows line ends and tabs is plain text", "[ch14][support]")
{
    INFO("a carriage return before each newline (CR LF) and a tab are among the bytes the model reads");
    CHECK_NOTHROW(sa::check_plain_text("ab\tc\r\nd\r\n", "--text crlf"));
    CHECK(sa::make_vocabulary("a\r\n").characters == "\n\ra");
}

TEST_CASE("even_batch_positions: the windows spread from the text's start to its last character", "[ch14][support]")
{
    // 10 tokens, 3 windows of 4: the last window may start at 10 − 4 − 1 = 5, so that its last
    // target is token 9, the text's last; starts ⌊w · 5 / 2⌋ = 0, 2, 5, each predicting start + 1 …
    // start + 4.
    const std::vector<std::size_t> tokens(10, 0);
    CHECK(sa::even_batch_positions(tokens, 3, 4) == std::vector<std::size_t>{1, 2, 3, 4, 3, 4, 5, 6, 6, 7, 8, 9});
    INFO("one window starts at 0");
    CHECK(sa::even_batch_positions(tokens, 1, 4) == std::vector<std::size_t>{1, 2, 3, 4});
}

TEST_CASE("Safetensors: save, load and evaluate again, bit for bit", "[ch14]")
{
    const sa::LanguageModel model = small_model(8);
    const std::string bytes = sa::save_safetensors(model, "\n ab");
    // The file: 8 bytes of header length (little-endian), the header padded to a multiple of 8, then
    // 2·4·8 + 2·4·8·8 = 576 doubles of 8 bytes.
    std::uint64_t header = 0;
    for (int i = 7; i >= 0; --i) {
        header = header * 256 + static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    }
    INFO("header length " << header);
    CHECK(header % 8 == 0);
    CHECK(bytes.size() == 8 + header + 8 * (2 * 4 * 8 + 2 * 4 * 8 * 8));
    CHECK_THAT(bytes.substr(8, static_cast<std::size_t>(header)),
               Contains("\"embedding\":{\"dtype\":\"F64\",\"shape\":[4,8],\"data_offsets\":[0,256]}") &&
                   Contains("\"vocabulary\":\"\\u000a ab\"") && Contains("\"layers.1.w_out\""));
    const sa::SavedModel loaded = sa::load_safetensors(bytes);
    CHECK(loaded.vocabulary == "\n ab");
    CHECK(loaded.model.shape.layers == 2);
    CHECK(loaded.model.shape.heads == 2);
    CHECK(loaded.model.shape.context == 6);
    sa::LanguageModel original = model;
    sa::LanguageModel copy = loaded.model;
    for (std::size_t i = 0; i < sa::parameters(original).size(); ++i) {
        INFO("tensor " << sa::parameter_names(model.shape)[i] << " comes back with the same bits");
        CHECK(sa::identical(*sa::parameters(original)[i], *sa::parameters(copy)[i]));
    }
    const sa::Batch batch{{0, 1, 2, 3, 2, 1, 0, 3}, {1, 2, 3, 2, 1, 0, 3, 3}, 6};
    const double before = sa::evaluate(model, batch);
    const double after = sa::evaluate(loaded.model, batch);
    INFO("the same weights give the same loss to the last bit");
    CHECK(std::bit_cast<std::uint64_t>(before) == std::bit_cast<std::uint64_t>(after));
    CHECK(sa::save_safetensors(loaded.model, loaded.vocabulary) == bytes);
}

namespace {

// The loader refuses the bytes in one line that says the fragment.
void refused(const std::string& bytes, const std::string& fragment)
{
    INFO("expected a refusal that says: " << fragment);
    try {
        (void)sa::load_safetensors(bytes);
        FAIL("the file was accepted");
    } catch (const std::invalid_argument& error) {
        const std::string message = error.what();
        CHECK_THAT(message, Contains(fragment));
        CHECK(message.find('\n') == std::string::npos);
    }
}

}  // namespace

TEST_CASE("Safetensors: a truncated, corrupt or mis-shaped file is refused with one line", "[ch14][support]")
{
    const std::string good = sa::save_safetensors(small_model(9), "abcd");
    refused("", "fewer than the 8 of the header's length");
    refused(good.substr(0, 100), "the file is truncated: its header says");
    refused(good.substr(0, good.size() - 8), "bytes of data after the header, but its tensors need");
    refused(good + "12345678", "truncated or has bytes to spare");
    refused(replaced(good, "{\"__metadata__\"", "[\"__metadata__\""), "the header is not valid JSON");
    refused(replaced(good, "\"F64\",\"shape\":[4,8]", "\"F32\",\"shape\":[4,8]"), "is not of dtype \"F64\"");
    refused(replaced(good, "\"shape\":[8,8],\"data_offsets\":[256,768]", "\"shape\":[8,9],\"data_offsets\":[256,768]"),
            "does not have the shape [8, 8]");
    refused(replaced(good, "[256,768]", "[256,767]"),
            "\"layers.0.w_query\" does not have data_offsets [begin, end] with end - begin = 512");
    refused(replaced(good, "\"heads\":\"2\"", "\"heads\":\"3\""), "d/h must be a whole even number");
    refused(replaced(good, "\"vocabulary\":\"abcd\"", "\"vocabulary\":\"abdc\""), "distinct characters in increasing");
    refused(replaced(good, "\"shape\":[4,8]", "\"shape\":[5,8]"), "\"embedding\" does not have the shape [4, 8]");
    refused(replaced(good, "layers.1.w_key", "layers.1.w_kez"), "the header has no tensor \"layers.1.w_key\"");
    std::string not_finite = good;
    const std::size_t data = not_finite.size() - 8 * (2 * 4 * 8 + 2 * 4 * 8 * 8);
    for (std::size_t i = 0; i < 8; ++i) {
        not_finite[data + i] = i < 6 ? '\0' : (i == 6 ? '\xf8' : '\x7f');  // a NaN
    }
    refused(not_finite, "tensor \"embedding\" holds nan at entry 0");
}

TEST_CASE("Safetensors: the tensors in any order, as the format allows, Hugging Face's included", "[ch14][support]")
{
    // Eleven layers, so that sorting by name puts "layers.10" between "layers.1" and "layers.2".
    sa::SplitMix64 generator(14);
    const sa::LanguageModel model = sa::random_model({4, 4, 2, 11, 6}, generator);
    const std::vector<std::size_t> order = hugging_face_order(model.shape);
    const std::vector<std::string> names = sa::parameter_names(model.shape);
    INFO("by name: embedding, layers.0.w_key, layers.0.w_out, layers.0.w_query, …, layers.10.*, layers.2.*, "
         "…, unembedding; the book writes w_query, w_key, w_value, w_out and layers 0 to 10 in turn");
    REQUIRE(names[order[1]] == "layers.0.w_key");
    REQUIRE(names[order[9]] == "layers.10.w_key");
    REQUIRE(names[order.back()] == "unembedding");
    std::vector<std::size_t> reversed(order.size());
    std::iota(reversed.rbegin(), reversed.rend(), std::size_t{0});
    for (const auto& [written, how] : {std::pair{order, "Hugging Face's order"}, std::pair{reversed, "reversed"}}) {
        INFO("the tensors' data in " << how << ": every tensor is found by its name and its data_offsets, "
             "so the model comes back with the same bits");
        const sa::SavedModel loaded = sa::load_safetensors(file_in_order(model, "abcd", written));
        CHECK(loaded.model.shape.layers == 11);
        sa::LanguageModel original = model;
        sa::LanguageModel copy = loaded.model;
        for (std::size_t i = 0; i < names.size(); ++i) {
            INFO("tensor " << names[i]);
            CHECK(sa::identical(*sa::parameters(original)[i], *sa::parameters(copy)[i]));
        }
    }
    INFO("the book's own order, written the same way, is the book's file byte for byte");
    std::vector<std::size_t> book(names.size());
    std::iota(book.begin(), book.end(), std::size_t{0});
    CHECK(file_in_order(model, "abcd", book) == sa::save_safetensors(model, "abcd"));
}

TEST_CASE("Safetensors: data with a gap or an overlap, or a model of no layer, is refused with one line",
          "[ch14][support]")
{
    const sa::LanguageModel model = small_model(9);  // 2 layers, d = 8: each layer's matrix is 512 bytes
    const std::string good = sa::save_safetensors(model, "abcd");
    // layers.0.w_key's data start where w_query's do, [256, 768): the two overlap and the last
    // 512 bytes are covered by no tensor.
    refused(header_replaced(good, "[768,1280]", "[256,768]"),
            "has data_offsets [256, 768], but the data before it end at byte 768: the tensors' data must cover the "
            "data with no gap and no overlap");
    // An end before its begin: 256 − (2^64 − 256) wraps round to 512, w_query's size, so only
    // where its data lie can refuse it: nothing follows the embedding's 256 bytes.
    refused(header_replaced(good, "[256,768]", "[18446744073709551360,256]"),
            "\"layers.0.w_key\" has data_offsets [768, 1280], but the data before it end at byte 256");
    // Every tensor from layers.0.w_key on moved 8 bytes later: a gap of 8 bytes after w_query.
    std::string gap = good;
    const std::size_t data_start = gap.size() - 8 * (2 * 4 * 8 + 2 * 4 * 8 * 8);
    for (std::size_t begin = 768; begin < 768 + 7 * 512; begin += 512) {
        gap = replaced(gap, fmt::format("[{},{}]", begin, begin + 512), fmt::format("[{},{}]", begin + 8, begin + 520));
    }
    gap = replaced(gap, fmt::format("[{},{}]", 768 + 7 * 512, 768 + 7 * 512 + 256),
                   fmt::format("[{},{}]", 768 + 7 * 512 + 8, 768 + 7 * 512 + 264));
    gap.insert(data_start + 768, 8, '\0');
    refused(gap, "\"layers.0.w_key\" has data_offsets [776, 1288], but the data before it end at byte 768");
    // No layer: W_E and W_U alone are the bigram model, which the book counts (chapter 14's
    // baselines) rather than loads; every program that loads a model shows its layer-0 heads.
    sa::LanguageModel bigram = model;
    bigram.shape.layers = 0;
    bigram.layers.clear();
    refused(sa::save_safetensors(bigram, "abcd"),
            "the header has 2 tensors; a model of L layers has 4 L + 2, with L from 1 to 64");
    INFO("one layer, 6 tensors, is the smallest model the loader takes");
    sa::LanguageModel one = model;
    one.shape.layers = 1;
    one.layers.resize(1);
    CHECK(sa::load_safetensors(sa::save_safetensors(one, "abcd")).model.shape.layers == 1);
}

TEST_CASE("The fast products equal the textbook loops bit for bit", "[ch14][support]")
{
    // 5×3 fills no tile of 6×8 (AVX2) or 8×16 (AVX-512) but two of 2×8; 13×70 by 70×19 fills some,
    // with rows and columns left over at each edge; 17 rows are two tiles of 6, two of 2 and one row
    // on its own (the products of a training step are 2048×64 by 64×64 or 64×63). Aᵀ C with A of 600
    // rows sums over a depth of 600, which the tiles take in parts of 256, 256 and 88, each tile's
    // sums kept in the result between parts, on its 14×11 of whole tiles, 2-row tiles and columns left over.
    // On two threads each part of C is first copied into one strip per tile's columns: 14×35 has four
    // such strips (two of 16 columns with AVX-512), each read by its own tiles, and 3 columns left over.
    for (const auto& [n, k, m] : {std::array<std::size_t, 3>{5, 3, 4}, std::array<std::size_t, 3>{13, 70, 19},
                                  std::array<std::size_t, 3>{8, 9, 16}, std::array<std::size_t, 3>{17, 5, 11},
                                  std::array<std::size_t, 3>{600, 14, 11}, std::array<std::size_t, 3>{600, 14, 35}}) {
        INFO("A is " << n << "×" << k << ", B " << k << "×" << m << ": each entry summed from p = 0 upwards, "
             "one rounding per multiplication and per addition, as documented");
        const sa::Matrix a = random_entries(n, k, 31);
        const sa::Matrix b = random_entries(k, m, 32);
        const sa::Matrix c = random_entries(n, m, 33);
        sa::Matrix ab(n, m);
        sa::Matrix at_c(k, m);
        sa::Matrix c_bt(n, k);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < m; ++j) {
                for (std::size_t p = 0; p < k; ++p) {
                    ab(i, j) += a(i, p) * b(p, j);
                }
            }
        }
        for (std::size_t i = 0; i < k; ++i) {
            for (std::size_t j = 0; j < m; ++j) {
                for (std::size_t p = 0; p < n; ++p) {
                    at_c(i, j) += a(p, i) * c(p, j);
                }
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < k; ++j) {
                for (std::size_t p = 0; p < m; ++p) {
                    c_bt(i, j) += c(i, p) * b(j, p);
                }
            }
        }
        CHECK(sa::identical(sa::multiply(a, b), ab));
        CHECK(sa::identical(sa::multiply_transposed_lhs(a, c), at_c));
        CHECK(sa::identical(sa::multiply_transposed_rhs(c, b), c_bt));
        // D + AB: the product's sum from zero as above, then one addition of D's entry (the bits of
        // add_in_place(D, AB)), into another matrix and in place of D, on one thread and on two.
        const sa::Matrix d = random_entries(n, m, 34);
        sa::Matrix d_ab(n, m);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < m; ++j) {
                d_ab(i, j) = d(i, j) + ab(i, j);
            }
        }
        for (const std::size_t threads : {1, 2}) {
            INFO(threads << " thread(s): D + AB, D's entry added last");
            const sa::ProductThreads sharing(threads);
            sa::Matrix apart;
            sa::multiply_add_into(a, b, d, apart);
            CHECK(sa::identical(apart, d_ab));
            sa::Matrix in_place = d;
            sa::multiply_add_into(a, b, in_place, in_place);
            CHECK(sa::identical(in_place, d_ab));
            INFO("Aᵀ C, its rows shared among the threads");
            CHECK(sa::identical(sa::multiply_transposed_lhs(a, c), at_c));
        }
    }
    CHECK_THROWS_AS(sa::multiply(random_entries(5, 3, 1), random_entries(5, 4, 2)), sa::ShapeError);
    sa::Matrix kept;
    CHECK_THROWS_MATCHES(sa::multiply_add_into(random_entries(5, 3, 1), random_entries(3, 4, 2), random_entries(5, 3, 3),
                                               kept),
                         sa::ShapeError, Catch::Matchers::Message("multiply_add: A is 5×3, B is 3×4 and D is 5×3; the "
                                                                 "columns of A must be the rows of B, and D must be "
                                                                 "A's rows by B's columns"));
    CHECK_THROWS_AS(sa::multiply_add_into(random_entries(5, 3, 1), random_entries(4, 4, 2), random_entries(5, 4, 3), kept),
                    sa::ShapeError);
}

TEST_CASE("add_in_place: A + B entry by entry, and B refused if its rows alone or its columns alone differ",
          "[ch14][support]")
{
    sa::Matrix a{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
    sa::add_in_place(a, sa::Matrix{{10.0, 20.0, 30.0}, {40.0, 50.0, 60.0}});
    INFO("each entry is a_ij + b_ij, one addition of whole numbers, so exact");
    CHECK(sa::identical(a, sa::Matrix{{11.0, 22.0, 33.0}, {44.0, 55.0, 66.0}}));
    // A sum needs the same shape in both dimensions: a check that refused only when both differ
    // would let these through. B is the larger in each, so a sum that went ahead would read
    // inside B and change A silently.
    const sa::Matrix before = a;
    INFO("2×3 + 3×3: the columns agree, the rows do not");
    CHECK_THROWS_MATCHES(sa::add_in_place(a, sa::Matrix(3, 3, 1.0)), sa::ShapeError,
                         Catch::Matchers::Message("add_in_place: A is 2×3 and B is 3×3; they need the same shape"));
    sa::Matrix two_by_two{{1.0, 2.0}, {3.0, 4.0}};
    INFO("2×2 + 2×3: the rows agree, the columns do not");
    CHECK_THROWS_MATCHES(sa::add_in_place(two_by_two, sa::Matrix(2, 3, 1.0)), sa::ShapeError,
                         Catch::Matchers::Message("add_in_place: A is 2×2 and B is 2×3; they need the same shape"));
    INFO("a refused sum leaves A as it was");
    CHECK(sa::identical(a, before));
    CHECK(sa::identical(two_by_two, sa::Matrix{{1.0, 2.0}, {3.0, 4.0}}));
}

TEST_CASE("Cross-entropy: the largest logit of a row may be its last and a target must be below d_vocab", "[ch14]")
{
    // Row (0, 1000), target 1: P = (e^-1000, 1) / (e^-1000 + 1). e^-1000 is far below the smallest
    // double (about e^-744.4), so P = (0, 1) exactly, the loss -ln P_1 = ln(1 + e^-1000) is 0 and the
    // gradient (P - Y) / N is (0, 0). Only the row's largest logit, 1000, subtracted first keeps
    // e^1000 (the largest double is about e^709.8) out of the sum: any other gives inf / inf.
    const sa::CrossEntropy last = sa::cross_entropy(sa::Matrix{{0.0, 1000.0}}, {1});
    INFO("loss " << last.loss << ", gradient (" << last.d_logits(0, 0) << ", " << last.d_logits(0, 1) << ")");
    CHECK(last.loss == 0.0);
    CHECK(sa::identical(last.d_logits, sa::Matrix{{0.0, 0.0}}));
    // Target 0 of the same row: loss = -(0 - 1000) + ln(1 + e^-1000) = 1000, gradient P - Y = (-1, 1).
    const sa::CrossEntropy other = sa::cross_entropy(sa::Matrix{{0.0, 1000.0}}, {0});
    CHECK(other.loss == 1000.0);
    CHECK(sa::identical(other.d_logits, sa::Matrix{{-1.0, 1.0}}));
    INFO("with d_vocab = 2 the targets are 0 and 1: target 2 names no column");
    CHECK_THROWS_WITH(sa::cross_entropy(sa::Matrix{{0.0, 0.0}, {0.0, 0.0}}, {0, 2}),
                      Contains("target 2 of row 1 is not below d_vocab = 2"));
    INFO("no row at all: the mean over N = 0 rows would be 0 / 0");
    CHECK_THROWS_WITH(sa::cross_entropy(sa::Matrix(), {}), Contains("give one target per row, and at least one"));
}

TEST_CASE("The embedding's lookup refuses a token of d_vocab", "[ch14][support]")
{
    const sa::Matrix table{{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}};  // d_vocab = 3: tokens 0, 1 and 2
    CHECK(sa::identical(sa::embed(table, {2, 0}), sa::Matrix{{5.0, 6.0}, {1.0, 2.0}}));
    INFO("token 3 would be a fourth row, which the table does not have");
    CHECK_THROWS_WITH(sa::embed(table, {0, 3}), Contains("embed: token 3 at position 1 is not below d_vocab = 3"));
}

TEST_CASE("The embedding's gradient refuses a token of d_vocab", "[ch14]")
{
    INFO("a vocabulary of 3 has rows 0, 1 and 2 in dW_E: token 3 has no row to add its gradient into");
    CHECK_THROWS_WITH(sa::embedding_backward(sa::Matrix{{1.0, 2.0}, {3.0, 4.0}}, {0, 3}, 3),
                      Contains("token 3 at position 1 is not below d_vocab = 3"));
    CHECK(sa::identical(sa::embedding_backward(sa::Matrix{{1.0, 2.0}, {3.0, 4.0}}, {2, 2}, 3),
                        sa::Matrix{{0.0, 0.0}, {0.0, 0.0}, {4.0, 6.0}}));
}

TEST_CASE("The embedding's gradient takes one token per row of dX: more tokens or fewer are refused", "[ch14]")
{
    // Row i of dX is the gradient of position i, added into row t_i of dW_E: a token without a row of dX
    // (or a row without a token) means the positions and the gradient do not line up.
    const sa::Matrix d_rows{{1.0, 2.0}, {3.0, 4.0}};
    INFO("three tokens for two rows of dX");
    CHECK_THROWS_WITH(sa::embedding_backward(d_rows, {0, 1, 2}, 3),
                      Contains("dX is 2×2 but there are 3 tokens; give one token per row"));
    INFO("one token for two rows of dX");
    CHECK_THROWS_WITH(sa::embedding_backward(d_rows, {0}, 3),
                      Contains("dX is 2×2 but there are 1 tokens; give one token per row"));
}

TEST_CASE("Adam refuses moments of another shape than the parameter and leaves the parameter as it was", "[ch14]")
{
    // m and v hold one running mean per entry of the parameter: a 2×3 parameter needs 2×3 moments.
    // A 3×2 has as many entries, so only the shape check can tell it apart.
    const sa::AdamSettings settings;
    for (const bool first : {true, false}) {
        sa::Matrix parameter{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
        const sa::Matrix gradient(2, 3, 1.0);
        sa::AdamMoments moments = sa::zero_moments(parameter);
        (first ? moments.first : moments.second) = sa::Matrix(3, 2);
        INFO((first ? "m" : "v") << " is 3×2");
        CHECK_THROWS_AS(sa::adam_step(parameter, gradient, moments, 1, settings), sa::ShapeError);
        CHECK(sa::identical(parameter, sa::Matrix{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
    }
}

TEST_CASE("The products refuse factors whose shared size differs with the larger on either side", "[ch14][support]")
{
    // A·B needs A's columns to be B's rows; Aᵀ·B the same rows; A·Bᵀ the same columns. A check
    // that refused one direction only would let the other read past the smaller factor.
    const sa::Matrix two_by_three(2, 3, 1.0);
    const sa::Matrix three_by_two(3, 2, 1.0);
    const sa::Matrix two_by_two(2, 2, 1.0);
    CHECK_THROWS_MATCHES(sa::multiply(two_by_three, two_by_two), sa::ShapeError,
                         Catch::Matchers::Message("multiply: A is 2×3 and B is 2×2; the columns of A must be the rows "
                                                  "of B"));
    CHECK_THROWS_AS(sa::multiply(two_by_two, three_by_two), sa::ShapeError);
    CHECK_THROWS_MATCHES(sa::multiply_transposed_lhs(three_by_two, two_by_two), sa::ShapeError,
                         Catch::Matchers::Message("multiply_transposed_lhs: A is 3×2 and B is 2×2; they need the same "
                                                  "rows"));
    CHECK_THROWS_AS(sa::multiply_transposed_lhs(two_by_two, three_by_two), sa::ShapeError);
    CHECK_THROWS_MATCHES(sa::multiply_transposed_rhs(two_by_three, two_by_two), sa::ShapeError,
                         Catch::Matchers::Message("multiply_transposed_rhs: A is 2×3 and B is 2×2; they need the same "
                                                  "columns"));
    CHECK_THROWS_AS(sa::multiply_transposed_rhs(two_by_two, two_by_three), sa::ShapeError);
    INFO("and the shapes that agree: (2×3)·(3×2) is 2×2 of 3s, (3×2)ᵀ·(3×2) is 2×2 of 3s, (2×3)·(2×3)ᵀ is 2×2 of 3s");
    CHECK(sa::identical(sa::multiply(two_by_three, three_by_two), sa::Matrix(2, 2, 3.0)));
    CHECK(sa::identical(sa::multiply_transposed_lhs(three_by_two, three_by_two), sa::Matrix(2, 2, 3.0)));
    CHECK(sa::identical(sa::multiply_transposed_rhs(two_by_three, two_by_three), sa::Matrix(2, 2, 3.0)));
}

TEST_CASE("The model's shape at its smallest: 2 characters and a context of 1 with one less refused", "[ch14][support]")
{
    // d_vocab = 1 leaves nothing to predict; a context of 0 holds no character; d/h = 3 is a
    // rotary pair and a feature left over. One more of each is a model.
    sa::SplitMix64 generator(42);
    CHECK_THROWS_WITH(sa::random_model({1, 4, 2, 1, 4}, generator), Contains("d_vocab needs at least 2"));
    CHECK_THROWS_WITH(sa::random_model({2, 4, 2, 1, 0}, generator), Contains("context 0"));
    CHECK_THROWS_WITH(sa::random_model({2, 6, 2, 1, 4}, generator), Contains("d/h must be a whole even number"));
    const sa::LanguageModel smallest = sa::random_model({2, 4, 2, 1, 1}, generator);
    CHECK(smallest.embedding.rows() == 2);
    INFO("a context of 1: each character predicts the next from itself alone");
    CHECK(sa::forward(smallest, {0, 1, 1}, 1).logits.rows() == 3);
}

TEST_CASE("Safetensors: one head and a context of 1 load but a vocabulary of one character is refused",
          "[ch14][support]")
{
    // The metadata's heads run from 1 to d and its context from 1: the smallest of each is a model.
    sa::SplitMix64 generator(43);
    const sa::LanguageModel model = sa::random_model({3, 4, 1, 1, 1}, generator);
    const sa::SavedModel loaded = sa::load_safetensors(sa::save_safetensors(model, "abc"));
    CHECK(loaded.model.shape.heads == 1);
    CHECK(loaded.model.shape.context == 1);
    sa::LanguageModel original = model;
    sa::LanguageModel copy = loaded.model;
    for (std::size_t i = 0; i < sa::parameters(original).size(); ++i) {
        CHECK(sa::identical(*sa::parameters(original)[i], *sa::parameters(copy)[i]));
    }
    INFO("a model predicts one of at least 2 characters: a vocabulary of 1 is not one of this book's files");
    const std::string good = sa::save_safetensors(small_model(9), "abcd");
    refused(header_replaced(good, "\"vocabulary\":\"abcd\"", "\"vocabulary\":\"a\""),
            "the vocabulary in the header has 1 characters; expected 2 to 256");
}

TEST_CASE("Safetensors: a quote and a backslash in the vocabulary come back and each bound of the header holds",
          "[ch14][support]")
{
    // JSON writes '"' as \" and '\' as \\ inside a string; unescaped, the first ends the string early
    // and the second starts an escape.
    const std::string vocabulary = " \"\\a";  // space, quote, backslash, a: distinct and increasing
    const std::string bytes = sa::save_safetensors(small_model(9), vocabulary);
    CHECK_THAT(bytes, Contains("\"vocabulary\":\" \\\"\\\\a\""));
    CHECK(sa::load_safetensors(bytes).vocabulary == vocabulary);
    const std::string good = sa::save_safetensors(small_model(9), "abcd");
    INFO("the vocabulary's characters are distinct: a repeated one would give two tokens one character");
    refused(header_replaced(good, "\"vocabulary\":\"abcd\"", "\"vocabulary\":\"abbd\""),
            "not a list of distinct characters in increasing order");
    INFO("the header's deepest value is a number in data_offsets, at depth 3: a value at depth 5 is refused");
    refused(header_replaced(good, "\"__metadata__\":{", "\"__metadata__\":{\"x\":[[[1]]],"),
            "nesting deeper than a header needs");
    INFO("d runs from 1 to 1024: a width of 1025 is refused before any tensor is read");
    refused(header_replaced(good, "\"shape\":[4,8]", "\"shape\":[4,1025]"),
            "with a shape [d_vocab, d], d from 1 to 1024");
    INFO("a weight of +infinity is no more a trained model's than a NaN");
    std::string infinite = good;
    const std::size_t data = infinite.size() - 8 * (2 * 4 * 8 + 2 * 4 * 8 * 8);
    for (std::size_t i = 0; i < 8; ++i) {
        infinite[data + 8 + i] = i < 6 ? '\0' : (i == 6 ? '\xf0' : '\x7f');  // +inf, 0x7FF0000000000000
    }
    refused(infinite, "tensor \"embedding\" holds inf at entry 1");
    INFO("a header that runs past the file by less than its 8 length bytes is still a truncated file");
    std::uint64_t header = 0;
    for (int i = 7; i >= 0; --i) {
        header = header * 256 + static_cast<unsigned char>(good[static_cast<std::size_t>(i)]);
    }
    refused(good.substr(0, 8 + static_cast<std::size_t>(header) - 4), "the file is truncated: its header says");
}

TEST_CASE("save_safetensors takes one character per row of W_E: more or fewer are refused", "[ch14][support]")
{
    // The vocabulary is written into the header, one character per row of W_E: with one more the
    // file would name a character the model has no row for, with one less a row without a name.
    const sa::LanguageModel model = small_model(8);  // d_vocab = 4
    CHECK_THROWS_WITH(sa::save_safetensors(model, "\n abc"), Contains("5 characters for the 4 rows of W_E"));
    CHECK_THROWS_WITH(sa::save_safetensors(model, "\n a"), Contains("3 characters for the 4 rows of W_E"));
    CHECK_NOTHROW(sa::save_safetensors(model, "\n ab"));
}

TEST_CASE("Safetensors: 64 layers load and 65 are refused", "[ch14][support]")
{
    // L from 1 to 64: 4 · 64 + 2 = 258 tensors is the largest model the loader takes.
    sa::SplitMix64 generator(44);
    const sa::LanguageModel deepest = sa::random_model({2, 2, 1, 64, 2}, generator);
    CHECK(sa::load_safetensors(sa::save_safetensors(deepest, "ab")).model.shape.layers == 64);
    const sa::LanguageModel deeper = sa::random_model({2, 2, 1, 65, 2}, generator);
    refused(sa::save_safetensors(deeper, "ab"), "the header has 262 tensors; a model of L layers has 4 L + 2, with L "
                                                "from 1 to 64");
}

TEST_CASE("forward: windows of the text one after another with the last one shorter and no tokens refused",
          "[ch14][support]")
{
    // 7 tokens in windows of 3: rows 0-2, 3-5 and 6 alone. Each window attends within itself and
    // causally, so its rows are those of a full window of 3 that starts with the same tokens: the
    // tokens after a row cannot change it. Row 6 is row 0 of the window (6, 0, 0).
    const sa::LanguageModel model = small_model(10);
    const std::vector<std::size_t> tokens{0, 1, 2, 3, 2, 1, 0};
    const sa::Matrix whole = sa::forward(model, tokens, 3).logits;
    REQUIRE(whole.rows() == 7);
    for (std::size_t first = 0; first < 7; first += 3) {
        const std::size_t last = std::min<std::size_t>(first + 3, 7);
        std::vector<std::size_t> full(tokens.begin() + static_cast<std::ptrdiff_t>(first),
                                      tokens.begin() + static_cast<std::ptrdiff_t>(last));
        full.resize(3, 0);
        const sa::Matrix alone = sa::forward(model, full, 3).logits;
        for (std::size_t r = first; r < last; ++r) {
            for (std::size_t c = 0; c < whole.cols(); ++c) {
                INFO("row " << r << " column " << c);
                CHECK_THAT(whole(r, c), WithinAbs(alone(r - first, c), 1e-12));
            }
        }
    }
    CHECK_THROWS_WITH(sa::forward(model, {}, 3), Contains("no tokens"));
}

TEST_CASE("evaluate: the mean loss of every row in chunks of 16 windows with the last chunk weighed by its rows",
          "[ch14][support]")
{
    // 17 windows of 3 rows: a chunk of 16 windows (48 rows) and one of 1 window (3 rows). The mean
    // over all 51 rows is (48 · mean of the first + 3 · mean of the second) / 51, which is also
    // cross_entropy() of one forward pass over all 51 rows, up to rounding.
    const sa::LanguageModel model = small_model(11);
    sa::Batch batch{{}, {}, 3};
    for (std::size_t i = 0; i < 51; ++i) {
        batch.inputs.push_back((i * 7 + 1) % 4);
        batch.targets.push_back((i * 5 + 2) % 4);
    }
    const double expected = sa::cross_entropy(sa::forward(model, batch.inputs, 3).logits, batch.targets).loss;
    CHECK_THAT(sa::evaluate(model, batch), WithinRel(expected, 1e-12));
}

TEST_CASE("random_batch from a text of exactly one window and the character after it", "[ch14][support]")
{
    // A window of 4 in 5 characters can only start at 0: every window is characters 0-3, predicting 1-4.
    const std::vector<std::size_t> text{3, 1, 4, 1, 5};
    sa::SplitMix64 generator(5);
    const sa::Batch batch = sa::random_batch(text, 3, 4, generator);
    CHECK(batch.inputs == std::vector<std::size_t>{3, 1, 4, 1, 3, 1, 4, 1, 3, 1, 4, 1});
    CHECK(batch.targets == std::vector<std::size_t>{1, 4, 1, 5, 1, 4, 1, 5, 1, 4, 1, 5});
}

TEST_CASE("The n-gram counts: V^n up to 2^64 - 1 keys and a token of V at the last position refused",
          "[ch14][support]")
{
    // The keys of the contexts and sequences are numbers below V^n: V^n must fit in 64 bits.
    INFO("V = 2^64 - 1, order 1: V^1 = 2^64 - 1 fits; (2^32)^2 = 2^64 does not");
    CHECK_NOTHROW(sa::count_ngrams({}, 1, UINT64_MAX));
    CHECK_THROWS_WITH(sa::count_ngrams({}, 2, std::size_t{1} << 32U), Contains("does not fit in 64 bits"));
    CHECK_NOTHROW(sa::count_ngrams({}, 2, (std::size_t{1} << 32U) - 1));  // (2^32 - 1)^2 < 2^64
    INFO("V = 2: tokens 0 and 1; a 2 at the text's last position is refused like one anywhere else");
    CHECK_THROWS_WITH(sa::count_ngrams({0, 1, 2}, 2, 2), Contains("token 2 at position 2 is not below V = 2"));
    const std::vector<std::size_t> held_out{0, 1, 2};
    CHECK_THROWS_WITH(sa::ngram_probability(sa::count_ngrams({0, 1}, 2, 2), held_out, 2),
                      Contains("token 2 at position 2 is not below V = 2"));
    INFO("the bigram loss predicts positions 1 to length - 1: position 3 of a text of 3 is past its end");
    CHECK_THROWS_WITH(sa::bigram_loss(sa::count_bigrams({0, 1}, 2), {0, 1, 1}, {3}),
                      Contains("position 3 has no previous character in a text of 3"));
}

namespace {

// Rotary positions on each head's slice of a window's rows, the step functions' way.
sa::Matrix rope_heads(const sa::Matrix& m, std::size_t heads)
{
    std::vector<sa::Matrix> slices = sa::split_heads(m, heads);
    for (sa::Matrix& slice : slices) {
        slice = sa::rope(slice);
    }
    return sa::concat_heads(slices);
}

double inner(const sa::Matrix& a, const sa::Matrix& b)
{
    double total = 0.0;
    for (std::size_t r = 0; r < a.rows(); ++r) {
        for (std::size_t c = 0; c < a.cols(); ++c) {
            total += a(r, c) * b(r, c);
        }
    }
    return total;
}

}  // namespace

TEST_CASE("The training path's gradients are multi_head_backward's, through rotary positions, to 1e-12",
          "[ch14]")
{
    // One layer on one window of 6 tokens, d = 8, 2 heads. The step functions: Q = rope(X W_Q) per
    // head, K likewise, V = X W_V, Y = X + MultiHead(Q, K, V) W_O; dY = dZ W_Uᵀ at the layer's
    // output. multi_head_backward() gives dW_O and dV directly, so dW_V = Xᵀ dV. The rotation is
    // linear, so entry (a, b) of dW_Q is the inner product of dQ with rope(X E_ab), where E_ab is
    // 1 at (a, b) and 0 elsewhere; the same for dW_K.
    sa::SplitMix64 generator(25);
    const sa::ModelShape shape{7, 8, 2, 1, 6};
    sa::LanguageModel model = sa::random_model(shape, generator);
    model.unembedding = random_entries(8, 7, 26);
    const std::vector<std::size_t> tokens{3, 1, 4, 1, 5, 6};
    const std::vector<std::size_t> targets{1, 4, 1, 5, 6, 2};
    const sa::ForwardTrace trace = sa::forward(model, tokens, tokens.size());
    const sa::Matrix d_logits = sa::cross_entropy(trace.logits, targets).d_logits;
    const sa::LanguageModel fast = sa::backward(model, trace, d_logits);
    const sa::AttentionLayer& layer = model.layers[0];
    const sa::Matrix x = sa::embed(model.embedding, tokens);
    const sa::Matrix d_y = sa::multiply_transposed_rhs(d_logits, model.unembedding);
    const sa::MultiHeadGrads book =
        sa::multi_head_backward(rope_heads(sa::project(x, layer.w_query), 2), rope_heads(sa::project(x, layer.w_key), 2),
                                sa::project(x, layer.w_value), sa::causal_mask(6, 6), 2, layer.w_out, d_y);
    const auto close = [](const sa::Matrix& a, const sa::Matrix& b, const char* name) {
        INFO(name << ": the fast backward against the step functions; largest difference "
                  << sa::largest_difference(a, b));
        CHECK(sa::largest_difference(a, b) <= 1e-12);
    };
    close(fast.layers[0].w_out, book.d_w_out, "dW_O");
    close(fast.layers[0].w_value, sa::multiply_transposed_lhs(x, book.d_values), "dW_V");
    sa::Matrix d_w_query(8, 8);
    sa::Matrix d_w_key(8, 8);
    for (std::size_t a = 0; a < 8; ++a) {
        for (std::size_t b = 0; b < 8; ++b) {
            sa::Matrix e(8, 8);
            e(a, b) = 1.0;
            const sa::Matrix turned = rope_heads(sa::project(x, e), 2);
            d_w_query(a, b) = inner(book.d_queries, turned);
            d_w_key(a, b) = inner(book.d_keys, turned);
        }
    }
    close(fast.layers[0].w_query, d_w_query, "dW_Q");
    close(fast.layers[0].w_key, d_w_key, "dW_K");
}

TEST_CASE("Training is deterministic: the same seed gives the same bits", "[ch14]")
{
    const std::string text = "In the beginning God created the heaven and the earth.\n";
    const sa::Vocabulary vocabulary = sa::make_vocabulary(text);
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, text);
    const auto run = [&] {
        sa::SplitMix64 generator(4);
        sa::Trainer trainer = sa::make_trainer(sa::random_model({vocabulary.characters.size(), 8, 2, 1, 16}, generator),
                                               {.learning_rate = 0.01});
        for (int step = 0; step < 3; ++step) {
            (void)sa::training_step(trainer, sa::random_batch(tokens, 2, 16, generator));
        }
        return sa::save_safetensors(trainer.model, vocabulary.characters);
    };
    CHECK(run() == run());
}

TEST_CASE("Training on several threads gives the bits of one thread", "[ch14][support]")
{
    // The products share their rows among the threads, the heads their windows, the rotation its
    // rows, the residual sums their entries, and the cross-entropy and Adam their rows (the loss
    // summed in row order after them); every sum is still one thread's, in the same order,
    // so two and three threads must give the model one thread gives, bit for bit. Two layers,
    // 4 windows of 16 rows (64 rows: two runs of a multiple of 8 for two threads, a short last
    // run for three).
    const std::string text = "In the beginning God created the heaven and the earth.\n";
    const sa::Vocabulary vocabulary = sa::make_vocabulary(text);
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, text);
    const auto run = [&](std::size_t threads) {
        sa::SplitMix64 generator(6);
        sa::Trainer trainer = sa::make_trainer(sa::random_model({vocabulary.characters.size(), 8, 2, 2, 16}, generator),
                                               {.learning_rate = 0.01});
        trainer.threads = threads;
        std::vector<double> losses;
        for (int step = 0; step < 3; ++step) {
            losses.push_back(sa::training_step(trainer, sa::random_batch(tokens, 4, 16, generator)));
        }
        return std::pair{losses, sa::save_safetensors(trainer.model, vocabulary.characters)};
    };
    const auto one = run(1);
    for (const std::size_t threads : {std::size_t{2}, std::size_t{3}}) {
        INFO("threads: " << threads);
        const auto several = run(threads);
        CHECK(several.first == one.first);    // the losses, compared exactly
        CHECK(several.second == one.second);  // every parameter, byte for byte
    }
}

namespace {

using Dense = Eigen::MatrixXd;

Dense dense(const sa::Matrix& matrix)
{
    Dense result(matrix.rows(), matrix.cols());
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            result(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = matrix(r, c);
        }
    }
    return result;
}

// Rotary positions written from the paper's formula: pair i of a head's vector at position p turns by
// p · 10000^(-2i/d_head).
Dense rotated(Dense x, Eigen::Index head_dim)
{
    for (Eigen::Index p = 0; p < x.rows(); ++p) {
        for (Eigen::Index i = 0; i < head_dim / 2; ++i) {
            const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) /
                                                                                static_cast<double>(head_dim));
            const double a = x(p, 2 * i);
            const double b = x(p, 2 * i + 1);
            x(p, 2 * i) = a * std::cos(angle) - b * std::sin(angle);
            x(p, 2 * i + 1) = a * std::sin(angle) + b * std::cos(angle);
        }
    }
    return x;
}

// The model's summed cross-entropy on one window, written from the chapter's formulas with Eigen.
double reference_window_loss(const sa::LanguageModel& model, const std::vector<std::size_t>& inputs,
                             const std::vector<std::size_t>& targets)
{
    const auto n = static_cast<Eigen::Index>(inputs.size());
    const auto d = static_cast<Eigen::Index>(model.shape.width);
    const auto heads = static_cast<Eigen::Index>(model.shape.heads);
    const Eigen::Index head_dim = d / heads;
    const Dense w_e = dense(model.embedding);
    Dense x(n, d);
    for (Eigen::Index i = 0; i < n; ++i) {
        x.row(i) = w_e.row(static_cast<Eigen::Index>(inputs[static_cast<std::size_t>(i)]));
    }
    for (const sa::AttentionLayer& layer : model.layers) {
        const Dense q = x * dense(layer.w_query);
        const Dense k = x * dense(layer.w_key);
        const Dense v = x * dense(layer.w_value);
        Dense joined(n, d);
        for (Eigen::Index h = 0; h < heads; ++h) {
            const Dense qh = rotated(q.middleCols(h * head_dim, head_dim), head_dim);
            const Dense kh = rotated(k.middleCols(h * head_dim, head_dim), head_dim);
            Dense a = qh * kh.transpose() / std::sqrt(static_cast<double>(head_dim));
            for (Eigen::Index i = 0; i < n; ++i) {
                const double top = a.row(i).head(i + 1).maxCoeff();
                const Eigen::RowVectorXd e = (a.row(i).head(i + 1).array() - top).exp();
                a.row(i).setZero();
                a.row(i).head(i + 1) = e / e.sum();
            }
            joined.middleCols(h * head_dim, head_dim) = a * v.middleCols(h * head_dim, head_dim);
        }
        x += joined * dense(layer.w_out);
    }
    const Dense z = x * dense(model.unembedding);
    double total = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) {
        const double top = z.row(i).maxCoeff();
        total += top + std::log((z.row(i).array() - top).exp().sum()) -
                 z(i, static_cast<Eigen::Index>(targets[static_cast<std::size_t>(i)]));
    }
    return total;
}

// The number printed after a label in the book's output, as text, e.g. "2.264".
std::string printed_after(const std::string& output, const std::string& label)
{
    const std::size_t at = output.find(label);
    INFO("the output prints " << label);
    REQUIRE(at != std::string::npos);
    std::smatch match;
    const std::string rest = output.substr(at + label.size());
    REQUIRE(std::regex_search(rest, match, std::regex("-?[0-9]+\\.[0-9]+")));
    return match.str();
}

std::string three(double value)
{
    return fmt::format("{:.3f}", value);
}

struct ByteCounts {
    std::array<double, 256> singles{};  // every byte of the text, for the unigram
    std::vector<double> pairs = std::vector<double>(256 * 256, 0.0);
    std::vector<double> triples = std::vector<double>(256 * 256 * 256, 0.0);
    std::array<double, 256> firsts{};
    std::array<double, 65536> pair_firsts{};
};

// The mean loss of a counted n-gram of order 4 or more on the held-out bytes at the given
// positions, counted straight from the bytes: only the contexts those positions need are kept,
// each as the number its n − 1 bytes spell in base 256.
double long_ngram_loss(const std::string& training, const std::string& held_out,
                       const std::vector<std::size_t>& positions, std::size_t order, double v)
{
    const auto key = [order](const std::string& text, std::size_t j) {
        std::uint64_t k = 0;
        for (std::size_t i = j + 1 - order; i < j; ++i) {
            k = k * 256U + static_cast<unsigned char>(text[i]);
        }
        return k;
    };
    std::map<std::uint64_t, std::array<double, 257>> followers;  // entry 256: the context's total
    for (const std::size_t j : positions) {
        followers[key(held_out, j)] = {};
    }
    for (std::size_t j = order - 1; j < training.size(); ++j) {
        const auto found = followers.find(key(training, j));
        if (found != followers.end()) {
            found->second[static_cast<unsigned char>(training[j])] += 1.0;
            found->second[256] += 1.0;
        }
    }
    double sum = 0.0;
    for (const std::size_t j : positions) {
        const std::array<double, 257>& counts = followers.at(key(held_out, j));
        sum -= std::log((counts[static_cast<unsigned char>(held_out[j])] + 1.0) / (counts[256] + v));
    }
    return sum / static_cast<double>(positions.size());
}

}  // namespace

namespace {

// The chapter's run again, step by step as its program takes them (the seed's generator draws the
// model, then each step's batch), with every entry's move compared here, entry by entry: the
// largest move in units of α, its step, matrix, row and column, and the count of moves above α.
struct RunMoves {
    double largest = 0.0;
    std::size_t step = 0;
    std::size_t matrix = 0;
    std::size_t row = 0;
    std::size_t column = 0;
    std::size_t above = 0;
    sa::LanguageModel model;
};

RunMoves train_again(const std::vector<std::size_t>& training, std::size_t v)
{
    sa::SplitMix64 generator(2017);
    sa::Trainer trainer = sa::make_trainer(sa::random_model({v, 64, 4, 1, 64}, generator), {.learning_rate = 0.01});
    RunMoves moves;
    for (std::size_t step = 1; step <= 600; ++step) {
        sa::LanguageModel before = trainer.model;
        (void)sa::training_step(trainer, sa::random_batch(training, 16, 64, generator));
        const std::vector<sa::Matrix*> olds = sa::parameters(before);
        const std::vector<sa::Matrix*> news = sa::parameters(trainer.model);
        for (std::size_t m = 0; m < olds.size(); ++m) {
            for (std::size_t r = 0; r < olds[m]->rows(); ++r) {
                for (std::size_t c = 0; c < olds[m]->cols(); ++c) {
                    const double move = std::abs((*news[m])(r, c) - (*olds[m])(r, c)) / 0.01;
                    moves.above += move > 1.0 ? 1 : 0;
                    if (move > moves.largest) {
                        moves = {move, step, m, r, c, moves.above, {}};
                    }
                }
            }
        }
    }
    moves.model = trainer.model;
    return moves;
}

// Adam's printed moves: the bounds from β1 = 0.9 and β2 = 0.999 at the printed step, and the largest
// move and the count above α from the run trained again.
void check_printed_moves(const std::string& output, double v, const std::vector<std::size_t>& training,
                         const std::string& characters, const sa::LanguageModel& saved)
{
    const double d = 64.0;
    INFO("parameters: V d (W_E) + 4 d^2 (W_Q, W_K, W_V, W_O) + d V (W_U) = " << 2 * v * d + 4 * d * d);
    CHECK_THAT(output, Contains(fmt::format("Parameters: {} = ", 2 * v * d + 4 * d * d)));
    std::smatch match;
    REQUIRE(std::regex_search(output, match, std::regex("one step: ([0-9.]+) α, at step s = ([0-9]+) in ")));
    const double largest = std::stod(match[1].str());
    const double s = std::stod(match[2].str());
    const double sparse = 0.1 / (1.0 - std::pow(0.9, s)) * std::sqrt((1.0 - std::pow(0.999, s)) / 0.001);
    double sum = 0.0;
    for (double j = 0.0; j < s; j += 1.0) {
        sum += std::pow(0.81 / 0.999, j);
    }
    INFO("at step " << s << ": after zeros (1 - 0.9)/(1 - 0.9^s) sqrt((1 - 0.999^s)/0.001) = " << sparse
                    << "; for any gradients, times sqrt(sum of (0.81/0.999)^j) = " << sparse * std::sqrt(sum));
    CHECK(printed_after(output, "was 0 at every earlier step: ") == three(sparse));
    CHECK(printed_after(output, "α (1 - β1)/√(1 - β2) = ") == three(0.1 / std::sqrt(0.001)));
    CHECK(printed_after(output, "for any gradients: ") == three(sparse * std::sqrt(sum)));
    CHECK(largest <= sparse * std::sqrt(sum));
    const RunMoves again = train_again(training, static_cast<std::size_t>(v));
    sa::LanguageModel trained = again.model;
    sa::LanguageModel read = saved;
    INFO("the run trained again ends on the saved model, bit for bit");
    for (std::size_t m = 0; m < sa::parameters(trained).size(); ++m) {
        CHECK(sa::identical(*sa::parameters(trained)[m], *sa::parameters(read)[m]));
    }
    INFO("the largest move of the run trained again: " << again.largest << " α at step " << again.step);
    CHECK(three(largest) == three(again.largest));
    CHECK(static_cast<std::size_t>(s) == again.step);
    REQUIRE(again.matrix == 0);  // the row of a rare character of W_E, as the prose says
    CHECK_THAT(output, Contains(fmt::format("in embedding ({}, {}), the row of '{}'", again.row, again.column,
                                            characters.at(again.row))));
    INFO("entry-steps: 600 steps of " << 2 * v * d + 4 * d * d << " entries each");
    CHECK_THAT(output, Contains(fmt::format(";\n  {} of the {} entry-steps moved more than α", again.above,
                                            600 * (2 * v * d + 4 * d * d))));
}

}  // namespace

// Hidden from the default run (the tag starts with ".") and no point (it checks the book's run, not a
// learner's step, [support]): it reads the chapter's build-time run, which a
// sanitizer build and a learner's build do not make; CMake registers it where that run exists.
TEST_CASE("The chapter's printed numbers recomputed from the text and the saved model", "[.ch14-run][support]")
{
    const std::string training = helpers::read_all(BOOK_KJV_TRAINING);
    const std::string held_out = helpers::read_all(BOOK_KJV_HELD_OUT);
    const std::string output = helpers::read_all(BOOK_CH14_OUTPUT);
    INFO("character counts: the sizes of the two files, one byte per character");
    CHECK_THAT(output, Contains(fmt::format("Training text: {} characters. Held-out text: {} characters.",
                                            training.size(), held_out.size())));
    CHECK_THAT(output, Contains(fmt::format("{} predictions", 128 * 64)));
    std::array<bool, 256> seen{};
    for (const char c : training) {
        seen[static_cast<unsigned char>(c)] = true;
    }
    double v = 0.0;
    for (const bool s : seen) {
        v += s ? 1.0 : 0.0;
    }
    CHECK_THAT(output, Contains(fmt::format("d_vocab = {} characters", v)));
    CHECK(printed_after(output, "ln d_vocab = ") == three(std::log(v)));
    // The n-grams, counted over bytes straight from the files.
    ByteCounts counts;
    counts.singles[static_cast<unsigned char>(training[0])] += 1.0;
    for (std::size_t j = 1; j < training.size(); ++j) {
        const auto a = static_cast<unsigned char>(training[j - 1]);
        const auto b = static_cast<unsigned char>(training[j]);
        counts.singles[b] += 1.0;
        counts.pairs[a * 256U + b] += 1.0;
        counts.firsts[a] += 1.0;
        if (j >= 2) {
            const auto z = static_cast<unsigned char>(training[j - 2]);
            counts.triples[(z * 256U + a) * 256U + b] += 1.0;
            counts.pair_firsts[z * 256U + a] += 1.0;
        }
    }
    const auto bigram = [&](std::size_t j) {
        const auto a = static_cast<unsigned char>(held_out[j - 1]);
        const auto b = static_cast<unsigned char>(held_out[j]);
        return -std::log((counts.pairs[a * 256U + b] + 1.0) / (counts.firsts[a] + v));
    };
    double all = 0.0;
    for (std::size_t j = 1; j < held_out.size(); ++j) {
        all += bigram(j);
    }
    INFO("bigram on every held-out character: mean of -ln (count(a, b) + 1) / (count(a) + V)");
    CHECK(printed_after(output, "on every held-out character: ") == three(all / static_cast<double>(held_out.size() - 1)));
    // The measured windows: 128 windows of 64, window w starting at floor(w (n − 65) / 127).
    double bigram_sum = 0.0;
    double trigram_sum = 0.0;
    double trigram_count = 0.0;
    double unigram_sum = 0.0;
    std::vector<std::size_t> starts;
    std::vector<std::size_t> measured;
    for (std::size_t w = 0; w < 128; ++w) {
        starts.push_back(w * (held_out.size() - 65) / 127);
        for (std::size_t i = 0; i < 64; ++i) {
            const std::size_t j = starts.back() + i + 1;
            measured.push_back(j);
            unigram_sum -= std::log((counts.singles[static_cast<unsigned char>(held_out[j])] + 1.0) /
                                    (static_cast<double>(training.size()) + v));
            bigram_sum += bigram(j);
            if (j >= 2) {
                const auto z = static_cast<unsigned char>(held_out[j - 2]);
                const auto a = static_cast<unsigned char>(held_out[j - 1]);
                const auto b = static_cast<unsigned char>(held_out[j]);
                trigram_sum -= std::log((counts.triples[(z * 256U + a) * 256U + b] + 1.0) /
                                        (counts.pair_firsts[z * 256U + a] + v));
                trigram_count += 1.0;
            }
        }
    }
    const double bigram_measured = bigram_sum / 8192.0;
    CHECK(printed_after(output, "counted bigram   ") == three(bigram_measured));
    CHECK(printed_after(output, "counted trigram  ") == three(trigram_sum / trigram_count));
    CHECK(printed_after(output, "counted trigram  " + three(trigram_sum / trigram_count) + " (") ==
          three(trigram_sum / trigram_count / std::log(2.0)));
    INFO("the first window starts at 0: its first prediction, position 1, has one character before it, not two");
    CHECK(trigram_count == 8191.0);
    CHECK_THAT(output, Contains(fmt::format("counted trigram  {} ({}), 8191 predictions", three(trigram_sum / 8191.0),
                                            three(trigram_sum / 8191.0 / std::log(2.0)))));
    INFO("unigram: mean of -ln (count(b) + 1) / (n + V) over the 8192 measured characters, n the training length");
    CHECK(printed_after(output, "counted unigram  ") == three(unigram_sum / 8192.0));
    // Orders 4 and 5 predict the measured positions with 3 and 4 characters before them: the first
    // window loses its first 2 and 3 predictions.
    for (const std::size_t order : {std::size_t{4}, std::size_t{5}}) {
        std::vector<std::size_t> positions;
        for (const std::size_t j : measured) {
            if (j + 1 >= order) {
                positions.push_back(j);
            }
        }
        INFO("order " << order << ": (count(context, b) + 1) / (count(context) + V), counted from the bytes");
        CHECK(positions.size() == 8192 + 2 - order);
        const double loss = long_ngram_loss(training, held_out, positions, order, v);
        CHECK_THAT(output, Contains(fmt::format("counted {}-gram   {} ({}), {} predictions", order, three(loss),
                                                three(loss / std::log(2.0)), positions.size())));
    }
    // The trained model, read from the file the run saved, through the Eigen forward pass above.
    const sa::SavedModel saved = sa::load_safetensors(helpers::read_all(BOOK_CH14_MODEL));
    const sa::Vocabulary vocabulary = sa::make_vocabulary(training);
    const std::vector<std::size_t> tokens = sa::encode(vocabulary, held_out);
    double model_sum = 0.0;
    for (const std::size_t start : starts) {
        const std::vector<std::size_t> inputs(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                                              tokens.begin() + static_cast<std::ptrdiff_t>(start + 64));
        const std::vector<std::size_t> targets(tokens.begin() + static_cast<std::ptrdiff_t>(start + 1),
                                               tokens.begin() + static_cast<std::ptrdiff_t>(start + 65));
        model_sum += reference_window_loss(saved.model, inputs, targets);
    }
    const double model = model_sum / 8192.0;
    INFO("the trained model's held-out loss, recomputed with Eigen: " << model);
    CHECK(printed_after(output, "one layer        ") == three(model));
    CHECK(printed_after(output, "one layer        " + three(model) + " (") == three(model / std::log(2.0)));
    CHECK(printed_after(output, "Bigram minus model: ") == three(bigram_measured - model));
    INFO("perplexity: e to the model's loss in nats");
    CHECK(printed_after(output, "perplexity, e^L: ") == three(std::exp(model)));
    CHECK(bigram_measured - model >= 0.30);
    CHECK_THAT(sa::evaluate(saved.model, sa::even_batch(tokens, 128, 64)), WithinRel(model, 1e-12));
    // The untrained model: drawn again from the seed in the documented order, measured the same way.
    sa::SplitMix64 generator(2017);
    const sa::LanguageModel start = sa::random_model({63, 64, 4, 1, 64}, generator);
    double start_sum = 0.0;
    for (const std::size_t s : starts) {
        start_sum += reference_window_loss(start, {tokens.begin() + static_cast<std::ptrdiff_t>(s),
                                                   tokens.begin() + static_cast<std::ptrdiff_t>(s + 64)},
                                           {tokens.begin() + static_cast<std::ptrdiff_t>(s + 1),
                                            tokens.begin() + static_cast<std::ptrdiff_t>(s + 65)});
    }
    INFO("step 0: the random start's loss, close to ln d_vocab because W_U starts small");
    CHECK(printed_after(output, "      0  ") == three(start_sum / 8192.0));
    check_printed_moves(output, v, sa::encode(vocabulary, training), vocabulary.characters, saved.model);
}
