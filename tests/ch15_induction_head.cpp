// Chapter 15, Two layers: the induction head: the two scores on attention matrices with known
// answers, the ablation, the repeated letters, the training mix and the chapter's run.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "char_text.hpp"
#include "circuits.hpp"
#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "helpers.hpp"
#include "language_model.hpp"
#include "random.hpp"
#include "safetensors.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// A causal head that spreads its weight evenly: A(i, j) = 1/(i+1) for j <= i.
sa::Matrix uniform_head(std::size_t n)
{
    sa::Matrix a(n, n);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
            a(i, j) = 1.0 / static_cast<double>(i + 1);
        }
    }
    return a;
}

// A head that puts all its weight on one column per row: column(i) for row i.
template <typename Column>
sa::Matrix one_hot_head(std::size_t n, Column column)
{
    sa::Matrix a(n, n);
    for (std::size_t i = 0; i < n; ++i) {
        a(i, column(i)) = 1.0;
    }
    return a;
}

sa::LanguageModel small_model(std::size_t layers)
{
    sa::SplitMix64 generator(15);
    return sa::random_model({10, 8, 2, layers, 12}, generator);
}

std::vector<std::size_t> small_tokens(std::size_t count)
{
    std::vector<std::size_t> tokens;
    for (std::size_t i = 0; i < count; ++i) {
        tokens.push_back((i * 7 + 3) % 10);
    }
    return tokens;
}

}  // namespace

TEST_CASE("Previous-token score: 1 for a perfect previous-token head, the mean of 1/(i+1) for a uniform one",
          "[ch15]")
{
    for (const std::size_t n : {2U, 5U, 64U}) {
        INFO("n = " << n << ": every row i >= 1 puts weight 1 on i-1 (row 0 on itself)");
        const sa::Matrix perfect = one_hot_head(n, [](std::size_t i) { return i == 0 ? std::size_t{0} : i - 1; });
        CHECK(sa::previous_token_score(perfect) == 1.0);
        double mean = 0.0;
        for (std::size_t i = 1; i < n; ++i) {
            mean += 1.0 / static_cast<double>(i + 1) / static_cast<double>(n - 1);
        }
        INFO("uniform: A(i, i-1) = 1/(i+1), averaged over i = 1 .. n-1");
        CHECK_THAT(sa::previous_token_score(uniform_head(n)), WithinRel(mean, 1e-12));
        INFO("a head that only looks at itself never looks back one");
        CHECK(sa::previous_token_score(one_hot_head(n, [](std::size_t i) { return i; })) == 0.0);
    }
    INFO("n = 2, uniform: only row 1 counts, with weight 1/2");
    CHECK(sa::previous_token_score(uniform_head(2)) == 0.5);
    CHECK_THROWS_AS(sa::previous_token_score(sa::Matrix(1, 1)), std::invalid_argument);
    CHECK_THROWS_AS(sa::previous_token_score(sa::Matrix(3, 2)), std::invalid_argument);
}

TEST_CASE("Induction score: 1 for a perfect induction head, 0 for a previous-token head, the uniform mean",
          "[ch15]")
{
    const std::size_t period = 32;
    const std::size_t n = 2 * period;
    INFO("row i >= 32 looks at i - 32 + 1, just after the first occurrence of its character");
    const sa::Matrix perfect = one_hot_head(n, [](std::size_t i) { return i >= period ? i - period + 1 : 0; });
    CHECK(sa::induction_score(perfect, period) == 1.0);
    INFO("a previous-token head looks at i - 1, not at i - 31");
    const sa::Matrix previous = one_hot_head(n, [](std::size_t i) { return i == 0 ? std::size_t{0} : i - 1; });
    CHECK(sa::induction_score(previous, period) == 0.0);
    double mean = 0.0;
    for (std::size_t i = period; i < n; ++i) {
        mean += 1.0 / static_cast<double>(i + 1) / static_cast<double>(n - period);
    }
    INFO("uniform: A(i, i-31) = 1/(i+1), averaged over the second copy, i = 32 .. 63");
    CHECK_THAT(sa::induction_score(uniform_head(n), period), WithinRel(mean, 1e-12));
    INFO("a period of 1 reads the diagonal; 2 reads the previous token");
    CHECK(sa::induction_score(one_hot_head(4, [](std::size_t i) { return i; }), 1) == 1.0);
    CHECK(sa::induction_score(previous, 2) == 1.0);
    CHECK_THROWS_AS(sa::induction_score(perfect, 0), std::invalid_argument);
    CHECK_THROWS_AS(sa::induction_score(perfect, n), std::invalid_argument);
    CHECK_THROWS_AS(sa::induction_score(sa::Matrix(4, 3), 2), std::invalid_argument);
}

TEST_CASE("The ablation zeroes one head's output and leaves every other head's output bit for bit the same",
          "[ch15]")
{
    const sa::LanguageModel model = small_model(2);
    const std::vector<std::size_t> tokens = small_tokens(24);
    const std::size_t window = 12;
    const sa::ForwardTrace whole = sa::forward(model, tokens, window);
    const std::size_t width = model.shape.width / model.shape.heads;
    for (std::size_t layer = 0; layer < 2; ++layer) {
        for (std::size_t head = 0; head < model.shape.heads; ++head) {
            const sa::ForwardTrace cut = sa::ablated_forward(model, tokens, window, {layer, head});
            const sa::Matrix& c = cut.layers[layer].joined;
            const sa::Matrix& full = whole.layers[layer].joined;
            for (std::size_t r = 0; r < c.rows(); ++r) {
                for (std::size_t k = 0; k < c.cols(); ++k) {
                    INFO("layer " << layer << ", head " << head << ", row " << r << ", column " << k);
                    if (k / width == head) {
                        CHECK(c(r, k) == 0.0);  // the silenced head writes nothing
                    } else {
                        CHECK(c(r, k) == full(r, k));  // bit for bit: the same arithmetic
                    }
                }
            }
            INFO("the layers before the ablated one are untouched, so its input is the same");
            CHECK(cut.layers[layer].input == whole.layers[layer].input);
            // The layer's output, written out: X + C' W_O equals X + C W_O - C_h W_O,h up to rounding.
            sa::Matrix head_part(c.rows(), c.cols());
            for (std::size_t r = 0; r < c.rows(); ++r) {
                for (std::size_t k = head * width; k < (head + 1) * width; ++k) {
                    head_part(r, k) = full(r, k);
                }
            }
            const sa::Matrix removed = sa::multiply(head_part, model.layers[layer].w_out);
            const sa::Matrix after = layer + 1 < 2 ? cut.layers[layer + 1].input : cut.stream;
            const sa::Matrix before = layer + 1 < 2 ? whole.layers[layer + 1].input : whole.stream;
            for (std::size_t r = 0; r < after.rows(); ++r) {
                for (std::size_t k = 0; k < after.cols(); ++k) {
                    CHECK_THAT(after(r, k), WithinAbs(before(r, k) - removed(r, k), 1e-12));
                }
            }
        }
    }
    CHECK_THROWS_AS(sa::ablated_forward(model, tokens, window, {2, 0}), std::invalid_argument);
    CHECK_THROWS_AS(sa::ablated_forward(model, tokens, window, {0, 2}), std::invalid_argument);
}

TEST_CASE("letter_tokens: A to Z and a to z, and none of their ASCII neighbours", "[ch15][support]")
{
    // '@' and '[' sit just before 'A' and just after 'Z' in ASCII, '`' and '{' around 'a' and 'z'.
    const sa::Vocabulary vocabulary = sa::make_vocabulary("@AZ[`az{ 5");
    INFO("the vocabulary in byte order: ' ', '5', '@', 'A', 'Z', '[', '`', 'a', 'z', '{'; the letters are tokens "
         "3, 4, 7 and 8");
    CHECK(sa::letter_tokens(vocabulary) == std::vector<std::size_t>{3, 4, 7, 8});
}

TEST_CASE("Repeated letters: a seeded shuffle of distinct letters, repeated once, then its first letter",
          "[ch15][support]")
{
    std::vector<std::size_t> letters;
    for (std::size_t t = 10; t < 61; ++t) {
        letters.push_back(t);
    }
    sa::SplitMix64 generator(7);
    sa::SplitMix64 replay(7);
    const std::vector<std::size_t> sequence = sa::repeated_letters(letters, 32, generator);
    REQUIRE(sequence.size() == 65);
    INFO("Fisher-Yates, replayed by hand: letter k swaps with k + next() mod (51 - k)");
    std::vector<std::size_t> shuffled = letters;
    for (std::size_t k = 0; k < 32; ++k) {
        std::swap(shuffled[k], shuffled[k + replay.next() % (51 - k)]);
    }
    const std::set<std::size_t> distinct(sequence.begin(), sequence.begin() + 32);
    CHECK(distinct.size() == 32);
    for (std::size_t i = 0; i < 32; ++i) {
        CHECK(sequence[i] == shuffled[i]);
        CHECK(sequence[i + 32] == sequence[i]);
        CHECK(sequence[i] >= 10);
        CHECK(sequence[i] < 61);
    }
    CHECK(sequence[64] == sequence[0]);
    INFO("one draw per letter: both generators are at the same place");
    CHECK(generator.next() == replay.next());
    const sa::Batch batch = sa::repeated_batch(letters, 3, 32, generator);
    CHECK(batch.window == 64);
    CHECK(batch.inputs.size() == 192);
    for (std::size_t i = 0; i + 1 < batch.inputs.size(); ++i) {
        if ((i + 1) % 64 != 0) {
            CHECK(batch.targets[i] == batch.inputs[i + 1]);  // each target is the next input of its window
        }
    }
    CHECK_THROWS_AS(sa::repeated_letters(letters, 52, generator), std::invalid_argument);
    CHECK_THROWS_AS(sa::repeated_letters(letters, 0, generator), std::invalid_argument);
    INFO("cycled_letters with period 5 and length 13: the five letters, then again, then three more");
    sa::SplitMix64 again(7);
    const std::vector<std::size_t> cycle = sa::cycled_letters(letters, 5, 13, again);
    REQUIRE(cycle.size() == 13);
    for (std::size_t i = 0; i < 13; ++i) {
        CHECK(cycle[i] == shuffled[i % 5]);  // the same shuffle's first five: the draws are the same
    }
}

TEST_CASE("The training mix: every fourth window is letters cycled with a drawn period, the rest text as "
          "random_batch cuts it", "[ch15][support]")
{
    std::vector<std::size_t> text;
    for (std::size_t i = 0; i < 500; ++i) {
        text.push_back(i % 7);  // tokens 0 .. 6: never a letter below
    }
    std::vector<std::size_t> letters;
    for (std::size_t t = 7; t < 40; ++t) {
        letters.push_back(t);
    }
    sa::SplitMix64 a(3);
    sa::SplitMix64 b(3);
    INFO("with no letter windows, the mix is random_batch() draw for draw");
    const sa::Batch plain = sa::mixed_batch(text, letters, 8, 16, {.every = 0}, a);
    const sa::Batch reference = sa::random_batch(text, 8, 16, b);
    CHECK(plain.inputs == reference.inputs);
    CHECK(plain.targets == reference.targets);
    const sa::LetterMix mix{.every = 4, .shortest = 3, .longest = 9};
    const sa::Batch mixed = sa::mixed_batch(text, letters, 8, 16, mix, a);
    std::size_t repeated = 0;
    for (std::size_t w = 0; w < 8; ++w) {
        const bool letter = mixed.inputs[w * 16] >= 7;
        INFO("window " << w << ": windows 3 and 7 are the letters");
        CHECK(letter == (w % 4 == 3));
        if (!letter) {
            (void)b.next();  // the text window's start, drawn as random_batch draws it
            continue;
        }
        ++repeated;
        INFO("the period is 3 + next() mod 7, then the letters are cycled_letters() with it, draw for draw");
        const std::size_t period = 3 + b.next() % 7;
        const std::vector<std::size_t> cycle = sa::cycled_letters(letters, period, 17, b);
        for (std::size_t i = 0; i < 16; ++i) {
            CHECK(mixed.inputs[w * 16 + i] == cycle[i]);
            CHECK(mixed.targets[w * 16 + i] == cycle[i + 1]);
            if (i >= period) {
                CHECK(mixed.inputs[w * 16 + i] == mixed.inputs[w * 16 + i - period]);
            }
        }
        const std::set<std::size_t> distinct(cycle.begin(), cycle.begin() + static_cast<std::ptrdiff_t>(period));
        CHECK(distinct.size() == period);
    }
    CHECK(repeated == 2);  // 25 % of 8 windows
    CHECK(a.next() == b.next());
    CHECK_THROWS_AS(sa::mixed_batch(text, letters, 8, 600, mix, a), std::invalid_argument);
    CHECK_THROWS_AS(sa::mixed_batch(text, letters, 8, 8, mix, a), std::invalid_argument);  // a period past the window
    CHECK_THROWS_AS(sa::mixed_batch(text, letters, 8, 16, {.every = 4, .shortest = 5, .longest = 4}, a),
                    std::invalid_argument);
    CHECK_THROWS_AS(sa::mixed_batch(text, letters, 8, 64, {.every = 4, .shortest = 8, .longest = 40}, a),
                    std::invalid_argument);  // 33 letters cannot give 40 distinct ones
}

TEST_CASE("The scores read the forward pass's weights: trace_attention is head_attention, copy losses by hand",
          "[ch15]")
{
    const sa::LanguageModel model = small_model(2);
    const std::vector<std::size_t> tokens = small_tokens(12);
    const sa::ForwardTrace trace = sa::forward(model, tokens, 12);
    for (std::size_t layer = 0; layer < 2; ++layer) {
        const std::vector<sa::Matrix> a = sa::trace_attention(trace.layers[layer], 2, 12, 0);
        const std::vector<sa::Matrix> b = sa::head_attention(model, layer, tokens);
        CHECK(a[0] == b[0]);
        CHECK(a[1] == b[1]);
    }
    std::vector<std::size_t> targets(tokens.begin() + 1, tokens.end());
    targets.push_back(tokens[0]);
    const std::vector<double> losses = sa::row_losses(trace.logits, targets);
    double by_hand = 0.0;
    for (std::size_t i = 0; i < 12; ++i) {
        double total = 0.0;
        for (std::size_t j = 0; j < 10; ++j) {
            total += std::exp(trace.logits(i, j));
        }
        by_hand += (std::log(total) - trace.logits(i, targets[i])) / 12.0;
        CHECK_THAT(losses[i], WithinAbs(std::log(total) - trace.logits(i, targets[i]), 1e-12));
    }
    const sa::Batch batch{tokens, targets, 12};
    INFO("the mean of the row losses is the evaluated loss");
    CHECK_THAT(sa::evaluate(model, batch), WithinAbs(by_hand, 1e-12));
    const sa::CopyScores scores = sa::copy_scores(model, batch, nullptr);
    double first = 0.0;
    double second = 0.0;
    for (std::size_t i = 0; i < 5; ++i) {
        first += losses[i] / 5.0;  // inputs 0 .. 4 predict the new tokens 1 .. 5 (period 6)
    }
    for (std::size_t i = 6; i < 12; ++i) {
        second += losses[i] / 6.0;
    }
    CHECK_THAT(scores.first_copy_loss, WithinAbs(first, 1e-12));
    CHECK_THAT(scores.second_copy_loss, WithinAbs(second, 1e-12));
    const std::vector<sa::Matrix> last = sa::head_attention(model, 1, tokens);
    CHECK_THAT(scores.induction[1][0], WithinAbs(sa::induction_score(last[0], 6), 1e-15));
    CHECK_THAT(scores.previous[1][1], WithinAbs(sa::previous_token_score(last[1]), 1e-15));
}

namespace {

sa::LanguageModel saved_model(const std::string& path)
{
    return sa::load_safetensors(helpers::read_all(path)).model;
}

std::string three(double value)
{
    return fmt::format("{:.3f}", value);
}

std::string row(const std::vector<double>& scores)
{
    std::string text;
    for (const double s : scores) {
        text += fmt::format("  {:>6.3f}", s);
    }
    return text + "\n";
}

double top(const std::vector<double>& scores)
{
    double best = scores.front();
    for (const double s : scores) {
        best = std::fmax(best, s);
    }
    return best;
}

std::string verdict(bool met)
{
    return met ? ": met\n" : ": NOT met\n";
}

}  // namespace

TEST_CASE("The chapter's printed numbers and goals recomputed from the saved models", "[.ch15-run][support]")
{
    const std::string output = helpers::read_all(BOOK_CH15_OUTPUT);
    const std::string training_text = helpers::read_all(BOOK_KJV_TRAINING);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(training_text);
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, helpers::read_all(BOOK_KJV_HELD_OUT));
    const sa::LanguageModel model = saved_model(BOOK_CH15_MODEL);
    const sa::LanguageModel plain = saved_model(std::string(BOOK_CH15_MODEL) + ".without-mix");
    INFO("the one-layer control is chapter 14's saved model, trained on text alone");
    const sa::LanguageModel control = saved_model(BOOK_CH14_MODEL);
    REQUIRE(model.layers.size() == 2);
    REQUIRE(control.layers.size() == 1);
    const std::vector<std::size_t> letters = sa::letter_tokens(vocabulary);
    INFO("the King James text has every letter but X, upper and lower case: 25 + 26");
    CHECK(letters.size() == 51);
    sa::SplitMix64 test_generator(2018);  // the seed 2017 + 1
    const sa::Batch test = sa::repeated_batch(letters, 16, 32, test_generator);
    const sa::CopyScores whole = sa::copy_scores(model, test, nullptr);
    CHECK_THAT(output, Contains("layer 1" + row(whole.induction[1])));
    CHECK_THAT(output, Contains("layer 0" + row(whole.induction[0])));
    CHECK_THAT(output, Contains("each new): " + three(whole.first_copy_loss) + " nats; ln 32 = " +
                                three(std::log(32.0))));
    CHECK_THAT(output, Contains("(each letter a repeat):      " + three(whole.second_copy_loss) + " nats."));
    // The ablation table, row by row; the needed head is the one whose zeroing leaves the lowest score.
    std::size_t needed = 0;
    double lowest = 2.0;
    std::vector<sa::CopyScores> cut;
    for (std::size_t h = 0; h < 4; ++h) {
        const sa::HeadAblation ablation{0, h};
        cut.push_back(sa::copy_scores(model, test, &ablation));
        CHECK_THAT(output, Contains(fmt::format("  head {}     {:>20.3f}  {:>16.3f}\n", h,
                                                top(cut[h].induction[1]), cut[h].second_copy_loss)));
        if (top(cut[h].induction[1]) < lowest) {
            lowest = top(cut[h].induction[1]);
            needed = h;
        }
    }
    const std::vector<std::vector<double>> text_previous =
        sa::previous_token_scores(model, sa::even_batch(held_out, 128, 64));
    CHECK_THAT(output, Contains("held-out text  " + row(text_previous[0])));
    CHECK_THAT(output, Contains("test letters   " + row(whole.previous[0])));
    CHECK_THAT(output, Contains(fmt::format("Zeroing layer-0 head {} lowers the score most", needed)));
    const sa::Batch measured = sa::even_batch(held_out, 128, 64);
    const double with_mix = sa::evaluate(model, measured);
    const double without = sa::evaluate(plain, measured);
    CHECK_THAT(output, Contains("with the mix " + three(with_mix) + ", without " + three(without) + "; difference " +
                                three(with_mix - without)));
    const sa::CopyScores plain_scores = sa::copy_scores(plain, test, nullptr);
    const sa::CopyScores control_scores = sa::copy_scores(control, test, nullptr);
    CHECK_THAT(output, Contains("best induction score " + three(top(plain_scores.induction[1])) + "; first copy " +
                                three(plain_scores.first_copy_loss) + " nats, second copy " +
                                three(plain_scores.second_copy_loss)));
    CHECK_THAT(output, Contains("best induction score " + three(top(control_scores.induction[0])) + "; first copy " +
                                three(control_scores.first_copy_loss) + " nats, second copy " +
                                three(control_scores.second_copy_loss)));
    // The goals, decided here from the models, and the verdict the program printed for each.
    const double score = top(whole.induction[1]);
    const bool induction = score >= 0.4 && whole.second_copy_loss <= 1.0;
    bool ablation = true;
    for (std::size_t h = 0; h < 4; ++h) {
        const double drop = (score - top(cut[h].induction[1])) / score;
        const double rise = cut[h].second_copy_loss - whole.second_copy_loss;
        ablation = ablation && (h == needed ? drop >= 0.75 && rise >= 1.0 : drop < 0.25 && rise < 1.0 / 3.0);
    }
    const bool control_goal = top(control_scores.induction[0]) < 0.1 &&
                              std::fabs(control_scores.second_copy_loss - control_scores.first_copy_loss) <=
                                  0.1 * control_scores.first_copy_loss;
    CHECK_THAT(output, Contains("second copy at most 1 nat" + verdict(induction)));
    CHECK_THAT(output, Contains("at least 90 % of ln 32" + verdict(whole.first_copy_loss >= 0.9 * std::log(32.0))));
    CHECK_THAT(output, Contains("less than a third of that" + verdict(ablation)));
    CHECK_THAT(output, Contains("held-out text at least 0.35" + verdict(top(text_previous[0]) >= 0.35)));
    CHECK_THAT(output, Contains("within 10 % of the first" + verdict(control_goal)));
    CHECK_THAT(output, Contains("at most 0.1 nats per character" + verdict(with_mix - without <= 0.1)));
    // The sequences of 24 letters come from the same generator, after the 16 of 32.
    const sa::Batch shorter = sa::repeated_batch(letters, 16, 24, test_generator);
    const sa::CopyScores model_24 = sa::copy_scores(model, shorter, nullptr);
    const sa::CopyScores control_24 = sa::copy_scores(control, shorter, nullptr);
    for (const sa::CopyScores* s : {&model_24, &control_24}) {
        CHECK_THAT(output, Contains(fmt::format("on 24 letters repeated once: best induction score {:.3f};\n  first copy "
                                                "{:.3f} nats, second copy {:.3f} nats.", top(s->induction.back()),
                                                s->first_copy_loss, s->second_copy_loss)));
    }
    INFO("what the chapter claims: the score and the second copy pass the goal on 32 letters ...");
    CHECK(induction);
    CHECK(whole.first_copy_loss >= 0.9 * std::log(32.0));
    INFO("... and on 24 letters, a period it never counts back by: the head matches letters, not places");
    CHECK(top(model_24.induction[1]) >= 0.4);
    CHECK(model_24.second_copy_loss <= 1.0);
    INFO("text alone grows no such head, and one layer has none");
    CHECK(top(plain_scores.induction[1]) < 0.1);
    CHECK(control_goal);
    // Step 0: the random start, drawn again from the seed, scored as the program scores it.
    sa::SplitMix64 generator(2017);
    const sa::LanguageModel start = sa::random_model({63, 64, 4, 2, 64}, generator);
    const sa::CopyScores at_start = sa::copy_scores(start, test, nullptr);
    const sa::Batch first = sa::mixed_batch(sa::encode(vocabulary, training_text), letters, 16, 64,
                                            {.every = 4, .shortest = 8, .longest = 32}, generator);
    const double first_loss = sa::cross_entropy(sa::forward(start, first.inputs, 64).logits, first.targets).loss;
    CHECK_THAT(output, Contains(fmt::format("      0  {:>13.3f}  {:>20.3f}  {:>16.3f}\n", first_loss,
                                            top(at_start.induction[1]), at_start.second_copy_loss)));
    INFO("step 2000: the saved model is the model after the last step");
    const std::size_t last = output.find("\n   2000  ");
    REQUIRE(last != std::string::npos);
    const std::string line = output.substr(last + 1, output.find('\n', last + 1) - last);
    CHECK_THAT(line, Catch::Matchers::EndsWith(fmt::format("  {:>20.3f}  {:>16.3f}\n", score, whole.second_copy_loss)));
    CHECK_THAT(output, Contains(fmt::format("  none       {:>20.3f}  {:>16.3f}\n", score, whole.second_copy_loss)));
}
