// Chapter 19, A window and its sinks: the sliding-window mask, its work and reach, and the rolling KV
// cache with and without sinks against a reference that says which keys each query reads at which
// rotary position.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "char_text.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "generation.hpp"
#include "helpers.hpp"
#include "language_model.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "multi_head.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "safetensors.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "sliding_window.hpp"
#include "softmax.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// The program prints 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;
constexpr double infinity = std::numeric_limits<double>::infinity();

std::vector<std::size_t> random_tokens(std::size_t n, std::size_t v, sa::SplitMix64& generator)
{
    std::vector<std::size_t> tokens(n);
    for (std::size_t& token : tokens) {
        token = helpers::below(generator, v);
    }
    return tokens;
}

// −ln softmax(z)_target, written out again.
double loss_of(const std::vector<double>& z, std::size_t target)
{
    const double largest = *std::max_element(z.begin(), z.end());
    double total = 0.0;
    for (const double entry : z) {
        total += std::exp(entry - largest);
    }
    return -std::log(std::exp(z[target] - largest) / total);
}

// A key the query at position j reads: its row of the text and the rotary position it is turned to.
struct Kept {
    std::size_t row;
    std::size_t position;
};

// What a rolling cache of w positions with k sinks holds when the query at j reads it: everything up
// to j while j < w; then the first k rows (at their own positions, or just before the oldest recent
// row) and the last w − k rows, j − (w − k) + 1 to j, at their own positions.
std::vector<Kept> kept_rows(std::size_t j, std::size_t w, std::size_t k, sa::SinkPositions where)
{
    std::vector<Kept> out;
    if (j < w) {
        for (std::size_t i = 0; i <= j; ++i) {
            out.push_back({i, i});
        }
        return out;
    }
    for (std::size_t s = 0; s < k; ++s) {
        out.push_back({s, where == sa::SinkPositions::own ? s : j - w + 1 + s});
    }
    for (std::size_t i = j - (w - k) + 1; i <= j; ++i) {
        out.push_back({i, i});
    }
    return out;
}

sa::Matrix row_of(const sa::Matrix& matrix, std::size_t row)
{
    sa::Matrix out(1, matrix.cols());
    for (std::size_t c = 0; c < matrix.cols(); ++c) {
        out(0, c) = matrix(row, c);
    }
    return out;
}

// The reference: every layer's stream computed position by position, the query at j attending over
// kept_rows(j) with chapter 10's rope() at the positions they name; the logits of every position.
// `last_weights`, if given, gets each layer's and head's weights of the last query over its kept rows.
sa::Matrix kept_logits(const sa::LanguageModel& model, const std::vector<std::size_t>& tokens, std::size_t w,
                       std::size_t k, sa::SinkPositions where,
                       std::vector<std::vector<std::vector<double>>>* last_weights = nullptr)
{
    const std::size_t heads = model.shape.heads;
    const std::size_t width = model.shape.width / heads;
    const std::size_t n = tokens.size();
    sa::Matrix x = sa::embed(model.embedding, tokens);
    for (const sa::AttentionLayer& layer : model.layers) {
        const std::vector<sa::Matrix> q = sa::split_heads(sa::multiply(x, layer.w_query), heads);
        const std::vector<sa::Matrix> key = sa::split_heads(sa::multiply(x, layer.w_key), heads);
        const std::vector<sa::Matrix> v = sa::split_heads(sa::multiply(x, layer.w_value), heads);
        sa::Matrix joined(n, model.shape.width, 0.0);
        std::vector<std::vector<double>> layer_weights;
        for (std::size_t h = 0; h < heads; ++h) {
            const sa::Matrix q_turned = sa::rope(q[h]);  // row r turned to position r
            const sa::Matrix k_turned = sa::rope(key[h]);
            for (std::size_t j = 0; j < n; ++j) {
                const std::vector<Kept> rows = kept_rows(j, w, k, where);
                std::vector<double> a(rows.size());
                for (std::size_t r = 0; r < rows.size(); ++r) {
                    const double* turned = k_turned.data() + rows[r].row * width;  // at its own position
                    sa::Matrix moved;
                    if (rows[r].position != rows[r].row) {  // a sink beside the window: turned to where it sits
                        moved = sa::rope(row_of(key[h], rows[r].row), rows[r].position);
                        turned = moved.data();
                    }
                    a[r] = 0.0;
                    for (std::size_t c = 0; c < width; ++c) {
                        a[r] += q_turned(j, c) * turned[c];
                    }
                    a[r] /= std::sqrt(static_cast<double>(width));
                }
                const double largest = *std::max_element(a.begin(), a.end());
                double total = 0.0;
                for (double& entry : a) {
                    entry = std::exp(entry - largest);
                    total += entry;
                }
                for (std::size_t r = 0; r < rows.size(); ++r) {
                    a[r] /= total;
                    for (std::size_t c = 0; c < width; ++c) {
                        joined(j, h * width + c) += a[r] * v[h](rows[r].row, c);
                    }
                }
                if (j + 1 == n) {
                    layer_weights.push_back(a);
                }
            }
        }
        if (last_weights != nullptr) {
            last_weights->push_back(layer_weights);
        }
        sa::add_in_place(x, sa::multiply(joined, layer.w_out));  // the residual stream
    }
    return sa::multiply(x, model.unembedding);
}

std::vector<double> logits_row(const sa::Matrix& z, std::size_t row)
{
    return {z.data() + row * z.cols(), z.data() + (row + 1) * z.cols()};
}

sa::LanguageModel small_model(std::size_t layers, std::size_t heads, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    return sa::random_model({7, 16, heads, layers, 8}, generator);
}

}  // namespace

TEST_CASE("The sliding-window mask keeps each query's last w keys, itself included", "[ch19]")
{
    const sa::Matrix mask = sa::sliding_window_mask(4, 6, 2);
    INFO("query i keeps keys i - 1 and i: a band of width 2 on the diagonal, top-left aligned as causal_mask");
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t j = 0; j < 6; ++j) {
            const bool kept = j <= i && j + 2 > i;
            CHECK(mask(i, j) == (kept ? 0.0 : -infinity));
        }
    }
    INFO("a window as long as the keys is the causal mask; a window of 1 keeps the diagonal only");
    CHECK(sa::identical(sa::sliding_window_mask(5, 5, 5), sa::causal_mask(5, 5)));
    CHECK(sa::identical(sa::sliding_window_mask(5, 5, 9), sa::causal_mask(5, 5)));
    const sa::Matrix diagonal = sa::sliding_window_mask(3, 3, 1);
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
            CHECK(diagonal(i, j) == (i == j ? 0.0 : -infinity));
        }
    }
}

TEST_CASE("The worked example with a window of 2: Cheese no longer sees Mouse", "[ch19]")
{
    const sa::Matrix embeddings{{2, 0}, {1, 2}, {2, 0}};  // Mouse, Eats, Cheese
    const sa::Matrix w_query{{0, 1}, {1, 0}};             // swaps the features; W_K = W_V = I
    const sa::Matrix queries = sa::project(embeddings, w_query);
    const sa::Matrix scaled = sa::scale(sa::scores(queries, embeddings), 2);
    const sa::Matrix weights = sa::softmax_rows(sa::apply_mask(scaled, sa::sliding_window_mask(3, 3, 2)));
    const sa::Matrix causal = sa::softmax_rows(sa::apply_mask(scaled, sa::causal_mask(3, 3)));
    const double e = std::exp(4.0 / std::sqrt(2.0));  // q_Cheese · k_Eats = 0*1 + 2*2 = 4, over √2
    INFO("Mouse sees itself; Eats sees Mouse and itself, both scored 4/√2: 1/2 each");
    CHECK(weights(0, 0) == 1.0);
    CHECK_THAT(weights(1, 0), WithinAbs(0.5, 1e-15));
    CHECK_THAT(weights(1, 1), WithinAbs(0.5, 1e-15));
    INFO("Cheese sees Eats (4/√2) and itself (0): e^(2√2) / (e^(2√2) + 1) = 0.944 and 0.056");
    CHECK(weights(2, 0) == 0.0);
    CHECK_THAT(weights(2, 1), WithinAbs(e / (e + 1.0), 1e-12));
    CHECK_THAT(weights(2, 1), WithinAbs(0.944, printed));
    CHECK_THAT(weights(2, 2), WithinAbs(0.056, printed));
    INFO("chapter 7's causal weights of Cheese: 1/(e + 2), e/(e + 2), 1/(e + 2) = 0.053, 0.894, 0.053");
    CHECK_THAT(causal(2, 0), WithinAbs(1.0 / (e + 2.0), 1e-12));
    CHECK_THAT(causal(2, 0), WithinAbs(0.053, printed));
    CHECK_THAT(causal(2, 1), WithinAbs(0.894, printed));
    INFO("outputs A·V with V = E: Mouse [2, 0]; Eats [1.5, 1]; Cheese 0.944·[1, 2] + 0.056·[2, 0] = [1.056, 1.888]");
    const sa::Matrix outputs = sa::mix(weights, embeddings);
    CHECK_THAT(outputs(1, 0), WithinAbs(1.5, 1e-15));
    CHECK_THAT(outputs(1, 1), WithinAbs(1.0, 1e-15));
    CHECK_THAT(outputs(2, 0), WithinAbs((e + 2.0) / (e + 1.0), 1e-12));
    CHECK_THAT(outputs(2, 0), WithinAbs(1.056, printed));
    CHECK_THAT(outputs(2, 1), WithinAbs(2.0 * e / (e + 1.0), 1e-12));
    CHECK_THAT(outputs(2, 1), WithinAbs(1.888, printed));
}

TEST_CASE("A window's scores grow with w, not n, and L layers of windows reach L(w - 1) back", "[ch19]")
{
    INFO("n = 5, w = 2: 1 + 2 + 2 + 2 + 2 = 9");
    CHECK(sa::window_scores(5, 2) == 9);
    INFO("w >= n: every causal score, n(n + 1)/2");
    CHECK(sa::window_scores(5, 5) == 15);
    CHECK(sa::window_scores(5, 64) == 15);
    INFO("n >= w: w(w + 1)/2 for the first w rows, then w for each of the other n - w: wn - w(w - 1)/2");
    for (const std::size_t n : {256U, 1024U, 4096U}) {
        CHECK(sa::window_scores(n, 64) == 64 * n - 64 * 63 / 2);
    }
    CHECK(sa::window_scores(256, 64) == 14368);
    INFO("the reach, from the masks themselves: position j reaches the last query through L layers when a chain "
         "of kept entries links them");
    for (const std::size_t w : {1U, 2U, 3U, 5U}) {
        const std::size_t n = 20;
        const sa::Matrix mask = sa::sliding_window_mask(n, n, w);
        std::vector<bool> reached(n, false);  // the positions the last query reads, through the layers so far
        reached[n - 1] = true;
        for (std::size_t layers = 1; layers <= 4; ++layers) {
            std::vector<bool> next = reached;
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j) {
                    if (reached[i] && mask(i, j) == 0.0) {
                        next[j] = true;
                    }
                }
            }
            reached = next;
            const auto first = static_cast<std::size_t>(std::find(reached.begin(), reached.end(), true) -
                                                        reached.begin());
            CHECK(n - 1 - first == sa::window_reach(w, layers));
        }
    }
    CHECK(sa::window_reach(64, 1) == 63);
    CHECK(sa::window_reach(64, 2) == 126);
}

TEST_CASE("A rolling cache gives decode_next's logits bit for bit until it is full", "[ch19]")
{
    for (const std::size_t layers : {1U, 2U}) {
        const sa::LanguageModel model = small_model(layers, 2, 300 + layers);
        sa::SplitMix64 generator(7);
        const std::vector<std::size_t> tokens = random_tokens(6, 7, generator);
        for (const sa::SinkPositions where : {sa::SinkPositions::own, sa::SinkPositions::beside_window}) {
            sa::RollingCache rolling = sa::rolling_cache(model, 6, 2, where);
            sa::GenerationCache cache = sa::empty_cache(model);
            for (const std::size_t token : tokens) {
                INFO(layers << " layers: with 6 positions or fewer nothing is dropped or turned");
                CHECK(sa::decode_rolling(model, rolling, token) == sa::decode_next(model, cache, token).logits);
            }
        }
    }
}

TEST_CASE("A rolling cache reads the kept keys at the distances the reference names, with and without sinks", "[ch19]")
{
    for (const std::size_t layers : {1U, 2U, 3U}) {
        for (const std::size_t heads : {1U, 2U, 4U}) {
            const sa::LanguageModel model = small_model(layers, heads, 400 + 10 * layers + heads);
            sa::SplitMix64 generator(11 * layers + heads);
            const std::vector<std::size_t> tokens = random_tokens(24, 7, generator);  // three windows of 8
            for (const std::size_t k : {0U, 1U, 3U}) {
                for (const sa::SinkPositions where : {sa::SinkPositions::own, sa::SinkPositions::beside_window}) {
                    const sa::Matrix z = kept_logits(model, tokens, 8, k, where);
                    sa::RollingCache rolling = sa::rolling_cache(model, 8, k, where);
                    for (std::size_t j = 0; j < tokens.size(); ++j) {
                        const std::vector<double> got = sa::decode_rolling(model, rolling, tokens[j]);
                        const std::vector<double> want = logits_row(z, j);
                        INFO(layers << " layers, " << heads << " heads, k = " << k << ", sinks "
                                    << (where == sa::SinkPositions::own ? "at their own positions" : "beside")
                                    << ", query at " << j);
                        for (std::size_t c = 0; c < want.size(); ++c) {
                            CHECK_THAT(got[c], WithinAbs(want[c], 1e-9));
                        }
                    }
                    INFO("every layer keeps w = 8 rows, and the cache counts every position read");
                    CHECK(rolling.kept.length == 24);
                    CHECK(rolling.kept.layers.back().back().length() == 8);
                }
            }
        }
    }
}

TEST_CASE("One layer: a rolling cache is the recomputed window, and sinks beside it the window with its first k",
          "[ch19]")
{
    const sa::LanguageModel model = small_model(1, 2, 500);
    sa::SplitMix64 generator(5);
    const std::vector<std::size_t> tokens = random_tokens(20, 7, generator);
    sa::RollingCache plain = sa::rolling_cache(model, 8, 0, sa::SinkPositions::own);
    sa::RollingCache sinks = sa::rolling_cache(model, 8, 2, sa::SinkPositions::beside_window);
    for (std::size_t j = 0; j < tokens.size(); ++j) {
        const auto at = [&](std::size_t i) { return tokens.begin() + static_cast<std::ptrdiff_t>(i); };
        const std::size_t first = j + 1 > 8 ? j + 1 - 8 : 0;
        std::vector<std::size_t> window(at(first), at(j + 1));  // the last 8, from position 0
        std::vector<std::size_t> with_first(tokens.begin(), at(std::min<std::size_t>(2, j + 1)));
        if (j >= 8) {
            with_first.insert(with_first.end(), at(j - 5), at(j + 1));  // the first 2, then the last 6
        } else {
            with_first = window;
        }
        INFO("one layer: a key is its character turned by its position, and rotary scores read distances only");
        const std::vector<double> plain_logits = sa::decode_rolling(model, plain, tokens[j]);
        const std::vector<double> sink_logits = sa::decode_rolling(model, sinks, tokens[j]);
        const std::vector<double> recomputed = sa::recomputed_logits(model, window);
        const std::vector<double> recomputed_sinks = sa::recomputed_logits(model, with_first);
        for (std::size_t c = 0; c < recomputed.size(); ++c) {
            CHECK_THAT(plain_logits[c], WithinAbs(recomputed[c], 1e-9));
            CHECK_THAT(sink_logits[c], WithinAbs(recomputed_sinks[c], 1e-9));
        }
    }
}

TEST_CASE("The losses of a text through each reading are -ln p of each target", "[ch19]")
{
    const sa::LanguageModel model = small_model(2, 2, 600);
    sa::SplitMix64 generator(6);
    const std::vector<std::size_t> inputs = random_tokens(18, 7, generator);
    const std::vector<std::size_t> targets = random_tokens(18, 7, generator);
    const std::vector<double> recomputed = sa::recomputed_window_losses(model, inputs, targets, 8);
    const std::vector<double> rolling = sa::rolling_losses(model, inputs, targets, 8, 2, sa::SinkPositions::own);
    const sa::Matrix z = kept_logits(model, inputs, 8, 2, sa::SinkPositions::own);
    REQUIRE(recomputed.size() == 18);
    REQUIRE(rolling.size() == 18);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::size_t first = i + 1 > 8 ? i + 1 - 8 : 0;
        const std::vector<std::size_t> window(inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                              inputs.begin() + static_cast<std::ptrdiff_t>(i + 1));
        INFO("position " << i << ": the last 8 inputs recomputed from position 0, and the rolling reference");
        CHECK_THAT(recomputed[i], WithinAbs(loss_of(sa::recomputed_logits(model, window), targets[i]), 1e-12));
        CHECK_THAT(rolling[i], WithinAbs(loss_of(logits_row(z, i), targets[i]), 1e-9));
    }
}

TEST_CASE("A window of 0 and sinks that fill the window are refused in one line, with the form expected", "[ch19]")
{
    const sa::LanguageModel model = small_model(1, 2, 700);
    const auto refused = [](const auto& call, const std::string& says) {
        try {
            call();
            FAIL("not refused: " << says);
        } catch (const std::invalid_argument& error) {
            const std::string message = error.what();
            CHECK_THAT(message, Contains(says) && Contains("expected"));
            CHECK(message.find('\n') == std::string::npos);
        }
    };
    refused([] { (void)sa::sliding_window_mask(3, 3, 0); }, "sliding_window_mask: a window of 0 keys");
    refused([] { (void)sa::window_scores(3, 0); }, "window_scores: a window of 0 keys");
    refused([] { (void)sa::window_reach(0, 2); }, "window_reach: a window of 0 keys");
    refused([&] { (void)sa::rolling_cache(model, 0, 0, sa::SinkPositions::own); }, "rolling_cache: a window of 0");
    refused([&] { (void)sa::rolling_cache(model, 4, 4, sa::SinkPositions::own); }, "4 sinks in a window of 4");
    refused([&] { (void)sa::rolling_cache(model, 4, 9, sa::SinkPositions::beside_window); }, "9 sinks in a window of 4");
    refused([&] { (void)sa::rolling_losses(model, {1, 2}, {1}, 4, 0, sa::SinkPositions::own); },
            "2 inputs and 1 targets");
    refused([&] { (void)sa::recomputed_window_losses(model, {1, 2}, {1, 2}, 0); }, "a window of 0 keys");
    sa::RollingCache cache = sa::rolling_cache(model, 4, 1, sa::SinkPositions::own);
    CHECK_THROWS_AS(sa::decode_rolling(model, cache, 7), std::invalid_argument);  // V = 7: tokens 0 to 6
}

namespace {

// Press et al.'s slopes as their code computes them (get_slopes): for n a power of two the geometric
// sequence from 2^(−2^−(log2 n − 3)) = 2^(−8/n) with that same ratio; otherwise the slopes of the
// closest power of two below, then every other slope of twice it, as many as are missing.
std::vector<double> paper_slopes(std::size_t n)
{
    const auto power_of_two = [](std::size_t count) {
        const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(count)) - 3.0)));
        std::vector<double> slopes;
        for (std::size_t i = 0; i < count; ++i) {
            slopes.push_back(start * std::pow(start, static_cast<double>(i)));
        }
        return slopes;
    };
    std::size_t closest = 1;
    while (closest * 2 <= n) {
        closest *= 2;
    }
    std::vector<double> slopes = power_of_two(closest);
    const std::vector<double> twice = power_of_two(2 * closest);
    for (std::size_t b = 0; slopes.size() < n; b += 2) {
        slopes.push_back(twice[b]);
    }
    return slopes;
}

// Softmax over the keys j <= i of q_i · k_j / √d − m (i − j), written out with the exponentials.
sa::Matrix alibi_reference(const sa::Matrix& q, const sa::Matrix& k, double m)
{
    sa::Matrix weights(q.rows(), k.rows(), 0.0);
    for (std::size_t i = 0; i < q.rows(); ++i) {
        std::vector<double> e;
        double total = 0.0;
        for (std::size_t j = 0; j <= i && j < k.rows(); ++j) {
            double dot = 0.0;
            for (std::size_t c = 0; c < q.cols(); ++c) {
                dot += q(i, c) * k(j, c);
            }
            e.push_back(std::exp(dot / std::sqrt(static_cast<double>(q.cols())) - m * static_cast<double>(i - j)));
            total += e.back();
        }
        for (std::size_t j = 0; j < e.size(); ++j) {
            weights(i, j) = e[j] / total;
        }
    }
    return weights;
}

}  // namespace

TEST_CASE("ALiBi's slopes: 2^(-8(a+1)/h) for h a power of two, the paper's rule for other h", "[ch19]")
{
    INFO("h = 4: 2^(-8/4), 2^(-16/4), 2^(-24/4), 2^(-32/4) = 1/4, 1/16, 1/64, 1/256");
    const double four[] = {1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256};
    for (std::size_t a = 0; a < 4; ++a) {
        CHECK(sa::alibi_slope(a, 4) == four[a]);
    }
    INFO("h = 8: 2^(-(a+1)) = 1/2, 1/4, ..., 1/256, the paper's 8 heads");
    for (std::size_t a = 0; a < 8; ++a) {
        CHECK(sa::alibi_slope(a, 8) == std::ldexp(1.0, -static_cast<int>(a + 1)));
    }
    INFO("h = 6: the 4 slopes of h = 4, then the 1st and 3rd of h = 8's, 1/2 and 1/8");
    const double six[] = {1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256, 1.0 / 2, 1.0 / 8};
    for (std::size_t a = 0; a < 6; ++a) {
        CHECK(sa::alibi_slope(a, 6) == six[a]);
    }
    INFO("h = 1: 2^-8; h = 3: h = 2's 1/16 and 1/256, then h = 4's first, 1/4");
    CHECK(sa::alibi_slope(0, 1) == 1.0 / 256);
    CHECK(sa::alibi_slope(0, 3) == 1.0 / 16);
    CHECK(sa::alibi_slope(1, 3) == 1.0 / 256);
    CHECK(sa::alibi_slope(2, 3) == 1.0 / 4);
    INFO("h = 16: 2^(-(a+1)/2), every pair of h = 8's slopes with their geometric mean between them");
    CHECK_THAT(sa::alibi_slope(0, 16), WithinAbs(1.0 / std::sqrt(2.0), 1e-15));
    CHECK(sa::alibi_slope(1, 16) == 0.5);
    CHECK(sa::alibi_slope(15, 16) == 1.0 / 256);
    for (std::size_t h = 1; h <= 64; ++h) {
        const std::vector<double> paper = paper_slopes(h);
        for (std::size_t a = 0; a < h; ++a) {
            INFO("h = " << h << ", head " << a << ": the paper's get_slopes, written again; every slope in [1/256, 1)");
            CHECK_THAT(sa::alibi_slope(a, h), Catch::Matchers::WithinRel(paper[a], 1e-12));
            CHECK(sa::alibi_slope(a, h) >= 1.0 / 256);
            CHECK(sa::alibi_slope(a, h) < 1.0);
        }
    }
}

TEST_CASE("ALiBi's bias is -m(i - j) on and below the diagonal and the causal mask's -inf above it", "[ch19]")
{
    const sa::Matrix bias = sa::alibi_bias(4, 6, 1, 4);  // m = 1/16, n = 4 queries, m = 6 keys
    const sa::Matrix causal = sa::causal_mask(4, 6);
    for (std::size_t i = 0; i < 4; ++i) {
        for (std::size_t j = 0; j < 6; ++j) {
            INFO("query " << i << ", key " << j << ": -(i - j)/16 for j <= i, -inf where causal_mask has it");
            if (j <= i) {
                CHECK(bias(i, j) == -static_cast<double>(i - j) / 16.0);
            } else {
                CHECK(bias(i, j) == -infinity);
                CHECK(causal(i, j) == -infinity);
            }
        }
    }
    INFO("the diagonal is +0, not -0: a query reads itself unpenalised (and prints 0.000, not -0.000)");
    CHECK_FALSE(std::signbit(bias(2, 2)));
    INFO("the bias depends on the distance only: every diagonal holds one value");
    const sa::Matrix large = sa::alibi_bias(9, 9, 0, 6);
    for (std::size_t i = 0; i + 1 < 9; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
            CHECK(large(i + 1, j + 1) == large(i, j));
        }
    }
    INFO("0 queries or keys: an empty matrix; more queries than keys: the last rows keep every key");
    CHECK(sa::alibi_bias(0, 3, 0, 4).rows() == 0);
    CHECK(sa::alibi_bias(3, 0, 0, 4).cols() == 0);
    CHECK(sa::alibi_bias(5, 2, 0, 8)(4, 0) == -2.0);  // m = 1/2, 4 back
}

TEST_CASE("ALiBi's weights equal a softmax written out, and fade as e^(-m d) where scores are equal", "[ch19]")
{
    sa::SplitMix64 generator(19);
    const sa::Matrix q = sa::random_matrix(4, 3, generator);  // n = 4 queries, d_k = 3
    const sa::Matrix k = sa::random_matrix(6, 3, generator);  // m = 6 keys
    for (const std::size_t a : {0U, 2U, 5U}) {
        sa::Matrix biased = sa::scale(sa::scores(q, k), 3);
        sa::add_in_place(biased, sa::alibi_bias(4, 6, a, 6));
        const sa::Matrix weights = sa::softmax_rows(biased);
        const sa::Matrix want = alibi_reference(q, k, sa::alibi_slope(a, 6));
        for (std::size_t i = 0; i < 4; ++i) {
            for (std::size_t j = 0; j < 6; ++j) {
                INFO("head " << a << " of 6, query " << i << ", key " << j);
                CHECK_THAT(weights(i, j), WithinAbs(want(i, j), 1e-14));
            }
        }
    }
    INFO("all scores 0: a key d back gets e^(-m d) times the weight of the query's own key, m = 1/4 (h = 4)");
    const sa::Matrix even = sa::softmax_rows(sa::alibi_bias(6, 6, 0, 4));
    for (std::size_t d = 0; d <= 5; ++d) {
        CHECK_THAT(even(5, 5 - d) / even(5, 5), WithinAbs(std::exp(-0.25 * static_cast<double>(d)), 1e-14));
    }
}

TEST_CASE("The worked example with ALiBi, beside chapter 10's positions: Cheese's weights each way", "[ch19]")
{
    const sa::Matrix embeddings{{2, 0}, {1, 2}, {2, 0}};  // Mouse, Eats, Cheese
    const sa::Matrix w_query{{0, 1}, {1, 0}};             // swaps the features; W_K = I
    const sa::Matrix scaled = sa::scale(sa::scores(sa::project(embeddings, w_query), embeddings), 2);
    const double s = 4.0 / std::sqrt(2.0);  // q_Cheese · k_Eats = 4 and q_Eats · k_j = 4, over √2 = 2√2
    const auto row = [](const std::vector<double>& exps) {  // softmax of e^(score), by hand
        double total = 0.0;
        for (const double e : exps) {
            total += e;
        }
        std::vector<double> out;
        for (const double e : exps) {
            out.push_back(e / total);
        }
        return out;
    };
    const auto weights_of = [&](std::size_t head, std::size_t heads) {
        sa::Matrix biased = scaled;
        sa::add_in_place(biased, sa::alibi_bias(3, 3, head, heads));
        return sa::softmax_rows(biased);
    };
    const sa::Matrix steep = weights_of(0, 8);
    INFO("head 0 of 8, m = 1/2: Eats scores 2√2 - 1/2 and 2√2: 1/(1 + e^(1/2)) = 0.378 and 0.622");
    CHECK_THAT(steep(1, 0), WithinAbs(1.0 / (1.0 + std::exp(0.5)), 1e-12));
    CHECK_THAT(steep(1, 0), WithinAbs(0.378, printed));
    CHECK_THAT(steep(1, 1), WithinAbs(0.622, printed));
    INFO("Cheese scores 0 - 1, 2√2 - 1/2, 0 - 0: e^-1, e^(2√2 - 1/2), 1 over their sum = 0.032, 0.882, 0.086");
    const std::vector<double> cheese = row({std::exp(-1.0), std::exp(s - 0.5), 1.0});
    const double printed_steep[] = {0.032, 0.882, 0.086};
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK_THAT(steep(2, j), WithinAbs(cheese[j], 1e-12));
        CHECK_THAT(steep(2, j), WithinAbs(printed_steep[j], printed));
    }
    INFO("head 7 of 8, m = 1/256: e^(-2/256), e^(2√2 - 1/256), 1: chapter 7's 0.053, 0.894, 0.053 to 3 decimals");
    const sa::Matrix gentle = weights_of(7, 8);
    const std::vector<double> cheese_gentle = row({std::exp(-2.0 / 256), std::exp(s - 1.0 / 256), 1.0});
    const double printed_gentle[] = {0.053, 0.894, 0.053};
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK_THAT(gentle(2, j), WithinAbs(cheese_gentle[j], 1e-12));
        CHECK_THAT(gentle(2, j), WithinAbs(printed_gentle[j], printed));
    }
    INFO("sinusoidal, d = 2: X_Mouse = [2, 1], X_Eats = [1 + sin 1, 2 + cos 1], X_Cheese = [2 + sin 2, cos 2]; "
         "q_Cheese = [cos 2, 2 + sin 2] (W_Q swaps); scores q · x_j / √2: 0.039, 0.960, 0.002");
    const sa::Matrix x = sa::add_positions(embeddings, sa::sinusoidal_encoding(3, 2));
    const sa::Matrix sinusoidal = sa::softmax_rows(sa::apply_mask(
        sa::scale(sa::scores(sa::project(x, w_query), x), 2), sa::causal_mask(3, 3)));
    const double q0 = std::cos(2.0);
    const double q1 = 2.0 + std::sin(2.0);
    const double xs[3][2] = {{2.0, 1.0}, {1.0 + std::sin(1.0), 2.0 + std::cos(1.0)}, {2.0 + std::sin(2.0), std::cos(2.0)}};
    std::vector<double> exps;
    for (const auto& xj : xs) {
        exps.push_back(std::exp((q0 * xj[0] + q1 * xj[1]) / std::sqrt(2.0)));
    }
    const std::vector<double> cheese_sinusoidal = row(exps);
    const double printed_sinusoidal[] = {0.039, 0.960, 0.002};
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK_THAT(sinusoidal(2, j), WithinAbs(cheese_sinusoidal[j], 1e-12));
        CHECK_THAT(sinusoidal(2, j), WithinAbs(printed_sinusoidal[j], printed));
    }
    INFO("rotary, d = 2, θ = 1: (R_2 q) · (R_j k) = q · R_(j-2) k; q = [0, 2]: Mouse -4 sin 2, Eats "
         "2(2 cos 1 - sin 1), Cheese 0, over √2: 0.031, 0.566, 0.403");
    const sa::Matrix rotary = sa::softmax_rows(sa::apply_mask(
        sa::scale(sa::scores(sa::rope(sa::project(embeddings, w_query)), sa::rope(embeddings)), 2),
        sa::causal_mask(3, 3)));
    const std::vector<double> cheese_rotary = row({std::exp(-4.0 * std::sin(2.0) / std::sqrt(2.0)),
                                                   std::exp(2.0 * (2.0 * std::cos(1.0) - std::sin(1.0)) / std::sqrt(2.0)),
                                                   1.0});
    const double printed_rotary[] = {0.031, 0.566, 0.403};
    for (std::size_t j = 0; j < 3; ++j) {
        CHECK_THAT(rotary(2, j), WithinAbs(cheese_rotary[j], 1e-12));
        CHECK_THAT(rotary(2, j), WithinAbs(printed_rotary[j], printed));
    }
}

TEST_CASE("0 heads and a head outside 0 to h - 1 are refused in one line, with the form expected", "[ch19]")
{
    const auto refused = [](const auto& call, const std::string& says) {
        try {
            call();
            FAIL("not refused: " << says);
        } catch (const std::invalid_argument& error) {
            const std::string message = error.what();
            CHECK_THAT(message, Contains(says) && Contains("expected"));
            CHECK(message.find('\n') == std::string::npos);
        }
    };
    refused([] { (void)sa::alibi_slope(0, 0); }, "alibi_slope: 0 heads");
    refused([] { (void)sa::alibi_slope(4, 4); }, "alibi_slope: head 4 of 4 heads");
    refused([] { (void)sa::alibi_slope(9, 6); }, "head 9 of 6 heads; expected a head from 0 to 5");
    refused([] { (void)sa::alibi_bias(3, 3, 0, 0); }, "alibi_bias: 0 heads");
    refused([] { (void)sa::alibi_bias(3, 3, 8, 8); }, "alibi_bias: head 8 of 8 heads");
}

TEST_CASE("The chapter's printed numbers recomputed from the saved models", "[.ch19-run][support]")
{
    const std::string output = helpers::read_all(BOOK_CH19_OUTPUT);
    const sa::SavedModel saved = sa::load_safetensors(helpers::read_all(BOOK_CH14_MODEL));
    const sa::SavedModel two = sa::load_safetensors(helpers::read_all(BOOK_CH15_MODEL));
    const sa::Vocabulary vocabulary = sa::make_vocabulary(saved.vocabulary);
    REQUIRE(two.vocabulary == saved.vocabulary);
    const std::size_t c = saved.model.shape.context;
    const sa::Batch batch = sa::even_batch(sa::encode(vocabulary, helpers::read_all(BOOK_KJV_HELD_OUT)), 16, 4 * c);
    const auto three = [](double x) { return fmt::format("{:.3f}", x); };
    CHECK_THAT(output, Contains(fmt::format("Each cache keeps {} positions in every layer", c)));
    CHECK_THAT(output, Contains(fmt::format("(1 layer) reads {} positions back, chapter 15's (2 layers) {}.", c - 1,
                                            2 * (c - 1))));
    for (const auto& [name, model] : {std::pair<std::string, const sa::LanguageModel*>{"chapter 14's model", &saved.model},
                                      {"chapter 15's model", &two.model}}) {
        // rows: recomputing, rolling (k = 0), then k = 1, 2, 4 at their own positions and beside the window
        std::vector<std::string> names = {fmt::format("recomputing the last {}", c), "rolling, the oldest dropped"};
        std::vector<std::vector<double>> sums(8, std::vector<double>(3, 0.0));
        for (std::size_t w = 0; w < 16; ++w) {
            const auto at = [&](const std::vector<std::size_t>& all, std::size_t i) {
                return all.begin() + static_cast<std::ptrdiff_t>(w * 4 * c + i);
            };
            const std::vector<std::size_t> inputs(at(batch.inputs, 0), at(batch.inputs, 4 * c));
            const std::vector<std::size_t> targets(at(batch.targets, 0), at(batch.targets, 4 * c));
            std::vector<sa::Matrix> z = {kept_logits(*model, inputs, c, 0, sa::SinkPositions::own)};
            for (const std::size_t k : {1U, 2U, 4U}) {
                z.push_back(kept_logits(*model, inputs, c, k, sa::SinkPositions::own));
                z.push_back(kept_logits(*model, inputs, c, k, sa::SinkPositions::beside_window));
            }
            for (std::size_t i = 0; i < 4 * c; ++i) {
                const std::size_t bucket = i < c ? 0 : i < 2 * c ? 1 : 2;
                const std::size_t first = i + 1 > c ? i + 1 - c : 0;
                const std::vector<std::size_t> window(at(batch.inputs, first), at(batch.inputs, i + 1));
                sums[0][bucket] += loss_of(sa::recomputed_logits(*model, window), targets[i]);
                for (std::size_t r = 0; r < z.size(); ++r) {
                    sums[r + 1][bucket] += loss_of(logits_row(z[r], i), targets[i]);
                }
            }
        }
        for (const std::size_t k : {1U, 2U, 4U}) {
            names.push_back(k == 1 ? "1 sink, at its own position" : fmt::format("{} sinks, at their own positions", k));
            names.push_back(fmt::format("{} sink{}, beside the window", k, k == 1 ? "" : "s"));
        }
        const double counts[3] = {16.0 * static_cast<double>(c), 16.0 * static_cast<double>(c),
                                  32.0 * static_cast<double>(c)};
        for (std::size_t r = 0; r < names.size(); ++r) {
            INFO(name << ", " << names[r] << ": the mean of -ln p(target) over 16 windows, positions 0 to 63, 64 to "
                      "127, 128 to 255, each query reading the rows the reference keeps");
            CHECK_THAT(output, Contains(fmt::format("  {:<39} {:>9}   {:>9}   {:>10}\n", names[r],
                                                    three(sums[r][0] / counts[0]), three(sums[r][1] / counts[1]),
                                                    three(sums[r][2] / counts[2]))));
        }
        // The weights of the last query of each window's first c characters, on position 0 and on itself.
        std::vector<std::vector<double>> on_first(model->layers.size(), std::vector<double>(model->shape.heads));
        std::vector<std::vector<double>> on_own = on_first;
        for (std::size_t w = 0; w < 16; ++w) {
            const auto start = batch.inputs.begin() + static_cast<std::ptrdiff_t>(w * 4 * c);
            std::vector<std::vector<std::vector<double>>> weights;
            (void)kept_logits(*model, {start, start + static_cast<std::ptrdiff_t>(c)}, c, 0, sa::SinkPositions::own,
                              &weights);
            for (std::size_t l = 0; l < weights.size(); ++l) {
                for (std::size_t h = 0; h < weights[l].size(); ++h) {
                    on_first[l][h] += weights[l][h].front() / 16.0;
                    on_own[l][h] += weights[l][h].back() / 16.0;
                }
            }
        }
        for (std::size_t l = 0; l < on_first.size(); ++l) {
            for (std::size_t h = 0; h < on_first[l].size(); ++h) {
                INFO(name << " layer " << l << " head " << h << ": the last query's weight on position 0 and on itself");
                CHECK_THAT(output, Contains(fmt::format("  {:<21} {:>5} {:>5}   {:>13}   {:>14}\n",
                                                        l + h == 0 ? name : "", l, h, three(on_first[l][h]),
                                                        three(on_own[l][h]))));
            }
        }
    }
    INFO("even weights over 64 keys: 1/64 = 0.015625");
    CHECK_THAT(output, Contains("1/64 = 0.016"));
}

TEST_CASE("The chapter's ALiBi slopes and soft windows from 2^(-8(a+1)/h)", "[.ch19-run][support]")
{
    INFO("ALiBi is ch19-alibi's, on its defaults and with its alibi-try.cmd (--alibi-heads 6)");
    const std::string output = helpers::read_all(BOOK_CH19_ALIBI_OUTPUT);
    const std::string tried = helpers::read_all(BOOK_CH19_ALIBI_TRY_OUTPUT);
    for (const std::string* printed_by : {&output, &tried}) {
        CHECK(printed_by->starts_with("ALiBi: no positions in the inputs; a bias B_a on the scores of head a"));
    }
    INFO("h = 4: 2^-2 to 2^-8 in steps of 2^-2; h = 8: 2^-1 to 2^-8; h = 6: h = 4's, then h = 8's first and third");
    for (const std::string* printed_by : {&output, &tried}) {
        CHECK_THAT(*printed_by, Contains("  h = 4: 1/4, 1/16, 1/64, 1/256\n"));
        CHECK_THAT(*printed_by, Contains("  h = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8\n"));
        CHECK_THAT(*printed_by, Contains("  h = 8: 1/2, 1/4, 1/8, 1/16, 1/32, 1/64, 1/128, 1/256\n"));
    }
    const auto soft_window = [](std::size_t head, long long inverse_slope) {
        const auto m = 1.0 / static_cast<double>(inverse_slope);
        return fmt::format("  {:>4}   {:>8}   {:>13.3f}   {:>15.3f}\n", head, fmt::format("1/{}", inverse_slope),
                           std::log(2.0) / m, std::log(100.0) / m);
    };
    for (std::size_t a = 0; a < 8; ++a) {
        INFO("head " << a << " of 8, m = 2^-" << a + 1 << ": e^(-m d) is 1/2 at d = ln 2 / m, 1/100 at ln 100 / m");
        CHECK_THAT(output, Contains(soft_window(a, 1LL << (a + 1))));
    }
    const long long six[] = {4, 16, 64, 256, 2, 8};
    for (std::size_t a = 0; a < 6; ++a) {
        INFO("--alibi-heads 6, head " << a << ": m = 1/" << six[a]);
        CHECK_THAT(tried, Contains(soft_window(a, six[a])));
    }
}
