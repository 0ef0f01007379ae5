// Chapter 12, Learning the projections: W_Q, W_K and W_V trained by gradient descent.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "matrix.hpp"
#include "plots.hpp"
#include "random.hpp"
#include "tables.hpp"
#include "training.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// The chapter's setup, drawn exactly as the program draws it: 64 training sentences,
// 64 held-out sentences, then W_Q, W_K (5×3) and W_V (5×2) with spread 0.5.
constexpr std::size_t sentence_count = 64;
constexpr std::size_t key_dim = 3;
constexpr double learning_rate = 1.5;
constexpr std::size_t book_steps = 200;

struct Run {
    std::vector<sa::Sentence> training;
    std::vector<sa::Sentence> held_out;
    sa::Projections start;
    sa::Projections layer;
    std::vector<double> loss;  // loss[s]: the training loss after s steps
};

Run chapter_run(std::uint64_t seed, std::size_t steps)
{
    sa::SplitMix64 generator(seed);
    Run run;
    run.training = sa::cycle_sentences(sentence_count, generator);
    run.held_out = sa::cycle_sentences(sentence_count, generator);
    run.start = sa::random_projections(5, key_dim, 2, 0.5, generator);
    run.layer = run.start;
    for (std::size_t step = 0; step < steps; ++step) {
        run.loss.push_back(sa::train_step(run.layer, run.training, learning_rate));
    }
    run.loss.push_back(sa::mean_loss(run.layer, run.training));
    return run;
}

// An independent forward pass, written straight from the formula with Eigen.
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

Dense reference_weights(const sa::Projections& layer, const sa::Matrix& embeddings)
{
    const Dense e = dense(embeddings);
    const Dense s = (e * dense(layer.w_query)) * (e * dense(layer.w_key)).transpose() /
                    std::sqrt(static_cast<double>(layer.w_query.cols()));
    Dense a = s;
    for (Eigen::Index i = 0; i < s.rows(); ++i) {
        const Eigen::VectorXd row = (s.row(i).array() - s.row(i).maxCoeff()).exp();
        a.row(i) = row.transpose() / row.sum();
    }
    return a;
}

double reference_loss(const sa::Projections& layer, const std::vector<sa::Sentence>& sentences)
{
    double total = 0.0;
    for (const sa::Sentence& sentence : sentences) {
        const Dense outputs = reference_weights(layer, sentence.embeddings) *
                              (dense(sentence.embeddings) * dense(layer.w_value));
        total += (outputs - dense(sentence.targets)).squaredNorm() / static_cast<double>(outputs.size());
    }
    return total / static_cast<double>(sentences.size());
}

std::size_t word_index(const std::string& token)
{
    for (std::size_t w = 0; w < sa::cycle_words.size(); ++w) {
        if (sa::cycle_words[w] == token) {
            return w;
        }
    }
    FAIL("not a word of the cycle: " << token);
    return 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The task, the start and the printed sentence (support code, not an exercise)

TEST_CASE("The task: each word's target is the value carried by the next word of the cycle",
          "[ch12][support]")
{
    sa::SplitMix64 generator(7);
    const std::vector<sa::Sentence> sentences = sa::cycle_sentences(50, generator);
    REQUIRE(sentences.size() == 50);
    for (const sa::Sentence& sentence : sentences) {
        REQUIRE(sentence.embeddings.rows() == 3);
        REQUIRE(sentence.embeddings.cols() == 5);
        REQUIRE(sentence.targets.rows() == 3);
        REQUIRE(sentence.targets.cols() == 2);
        REQUIRE(sentence.tokens.size() == 3);
        REQUIRE(sentence.sources.size() == 3);
        std::vector<int> seen(3, 0);
        for (std::size_t p = 0; p < 3; ++p) {
            const std::size_t word = word_index(sentence.tokens[p]);
            ++seen[word];
            INFO("features 1 to 3 say which word it is: one-hot, a 1 at the word's own place");
            for (std::size_t f = 0; f < 3; ++f) {
                CHECK(sentence.embeddings(p, f) == (f == word ? 1.0 : 0.0));
            }
            const std::size_t source = sentence.sources[p];
            INFO(sentence.tokens[p] << " must look at the next word of Mouse -> Eats -> Cheese -> Mouse");
            CHECK(word_index(sentence.tokens[source]) == (word + 1) % 3);
            INFO("and its target is what that word carries, features 4 and 5 of its embedding");
            CHECK(sentence.targets(p, 0) == sentence.embeddings(source, 3));
            CHECK(sentence.targets(p, 1) == sentence.embeddings(source, 4));
        }
        INFO("each word appears exactly once");
        CHECK(seen == std::vector<int>{1, 1, 1});
    }
}

TEST_CASE("The first held-out sentence is drawn from SplitMix64 as the chapter says: 2 draws shuffle, 6 carry",
          "[ch12][support]")
{
    // The printed sentence, rebuilt from the raw generator: 64 training sentences use
    // 8 draws each, then Fisher–Yates picks position 2 from 3 and position 1 from 2.
    sa::SplitMix64 raw(2017);
    for (int draw = 0; draw < 64 * 8; ++draw) {
        (void)raw.next();
    }
    std::vector<std::size_t> word_at = {0, 1, 2};
    std::swap(word_at[2], word_at[raw.next() % 3]);
    std::swap(word_at[1], word_at[raw.next() % 2]);
    std::vector<double> carried;
    for (int draw = 0; draw < 6; ++draw) {
        carried.push_back(raw.unit_variance());
    }
    const Run run = chapter_run(2017, 0);
    const sa::Sentence& shown = run.held_out.front();
    for (std::size_t p = 0; p < 3; ++p) {
        INFO("position " << p);
        CHECK(shown.tokens[p] == sa::cycle_words[word_at[p]]);
        CHECK(shown.embeddings(p, 3) == carried[2 * p]);
        CHECK(shown.embeddings(p, 4) == carried[2 * p + 1]);
    }
}

TEST_CASE("The starting layer and its loss, checked against an independent forward pass",
          "[ch12][support]")
{
    const Run run = chapter_run(2017, 0);
    sa::SplitMix64 generator(2017);
    (void)sa::cycle_sentences(2 * sentence_count, generator);
    const sa::Matrix* weights[] = {&run.start.w_query, &run.start.w_key, &run.start.w_value};
    for (const sa::Matrix* w : weights) {
        for (std::size_t r = 0; r < w->rows(); ++r) {
            for (std::size_t c = 0; c < w->cols(); ++c) {
                INFO("each entry is 0.5 times the next unit-variance draw, W_Q then W_K then W_V, row by row");
                CHECK((*w)(r, c) == 0.5 * generator.unit_variance());
            }
        }
    }
    INFO("L = mean over sentences of (1/(n d_v)) Σ (O - T)², with O = softmax(Q Kᵀ/√3) V computed by Eigen");
    CHECK_THAT(run.loss.front(), WithinRel(reference_loss(run.start, run.training), 1e-12));
    CHECK_THAT(sa::mean_loss(run.start, run.held_out), WithinRel(reference_loss(run.start, run.held_out), 1e-12));
    const Dense before = reference_weights(run.start, run.held_out.front().embeddings);
    const sa::Matrix printed = sa::layer_weights(run.start, run.held_out.front().embeddings);
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
            CHECK_THAT(printed(i, j), WithinAbs(before(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)),
                                                1e-12));
        }
    }
}

// ---------------------------------------------------------------------------------------
// train_step, the exercise

TEST_CASE("A tiny run's first update is the hand computation of chapter 11's formulas", "[ch12]")
{
    // Two words with one feature each, E = [1; 3]; each must output the other's value.
    sa::Sentence sentence;
    sentence.embeddings = sa::Matrix{{1}, {3}};
    sentence.targets = sa::Matrix{{3}, {1}};
    sentence.sources = {1, 0};
    sa::Projections layer{sa::Matrix{{0}}, sa::Matrix{{1}}, sa::Matrix{{1}}};
    INFO("Q = E·0 = [0; 0], so every score is 0 and A = [1/2 1/2; 1/2 1/2]; V = E = [1; 3], so O = [2; 2]");
    INFO("L = ((2 - 3)² + (2 - 1)²) / (1 sentence · 2 words · 1 feature) = 1");
    const double loss = sa::train_step(layer, {sentence}, 0.25);
    CHECK(loss == 1.0);
    INFO("dO = 2 (O - T) / 2 = [-1; 1]; dA = dO Vᵀ = [-1 -3; 1 3]; rowsum(dA∘A) = [-2; 2]");
    INFO("dS' = A∘(dA - rowsum) = [1/2 -1/2; -1/2 1/2]; d_k = 1 so dS = dS'");
    INFO("dQ = dS K = [1/2 - 3/2; -1/2 + 3/2] = [-1; 1]; dW_Q = Eᵀ dQ = 1·(-1) + 3·1 = 2");
    INFO("W_Q - 0.25·2 = -0.5");
    CHECK(layer.w_query(0, 0) == -0.5);
    INFO("dK = dSᵀ Q = 0 since Q = 0, so W_K stays 1");
    CHECK(layer.w_key(0, 0) == 1.0);
    INFO("dV = Aᵀ dO = [(-1 + 1)/2; (-1 + 1)/2] = 0, so W_V stays 1");
    CHECK(layer.w_value(0, 0) == 1.0);
}

TEST_CASE("A step moves every entry against the slope of the loss, checked by central differences", "[ch12]")
{
    // Two sentences of different lengths (3 and 4 words), d_model = 4, d_k = 3, d_v = 2.
    sa::SplitMix64 generator(12);
    std::vector<sa::Sentence> sentences(2);
    for (std::size_t s = 0; s < 2; ++s) {
        sentences[s].embeddings = sa::random_matrix(3 + s, 4, generator);
        sentences[s].targets = sa::random_matrix(3 + s, 2, generator);
    }
    const sa::Projections start = sa::random_projections(4, 3, 2, 0.7, generator);
    sa::Projections stepped = start;
    const double eta = 0.125;
    const double loss = sa::train_step(stepped, sentences, eta);
    CHECK(loss == sa::mean_loss(start, sentences));
    constexpr double h = 1e-5;
    const auto check = [&](sa::Matrix sa::Projections::*member, const char* name) {
        for (std::size_t r = 0; r < (start.*member).rows(); ++r) {
            for (std::size_t c = 0; c < (start.*member).cols(); ++c) {
                sa::Projections up = start;
                sa::Projections down = start;
                (up.*member)(r, c) += h;
                (down.*member)(r, c) -= h;
                const double slope = (sa::mean_loss(up, sentences) - sa::mean_loss(down, sentences)) / (2 * h);
                const double moved = ((start.*member)(r, c) - (stepped.*member)(r, c)) / eta;
                INFO(name << "(" << r << ", " << c << "): (W - W_new)/η = dL/dW; the central difference is exact "
                          "up to h² times the third derivative, about 1e-10 here, plus rounding of 1e-16/h");
                CHECK_THAT(moved, WithinAbs(slope, 1e-7));
            }
        }
    };
    check(&sa::Projections::w_query, "W_Q");
    check(&sa::Projections::w_key, "W_K");
    check(&sa::Projections::w_value, "W_V");
}

TEST_CASE("Training on the book's seed: the loss falls at every checkpoint, to under 1% of its start", "[ch12]")
{
    const Run run = chapter_run(2017, book_steps);
    REQUIRE(run.loss.size() == book_steps + 1);
    const std::vector<std::size_t> checkpoints = {0, 10, 20, 30, 40, 50, 100, 150, 200};
    for (std::size_t k = 1; k < checkpoints.size(); ++k) {
        INFO("step " << checkpoints[k] << " against step " << checkpoints[k - 1]);
        CHECK(run.loss[checkpoints[k]] < run.loss[checkpoints[k - 1]]);
    }
    INFO("the issue's bar: the final loss is under 1% of the starting loss");
    CHECK(run.loss.back() < 0.01 * run.loss.front());
    INFO("the printed loss after 200 steps is the mean squared error of the trained layer, by Eigen");
    CHECK_THAT(run.loss.back(), WithinRel(reference_loss(run.layer, run.training), 1e-9));
}

TEST_CASE("The trained layer solves held-out sentences: it learned the rule, not the examples", "[ch12]")
{
    const Run run = chapter_run(2017, book_steps);
    std::size_t right = 0;
    for (const sa::Sentence& sentence : run.held_out) {
        const Dense weights = reference_weights(run.layer, sentence.embeddings);
        for (std::size_t i = 0; i < 3; ++i) {
            Eigen::Index largest = 0;
            weights.row(static_cast<Eigen::Index>(i)).maxCoeff(&largest);
            right += static_cast<std::size_t>(largest) == sentence.sources[i] ? 1 : 0;
        }
    }
    INFO("every one of the 64·3 = 192 held-out words looks hardest at the next word of the cycle");
    CHECK(right == 192);
    CHECK(sa::right_words(run.layer, run.held_out) == 192);
    const double held_out_start = sa::mean_loss(run.start, run.held_out);
    const double held_out_end = sa::mean_loss(run.layer, run.held_out);
    INFO("sentences it never saw: the held-out loss falls under 1% of its start as well");
    CHECK(held_out_end < 0.01 * held_out_start);
    INFO("and stays within twice the training loss: the carried values are fresh random numbers, so a layer "
         "that had memorised the training sentences would do far worse on them");
    CHECK(held_out_end < 2.0 * run.loss.back());
    INFO("almost every held-out sentence gets all six outputs within 0.1 of their targets");
    CHECK(sa::solved_sentences(run.layer, run.held_out, 0.1) >= 60);
}

TEST_CASE("Every printed loss, weight, output and score of the run agrees with an independent forward pass", "[ch12]")
{
    // The chapter's loop, with Eigen's loss next to the library's at every checkpoint.
    Run run = chapter_run(2017, 0);
    for (std::size_t step = 0; step <= book_steps; ++step) {
        if (step % (step < 50 ? 10 : 50) == 0) {
            INFO("checkpoint " << step << ": L on both sets, by the library and by Eigen");
            for (const auto* sentences : {&run.training, &run.held_out}) {
                const double by_eigen = reference_loss(run.layer, *sentences);
                CHECK_THAT(sa::mean_loss(run.layer, *sentences), WithinRel(by_eigen, 1e-9));
            }
        }
        if (step < book_steps) {
            (void)sa::train_step(run.layer, run.training, learning_rate);
        }
    }
    const sa::Sentence& shown = run.held_out.front();
    const Dense weights = reference_weights(run.layer, shown.embeddings);
    const Dense outputs = weights * (dense(shown.embeddings) * dense(run.layer.w_value));
    const sa::Matrix printed_weights = sa::layer_weights(run.layer, shown.embeddings);
    const sa::Matrix printed_outputs = sa::layer_outputs(run.layer, shown.embeddings);
    for (Eigen::Index i = 0; i < 3; ++i) {
        const auto row = static_cast<std::size_t>(i);
        for (Eigen::Index j = 0; j < 3; ++j) {
            CHECK_THAT(printed_weights(row, static_cast<std::size_t>(j)), WithinAbs(weights(i, j), 1e-12));
        }
        for (Eigen::Index d = 0; d < 2; ++d) {
            CHECK_THAT(printed_outputs(row, static_cast<std::size_t>(d)), WithinAbs(outputs(i, d), 1e-12));
        }
    }
    std::size_t solved = 0;
    for (const sa::Sentence& sentence : run.held_out) {
        const Dense errors = reference_weights(run.layer, sentence.embeddings) *
                                 (dense(sentence.embeddings) * dense(run.layer.w_value)) -
                             dense(sentence.targets);
        solved += errors.cwiseAbs().maxCoeff() <= 0.1 ? 1 : 0;
    }
    INFO("a sentence counts as solved when its largest output error is at most 0.1");
    CHECK(sa::solved_sentences(run.layer, run.held_out, 0.1) == solved);
}

TEST_CASE("What was learned: W_V copies the carried value, each word's query finds the next word's key", "[ch12]")
{
    const Run run = chapter_run(2017, book_steps);
    const sa::Matrix& w_value = run.layer.w_value;
    for (std::size_t f = 0; f < 5; ++f) {
        for (std::size_t d = 0; d < 2; ++d) {
            INFO("the ideal W_V reads the carried features and ignores which word it is: rows 1 to 3 zero, "
                 "rows 4 and 5 the identity; row " << f << ", column " << d);
            CHECK_THAT(w_value(f, d), WithinAbs(f == 3 + d ? 1.0 : 0.0, 0.05));
        }
    }
    // A bare word is a one-hot embedding, so its query is its row of W_Q and its key its row of W_K.
    for (std::size_t w = 0; w < 3; ++w) {
        const std::size_t next = (w + 1) % 3;
        for (std::size_t other = 0; other < 3; ++other) {
            if (other == next) {
                continue;
            }
            double to_next = 0.0;
            double to_other = 0.0;
            for (std::size_t c = 0; c < key_dim; ++c) {
                to_next += run.layer.w_query(w, c) * run.layer.w_key(next, c);
                to_other += run.layer.w_query(w, c) * run.layer.w_key(other, c);
            }
            INFO(sa::cycle_words[w] << " scores the next word " << sa::cycle_words[next] << " at least 3 above "
                 << sa::cycle_words[other] << ": after dividing by √3 the gap is over 1.7, e^1.7 > 5");
            CHECK(to_next > to_other + 3.0);
        }
    }
    INFO("the cycle has no symmetric score matrix (a ≻ b ≻ c ≻ a), so W_Q and W_K must differ");
    CHECK_FALSE(sa::identical(run.layer.w_query, run.layer.w_key));
}

TEST_CASE("The same seed gives bit-identical training twice", "[ch12]")
{
    const Run first = chapter_run(2017, 60);
    const Run second = chapter_run(2017, 60);
    CHECK(sa::identical(first.layer.w_query, second.layer.w_query));
    CHECK(sa::identical(first.layer.w_key, second.layer.w_key));
    CHECK(sa::identical(first.layer.w_value, second.layer.w_value));
    REQUIRE(first.loss.size() == second.loss.size());
    for (std::size_t s = 0; s < first.loss.size(); ++s) {
        INFO("step " << s);
        CHECK(sa::identical(sa::Matrix{{first.loss[s]}}, sa::Matrix{{second.loss[s]}}));
    }
}

TEST_CASE("Other seeds train too: under 1% of the starting loss, every held-out word on the right word", "[ch12]")
{
    for (const std::uint64_t seed : {1ULL, 2ULL, 42ULL}) {
        const Run run = chapter_run(seed, book_steps);
        INFO("seed " << seed << ": loss " << run.loss.front() << " -> " << run.loss.back());
        CHECK(run.loss.back() < 0.01 * run.loss.front());
        CHECK(sa::right_words(run.layer, run.held_out) == 192);
        CHECK(sa::mean_loss(run.layer, run.held_out) < 0.01 * sa::mean_loss(run.start, run.held_out));
    }
}

TEST_CASE("A learning rate of 0 changes nothing, and a NaN target reaches every weight it touches", "[ch12]")
{
    sa::SplitMix64 generator(5);
    std::vector<sa::Sentence> sentences = sa::cycle_sentences(3, generator);
    const sa::Projections start = sa::random_projections(5, 3, 2, 0.5, generator);
    sa::Projections still = start;
    (void)sa::train_step(still, sentences, 0.0);
    INFO("W - 0·dW = W, bit for bit");
    CHECK(sa::identical(still.w_query, start.w_query));
    CHECK(sa::identical(still.w_key, start.w_key));
    CHECK(sa::identical(still.w_value, start.w_value));
    sentences[1].targets(0, 0) = std::numeric_limits<double>::quiet_NaN();
    sa::Projections broken = start;
    INFO("a NaN target makes the loss NaN, and dO, and through dV = Aᵀ dO every column-1 entry of dW_V");
    CHECK(std::isnan(sa::train_step(broken, sentences, 0.5)));
    for (std::size_t f = 0; f < 5; ++f) {
        CHECK(std::isnan(broken.w_value(f, 0)));
    }
}

TEST_CASE("Training refuses sentences it cannot use, naming the operation and the shapes", "[ch12]")
{
    sa::SplitMix64 generator(3);
    sa::Projections layer = sa::random_projections(5, 3, 2, 0.5, generator);
    CHECK_THROWS_AS(sa::train_step(layer, {}, 1.0), std::invalid_argument);
    CHECK_THROWS_AS(sa::mean_loss(layer, {}), std::invalid_argument);
    std::vector<sa::Sentence> sentences = sa::cycle_sentences(2, generator);
    sentences[1].targets = sa::Matrix(3, 3);
    CHECK_THROWS_WITH(sa::train_step(layer, sentences, 1.0), Contains("train_step") && Contains("3×3"));
    CHECK_THROWS_AS(sa::train_step(layer, sentences, 1.0), sa::ShapeError);
    CHECK_THROWS_WITH(sa::mean_loss(layer, sentences), Contains("mean_loss") && Contains("3×2"));
    sentences[1].targets = sa::Matrix(3, 2);
    sentences[1].embeddings = sa::Matrix(3, 4);
    CHECK_THROWS_AS(sa::train_step(layer, sentences, 1.0), sa::ShapeError);
    CHECK_THROWS_AS(sa::loss_table({0, 5}, {1.0, 0.5}, {1.0, 0.5}, 3), std::invalid_argument);
    CHECK_THROWS_AS(sa::loss_plot({}, 10, {}, {}), std::invalid_argument);
    CHECK_THROWS_AS(sa::loss_plot({1.0}, 10, {0}, {}), std::invalid_argument);
}

TEST_CASE("solved_sentences counts an error equal to the tolerance as solved and right_words counts a tie as wrong",
          "[ch12][support]")
{
    // W_Q = W_K = 0: every score is 0, so each word puts exactly 1/2 on each of the two words, and with
    // W_V = 1 both outputs are (1 + 3) / 2 = 2, exactly. Targets 2.5 and 1.5 are 0.5 away, exactly.
    const sa::Projections even{.w_query = sa::Matrix{{0.0}}, .w_key = sa::Matrix{{0.0}}, .w_value = sa::Matrix{{1.0}}};
    const sa::Sentence sentence{.tokens = {"a", "b"}, .embeddings = sa::Matrix{{1.0}, {3.0}},
                                .targets = sa::Matrix{{2.5}, {1.5}}, .sources = {0, 1}};
    INFO("solved: every output within the tolerance, the tolerance itself included");
    CHECK(sa::solved_sentences(even, {sentence}, 0.5) == 1);
    CHECK(sa::solved_sentences(even, {sentence}, 0.25) == 0);
    INFO("right: the source gets more weight than every other word; 1/2 against 1/2 is a tie, not right");
    CHECK(sa::right_words(even, {sentence}) == 0);
    // W_Q = W_K = 1: word i scores e_i · e_j = (1, 3) and (3, 9) before scaling: both look most at word 1.
    const sa::Projections likeness{.w_query = sa::Matrix{{1.0}}, .w_key = sa::Matrix{{1.0}},
                                   .w_value = sa::Matrix{{1.0}}};
    sa::Sentence to_second = sentence;
    to_second.sources = {1, 1};
    CHECK(sa::right_words(likeness, {to_second}) == 2);
    CHECK(sa::right_words(likeness, {sentence}) == 1);
}

TEST_CASE("loss_table reads the training loss at each checkpoint, the last step included, and no further",
          "[ch12][support]")
{
    const std::vector<double> training = {1.0, 0.5, 0.25};  // after 0, 1 and 2 steps
    INFO("checkpoint 2 is the last of 3 losses: it reads training[2] = 0.250");
    const std::string table = sa::loss_table({0, 2}, training, {2.0, 0.125}, 3);
    CHECK_THAT(table, Contains("step 0") && Contains("1.000") && Contains("2.000"));
    CHECK_THAT(table, Contains("step 2") && Contains("0.250") && Contains("0.125"));
    INFO("checkpoint 3 equals the number of losses: there is no loss after 3 steps, so it is refused, not read "
         "past the end");
    CHECK_THROWS_WITH(sa::loss_table({0, 3}, training, {1.0, 0.5}, 3),
                      Contains("loss_table") && Contains("checkpoint 3") && Contains("3 training losses"));
}

TEST_CASE("loss_plot draws every k-th training loss and the last, and one held-out point per checkpoint, the first "
          "included", "[ch12][support]")
{
    const std::vector<double> training = {1.0, 0.5, 0.25, 0.125, 0.0625};  // steps 0 to 4
    const sa::LinePlot plot = sa::loss_plot(training, 3, {0, 2, 4}, {2.0, 1.0, 0.5});
    REQUIRE(plot.series.size() == 2);
    INFO("every 3 steps from step 0, and the last step 4 even though 3 does not divide it");
    CHECK(plot.series[0].x == std::vector<double>{0.0, 3.0, 4.0});
    CHECK(plot.series[0].y == std::vector<double>{1.0, 0.125, 0.0625});
    INFO("one held-out point per checkpoint, at its step, checkpoint 0 first");
    CHECK(plot.series[1].x == std::vector<double>{0.0, 2.0, 4.0});
    CHECK(plot.series[1].y == std::vector<double>{2.0, 1.0, 0.5});
    CHECK(plot.log_y);
    INFO("one training loss: the single step 0 is drawn, once");
    CHECK(sa::loss_plot({1.0}, 10, {}, {}).series[0].x == std::vector<double>{0.0});
}
