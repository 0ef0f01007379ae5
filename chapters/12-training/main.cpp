// Chapter 12, Learning the projections: W_Q, W_K and W_V start at random and gradient descent finds them.
#include "cli.hpp"
#include "plots.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scores.hpp"
#include "tables.hpp"
#include "training.hpp"

namespace {

// The rows of W_Q and W_K: three that say which word it is, two for the value it carries.
const std::vector<std::string> embedding_features = {"Mouse", "Eats", "Cheese", "carried 1", "carried 2"};

//> word-scores
// The three words carrying nothing: the query each one sends against the key each one advertises.
sa::Matrix bare_word_scores(const sa::Projections& layer)
{
    sa::Matrix bare_words(3, embedding_features.size(), 0.0);
    for (std::size_t word = 0; word < 3; ++word) {
        bare_words(word, word) = 1.0;
    }
    return sa::scores(sa::project(bare_words, layer.w_query), sa::project(bare_words, layer.w_key));
}
//< word-scores

void draw_attention(const sa::Report& report, const std::string& file, const std::string& title,
                    const sa::Matrix& weights, const std::vector<std::string>& tokens)
{
    report.heatmap(file, {.title = title, .values = weights, .row_labels = tokens, .col_labels = tokens,
                          .scale_label = "weight"});
}

// What the layer learned: its projections, the scores of the bare words, and how often it is right.
void report_learned(sa::Report& report, const sa::Projections& layer, const std::vector<sa::Sentence>& held_out,
                    std::size_t key_dim)
{
    const auto features = [](std::size_t count) { return sa::feature_labels(count); };
    const sa::Matrix word_scores = bare_word_scores(layer);
    report.table("Learned W_Q", layer.w_query, embedding_features, features(key_dim));
    report.table("Learned W_K", layer.w_key, embedding_features, features(key_dim));
    report.table("Learned W_V", layer.w_value, embedding_features, features(sa::carried_features));
    report.table("Scores of the bare words, q_word · k_word", word_scores,
                 sa::cycle_words, sa::cycle_words);
    report.text(fmt::format("Held-out words whose largest weight falls on the right word: {} of {}\n"
                            "Held-out sentences with every output within 0.1 of its target: {} of {}\n",
                            sa::right_words(layer, held_out), 3 * held_out.size(),
                            sa::solved_sentences(layer, held_out, 0.1), held_out.size()));
}

std::string training_chapter(const sa::Example& example)
{
    //> setup
    constexpr std::size_t training_count = 64;
    constexpr std::size_t held_out_count = 64;
    constexpr std::size_t key_dim = 3;
    constexpr double learning_rate = 1.5;
    const auto steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 2000));
    sa::SplitMix64 generator(static_cast<std::uint64_t>(example.seed));
    const std::vector<sa::Sentence> training = sa::cycle_sentences(training_count, generator);
    const std::vector<sa::Sentence> held_out = sa::cycle_sentences(held_out_count, generator);
    sa::Projections layer = sa::random_projections(embedding_features.size(), key_dim, sa::carried_features,
                                                   0.5, generator);
    //< setup
    const sa::Sentence& shown = held_out.front();
    const sa::Matrix weights_before = sa::layer_weights(layer, shown.embeddings);

    //> loop
    std::vector<double> training_loss;  // after 0, 1, ..., steps steps
    std::vector<std::size_t> checkpoints;
    std::vector<double> held_out_loss;  // at each checkpoint
    for (std::size_t step = 0; step <= steps; ++step) {
        if (step % (step < 50 ? 10 : 50) == 0 || step == steps) {
            checkpoints.push_back(step);
            held_out_loss.push_back(sa::mean_loss(layer, held_out));
        }
        // train_step() returns the loss of the layer it was given, before its step.
        training_loss.push_back(step < steps ? sa::train_step(layer, training, learning_rate)
                                             : sa::mean_loss(layer, training));
    }
    //< loop
    const sa::Matrix weights_after = sa::layer_weights(layer, shown.embeddings);
    const sa::Matrix outputs_after = sa::layer_outputs(layer, shown.embeddings);

    sa::Report report(example);
    const int digits = example.precision;
    const auto features = [](std::size_t count) { return sa::feature_labels(count); };
    report.text(fmt::format("Task: each word outputs the value carried by the next word of the cycle "
                            "Mouse → Eats → Cheese → Mouse.\n{} training and {} held-out sentences, seed {}; "
                            "d_model = 5, d_k = {}, d_v = {}; learning rate {}, {} steps.\n\n",
                            training_count, held_out_count, example.seed, key_dim, sa::carried_features,
                            learning_rate, steps));
    report.table("First held-out sentence, embeddings E", shown.embeddings, shown.tokens, embedding_features);
    report.table("Its targets T", shown.targets, shown.tokens, features(sa::carried_features));
    report.text(sa::loss_table(checkpoints, training_loss, held_out_loss, digits + 2));
    report.text(fmt::format("Training loss after {} steps / before: {:.{}f}%\n\n", steps,
                            100.0 * training_loss.back() / training_loss.front(), digits));
    report.table("Weights A before training", weights_before, shown.tokens, shown.tokens);
    report.table("Weights A after training", weights_after, shown.tokens, shown.tokens);
    report.table("Outputs O after training", outputs_after, shown.tokens, features(sa::carried_features));
    report_learned(report, layer, held_out, key_dim);
    report.line_plot("loss.svg", sa::loss_plot(training_loss, 10, checkpoints, held_out_loss));
    draw_attention(report, "weights-before.svg", "Attention weights before training", weights_before, shown.tokens);
    draw_attention(report, "weights-after.svg", "Attention weights after training", weights_after, shown.tokens);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch12-training", "train W_Q, W_K and W_V from a random start until attention finds the "
                                          "right word", sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "steps of gradient descent, 0 to 2000", "200"}};
    const std::string learned = "the program learns W_Q, W_K and W_V from its own sentences";
    info.unused_options = {{"--tokens", learned}, {"--embeddings", learned}, {"--wq", learned},
                           {"--wk", learned}, {"--wv", learned}, {"--causal", "every word may look at every word"}};
    return sa::run_program(info, argc, argv, training_chapter);
}
