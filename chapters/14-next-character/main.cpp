// Chapter 14, Predicting the next character: attention trained as a language model on the
// King James Bible.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>

#include "char_text.hpp"
#include "cli.hpp"
#include "cross_entropy.hpp"
#include "language_model.hpp"
#include "report.hpp"
#include "svg.hpp"

namespace {

//> settings
constexpr std::size_t width = 64;            // d, the residual stream
constexpr std::size_t context = 64;          // characters in a training window
constexpr std::size_t batch_windows = 16;    // windows in a training step
constexpr std::size_t held_out_windows = 128;  // windows measured, spread over the held-out text
constexpr double learning_rate = 1e-2;
//< settings

std::string read_file(const std::string& path, const std::string& option)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw sa::UsageError(fmt::format("{}: cannot read the file {}", option, path));
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Corpus {
    std::string name;
    sa::TextSplit split;
};

Corpus load_corpus(const std::string& path)
{
    if (path.empty()) {
        return {"the King James Bible (every tenth chapter held out)",
                {read_file(BOOK_KJV_TRAINING, "the King James text"), read_file(BOOK_KJV_HELD_OUT, "the King James text")}};
    }
    const std::string option = "--text " + path;
    const std::string text = read_file(path, "--text");
    try {
        sa::check_plain_text(text, "--text " + path);
        return {path + " (every tenth line held out)", sa::split_every_tenth_line(text, option)};
    } catch (const std::invalid_argument& error) {
        throw sa::UsageError(error.what());
    }
}

std::string sample_line(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, std::size_t step,
                        std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    const std::vector<std::size_t> prompt = sa::encode(vocabulary, std::string(1, vocabulary.characters.back()));
    std::string text = sa::decode(vocabulary, sa::sample(model, prompt, 80, generator));
    for (char& c : text) {
        c = c == '\n' ? '/' : c;
    }
    return fmt::format("  step {:>4}: {}\n", step, text);
}

std::string next_character_chapter(const sa::Example& example)
{
    const auto steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 5000));
    const auto heads = static_cast<std::size_t>(sa::whole_option(example, "--heads", 1, 32));
    if ((width / heads) * heads != width || (width / heads) % 2 != 0) {
        throw sa::UsageError(fmt::format("--heads: {} heads do not split d = {} into even slices; choose 1, 2, 4, 8, "
                                         "16 or 32", heads, width));
    }
    const Corpus corpus = load_corpus(example.options.at("--text"));
    //> text
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    const std::vector<std::size_t> training = sa::encode(vocabulary, corpus.split.training);
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, corpus.split.held_out);
    const std::size_t v = vocabulary.characters.size();
    //< text
    if (training.size() <= context || held_out.size() <= context) {
        throw sa::UsageError(fmt::format("--text: the training text has {} characters and the held-out text {}; each "
                                         "needs more than {}, a window and the character after it",
                                         training.size(), held_out.size(), context));
    }
    //> baselines
    const sa::Batch measured = sa::even_batch(held_out, held_out_windows, context);
    const std::vector<std::size_t> positions = sa::even_batch_positions(held_out, held_out_windows, context);
    const sa::BigramCounts bigrams = sa::count_bigrams(training, v);
    const double bigram_all = sa::bigram_loss(bigrams, held_out, sa::all_targets(held_out.size()));
    const double bigram = sa::bigram_loss(bigrams, held_out, positions);
    std::vector<std::size_t> trigram_positions;
    for (const std::size_t p : positions) {
        if (p >= 2) {
            trigram_positions.push_back(p);
        }
    }
    const double trigram = sa::trigram_loss(training, held_out, trigram_positions, v);
    //< baselines

    //> training
    sa::SplitMix64 generator(static_cast<std::uint64_t>(example.seed));
    const sa::ModelShape shape{v, width, heads, 1, context};
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = learning_rate});
    std::vector<double> training_loss;  // the loss of each step's batch, before the step
    std::vector<std::size_t> checkpoints;
    std::vector<double> held_out_loss;
    std::string samples;
    for (std::size_t step = 0; step <= steps; ++step) {
        if (step % 100 == 0 || step == steps || step == 10 || step == 50) {
            checkpoints.push_back(step);
            held_out_loss.push_back(sa::evaluate(trainer.model, measured));
        }
        if (step == 0 || step == steps / 2 || step == steps) {
            samples += sample_line(trainer.model, vocabulary, step, static_cast<std::uint64_t>(example.seed));
        }
        if (step < steps) {
            training_loss.push_back(sa::train_step(trainer, sa::random_batch(training, batch_windows, context,
                                                                              generator)));
        }
    }
    //< training
    const double model_loss = held_out_loss.back();

    sa::Report report(example);
    const int digits = example.precision;
    report.text(fmt::format("Text: {}.\nTraining text: {} characters. Held-out text: {} characters.\n"
                            "Vocabulary: V = {} distinct characters.\n\n",
                            corpus.name, training.size(), held_out.size(), v));
    report.text(fmt::format("Guessing uniformly: ln V = {:.{}f} nats per character.\n", std::log(static_cast<double>(v)),
                            digits));
    report.text(fmt::format("Counted bigram, add-one smoothing, whole held-out text: {:.{}f}\n", bigram_all, digits));
    report.text(fmt::format("Measured on {} held-out windows of {} characters ({} predictions):\n", held_out_windows,
                            context, positions.size()));
    report.text(fmt::format("  counted bigram  {:.{}f}\n  counted trigram {:.{}f}\n\n", bigram, digits, trigram, digits));
    report.text(fmt::format("Model: d = {}, h = {}, one layer, context {}; {} windows per step, Adam {}, seed {}.\n",
                            width, heads, context, batch_windows, learning_rate, example.seed));
    std::string table = "   step  held-out loss\n";
    for (std::size_t i = 0; i < checkpoints.size(); ++i) {
        table += fmt::format("  {:>5}  {:.{}f}\n", checkpoints[i], held_out_loss[i], digits);
    }
    report.text(table + "\nSamples:\n" + samples + "\n");
    report.text(fmt::format("After {} steps: held-out {:.{}f} nats ({:.{}f} bits) per character; bigram minus model: "
                            "{:.{}f}\n", steps, model_loss, digits, model_loss / std::log(2.0), digits, bigram - model_loss,
                            digits));
    (void)training_loss;
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
                    {"--heads", "H", "attention heads, dividing d = 64 into even slices", "4"},
                    {"--text", "FILE", "train on your own plain text; every tenth line is held out", ""}};
    const std::string own = "the model reads characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, next_character_chapter);
}
