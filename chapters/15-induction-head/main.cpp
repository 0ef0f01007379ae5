// Chapter 15, Two layers: the induction head. Chapter 14's model with a second layer, trained on
// the King James text with and without repeated random letters in the mix, and the copying models
// trained on from there. This program trains them all, prints the phase change and saves the models;
// ch15-circuit (circuit.cpp) finds the circuit in them and ch15-copying (copying.cpp) measures how
// they copy the text.
#include <cstdint>
#include <utility>

#include "char_text.hpp"
#include "circuits.hpp"
#include "cli.hpp"
#include "copying.hpp"
#include "induction_runs.hpp"
#include "induction_tables.hpp"
#include "labels.hpp"
#include "report.hpp"
#include "settings.hpp"

namespace ch15 {
namespace {

using Data = sa::InductionData;
constexpr sa::InductionSizes sizes{context, test_windows, shorter_period, held_out_windows, span_windows,
                                   span_shortest, span_longest};
const auto best = sa::best_score;

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

struct Runs {
    Run mixed;      // the chapter's model: the letters mix
    Run plain;      // the same model on text alone
    Run copying;    // two heads of 32: the letters mix, then repeated text
    Run control;    // the chapter's model, then the same second phase
    Run one_layer;  // the fair control: one layer, the letters mix, the same steps and seed
};

// Every training of the chapter: three chains of runs on the cores (sa::side_by_side).
Runs train_all(const sa::ModelShape& shape, const Data& data, std::size_t steps, std::size_t copy_steps,
               std::uint64_t seed)
{
    sa::ModelShape two_heads = shape;
    two_heads.heads = copy_heads;
    Runs runs;
    sa::side_by_side({[&] {
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
    options.heads = sa::rotary_heads_option(example, width);  // rotary slices of an even width
    options.layers = static_cast<std::size_t>(sa::whole_option(example, "--layers", 1, 4));
    return options;
}

// --load FILE --sequence TEXT: the saved model on the reader's own characters, repeated once (the
// chapter page's "Try it here" panel). The model's own vocabulary decides what is allowed.
std::string sequence_chapter(const sa::Example& example)
{
    const std::string& load = example.options.at("--load");
    if (load.empty()) {
        throw sa::UsageError("--sequence: needs --load FILE, the saved model to score on the sequence");
    }
    const sa::SavedModel saved = sa::load_book_model(load);
    const std::string& sequence = example.options.at("--sequence");
    if (sequence.empty()) {
        throw sa::UsageError(fmt::format("--load {}: scores the model on --sequence TEXT; ch15-circuit --load FILE "
                                         "finds the circuit in a saved training", load));
    }
    const sa::Vocabulary vocabulary = sa::make_vocabulary(saved.vocabulary);
    const sa::Batch batch = sa::sequence_batch(saved, vocabulary, sequence);
    const sa::LanguageModel& model = saved.model;
    const sa::CopyScores scores = sa::copy_scores(model, batch, nullptr);
    const int digits = example.precision;
    const std::size_t p = sequence.size();
    std::string text = fmt::format("Loaded {}: {} layers, d = {}, h = {}.\nSequence: {} characters, repeated once: "
                                   "\"{}\"\n\nInduction score (period {}):\n         ", load, model.shape.layers,
                                   model.shape.width, model.shape.heads, p, sequence + sequence, p) +
                       sa::head_header(model.shape.heads);
    for (std::size_t l = 0; l < scores.induction.size(); ++l) {
        text += fmt::format("layer {}", l) + sa::head_row(scores.induction[l], digits);
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
    const std::size_t head = sa::best_head(scores.induction.back());
    const std::vector<std::string> labels = sa::token_labels(vocabulary, batch.inputs);
    sa::Report report(example);
    report.text(text);
    report.heatmap("sequence-stripe.svg",
                   {.title = fmt::format("Layer {} head {} on the sequence repeated once", last, head),
                    .values = sa::head_attention(model, last, batch.inputs)[head], .row_labels = labels,
                    .col_labels = labels, .precision = 1, .scale_label = "weight"});
    return report.str();
}

// Trains every model of the chapter, prints the phase change and saves the models with --save.
std::string induction_chapter(const sa::Example& example)
{
    const Options options = read_options(example);
    if (!example.options.at("--sequence").empty() || !example.options.at("--load").empty()) {
        return sequence_chapter(example);
    }
    const std::string& own_text = example.options.at("--text");
    const sa::Corpus corpus = sa::load_corpus(own_text, BOOK_KJV_TRAINING, BOOK_KJV_HELD_OUT);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    const auto seed = static_cast<std::uint64_t>(example.seed);
    const Data data = sa::induction_data(corpus, vocabulary, seed, sizes);
    sa::Report report(example);
    report.text(sa::induction_data_text(corpus, data, seed, sizes));
    report.text(fmt::format("Model: {} attention layers, d = {}, h = {}, windows of {};\n  {} windows per step, "
                            "one in {} of them letters cycled with a period from {} to {};\n  {} steps; seed {}; "
                            "Adam α = {}.\n", options.layers, width, options.heads, context, batch_windows,
                            letter_mix.every, letter_mix.shortest, letter_mix.longest, options.steps, seed,
                            learning_rate));
    Runs runs = train_all({data.vocabulary_size, width, options.heads, options.layers, context}, data, options.steps,
                          options.copy_steps, seed);
    const Run& mixed = runs.mixed;
    report.text(phase_text(mixed, options.steps, example.precision) + "\n");
    report.line_plot("phase-change.svg",
                     sa::phase_change_plot(mixed.training_loss, mixed.checkpoints, mixed.second_copy, mixed.induction));
    if (!example.options.at("--save").empty()) {
        sa::save_induction_models(example.options.at("--save"), vocabulary.characters,
                                  {mixed.model, runs.plain.model, runs.copying.model, runs.control.model,
                                   runs.one_layer.model},
                                  {seed, own_text, options.steps, options.copy_steps, runs.copying.checkpoints,
                                   runs.copying.second_copy});
    }
    return report.str();
}

}  // namespace
}  // namespace ch15

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch15-induction-head",
                         "train two layers of attention on the King James Bible with repeated random letters in "
                         "the mix, and save the models in which ch15-circuit finds the induction head",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "training steps, 0 to 5000", "2000"},
                    {"--copy-steps", "N", "steps of the copying models' second phase (repeated text), 0 to 5000; "
                     "0 leaves the chapter's second half out", "2500"},
                    {"--layers", "L", "attention layers, 1 to 4", "2"},
                    {"--heads", "H", "attention heads: 1, 2, 4, 8, 16 or 32 (d = 64)", "4"},
                    {"--text", "FILE", "train on your own plain ASCII text, with at least 32 distinct letters (A-Z and a-z "
                                       "count apart) for the test sequences; every tenth line is held out", ""},
                    {"--save", "FILE", "write the trained models to FILE and FILE.* (safetensors, F64), and FILE.run", ""},
                    {"--load", "FILE", "with --sequence: read a saved model instead of training", ""},
                    {"--sequence", "TEXT", "with --load: score the model on TEXT, 2 to 32 characters, repeated once",
                     ""}};
    info.writes = {"--save"};  // checked before the training starts
    const std::string own = "the model reads the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the model is always causal"}};
    return sa::run_program(info, argc, argv, ch15::induction_chapter);
}
