// Chapter 14, Predicting the next character: one layer of attention trained as a language model
// on the King James Bible, measured against counted bigrams and trigrams, saved and loaded.
#include <chrono>
#include <cmath>
#include <cstdint>

#include "char_text.hpp"
#include "cli.hpp"
#include "generation_text.hpp"
#include "language_model.hpp"
#include "model_figures.hpp"
#include "plots.hpp"
#include "report.hpp"
#include "svg.hpp"
#include "training.hpp"
#include "training_files.hpp"

namespace {

//> settings
constexpr std::size_t width = 64;              // d, the width of the residual stream
constexpr std::size_t context = 64;            // the characters of a window
constexpr std::size_t batch_windows = 16;      // windows in one training step
constexpr std::size_t held_out_windows = 128;  // windows measured, spread evenly over the held-out text
constexpr double learning_rate = 1e-2;         // Adam's α
//< settings

std::string evaluate_file(const sa::LanguageModel& model, const std::vector<std::size_t>& tokens,
                          const std::string& path, int digits)
{
    //> eval
    // Every character from the second on, predicted from the ones before it in its window.
    const sa::Batch batch{{tokens.begin(), tokens.end() - 1}, {tokens.begin() + 1, tokens.end()}, context};
    const double loss = sa::evaluate(model, batch);
    //< eval
    return fmt::format("Mean cross-entropy of {} under the model: {:.{}f} nats ({:.{}f} bits) per character, "
                       "{} predictions\n", path, loss, digits, loss / std::log(2.0), digits, batch.targets.size());
}

std::string sample_line(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, std::size_t step,
                        std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    const std::vector<std::size_t> prompt{vocabulary.characters.find('\n') != std::string::npos
                                              ? static_cast<std::size_t>(vocabulary.token_of_byte['\n'])
                                              : 0};
    const std::string text = sa::shown_text(sa::decode(vocabulary, sa::sample(model, prompt, 72, generator)));
    return fmt::format("  step {:>4}: {}\n", step, text);  // '/' starts a verse
}

struct Counted {
    std::size_t order = 0;        // n: the n − 1 characters before are the context
    double loss = 0.0;            // on the measured characters that have n − 1 before them
    std::size_t predictions = 0;  // how many those are
};

//> baselines
// Counted n-grams of orders 1 to 5, trained on the training text, on the held-out characters the
// model is measured on (those with n − 1 characters before them).
std::vector<Counted> counted_baselines(const std::vector<std::size_t>& training,
                                       const std::vector<std::size_t>& held_out, std::size_t v)
{
    const std::vector<std::size_t> measured = sa::even_batch_positions(held_out, held_out_windows, context);
    std::vector<Counted> counted;
    for (std::size_t order = 1; order <= 5; ++order) {
        const sa::NgramCounts counts = sa::count_ngrams(training, order, v);
        const std::vector<std::size_t> positions = sa::positions_with_context(measured, order);
        counted.push_back({order, sa::ngram_loss(counts, held_out, positions), positions.size()});
    }
    return counted;
}
//< baselines

struct Run {
    sa::LanguageModel model;
    std::vector<double> training_loss;      // each step's batch, before the step
    std::vector<std::size_t> checkpoints;   // where the held-out loss was measured
    std::vector<double> held_out_loss;
    std::string samples;
    sa::StepMoves largest_move;             // Adam's largest move of one entry, over every step
    std::size_t largest_move_step = 0;      // its step s, from 1
    std::size_t moves_above_alpha = 0;      // entry-steps that moved more than α
    double seconds = 0.0;                   // spent in the training steps, measured, never printed on stdout
};

// Keeps the largest move of one entry over the run, and counts the moves above α.
void record_moves(Run& run, const sa::StepMoves& moves, std::size_t step)
{
    run.moves_above_alpha += moves.above_alpha;
    if (moves.largest > run.largest_move.largest) {
        run.largest_move = moves;
        run.largest_move_step = step;
    }
}

Run train(const sa::ModelShape& shape, const std::vector<std::size_t>& training, const sa::Batch& measured,
          const sa::Vocabulary& vocabulary, std::size_t steps, std::uint64_t seed)
{
    //> training
    sa::SplitMix64 generator(seed);
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = learning_rate});
    Run run;
    for (std::size_t step = 0; step <= steps; ++step) {
        if (step % 100 == 0 || step == steps || step == 10 || step == 30) {
            run.checkpoints.push_back(step);
            run.held_out_loss.push_back(sa::evaluate(trainer.model, measured));
        }
        if (step == 0 || step == 100 || step == steps) {
            run.samples += sample_line(trainer.model, vocabulary, step, seed);
        }
        if (step < steps) {
            const sa::LanguageModel before = trainer.model;
            const auto start = std::chrono::steady_clock::now();
            const sa::Batch batch = sa::random_batch(training, batch_windows, context, generator);
            run.training_loss.push_back(sa::training_step(trainer, batch));
            run.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            record_moves(run, sa::step_moves(before, trainer.model, learning_rate), trainer.steps);
        }
    }
    //< training
    run.model = trainer.model;
    return run;
}

sa::LinePlot curve(const Run& run, double bigram)
{
    // With --steps 0 there is no training loss, only the start's held-out loss.
    sa::LinePlot plot = run.training_loss.empty()
                            ? sa::LinePlot{.series = {{.name = "held-out", .x = {0.0}, .y = run.held_out_loss}}}
                            : sa::loss_plot(run.training_loss, 10, run.checkpoints, run.held_out_loss);
    plot.title = "Loss while learning to predict the next character";
    plot.y_label = "cross-entropy, nats per character";
    plot.log_y = false;
    sa::Series line{.name = "counted bigram (held-out)"};
    line.x = {0.0, static_cast<double>(run.checkpoints.back())};
    line.y = {bigram, bigram};
    plot.series.push_back(line);
    return plot;
}

std::string ngram_name(std::size_t order)
{
    const char* names[] = {"", "unigram", "bigram", "trigram"};
    return order <= 3 ? names[order] : fmt::format("{}-gram", order);
}

std::string losses_text(const Run& run, const std::vector<Counted>& counted, int digits)
{
    std::string text = "   step  held-out loss\n";
    for (std::size_t i = 0; i < run.checkpoints.size(); ++i) {
        text += fmt::format("  {:>5}  {:.{}f}\n", run.checkpoints[i], run.held_out_loss[i], digits);
    }
    const double model = run.held_out_loss.back();
    text += fmt::format("\nSamples, each drawn from a new verse with the seed's generator ('/' starts a verse):\n{}\n",
                        run.samples);
    text += "Held-out loss on the measured characters, nats per character (bits in brackets):\n";
    for (const Counted& c : counted) {
        text += fmt::format("  counted {:<8} {:.{}f} ({:.{}f}), {} predictions\n", ngram_name(c.order), c.loss,
                            digits, c.loss / std::log(2.0), digits, c.predictions);
    }
    text += fmt::format("  one layer        {:.{}f} ({:.{}f}), {} predictions\n"
                        "Bigram minus model: {:.{}f} nats per character. The model's perplexity, e^L: {:.{}f}.\n",
                        model, digits, model / std::log(2.0), digits, held_out_windows * context,
                        counted.at(1).loss - model, digits, std::exp(model), digits);
    return text;
}

// Where Adam's largest move was, e.g. "embedding (52, 17), the row of 'q'".
std::string entry_name(const sa::ModelShape& shape, const sa::Vocabulary& vocabulary, const sa::StepMoves& move)
{
    const std::vector<std::string> names = sa::parameter_names(shape);
    std::string name = fmt::format("{} ({}, {})", names.at(move.parameter), move.row, move.column);
    if (move.parameter == 0) {
        name += fmt::format(", the row of '{}'", sa::character_label(vocabulary.characters.at(move.row)));
    } else if (move.parameter + 1 == names.size()) {
        name += fmt::format(", the column of '{}'", sa::character_label(vocabulary.characters.at(move.column)));
    }
    return name;
}

std::string moves_text(const Run& run, const sa::ModelShape& shape, const sa::Vocabulary& vocabulary,
                       const sa::AdamSettings& adam, int digits)
{
    if (run.training_loss.empty()) {
        return "";
    }
    const std::size_t s = run.largest_move_step;
    return fmt::format("Adam's largest move of one entry in one step: {:.{}f} α, at step s = {} in {};\n  {} of the {} "
                       "entry-steps moved more than α.\n"
                       "Its bound at step {} for an entry whose gradient was 0 at every earlier step: {:.{}f} α,\n  "
                       "growing to α (1 - β1)/√(1 - β2) = {:.{}f} α; for any gradients: {:.{}f} α.\n",
                       run.largest_move.largest, digits, s, entry_name(shape, vocabulary, run.largest_move),
                       run.moves_above_alpha, run.training_loss.size() * sa::parameter_count(shape), s,
                       sa::sparse_move_bound(adam, s), digits,
                       (1.0 - adam.beta1) / std::sqrt(1.0 - adam.beta2), digits, sa::move_bound(adam, s), digits);
}

std::string text_summary(const std::string& name, const sa::Vocabulary& vocabulary, std::size_t training,
                         std::size_t held_out, double bigram_all, int digits)
{
    std::string characters;
    for (const char c : vocabulary.characters) {
        characters += sa::character_label(c);
    }
    const std::size_t v = vocabulary.characters.size();
    return fmt::format("Text: {}.\nTraining text: {} characters. Held-out text: {} characters.\n"
                       "Vocabulary: d_vocab = {} characters: {}\n"
                       "Guessing uniformly costs ln d_vocab = {:.{}f} nats per character.\n"
                       "Counted bigram with add-one smoothing, on every held-out character: {:.{}f}\n"
                       "Measured from here on: {} held-out windows of {} characters, {} predictions.\n\n",
                       name, training, held_out, v, characters, std::log(static_cast<double>(v)), digits, bigram_all,
                       digits, held_out_windows, context, held_out_windows * context);
}

std::string next_character_chapter(const sa::Example& example)
{
    const auto steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 5000));
    const std::size_t heads = sa::rotary_heads_option(example, width);  // rotary slices of an even width
    const sa::Corpus corpus = sa::load_corpus(example.options.at("--text"), BOOK_KJV_TRAINING, BOOK_KJV_HELD_OUT);
    //> text
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    const std::vector<std::size_t> training = sa::encode(vocabulary, corpus.split.training);
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, corpus.split.held_out);
    const std::size_t v = vocabulary.characters.size();
    //< text
    if (training.size() <= context + 1 || held_out.size() <= context + 1) {
        throw sa::UsageError(fmt::format("--text: the training text has {} characters and the held-out text {}; each "
                                         "needs more than {}, a window and the character after it",
                                         training.size(), held_out.size(), context + 1));
    }
    const std::string& load = example.options.at("--load");
    const sa::SavedModel loaded = load.empty() ? sa::SavedModel{} : sa::load_model(load, vocabulary);
    const std::string& eval = example.options.at("--eval");
    const std::vector<std::size_t> eval_text = eval.empty() ? std::vector<std::size_t>{}
                                                            : sa::eval_tokens(vocabulary, eval);
    const std::vector<Counted> counted = counted_baselines(training, held_out, v);
    const double bigram_all = sa::bigram_loss(sa::count_bigrams(training, v), held_out, sa::all_targets(held_out.size()));
    const sa::Batch measured = sa::even_batch(held_out, held_out_windows, context);
    const int digits = example.precision;
    sa::Report report(example);
    report.text(text_summary(corpus.name, vocabulary, training.size(), held_out.size(), bigram_all, digits));
    sa::LanguageModel model = loaded.model;
    if (load.empty()) {
        const sa::ModelShape shape{v, width, heads, 1, context};
        const sa::AdamSettings adam{.learning_rate = learning_rate};
        report.text(fmt::format("Model: one attention layer, d = {}, h = {}, rotary positions, windows of {}; {} "
                                "windows per step; seed {}.\nParameters: {} = {}×{} (W_E) + 4 × {}×{} (W_Q, W_K, W_V, "
                                "W_O) + {}×{} (W_U).\nAdam: α = {}, β1 = {}, β2 = {}, ε = {}.\n", width, heads,
                                context, batch_windows, example.seed, sa::parameter_count(shape), v, width, width,
                                width, width, v, adam.learning_rate, adam.beta1, adam.beta2, adam.epsilon));
        const Run run = train(shape, training, measured, vocabulary, steps, static_cast<std::uint64_t>(example.seed));
        report.text(losses_text(run, counted, digits) + moves_text(run, shape, vocabulary, adam, digits));
        report.line_plot("loss.svg", curve(run, counted.at(1).loss));
        sa::write_training_speed(example.options.at("--speed"), steps, batch_windows, context, run.seconds);
        model = run.model;
    } else {
        report.text(fmt::format("Loaded {}: d = {}, h = {}, {} layer(s), context {}.\nHeld-out loss: {:.{}f} nats per "
                                "character; counted bigram {:.{}f}, trigram {:.{}f}.\n", load, model.shape.width,
                                model.shape.heads, model.shape.layers, model.shape.context,
                                sa::evaluate(model, measured), digits, counted.at(1).loss, digits, counted.at(2).loss,
                                digits));
    }
    sa::draw_verse_heads(report, model, vocabulary, corpus.split.held_out, 0);
    if (!eval.empty()) {
        report.text(evaluate_file(model, eval_text, eval, digits));
    }
    if (!example.options.at("--save").empty()) {
        sa::save_model_file(model, vocabulary.characters, example.options.at("--save"), "ch14-next-character");
    }
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch14-next-character",
                         "train one layer of attention to predict the next character of the King James Bible",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "training steps, 0 to 5000", "600"},
                    {"--heads", "H", "attention heads: 1, 2, 4, 8, 16 or 32 (d = 64)", "4"},
                    {"--text", "FILE", "train on your own plain ASCII text; every tenth line is held out", ""},
                    {"--save", "FILE", "write the trained model to FILE (safetensors, F64)", ""},
                    {"--load", "FILE", "read a saved model instead of training one", ""},
                    {"--eval", "FILE", "print the model's mean cross-entropy on the text in FILE", ""},
                    {"--speed", "FILE", "write the measured training speed (tokens per second) to FILE", ""}};
    info.writes = {"--save", "--speed"};  // checked before the training starts
    const std::string own = "the model reads the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, next_character_chapter);
}
