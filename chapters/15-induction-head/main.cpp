// Chapter 15, Two layers: the induction head. Chapter 14's model with a second layer, trained on
// the King James text with and without repeated random letters in the mix; the circuit that
// copies is found, scored, ablated and compared with one layer.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <fstream>
#include <iterator>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <optional>
#include <thread>
#include <utility>

#include "char_text.hpp"
#include "circuits.hpp"
#include "copying.hpp"
#include "cli.hpp"
#include "dense.hpp"
#include "language_model.hpp"
#include "report.hpp"
#include "safetensors.hpp"
#include "svg.hpp"
#include "training_files.hpp"

namespace {

//> settings
constexpr std::size_t width = 64;              // d, the width of the residual stream
constexpr std::size_t context = 64;            // the characters of a window: 32 letters twice
constexpr std::size_t batch_windows = 16;      // windows in one training step
constexpr sa::LetterMix letter_mix{.every = 4, .shortest = 8, .longest = 32};  // a quarter of the windows:
                                               // letters cycled with a period from 8 to 32 (see the prose)
constexpr std::size_t test_windows = 16;       // repeated-letter sequences the circuit is scored on
constexpr std::size_t held_out_windows = 128;  // windows measured, spread evenly over the held-out text
constexpr std::size_t checkpoint_every = 10;   // steps between two scorings while training
constexpr std::size_t printed_every = 250;     // steps between two printed rows of the phase change
constexpr double learning_rate = 1e-2;         // Adam's α
constexpr double score_threshold = 0.4;        // the induction score the chapter looks for
constexpr std::size_t shorter_period = 24;     // the check that the head matches letters, not places
//< settings

constexpr std::size_t copy_heads = 2;          // the copying model: two heads of 32 features a layer
constexpr sa::LetterMix text_mix{.every = 2, .shortest = 8, .longest = 32,  // every other window: a span
                                 .repeated = sa::Repeated::text};           // of the text, repeated
constexpr double copy_learning_rate = 3e-3;    // Adam's α once the letters have grown the circuit
constexpr std::size_t span_windows = 256;      // held-out windows, each with a span copied later in it
constexpr std::size_t span_shortest = 8;       // the spans' lengths
constexpr std::size_t span_longest = 24;
constexpr std::size_t span_skip = 3;           // a copy is measured from its fourth character on
constexpr std::size_t prefix_windows = 3000;   // the prefix table's held-out windows
constexpr std::size_t prefix_first = 8;        // and its first position in each
constexpr std::size_t ngram_order = 5;         // the counted model the copy is compared with
constexpr std::size_t rule_shortest[] = {1, 2, 3, 4, 6, 8};        // the copying rule's settings tried
constexpr double rule_weights[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};  // on the
                                                                                       // validation windows
constexpr double mix_budget = 0.1;             // what the letters mix may cost on held-out text, nats per character

// A saved model of this text, long enough for the test sequences.
sa::LanguageModel load_scored_model(const std::string& path, const sa::Vocabulary& vocabulary)
{
    sa::SavedModel saved = sa::load_model(path, vocabulary);
    if (saved.model.shape.context < context) {
        throw sa::UsageError(fmt::format("--load {}: the model was trained on windows of {}; the test sequences need "
                                         "{}", path, saved.model.shape.context, context));
    }
    return std::move(saved.model);
}

struct Data {
    std::vector<std::size_t> training;
    std::vector<std::size_t> letters;
    sa::Batch held_out;  // the measured held-out windows
    sa::Batch test;      // the repeated-letter sequences
    sa::Batch shorter;   // the same with 24 letters: a head that only counts back 31 places fails on them
    std::size_t vocabulary_size = 0;
    std::vector<std::size_t> held_out_tokens;
    sa::CopiedSpans spans;       // held-out windows with a span copied later in each: the test, scored once
    sa::CopiedSpans validation;  // the same from other held-out windows: every choice and every printout
                                 // while training
};

double best(const std::vector<double>& scores)
{
    double top = scores.front();
    for (const double s : scores) {
        top = std::fmax(top, s);
    }
    return top;
}

std::size_t best_head(const std::vector<double>& scores)
{
    std::size_t top = 0;
    for (std::size_t h = 1; h < scores.size(); ++h) {
        top = scores[h] > scores[top] ? h : top;
    }
    return top;
}

struct Run {
    sa::LanguageModel model;
    sa::Trainer trainer;                   // the model with Adam's moments, to train on from
    std::vector<double> training_loss;     // each step's batch, before the step
    std::vector<std::size_t> checkpoints;  // where the circuit was scored
    std::vector<double> induction;         // the best layer-1 (last layer) induction score there
    std::vector<double> second_copy;       // the second-copy loss there
    std::size_t first_pass = 0;            // the first checkpoint whose score passes the threshold, or steps + 1
};

//> training
Run train(const sa::ModelShape& shape, const Data& data, const sa::LetterMix& mix, std::size_t steps,
          std::uint64_t seed, bool scored)
{
    sa::SplitMix64 generator(seed);
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = learning_rate});
    Run run;
    run.first_pass = steps + 1;
    for (std::size_t step = 0; step <= steps; ++step) {
        if (scored && (step % checkpoint_every == 0 || step == steps)) {
            const sa::CopyScores scores = sa::copy_scores(trainer.model, data.test, nullptr);
            run.checkpoints.push_back(step);
            run.induction.push_back(best(scores.induction.back()));
            run.second_copy.push_back(scores.second_copy_loss);
            if (run.induction.back() >= score_threshold && run.first_pass > steps) {
                run.first_pass = step;
            }
        }
        if (step < steps) {
            const sa::Batch batch = sa::mixed_batch(data.training, data.letters, batch_windows, context, mix,
                                                    generator);
            run.training_loss.push_back(sa::training_step(trainer, batch));
        }
    }
    run.model = trainer.model;
    run.trainer = std::move(trainer);
    return run;
}
//< training

// The model's mean loss on the copied held-out spans: at their first occurrence and at the copy.
sa::SpanLosses copy_losses(const sa::LanguageModel& model, const sa::CopiedSpans& spans)
{
    const sa::ForwardTrace trace = sa::forward(model, spans.batch.inputs, spans.batch.window);
    return sa::span_losses(sa::row_losses(trace.logits, spans.batch.targets), spans, span_skip);
}

//> copying-training
// The second phase: a trained model goes on learning, with Adam's moments and a smaller step, from
// windows half of which repeat a span of the text. Its copy loss on the validation spans is measured
// every 250 steps; the test spans are not read while training.
Run train_on(const sa::Trainer& start, const Data& data, std::size_t steps, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    sa::Trainer trainer = start;
    trainer.settings.learning_rate = copy_learning_rate;
    Run run;
    for (std::size_t step = 0; step <= steps; ++step) {
        if (step % printed_every == 0 || step == steps) {
            run.checkpoints.push_back(step);
            run.second_copy.push_back(copy_losses(trainer.model, data.validation).second);
        }
        if (step < steps) {
            const sa::Batch batch = sa::mixed_batch(data.training, data.letters, batch_windows, context, text_mix,
                                                    generator);
            run.training_loss.push_back(sa::training_step(trainer, batch));
        }
    }
    run.model = trainer.model;
    run.trainer = std::move(trainer);
    return run;
}
//< copying-training

// The trainings share nothing (each has its own generator and model), so they run side by side on
// the cores and give the same bits as one after the other; a page has one thread and runs them in turn.
void side_by_side(const std::vector<std::function<void()>>& jobs)
{
#ifdef __EMSCRIPTEN__
    for (const auto& job : jobs) {
        job();
    }
#else
    std::vector<std::exception_ptr> failures(jobs.size());
    std::vector<std::thread> threads;
    for (std::size_t j = 1; j < jobs.size(); ++j) {
        threads.emplace_back([&, j] {
            try {
                jobs[j]();
            } catch (...) {
                failures[j] = std::current_exception();
            }
        });
    }
    try {
        jobs.front()();
    } catch (...) {
        failures.front() = std::current_exception();
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    for (const std::exception_ptr& failure : failures) {
        if (failure) {
            std::rethrow_exception(failure);
        }
    }
#endif
}

struct Runs {
    Run mixed;    // the chapter's model: the letters mix
    Run plain;    // the same model on text alone
    Run copying;  // two heads of 32: the letters mix, then repeated text
    Run control;  // the chapter's model, then the same second phase
    Run one_layer;  // the fair control: one layer, the letters mix, the same steps and seed
};

// Every training of the chapter: four chains of runs on the cores.
Runs train_all(const sa::ModelShape& shape, const Data& data, std::size_t steps, std::size_t copy_steps,
               std::uint64_t seed)
{
    sa::ModelShape two_heads = shape;
    two_heads.heads = copy_heads;
    Runs runs;
    side_by_side({[&] {
                      runs.mixed = train(shape, data, letter_mix, steps, seed, true);
                      runs.control = train_on(runs.mixed.trainer, data, copy_steps, seed + 3);
                  },
                  [&] {
                      runs.plain = train(shape, data, {}, steps, seed, false);  // only its end is measured
                      sa::ModelShape one = shape;
                      one.layers = 1;
                      runs.one_layer = train(one, data, letter_mix, steps, seed, false);
                  },
                  [&] {
                      const Run letters = train(two_heads, data, letter_mix, steps, seed, false);
                      runs.copying = train_on(letters.trainer, data, copy_steps, seed + 3);  // the same windows
                  }});
    return runs;
}

std::string head_row(const std::vector<double>& scores, int digits)
{
    std::string row;
    for (const double s : scores) {
        row += fmt::format("  {:>6.{}f}", s, digits);
    }
    return row + "\n";
}

std::string head_header(std::size_t heads)
{
    std::string row;
    for (std::size_t h = 0; h < heads; ++h) {
        row += fmt::format("  head {}", h);
    }
    return row + "\n";
}

std::string phase_text(const Run& run, std::size_t steps, int digits)
{
    std::string text = "   step  training loss  best induction score  second-copy loss\n";
    for (std::size_t i = 0; i < run.checkpoints.size(); ++i) {
        const std::size_t step = run.checkpoints[i];
        if (step % printed_every != 0 && step != steps && step != run.first_pass) {
            continue;
        }
        // The batch of the step that starts here; after the last step, the last batch's (none without a step).
        const std::string loss = run.training_loss.empty() ? "-"
                                 : fmt::format("{:.{}f}", step < steps ? run.training_loss[step]
                                                                        : run.training_loss.back(), digits);
        text += fmt::format("  {:>5}  {:>13}  {:>20.{}f}  {:>16.{}f}\n", step, loss, run.induction[i], digits,
                            run.second_copy[i], digits);
    }
    if (run.first_pass <= steps) {
        text += fmt::format("The best induction score first passes {} at step {} (scored every {} steps).\n",
                            score_threshold, run.first_pass, checkpoint_every);
    } else {
        text += fmt::format("The best induction score never passes {} in {} steps.\n", score_threshold, steps);
    }
    return text;
}

std::string shorter_text(const sa::LanguageModel& model, const Data& data, int digits)
{
    const sa::CopyScores shorter = sa::copy_scores(model, data.shorter, nullptr);
    return fmt::format(" on {} letters repeated once: best induction score {:.{}f};\n  first copy {:.{}f} nats, "
                       "second copy {:.{}f} nats.\n", shorter_period, best(shorter.induction.back()), digits,
                       shorter.first_copy_loss, digits, shorter.second_copy_loss, digits);
}

// The best a model can do on the first copy without copying: letter k + 1 (k = 1 … 31) is one of the
// letters − k letters not yet in the window, each as likely, so the mean loss is the mean of ln(letters − k).
double first_copy_floor(std::size_t letters)
{
    double total = 0.0;
    for (std::size_t k = 1; k < context / 2; ++k) {
        total += std::log(static_cast<double>(letters - k));
    }
    return total / static_cast<double>(context / 2 - 1);
}

std::string circuit_text(const sa::CopyScores& scores, std::size_t heads, std::size_t letters, std::size_t vocabulary,
                         int digits)
{
    std::string text = "Induction score on the test sequences (period 32):\n         " + head_header(heads);
    for (std::size_t l = 0; l < scores.induction.size(); ++l) {
        text += fmt::format("layer {}", l) + head_row(scores.induction[l], digits);
    }
    text += fmt::format("Loss on the first copy (letters 2 to 32, each new): {:.{}f} nats; at best {:.{}f} without "
                        "copying, uniform ln {} = {:.{}f}.\n"
                        "Loss on the second copy (each letter a repeat):      {:.{}f} nats.\n",
                        scores.first_copy_loss, digits, first_copy_floor(letters), digits, vocabulary,
                        std::log(static_cast<double>(vocabulary)), digits, scores.second_copy_loss, digits);
    return text;
}

std::string ablation_text(const sa::LanguageModel& model, const Data& data, const sa::CopyScores& whole,
                          std::size_t& needed, int digits)
{
    std::string text = fmt::format("Ablation: each layer-0 head's output zeroed in turn (zero), or replaced at every "
                                   "position by its mean\nover the {} positions of the held-out windows (text) or the {} "
                                   "of the test sequences (letters).\n"
                                   "             best induction score         second-copy loss\n"
                                   "  removed      zero    text  letters      zero    text  letters\n"
                                   "  none       {:>6.{}f}                     {:>6.{}f}\n", data.held_out.inputs.size(),
                                   data.test.inputs.size(), best(whole.induction.back()), digits,
                                   whole.second_copy_loss, digits);
    double lowest = 2.0;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const sa::HeadAblation ablation{0, h};
        const sa::CopyScores scores = sa::copy_scores(model, data.test, &ablation);
        const sa::HeadAblation text_mean{0, h, sa::mean_head_output(model, data.held_out, 0, h)};
        const sa::CopyScores on_text = sa::copy_scores(model, data.test, &text_mean);
        const sa::HeadAblation letters_mean{0, h, sa::mean_head_output(model, data.test, 0, h)};
        const sa::CopyScores on_letters = sa::copy_scores(model, data.test, &letters_mean);
        const double score = best(scores.induction.back());
        text += fmt::format("  head {}     {:>6.{}f}  {:>6.{}f}   {:>6.{}f}    {:>6.{}f}  {:>6.{}f}   {:>6.{}f}\n", h, score,
                            digits, best(on_text.induction.back()), digits, best(on_letters.induction.back()), digits,
                            scores.second_copy_loss, digits, on_text.second_copy_loss, digits,
                            on_letters.second_copy_loss, digits);
        if (score < lowest) {
            lowest = score;
            needed = h;
        }
    }
    return text;
}

// The needed head removed from one input of layer 1 alone: which path the circuit runs through.
std::string letters_path_text(const sa::LanguageModel& model, const Data& data, std::size_t needed, int digits)
{
    std::string text = fmt::format("Path ablation: layer-0 head {} removed from one input of layer 1 alone.\n"
                                   "  removed from   best induction score  second-copy loss\n", needed);
    const std::pair<sa::Path, const char*> paths[] = {
        {sa::Path::key, "keys"}, {sa::Path::query, "queries"}, {sa::Path::value, "values"}};
    for (const auto& [path, name] : paths) {
        const sa::CopyScores cut = sa::path_copy_scores(model, data.test, {0, needed}, path);
        text += fmt::format("  {:<12} {:>22.{}f}  {:>16.{}f}\n", name, best(cut.induction.back()), digits,
                            cut.second_copy_loss, digits);
    }
    return text;
}

std::vector<std::string> letter_labels(const sa::Vocabulary& vocabulary, const std::vector<std::size_t>& tokens)
{
    std::vector<std::string> labels;
    for (const std::size_t t : tokens) {
        labels.push_back(sa::character_label(vocabulary.characters[t]));
    }
    return labels;
}

void draw_heads(const sa::Report& report, const sa::LanguageModel& model, const sa::Vocabulary& vocabulary,
                const Data& data, std::size_t induction_head, std::size_t needed)
{
    const std::vector<std::size_t> tokens(data.test.inputs.begin(),
                                          data.test.inputs.begin() + static_cast<std::ptrdiff_t>(context));
    const std::vector<std::string> labels = letter_labels(vocabulary, tokens);
    const std::size_t last = model.layers.size() - 1;
    report.heatmap("induction-stripe.svg",
                   {.title = fmt::format("Layer {} head {} on 32 random letters repeated once", last,
                                         induction_head),
                    .values = sa::head_attention(model, last, tokens)[induction_head], .row_labels = labels,
                    .col_labels = labels, .precision = 1, .scale_label = "weight"});
    report.heatmap("previous-token-head.svg",
                   {.title = fmt::format("Layer 0 head {}, the head the circuit needs, on the same letters",
                                         needed),
                    .values = sa::head_attention(model, 0, tokens)[needed], .row_labels = labels,
                    .col_labels = labels, .precision = 1, .scale_label = "weight"});
    const std::vector<std::size_t> text(data.held_out.inputs.begin(),
                                        data.held_out.inputs.begin() + static_cast<std::ptrdiff_t>(context));
    const std::vector<std::string> text_labels = letter_labels(vocabulary, text);
    report.heatmap("previous-token-head-text.svg",
                   {.title = fmt::format("Layer 0 head {} on the first held-out window of text", needed),
                    .values = sa::head_attention(model, 0, text)[needed], .row_labels = text_labels,
                    .col_labels = text_labels, .precision = 1, .scale_label = "weight"});
}

sa::LinePlot phase_plot(const Run& run)
{
    sa::LinePlot plot{.title = "The phase change: the induction head forms", .x_label = "training step",
                      .y_label = "nats per character, or score (0 to 1)"};
    sa::Series training{.name = "training loss (mean of 10 steps)"};
    for (std::size_t s = 0; s + 10 <= run.training_loss.size(); s += 10) {
        double total = 0.0;
        for (std::size_t k = s; k < s + 10; ++k) {
            total += run.training_loss[k];
        }
        training.x.push_back(static_cast<double>(s + 10));
        training.y.push_back(total / 10.0);
    }
    sa::Series second{.name = "loss on the second copy"};
    sa::Series score{.name = "best induction score"};
    for (std::size_t i = 0; i < run.checkpoints.size(); ++i) {
        second.x.push_back(static_cast<double>(run.checkpoints[i]));
        second.y.push_back(run.second_copy[i]);
        score.x.push_back(static_cast<double>(run.checkpoints[i]));
        score.y.push_back(run.induction[i]);
    }
    plot.series = {training, second, score};
    return plot;
}

// Writes one model; throws a one-line error if the file cannot be written.
void save_model(const sa::LanguageModel& model, const sa::Vocabulary& vocabulary, const std::string& path)
{
    const std::string bytes = sa::save_safetensors(model, vocabulary.characters);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw sa::UsageError(fmt::format("--save: cannot write the file {}", path));
    }
}

struct Options {
    std::size_t steps = 0;
    std::size_t copy_steps = 0;
    std::size_t heads = 0;
    std::size_t layers = 0;
};

Options read_options(const sa::Example& example)
{
    Options options;
    options.steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 5000));
    options.copy_steps = static_cast<std::size_t>(sa::whole_option(example, "--copy-steps", 0, 5000));
    options.heads = static_cast<std::size_t>(sa::whole_option(example, "--heads", 1, 32));
    options.layers = static_cast<std::size_t>(sa::whole_option(example, "--layers", 1, 4));
    if (width % options.heads != 0 || (width / options.heads) % 2 != 0) {
        throw sa::UsageError(fmt::format("--heads: {} heads do not cut d = {} into slices of an even width; choose "
                                         "1, 2, 4, 8, 16 or 32", options.heads, width));
    }
    return options;
}

Data read_data(const sa::Corpus& corpus, const sa::Vocabulary& vocabulary, std::uint64_t seed)
{
    Data data;
    data.training = sa::encode(vocabulary, corpus.split.training);
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, corpus.split.held_out);
    data.letters = sa::letter_tokens(vocabulary);
    if (data.training.size() <= context + 1 || held_out.size() <= context + 1) {
        throw sa::UsageError(fmt::format("--text: the training text has {} characters and the held-out text {}; each "
                                         "needs more than {}, a window and the character after it",
                                         data.training.size(), held_out.size(), context + 1));
    }
    if (data.letters.size() < context / 2) {
        throw sa::UsageError(fmt::format("--text: the training text has {} distinct letters (A-Z, a-z); the test "
                                         "sequences need {}: each is {} distinct letters in a random order, twice",
                                         data.letters.size(), context / 2, context / 2));
    }
    data.held_out = sa::even_batch(held_out, held_out_windows, context);
    sa::SplitMix64 test_generator(seed + 1);  // the test sequences: not the training generator's draws
    data.test = sa::repeated_batch(data.letters, test_windows, context / 2, test_generator);
    data.shorter = sa::repeated_batch(data.letters, test_windows, shorter_period, test_generator);
    data.held_out_tokens = held_out;
    data.vocabulary_size = vocabulary.characters.size();
    sa::SplitMix64 span_generator(seed + 2);  // the copied spans: neither training's nor the letters' draws
    data.spans = sa::copied_spans(held_out, span_windows, context, span_shortest, span_longest, span_generator);
    sa::SplitMix64 validation_generator(seed + 4);  // after the copying training's seed + 3
    data.validation = sa::copied_spans(held_out, span_windows, context, span_shortest, span_longest,
                                       validation_generator, &data.spans);
    return data;
}

struct Comparison {
    double held_out_mixed = 0.0;  // the two-layer model trained with the mix
    double held_out_plain = 0.0;  // the same model trained on text alone
    sa::CopyScores plain;         // what the model without the mix does on repeated letters
    bool has_control = false;     // chapter 14's model was found, trained on this text
    sa::CopyScores control;       // chapter 14's one-layer model, trained on text alone
    sa::CopyScores one_layer;     // the fair control: one layer trained as this model, with the mix
};

// Chapter 14's saved model, the one-layer control: the build saves it after chapter 14's run. Only
// on the King James text, which it was trained on; none when it is not there.
std::optional<sa::LanguageModel> chapter_14_model(const std::string& text, const sa::Vocabulary& vocabulary)
{
    std::ifstream in(sa::book_file(BOOK_CH14_MODEL), std::ios::binary);
    if (!text.empty() || !in) {
        return std::nullopt;
    }
    try {
        sa::SavedModel saved = sa::load_safetensors({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
        if (saved.vocabulary == vocabulary.characters && saved.model.shape.context >= context) {
            return std::move(saved.model);
        }
    } catch (const std::invalid_argument&) {  // a broken file: no control, said so in the output
    }
    return std::nullopt;
}

std::string comparison_text(const Comparison& c, int digits)
{
    std::string text = fmt::format("Without the mix (two layers, text alone, the same steps and seed):\n"
                                   "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                                   best(c.plain.induction.back()), digits, c.plain.first_copy_loss, digits,
                                   c.plain.second_copy_loss, digits);
    if (c.has_control) {
        text += fmt::format("The one-layer control, chapter 14's saved model (text alone):\n"
                            "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                            best(c.control.induction.back()), digits, c.control.first_copy_loss, digits,
                            c.control.second_copy_loss, digits);
    } else {
        text += "The one-layer control, chapter 14's saved model: not here (it is made by chapter 14's run, on the "
                "King James text).\n";
    }
    text += fmt::format("The one-layer control trained as this model (the letters mix, the same steps and seed):\n"
                        "  best induction score {:.{}f}; first copy {:.{}f} nats, second copy {:.{}f} nats.\n",
                        best(c.one_layer.induction.back()), digits, c.one_layer.first_copy_loss, digits,
                        c.one_layer.second_copy_loss, digits);
    return text + fmt::format("Held-out text, nats per character: with the mix {:.{}f}, without {:.{}f}; "
                              "difference {:.{}f}.\n", c.held_out_mixed, digits, c.held_out_plain, digits,
                              c.held_out_mixed - c.held_out_plain, digits);
}

// The mean of a loss per row.
double mean_loss(const sa::Matrix& logits, const std::vector<std::size_t>& targets)
{
    double total = 0.0;
    for (const double loss : sa::row_losses(logits, targets)) {
        total += loss;
    }
    return total / static_cast<double>(targets.size());
}

// A one-layer model's logits on the held-out windows cut into Elhage et al.'s paths, checked against the forward pass.
std::string paths_text(const sa::LanguageModel& one, const Data& data, int digits)
{
    const sa::PathLogits paths = sa::path_logits(one, data.held_out.inputs, context);
    const sa::Matrix logits = sa::forward(one, data.held_out.inputs, context).logits;
    sa::Matrix sum = paths.direct;
    for (const sa::Matrix& head : paths.heads) {
        sa::add_in_place(sum, head);
    }
    double largest = 0.0;
    for (std::size_t k = 0; k < sum.rows() * sum.cols(); ++k) {
        largest = std::fmax(largest, std::fabs(sum.data()[k] - logits.data()[k]));
    }
    return fmt::format("Chapter 14's one layer, its logits on the held-out windows cut into paths,\n"
                       "  Z = X W_U + sum over its {} heads κ of A^κ X W_V^κ W_O^κ W_U:\n"
                       "  the largest difference from the forward pass's logits {:.1e};\n"
                       "  held-out loss, nats per character: the direct path alone (the bigram table W_E W_U) {:.{}f},\n"
                       "  all paths {:.{}f}.\n", paths.heads.size(), largest, mean_loss(paths.direct, data.held_out.targets),
                       digits, mean_loss(sum, data.held_out.targets), digits);
}

// The model with the mix against the one without and the one-layer controls.
std::string compare(const sa::LanguageModel& model, const Runs& runs, const Data& data,
                    const std::optional<sa::LanguageModel>& control, Comparison& c, int digits)
{
    c = {sa::evaluate(model, data.held_out), sa::evaluate(runs.plain.model, data.held_out),
         sa::copy_scores(runs.plain.model, data.test, nullptr), control.has_value(),
         control ? sa::copy_scores(*control, data.test, nullptr) : sa::CopyScores{},
         sa::copy_scores(runs.one_layer.model, data.test, nullptr)};
    return comparison_text(c, digits) + (control ? "The one-layer control" + shorter_text(*control, data, digits) : "") +
           (control ? "\n" + paths_text(*control, data, digits) : "") + "\n";
}

struct Goals {
    bool induction = false;  // a last-layer head scores >= 0.4, the second copy costs <= 1 nat
    bool shorter = false;    // on 24 letters as well: a last-layer head scores >= 0.4, the second copy <= 1 nat
    bool ablation = false;   // the needed head: score cut >= 75 %, second copy +1 nat; each other head
                             // changes both by less than a third of that
    bool previous = false;   // a layer-0 head scores >= 0.35 on held-out text
    bool control = false;    // one layer with the mix: best score < 0.1, second copy within 10 % of the first
    bool held_out = false;   // the mix costs at most 0.1 nats per character on held-out text
};

Goals check_goals(const sa::LanguageModel& model, const Data& data, const sa::CopyScores& whole,
                  const std::vector<double>& text_previous, std::size_t needed, const Comparison* c)
{
    Goals goals;
    goals.induction = best(whole.induction.back()) >= 0.4 && whole.second_copy_loss <= 1.0;
    const sa::CopyScores shorter = sa::copy_scores(model, data.shorter, nullptr);
    goals.shorter = best(shorter.induction.back()) >= 0.4 && shorter.second_copy_loss <= 1.0;
    const double top = best(whole.induction.back());
    goals.ablation = true;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const sa::HeadAblation ablation{0, h};
        const sa::CopyScores cut = sa::copy_scores(model, data.test, &ablation);
        const double drop = (top - best(cut.induction.back())) / top;
        const double rise = cut.second_copy_loss - whole.second_copy_loss;
        goals.ablation = goals.ablation && (h == needed ? drop >= 0.75 && rise >= 1.0 : drop < 0.25 && rise < 1.0 / 3.0);
    }
    goals.previous = best(text_previous) >= 0.35;
    if (c != nullptr) {  // trained here, not loaded: the model without the mix exists
        goals.control = best(c->one_layer.induction.back()) < 0.1 &&
                        std::fabs(c->one_layer.second_copy_loss - c->one_layer.first_copy_loss) <=
                            0.1 * c->one_layer.first_copy_loss;
        goals.held_out = c->held_out_mixed - c->held_out_plain <= mix_budget;
    }
    return goals;
}

std::string goals_text(const Goals& g, const Comparison* c)
{
    const auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    std::string text = fmt::format("Goals:\n  layer 1: a head scores at least 0.4, second copy at most 1 nat: {}\n"
                                   "  on {} letters repeated once as well: a head scores at least 0.4, second copy "
                                   "at most 1 nat: {}\n"
                                   "  ablation: one layer-0 head cuts the score by 75 % and adds 1 nat,\n"
                                   "    each other head less than a third of that: {}\n"
                                   "  layer 0: a head's previous-token score on held-out text at least 0.35: {}\n",
                                   verdict(g.induction), shorter_period, verdict(g.shorter), verdict(g.ablation),
                                   verdict(g.previous));
    if (c != nullptr) {
        text += fmt::format("  one-layer control with the mix: best score below 0.1, second copy within 10 % of the "
                            "first: {}\n  held-out text: the mix costs at most 0.1 nats per character: {}\n",
                            verdict(g.control), verdict(g.held_out));
    }
    return text;
}

void save_models(const std::string& path, const sa::Vocabulary& vocabulary, const sa::LanguageModel& model,
                 const Runs* runs)
{
    if (path.empty()) {
        return;
    }
    save_model(model, vocabulary, path);
    std::string saved = path;
    if (runs != nullptr) {
        save_model(runs->plain.model, vocabulary, path + ".without-mix");
        save_model(runs->copying.model, vocabulary, path + ".copying");
        save_model(runs->control.model, vocabulary, path + ".copying-control");
        save_model(runs->one_layer.model, vocabulary, path + ".one-layer");
        saved += fmt::format(", {0}.without-mix, {0}.copying, {0}.copying-control and {0}.one-layer", path);
    }
    // The note goes to stderr, so that the output with --save is the output without it.
    std::fprintf(stderr, "ch15-induction-head: note: saved %s\n", saved.c_str());
}

// The text, the test sequences and the held-out windows the chapter measures on.
std::string corpus_text(const sa::Corpus& corpus, const Data& data, const sa::Vocabulary& vocabulary, std::uint64_t seed)
{
    return fmt::format("Text: {}.\nTraining text: {} characters; d_vocab = {}; {} letters.\n"
                       "Test sequences: {} of 32 distinct random letters repeated once (seed {}).\n"
                       "Measured on held-out text: {} windows of {} characters.\n\n", corpus.name,
                       data.training.size(), vocabulary.characters.size(), data.letters.size(), test_windows,
                       seed + 1, held_out_windows, context);
}

// The last layer's OV circuits on the letters: how much each head copies the letter it attends to.
std::string ov_text(const sa::LanguageModel& model, const Data& data, int digits)
{
    const std::size_t last = model.layers.size() - 1;
    std::vector<double> first, ratio;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const sa::OvCopying copying = sa::ov_copying(sa::ov_circuit(model, last, h), data.letters);
        first.push_back(copying.ranked_first);
        ratio.push_back(copying.eigenvalue_ratio);
    }
    return fmt::format("Layer {}'s OV circuits W_E W_V^κ W_O^κ W_U on the {} letters: the share of letters whose own "
                       "logit\nis the largest of their row, and the eigenvalues' sum over the sum of their moduli:\n"
                       "                ", last, data.letters.size()) +
           head_header(model.shape.heads) + "ranked first    " + head_row(first, digits) + "eigenvalue ratio" +
           head_row(ratio, digits);
}

// Layer 0's needed head on held-out text: its weight on the previous character, by the current character's kind.
std::string previous_at_text(const sa::LanguageModel& model, const Data& data, const sa::Vocabulary& vocabulary,
                             std::size_t needed, int digits)
{
    const sa::ForwardTrace trace = sa::forward(model, data.held_out.inputs, context);
    double weight[3] = {0.0, 0.0, 0.0}, rows[3] = {0.0, 0.0, 0.0};  // at a space, a full stop, a letter
    for (std::size_t w = 0; w * context < data.held_out.inputs.size(); ++w) {
        const sa::Matrix a = sa::trace_attention(trace.layers[0], model.shape.heads, context, w)[needed];
        for (std::size_t i = 1; i < context; ++i) {
            const char c = vocabulary.characters[data.held_out.inputs[w * context + i]];
            const int kind = c == ' ' ? 0 : c == '.' ? 1 : std::isalpha(static_cast<unsigned char>(c)) ? 2 : -1;
            if (kind >= 0) {
                weight[kind] += a(i, i - 1);
                rows[kind] += 1.0;
            }
        }
    }
    std::string window;
    for (std::size_t i = 0; i < context; ++i) {
        window += vocabulary.characters[data.held_out.inputs[i]];
    }
    return fmt::format("Layer-0 head {} on held-out text, mean weight on the previous character: at a space {:.{}f},\n"
                       "  at a full stop {:.{}f}, at a letter {:.{}f}.\n  The heatmap's window: \"{}\"\n", needed,
                       weight[0] / rows[0], digits, weight[1] / rows[1], digits, weight[2] / rows[2], digits, window);
}

// Layer 0's previous-token scores, on held-out text and on the test letters.
std::string previous_token_text(const sa::LanguageModel& model, const std::vector<double>& text_previous,
                                const sa::CopyScores& whole, std::size_t needed, int digits)
{
    return "Previous-token score of layer 0 (mean attention from i to i-1):\n                " +
           head_header(model.shape.heads) + "held-out text  " + head_row(text_previous, digits) + "test letters   " +
           head_row(whole.previous[0], digits) +
           fmt::format("Zeroing layer-0 head {} lowers the score most; the best previous-token head on text is "
                       "head {}.\n",
                       needed, best_head(text_previous));
}

// --sequence TEXT with --load: the saved model on the reader's own characters, repeated once
// (the chapter page's "Try it here" panel). The model's own vocabulary decides what is allowed.
sa::Batch sequence_batch(const sa::SavedModel& saved, const sa::Vocabulary& vocabulary, const std::string& sequence)
{
    sa::check_ascii(sequence, "--sequence");  // a byte of UTF-8 is named by its code, never printed alone
    const std::size_t longest = saved.model.shape.context / 2;
    if (sequence.size() < 2 || sequence.size() > longest) {
        throw sa::UsageError(fmt::format("--sequence: expected 2 to {} characters (twice that fills the model's "
                                         "context of {}), got {}", longest, saved.model.shape.context,
                                         sequence.size()));
    }
    std::string outside;
    std::size_t count = 0;
    for (const char c : sequence) {
        const std::string label = "'" + sa::character_label(c) + "'";
        if (vocabulary.token_of_byte[static_cast<unsigned char>(c)] < 0 && outside.find(label) == std::string::npos) {
            outside += (outside.empty() ? "" : ", ") + label;
            ++count;
        }
    }
    if (count > 0) {
        const bool one = count == 1;
        throw sa::UsageError(fmt::format("--sequence: {} {} {} not in the model's vocabulary of {} characters; use "
                                         "only characters of its training text", one ? "the character" :
                                         "the characters", outside, one ? "is" : "are", vocabulary.characters.size()));
    }
    std::vector<std::size_t> tokens = sa::encode(vocabulary, sequence + sequence);
    tokens.push_back(tokens.front());  // the character after the second copy: the third begins
    return {{tokens.begin(), tokens.end() - 1}, {tokens.begin() + 1, tokens.end()}, 2 * sequence.size()};
}

std::string sequence_chapter(const sa::Example& example)
{
    const std::string& load = example.options.at("--load");
    if (load.empty()) {
        throw sa::UsageError("--sequence: needs --load FILE, the saved model to score on the sequence");
    }
    sa::SavedModel saved;
    try {
        saved = sa::load_safetensors(sa::read_file(load, "--load"));
    } catch (const std::invalid_argument& error) {
        throw sa::UsageError(fmt::format("--load {}: {}", load, error.what()));
    }
    const sa::Vocabulary vocabulary = sa::make_vocabulary(saved.vocabulary);
    const std::string& sequence = example.options.at("--sequence");
    const sa::Batch batch = sequence_batch(saved, vocabulary, sequence);
    const sa::LanguageModel& model = saved.model;
    const sa::CopyScores scores = sa::copy_scores(model, batch, nullptr);
    const int digits = example.precision;
    const std::size_t p = sequence.size();
    std::string text = fmt::format("Loaded {}: {} layers, d = {}, h = {}.\nSequence: {} characters, repeated once: "
                                   "\"{}\"\n\nInduction score (period {}):\n         ", load, model.shape.layers,
                                   model.shape.width, model.shape.heads, p, sequence + sequence, p) +
                       head_header(model.shape.heads);
    for (std::size_t l = 0; l < scores.induction.size(); ++l) {
        text += fmt::format("layer {}", l) + head_row(scores.induction[l], digits);
    }
    // The model's first choice for each character of the second copy, made before it reads that character.
    const sa::Matrix logits = sa::forward(model, batch.inputs, batch.window).logits;
    std::string guessed;
    for (std::size_t i = p - 1; i + 1 < 2 * p; ++i) {
        std::size_t top = 0;
        for (std::size_t t = 1; t < logits.cols(); ++t) {
            top = logits(i, t) > logits(i, top) ? t : top;
        }
        guessed += vocabulary.characters[top];
    }
    text += fmt::format("Loss on the first copy (characters 2 to {}): {:.{}f} nats; on the second copy: {:.{}f} "
                        "nats.\nThe second copy:           \"{}\"\nThe model's first choices: \"{}\"\n", p,
                        scores.first_copy_loss, digits, scores.second_copy_loss, digits, sequence, guessed);
    const std::size_t last = model.layers.size() - 1;
    const std::vector<std::string> labels = letter_labels(vocabulary, batch.inputs);
    sa::Report report(example);
    report.text(text);
    report.heatmap("sequence-stripe.svg",
                   {.title = fmt::format("Layer {} head {} on the sequence repeated once", last,
                                         best_head(scores.induction.back())),
                    .values = sa::head_attention(model, last, batch.inputs)[best_head(scores.induction.back())],
                    .row_labels = labels, .col_labels = labels, .precision = 1, .scale_label = "weight"});
    return report.str();
}

// The prefix table: on held-out windows, what copying after an earlier match of the last k characters gives.
std::string prefix_text(const Data& data, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed + 2);  // after the copied spans' draws
    for (std::size_t w = 0; w < span_windows * 4; ++w) {
        (void)generator.next();
    }
    const sa::Batch windows = sa::random_batch(data.held_out_tokens, prefix_windows, context, generator);
    std::string text = fmt::format("Copying the Bible. Held-out text, {} windows of {}, positions {} to {}: copy what "
                                   "came after an earlier place\nwhose last k characters are the current position's.\n"
                                   "  k  matches per position  positions with a match  right when matched\n",
                                   prefix_windows, context, prefix_first, context - 1);
    for (std::size_t k = 1; k <= 4; ++k) {
        const sa::PrefixMatches m = sa::prefix_matches(windows, prefix_first, k);
        text += fmt::format("  {}  {:>20.2f}  {:>20.1f} %  {:>16.1f} %\n", k, m.matches_per_position,
                            100.0 * m.share_matched, 100.0 * m.share_right);
    }
    return text + "\n";
}

// A model on the copied held-out spans: its losses, and where its chosen last-layer head looks from the copy.
std::string span_text(const sa::LanguageModel& model, const Data& data, std::size_t head, int digits)
{
    const sa::SpanLosses losses = copy_losses(model, data.spans);
    const sa::ForwardTrace trace = sa::forward(model, data.spans.batch.inputs, context);
    const std::size_t last = model.layers.size() - 1;
    const sa::SpanAttention seen = sa::span_attention(trace.layers[last], model.shape.heads, data.spans, head, span_skip);
    return fmt::format("  first occurrence {:.{}f} nats, copy {:.{}f} nats per character;\n  layer {} head {} from the "
                       "copy's rows: {:.{}f} of its weight on the place to copy from,\n  {:.{}f} on the places after "
                       "the character's other earlier occurrences ({:.{}f} of them on average).\n",
                       losses.first, digits, losses.second, digits, last, head, seen.on_source, digits, seen.on_other,
                       digits, seen.other_places, digits);
}

// How many of a head's rotary pairs turn by less than one radian across a window (context − 1 places):
// only those can compare two characters whatever the distance between them.
std::string rotary_text(std::size_t narrow_heads)
{
    std::string text = fmt::format("Rotary pairs turning less than one radian across a window ({} places):\n ",
                                   context - 1);
    const std::vector<std::size_t> widths = narrow_heads == copy_heads ? std::vector<std::size_t>{copy_heads}
                                                                        : std::vector<std::size_t>{narrow_heads, copy_heads};
    for (const std::size_t heads : widths) {
        const std::size_t features = width / heads;
        std::size_t slow = 0;
        for (std::size_t i = 0; i < features / 2; ++i) {
            slow += static_cast<double>(context - 1) * std::pow(10000.0, -2.0 * static_cast<double>(i) /
                                                                           static_cast<double>(features)) < 1.0;
        }
        text += fmt::format(" {} of {} in a head of {} features{}", slow, features / 2, features,
                            heads == widths.back() ? ".\n" : ";");
    }
    return text;
}

std::string copy_phase_text(const Run& run, std::size_t steps, std::size_t letter_steps, int digits)
{
    std::string text = fmt::format("The copying model: {} attention layers, d = {}, h = {} (heads of {} features);\n"
                                   "  {} steps of the letters mix above, then {} steps at Adam α = {} with every "
                                   "other window\n  a span of the training text ({} to {} characters) repeated.\n"
                                   "   step  copy loss on the validation spans\n", run.model.shape.layers, width, copy_heads,
                                   width / copy_heads, letter_steps, steps, copy_learning_rate, text_mix.shortest,
                                   text_mix.longest);
    for (std::size_t i = 0; i < run.checkpoints.size(); ++i) {
        text += fmt::format("  {:>5}  {:>9.{}f}\n", run.checkpoints[i], run.second_copy[i], digits);
    }
    return text;
}

// Each window of a batch as the copying rule reads it: its inputs and the character after them.
std::vector<std::size_t> window_tokens(const sa::Batch& batch, std::size_t w)
{
    const std::size_t n = batch.window;
    std::vector<std::size_t> window(batch.inputs.begin() + static_cast<std::ptrdiff_t>(w * n),
                                    batch.inputs.begin() + static_cast<std::ptrdiff_t>((w + 1) * n));
    window.push_back(batch.targets[(w + 1) * n - 1]);
    return window;
}

// The rows measured in each window: row r predicts the window's token r + 1.
using Rows = std::vector<std::vector<std::size_t>>;

// The rows that predict the copies' characters skip … length − 1.
Rows copy_rows(const sa::CopiedSpans& spans)
{
    Rows rows(spans.first.size());
    for (std::size_t w = 0; w < rows.size(); ++w) {
        for (std::size_t k = span_skip; k < spans.length[w]; ++k) {
            rows[w].push_back(spans.second[w] + k - 1);
        }
    }
    return rows;
}

// Every row whose character has ngram_order − 1 characters before it in its window: rows 3 to 63, the
// positions where the n-gram and the model both read the window alone.
Rows inside_rows(const sa::Batch& batch)
{
    Rows rows(batch.inputs.size() / batch.window);
    for (std::vector<std::size_t>& window : rows) {
        for (std::size_t r = ngram_order - 2; r < batch.window; ++r) {
            window.push_back(r);
        }
    }
    return rows;
}

// The copying rule's mean loss on the rows (λ = 0: the counted n-gram alone).
double rule_loss(const sa::NgramCounts& counts, const sa::Batch& batch, const Rows& rows, const sa::CopyRule& rule)
{
    double total = 0.0, characters = 0.0;
    for (std::size_t w = 0; w < rows.size(); ++w) {
        const std::vector<std::size_t> window = window_tokens(batch, w);
        for (const std::size_t r : rows[w]) {
            total -= std::log(sa::copy_rule_probability(counts, window, r + 1, rule));
            characters += 1.0;
        }
    }
    return total / characters;
}

// A model's mean loss on the rows.
double model_loss(const sa::LanguageModel& model, const sa::Batch& batch, const Rows& rows)
{
    const std::vector<double> losses = sa::row_losses(sa::forward(model, batch.inputs, batch.window).logits,
                                                      batch.targets);
    double total = 0.0, characters = 0.0;
    for (std::size_t w = 0; w < rows.size(); ++w) {
        for (const std::size_t r : rows[w]) {
            total += losses[w * batch.window + r];
            characters += 1.0;
        }
    }
    return total / characters;
}

// The copying rule's shortest match and λ: the lowest loss over the validation windows' characters
// that have four before them in their window (copies, first occurrences and the text around them).
sa::CopyRule choose_rule(const sa::NgramCounts& counts, const sa::CopiedSpans& validation, double& lowest)
{
    const Rows rows = inside_rows(validation.batch);
    sa::CopyRule chosen{};
    lowest = HUGE_VAL;
    for (const std::size_t shortest : rule_shortest) {
        for (const double weight : rule_weights) {
            const double loss = rule_loss(counts, validation.batch, rows, {shortest, weight});
            if (loss < lowest) {
                lowest = loss;
                chosen = {shortest, weight};
            }
        }
    }
    return chosen;
}

// The copying model against counting, on the copies and on plain held-out text.
struct Versus {
    sa::CopyRule rule;             // chosen on the validation windows
    double rule_validation = 0.0;  // its loss there, and the n-gram's alone
    double ngram_validation = 0.0;
    double model_validation = 0.0;    // the copy on the validation spans: the two widths
    double control_validation = 0.0;
    double ngram_copy = 0.0;       // on the test copies
    double rule_copy = 0.0;
    sa::SpanLosses model;
    sa::SpanLosses control;
    double ngram_plain = 0.0;      // held-out text, rows 3 to 63 of each window
    double rule_plain = 0.0;
    double model_inside = 0.0;
    double model_plain = 0.0;      // held-out text, every row
    double without_mix = 0.0;      // the two-layer model trained on text alone, every row
};

Versus versus(const Runs& runs, const Data& data)
{
    const sa::NgramCounts counts = sa::count_ngrams(data.training, ngram_order, data.vocabulary_size);
    Versus v;
    v.rule = choose_rule(counts, data.validation, v.rule_validation);
    v.ngram_validation = rule_loss(counts, data.validation.batch, inside_rows(data.validation.batch), {1, 0.0});
    const Rows copies = copy_rows(data.spans);  // the test spans, scored once from here on
    v.ngram_copy = rule_loss(counts, data.spans.batch, copies, {1, 0.0});
    v.rule_copy = rule_loss(counts, data.spans.batch, copies, v.rule);
    v.model_validation = runs.copying.second_copy.back();  // the last step's copy loss on the validation spans
    v.control_validation = runs.control.second_copy.back();
    v.model = copy_losses(runs.copying.model, data.spans);
    v.control = copy_losses(runs.control.model, data.spans);
    const Rows inside = inside_rows(data.held_out);
    v.ngram_plain = rule_loss(counts, data.held_out, inside, {1, 0.0});
    v.rule_plain = rule_loss(counts, data.held_out, inside, v.rule);
    v.model_inside = model_loss(runs.copying.model, data.held_out, inside);
    v.model_plain = sa::evaluate(runs.copying.model, data.held_out);
    v.without_mix = sa::evaluate(runs.plain.model, data.held_out);
    return v;
}

std::string versus_text(const Versus& v, std::size_t heads, int digits)
{
    const double price = v.model_plain - v.without_mix;
    return fmt::format("The copying rule: copy what followed the longest earlier match of the last characters in the "
                       "window\n  with probability λ, the rest by the counted {0}-gram (chapter 14's counting over the "
                       "training text,\n  add-one smoothing); on the {1} validation windows, every character with {2} "
                       "before it in its window,\n  the lowest loss is {3:.{4}f} nats per character with the shortest "
                       "match {5} and λ = {6} (the {0}-gram alone {7:.{4}f}).\n"
                       "On the validation copies: the copying model (h = {10}) {29:.{4}f}, the chapter's model "
                       "(h = {13}) after the same training {30:.{4}f}.\n"
                       "On the copied held-out spans (the test spans), from the fourth character on, nats per "
                       "character:\n"
                       "                                        first occurrence   copy\n"
                       "  counted {0}-gram                                       -  {8:.{4}f}\n"
                       "  the copying rule                                     -  {9:.{4}f}\n"
                       "  the copying model (h = {10})                       {11:.{4}f}  {12:.{4}f}\n"
                       "  the chapter's model (h = {13}), the same training  {14:.{4}f}  {15:.{4}f}\n"
                       "Plain held-out text (the {16} windows above), every character with {2} before it in its "
                       "window:\n  counted {0}-gram {17:.{4}f}, the copying rule {18:.{4}f}, the copying model "
                       "{19:.{4}f}.\n"
                       "On the copy the model beats the {0}-gram by {20:.{4}f} nats per character, and {28} by "
                       "{21:.{4}f};\n  on plain text the {0}-gram wins by {22:.{4}f}.\n"
                       "Plain held-out text, every character: the copying model {23:.{4}f}, the two-layer model "
                       "trained on text alone {24:.{4}f};\n  the second phase costs {25:.{4}f} nats per character, "
                       "{26} the {27} the chapter allows the letters mix.\n",
                       ngram_order, span_windows, ngram_order - 1, v.rule_validation, digits, v.rule.shortest,
                       v.rule.weight, v.ngram_validation, v.ngram_copy, v.rule_copy, copy_heads, v.model.first,
                       v.model.second, heads, v.control.first, v.control.second, held_out_windows, v.ngram_plain,
                       v.rule_plain, v.model_inside, v.ngram_copy - v.model.second,
                       std::fabs(v.rule_copy - v.model.second), v.model_inside - v.ngram_plain, v.model_plain,
                       v.without_mix, price, price <= mix_budget ? "within" : "above", mix_budget,
                       v.rule_copy > v.model.second ? "the model beats the rule" : "the rule beats the model",
                       v.model_validation, v.control_validation);
}

// Layer 0 on held-out text: the mean weight from i to i − k, for k = 1, 2, 3.
std::string offset_text(const sa::LanguageModel& model, const Data& data, int digits)
{
    const sa::ForwardTrace trace = sa::forward(model, data.held_out.inputs, context);
    const std::size_t windows = data.held_out.inputs.size() / context;
    std::string text = "The circuit. Layer 0 on held-out text, the mean weight from i to i − k:\n          k = 1   k = 2   "
                       "k = 3\n";
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        text += fmt::format("  head {}", h);
        for (std::size_t k = 1; k <= 3; ++k) {
            double score = 0.0;
            for (std::size_t w = 0; w < windows; ++w) {
                score += sa::offset_score(sa::trace_attention(trace.layers[0], model.shape.heads, context, w)[h], k);
            }
            text += fmt::format("  {:.{}f}", score / static_cast<double>(windows), digits);
        }
        text += "\n";
    }
    return text;
}

// Layer 1 from the copy's rows, whole and with each layer-0 head removed from one of its inputs, zeroed or
// replaced by its mean over the validation windows. The copier, the head the table follows, is the one
// with the most weight on the place to copy from in the validation spans.
std::string path_text(const sa::LanguageModel& model, const Data& data, std::size_t& copier, int digits)
{
    const std::size_t heads = model.shape.heads;
    const auto seen = [&](const sa::ForwardTrace& trace, const sa::CopiedSpans& spans, std::size_t head) {
        return sa::span_attention(trace.layers[1], heads, spans, head, span_skip).on_source;
    };
    const auto loss = [&](const sa::ForwardTrace& trace) {
        return sa::span_losses(sa::row_losses(trace.logits, data.spans.batch.targets), data.spans, span_skip).second;
    };
    const sa::ForwardTrace chosen_on = sa::forward(model, data.validation.batch.inputs, context);
    const sa::ForwardTrace whole = sa::forward(model, data.spans.batch.inputs, context);
    std::string text = "Layer 1 from the copy's rows, weight on the place to copy from (validation spans):";
    copier = 0;
    for (std::size_t h = 0; h < heads; ++h) {
        text += fmt::format(" head {} {:.{}f}{}", h, seen(chosen_on, data.validation, h), digits,
                            h + 1 < heads ? "," : ".\n");
        copier = seen(chosen_on, data.validation, h) > seen(chosen_on, data.validation, copier) ? h : copier;
    }
    text += fmt::format("Path ablation on the test spans: one layer-0 head's output removed from one input of layer 1 "
                        "alone,\nzeroed (zero) or replaced at every position by its mean over the {} positions of the "
                        "validation windows (mean);\ncopy loss, and layer 1 head {}'s weight on the place to copy from "
                        "(whole: {:.{}f}, {:.{}f}):\n  removed from          keys            queries         values\n",
                        data.validation.batch.inputs.size(), copier, loss(whole), digits,
                        seen(whole, data.spans, copier), digits);
    for (std::size_t h = 0; h < heads; ++h) {
        for (const bool mean : {false, true}) {
            const sa::HeadAblation removed{0, h, mean ? sa::mean_head_output(model, data.validation.batch, 0, h)
                                                      : std::vector<double>{}};
            text += fmt::format("  head {}  {}", h, mean ? "mean" : "zero");
            for (const sa::Path path : {sa::Path::key, sa::Path::query, sa::Path::value}) {
                const sa::ForwardTrace cut = sa::path_ablated_forward(model, data.spans.batch.inputs, context, removed,
                                                                      path);
                text += fmt::format("  {:.{}f}  {:.{}f}", loss(cut), digits, seen(cut, data.spans, copier), digits);
            }
            text += "\n";
        }
    }
    return text;
}

std::string copying_goals_text(const Versus& v)
{
    const auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    return fmt::format("Copying goals:\n  the copy costs at most 0.5 nats per character: {}\n"
                       "  the first occurrence costs what plain text costs, within 0.1 nats: {}\n"
                       "  on the copy the model beats the {}-gram by at least 1 nat; on plain text the {}-gram wins: "
                       "{}\n", verdict(v.model.second <= 0.5), verdict(std::fabs(v.model.first - v.model_plain) <= 0.1),
                       ngram_order, ngram_order,
                       verdict(v.ngram_copy - v.model.second >= 1.0 && v.ngram_plain < v.model_inside));
}

// The second half of the chapter: why text is harder to copy than letters, and a model that copies it.
std::string copying_chapter(const Runs& runs, const Data& data, std::size_t steps, std::size_t copy_steps,
                            std::size_t induction_head, std::uint64_t seed, int digits)
{
    // The measurements only read the models and the data: the path ablation on one core, the rest on the other.
    Versus v;
    std::string prefix, paths;
    std::size_t copier = 0;
    side_by_side({[&] { paths = path_text(runs.copying.model, data, copier, digits); },
                  [&] {
                      prefix = prefix_text(data, seed);
                      v = versus(runs, data);
                  }});
    std::string text = prefix + "The chapter's model on " + std::to_string(span_windows) + " held-out windows, each with a span "
                       "of 8 to 24 held-out characters\ncopied to a later place, from the span's fourth character on:\n" +
                       span_text(runs.mixed.model, data, induction_head, digits) + "\n" +
                       rotary_text(runs.mixed.model.shape.heads) + "\n" +
                       copy_phase_text(runs.copying, copy_steps, steps, digits);
    text += versus_text(v, runs.mixed.model.shape.heads, digits) + "\n" + offset_text(runs.copying.model, data, digits) +
            paths;
    text += ov_text(runs.copying.model, data, digits);
    text += "The copying model's layer 1 head " + std::to_string(copier) + " on the copy:\n" +
            span_text(runs.copying.model, data, copier, digits) + "\n";
    return text + copying_goals_text(v);
}

// Trains every model of the chapter and prints the phase change; the chapter's model comes back.
sa::LanguageModel train_chapter(const Options& options, const Data& data, std::uint64_t seed, int digits,
                                sa::Report& report, Runs& runs)
{
    report.text(fmt::format("Model: {} attention layers, d = {}, h = {}, windows of {};\n  {} windows per step, "
                            "one in {} of them letters cycled with a period from {} to {};\n  {} steps; seed {}; "
                            "Adam α = {}.\n", options.layers, width, options.heads, context, batch_windows,
                            letter_mix.every, letter_mix.shortest, letter_mix.longest, options.steps, seed,
                            learning_rate));
    runs = train_all({data.vocabulary_size, width, options.heads, options.layers, context}, data, options.steps,
                     options.copy_steps, seed);
    report.text(phase_text(runs.mixed, options.steps, digits) + "\n");
    report.line_plot("phase-change.svg", phase_plot(runs.mixed));
    return runs.mixed.model;
}

std::string induction_chapter(const sa::Example& example)
{
    const Options options = read_options(example);
    if (!example.options.at("--sequence").empty()) {
        return sequence_chapter(example);
    }
    const sa::Corpus corpus = sa::load_corpus(example.options.at("--text"), BOOK_KJV_TRAINING, BOOK_KJV_HELD_OUT);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    const auto seed = static_cast<std::uint64_t>(example.seed);
    const Data data = read_data(corpus, vocabulary, seed);
    const std::string& load = example.options.at("--load");
    const int digits = example.precision;
    sa::Report report(example);
    report.text(corpus_text(corpus, data, vocabulary, seed));
    Runs runs;
    const sa::LanguageModel model = load.empty() ? train_chapter(options, data, seed, digits, report, runs)
                                                 : load_scored_model(load, vocabulary);
    if (!load.empty()) {
        report.text(fmt::format("Loaded {}: {} layers, d = {}, h = {}.\n\n", load, model.shape.layers,
                                model.shape.width, model.shape.heads));
    }
    const sa::CopyScores whole = sa::copy_scores(model, data.test, nullptr);
    report.text(circuit_text(whole, model.shape.heads, data.letters.size(), data.vocabulary_size, digits) + "The same model" + shorter_text(model, data, digits) +
                "\n");
    std::size_t needed = 0;
    report.text(ablation_text(model, data, whole, needed, digits));
    report.text((model.layers.size() >= 2 ? letters_path_text(model, data, needed, digits) : "") + "\n");
    const std::vector<std::vector<double>> text_previous = sa::previous_token_scores(model, data.held_out);
    report.text(ov_text(model, data, digits) + "\n");
    report.text(previous_token_text(model, text_previous[0], whole, needed, digits));
    report.text(previous_at_text(model, data, vocabulary, needed, digits) + "\n");
    Comparison comparison;
    if (load.empty()) {
        report.text(compare(model, runs, data,
                            chapter_14_model(example.options.at("--text"), vocabulary), comparison, digits));
    }
    if (model.layers.size() >= 2) {
        const Comparison* compared = load.empty() ? &comparison : nullptr;
        const Goals goals = check_goals(model, data, whole, text_previous[0], needed, compared);
        report.text(goals_text(goals, compared));
    }
    if (load.empty() && model.layers.size() >= 2 && options.copy_steps > 0) {  // 0: no second half
        report.text("\n" + copying_chapter(runs, data, options.steps, options.copy_steps,
                                           best_head(whole.induction.back()), seed, digits));
    }
    draw_heads(report, model, vocabulary, data, best_head(whole.induction.back()), needed);
    save_models(example.options.at("--save"), vocabulary, model, load.empty() ? &runs : nullptr);
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
#ifdef __GLIBC__
    // A training step makes and drops matrices of a few megabytes. By default the C library maps
    // each such block from the system and unmaps it when freed, and every step then pays for fresh
    // zeroed pages (about a tenth of its time); kept on the heap, the memory is reused.
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
    sa::ProgramInfo info{"ch15-induction-head",
                         "train two layers of attention on the King James Bible with repeated random letters in "
                         "the mix, and find the induction head",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "training steps, 0 to 5000", "2000"},
                    {"--copy-steps", "N", "steps of the copying models' second phase (repeated text), 0 to 5000; "
                     "0 leaves the chapter's second half out", "2500"},
                    {"--layers", "L", "attention layers, 1 to 4", "2"},
                    {"--heads", "H", "attention heads: 1, 2, 4, 8, 16 or 32 (d = 64)", "4"},
                    {"--text", "FILE", "train on your own plain ASCII text, with at least 32 distinct letters (A-Z and a-z "
                                       "count apart) for the test sequences; every tenth line is held out", ""},
                    {"--save", "FILE", "write the trained model to FILE (safetensors, F64)", ""},
                    {"--load", "FILE", "read a saved model instead of training one", ""},
                    {"--sequence", "TEXT", "with --load: score the model on TEXT, 2 to 32 characters, repeated once",
                     ""}};
    info.writes = {"--save"};  // checked before the training starts
    const std::string own = "the model reads the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, induction_chapter);
}
