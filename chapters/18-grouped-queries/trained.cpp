// Chapter 18, Grouped queries, trained: chapter 14's model with h_kv = 4, 2 and 1 key/value heads under the same
// steps, seed and windows, then the h_kv = 4 model mean-pooled to fewer heads, before and after a short training.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench.hpp"
#include "char_text.hpp"
#include "cli.hpp"
#include "decoding_speed.hpp"
#include "grouped_query.hpp"
#include "language_model.hpp"
#include "report.hpp"
#include "safetensors.hpp"
#include "training_files.hpp"

namespace {

constexpr std::size_t width = 64;              // chapter 14's d, h, windows and steps
constexpr std::size_t heads = 4;
constexpr std::size_t context = 64;
constexpr std::size_t batch_windows = 16;
constexpr std::size_t held_out_windows = 128;  // chapter 14's test windows; the validation windows lie between them
constexpr double learning_rate = 1e-2;         // Adam's α
constexpr int timed_runs = 7;                  // --speed: the rounds of each count, interleaved
const std::vector<std::size_t> kv_counts = {4, 2, 1};  // h_kv: multi-head, grouped, multi-query

struct Data {
    sa::Vocabulary characters;
    std::vector<std::size_t> training;
    sa::Batch validation;  // where every choice is made
    sa::Batch held_out;    // chapter 14's test windows: each model is scored there once
    std::size_t vocabulary = 0;
};

std::string kind_of(std::size_t kv_heads)
{
    return kv_heads == heads ? "multi-head" : kv_heads == 1 ? "multi-query" : "grouped";
}

//> same-windows
// Chapter 14 draws its model and then its windows from one generator. Every h_kv here reads chapter 14's windows in
// chapter 14's order: its model comes from a generator of its own, and the windows from the seed's generator after
// the draws of chapter 14's model (h_kv = h), whatever this model's size.
sa::SplitMix64 window_generator(std::size_t vocabulary, std::uint64_t seed)
{
    sa::SplitMix64 windows(seed);
    const std::size_t draws = sa::parameter_count({vocabulary, width, heads, 1, context});
    for (std::size_t i = 0; i < draws; ++i) {
        static_cast<void>(windows.next());
    }
    return windows;
}

sa::Trainer train(std::size_t kv_heads, const Data& data, std::size_t steps, std::uint64_t seed,
                  sa::SplitMix64& windows)
{
    sa::SplitMix64 generator(seed);
    const sa::ModelShape shape{data.vocabulary, width, heads, 1, context, kv_heads};
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = learning_rate});
    for (std::size_t step = 0; step < steps; ++step) {
        static_cast<void>(sa::training_step(trainer, sa::random_batch(data.training, batch_windows, context, windows)));
    }
    return trainer;
}
//< same-windows

struct Uptrained {
    std::vector<std::size_t> checkpoints;  // steps after the start, 0 first
    std::vector<double> validation;        // the loss on the validation windows at each
    std::size_t chosen = 0;                // the checkpoint of the lowest validation loss (the first, on a tie)
    double held_out_before = 0.0;
    double held_out_after = 0.0;           // of the chosen checkpoint's model
};

//> uptrain
// At most `most` steps on the windows that follow, with Adam's moments new; the validation loss every most/4 steps
// chooses how many; the start and the chosen model are each scored once on the held-out windows.
Uptrained uptrain(const sa::LanguageModel& start, sa::SplitMix64 windows, const Data& data, std::size_t most)
{
    const std::size_t every = std::max<std::size_t>(most / 4, 1);
    sa::Trainer trainer = sa::make_trainer(start, {.learning_rate = learning_rate});
    Uptrained run{{0}, {sa::evaluate(start, data.validation)}, 0, sa::evaluate(start, data.held_out), 0.0};
    sa::LanguageModel chosen = start;
    for (std::size_t step = 1; step <= most; ++step) {
        static_cast<void>(sa::training_step(trainer, sa::random_batch(data.training, batch_windows, context, windows)));
        if (step % every == 0 || step == most) {
            run.checkpoints.push_back(step);
            run.validation.push_back(sa::evaluate(trainer.model, data.validation));
            if (run.validation.back() < run.validation[run.chosen]) {
                run.chosen = run.validation.size() - 1;
                chosen = trainer.model;
            }
        }
    }
    run.held_out_after = sa::evaluate(chosen, data.held_out);
    return run;
}
//< uptrain

std::string trained_table(const std::vector<sa::Trainer>& trained, const Data& data, int digits)
{
    std::string text =
        "  h_kv  kind         parameters  KV cache per position  validation  held-out  minus h_kv = 4's\n";
    double multi_head = 0.0;  // the held-out loss of the first row, h_kv = h
    for (const sa::Trainer& trainer : trained) {
        const sa::ModelShape& shape = trainer.model.shape;
        const std::size_t kv_heads = sa::kv_head_count(shape);
        const double held_out = sa::evaluate(trainer.model, data.held_out);
        multi_head = kv_heads == heads ? held_out : multi_head;
        text += fmt::format("  {:>4}  {:<11}  {:>10}  {:>15} bytes  {:>10.{}f}  {:>8.{}f}  {:>+16.{}f}\n", kv_heads,
                            kind_of(kv_heads), sa::parameter_count(shape),
                            sa::kv_cache_bytes(shape.layers, kv_heads, width / heads, 1, sizeof(double)),
                            sa::evaluate(trainer.model, data.validation), digits, held_out, digits,
                            held_out - multi_head, digits);
    }
    return text + "\n";
}

std::string uptrained_table(const std::vector<std::string>& names, const std::vector<Uptrained>& runs, int digits)
{
    const std::size_t columns = runs.front().checkpoints.size() * static_cast<std::size_t>(digits + 4);
    std::string text = fmt::format("{:16}{:^{}}    chosen   held-out loss\n  h_kv  start   ", "",
                                   "validation loss after N steps", columns);
    for (const std::size_t step : runs.front().checkpoints) {
        text += fmt::format("{:>{}}", step, digits + 4);  // N
    }
    text += "     steps   before  after\n";
    for (std::size_t r = 0; r < runs.size(); ++r) {
        text += names[r] + "  ";
        for (const double loss : runs[r].validation) {
            text += fmt::format("{:>{}.{}f}", loss, digits + 4, digits);
        }
        text += fmt::format("  {:>8}  {:>7.{}f}  {:.{}f}\n", runs[r].checkpoints[runs[r].chosen],
                            runs[r].held_out_before, digits, runs[r].held_out_after, digits);
    }
    return text;
}

Data read_data(const sa::Example& example)
{
    const sa::Corpus corpus = sa::load_corpus(example.options.at("--text"), BOOK_KJV_TRAINING, BOOK_KJV_HELD_OUT);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    Data data{vocabulary, sa::encode(vocabulary, corpus.split.training), {}, {}, vocabulary.characters.size()};
    const std::vector<std::size_t> held_out = sa::encode(vocabulary, corpus.split.held_out);
    const std::size_t needed = (held_out_windows - 1) * 2 * (context + 1) + context + 1;
    if (data.training.size() <= context + 1 || held_out.size() < needed) {
        throw sa::UsageError(fmt::format("--text: the training text has {} characters and the held-out text {}; "
                                         "training needs more than {}, and the {} test windows with validation "
                                         "windows between them need {} held-out characters",
                                         data.training.size(), held_out.size(), context + 1, held_out_windows,
                                         needed));
    }
    data.validation = sa::halfway_batch(held_out, held_out_windows, context);
    data.held_out = sa::even_batch(held_out, held_out_windows, context);
    return data;
}

// The three trained models: FILE holds the grouped one (h_kv = 2), FILE.multi-query and FILE.multi-head the others.
// The note goes to stderr, so that the output with --save is the output without it.
void save_models(const std::string& path, const Data& data, const std::vector<sa::Trainer>& trained)
{
    const std::vector<std::string> suffixes = {".multi-head", "", ".multi-query"};  // in the order of kv_counts
    for (std::size_t i = 0; i < trained.size(); ++i) {
        const std::string bytes = sa::save_safetensors(trained[i].model, data.characters.characters);
        std::ofstream out(path + suffixes[i], std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out) {
            throw sa::UsageError(fmt::format("--save: cannot write the file {}", path + suffixes[i]));
        }
    }
    std::fprintf(stderr, "ch18-trained: note: saved h_kv = 2 to %s, h_kv = 1 to %s.multi-query and h_kv = 4 to "
                 "%s.multi-head\n", path.c_str(), path.c_str(), path.c_str());
}

// The time of a decoding step is a fact about the machine: it goes to a file of its own (and, with --figures, to
// a plot), never into the checked output.
void write_speed(const std::string& path, const sa::Report& report, std::size_t vocabulary, std::uint64_t seed)
{
    const std::vector<sa::DecodingShape> shapes = sa::decoding_shapes(vocabulary);
    std::vector<sa::DecodingTimes> times;
    sa::LinePlot plot{.title = "Decoding time per token against h_kv = h, measured on the machine that built this copy",
                      .x_label = "query heads per key/value head, h/h_kv",
                      .y_label = "median time per token / that of h_kv = h", .log_x = true, .log_x_base = 2};
    for (const sa::DecodingShape& shape : shapes) {
        times.push_back(sa::time_decoding(shape, timed_runs, seed));
        sa::Series series{.name = shape.name};
        const double reference = sa::bench::median(times.back().per_token.front());
        for (std::size_t c = 0; c < shape.kv_counts.size(); ++c) {
            series.x.push_back(static_cast<double>(shape.shape.heads / shape.kv_counts[c]));
            series.y.push_back(sa::bench::median(times.back().per_token[c]) / reference);
        }
        plot.series.push_back(series);
    }
    std::ofstream out(path);
    out << sa::decoding_speed_text(shapes, times, timed_runs);
    if (!out) {
        throw sa::UsageError(fmt::format("--speed: cannot write the file {}", path));
    }
    report.line_plot("measured-decoding.svg", plot);
}

// --load FILE: a saved model, of any h_kv, scored on the same windows as the trained ones.
std::string loaded_text(const std::string& path, const Data& data, int digits)
{
    const sa::LanguageModel model = sa::load_model(path, data.characters).model;
    const sa::ModelShape& shape = model.shape;
    const std::size_t kv_heads = sa::kv_head_count(shape);
    return fmt::format("Loaded {}: d = {}, h = {} query heads, h_kv = {} key/value head(s), {} layer(s), context "
                       "{}.\nParameters: {}. KV cache per position: {} bytes.\nValidation loss: {:.{}f}. Held-out "
                       "loss: {:.{}f}.\n\n", path, shape.width, shape.heads, kv_heads, shape.layers, shape.context,
                       sa::parameter_count(shape),
                       sa::kv_cache_bytes(shape.layers, kv_heads, shape.width / shape.heads, 1, sizeof(double)),
                       sa::evaluate(model, data.validation), digits, sa::evaluate(model, data.held_out), digits);
}

std::string trained_chapter(const sa::Example& example)
{
    const auto steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 5000));
    const auto most = static_cast<std::size_t>(sa::whole_option(example, "--uptrain-steps", 0, 5000));
    const auto seed = static_cast<std::uint64_t>(example.seed);
    const Data data = read_data(example);
    const std::string& load = example.options.at("--load");
    if (!load.empty()) {
        return loaded_text(load, data, example.precision) +
               sa::decoding_bytes_table(sa::decoding_shapes(data.vocabulary));
    }
    //> trained
    std::vector<sa::Trainer> trained;
    sa::SplitMix64 next_windows = window_generator(data.vocabulary, seed);
    for (const std::size_t kv_heads : kv_counts) {
        next_windows = window_generator(data.vocabulary, seed);  // chapter 14's windows, from the first
        trained.push_back(train(kv_heads, data, steps, seed, next_windows));
    }  // next_windows now follows the last step's windows: every uptraining below reads the same ones
    const sa::LanguageModel& multi_head = trained.front().model;
    const std::vector<Uptrained> uptrained = {uptrain(sa::mean_pooled_model(multi_head, 2), next_windows, data, most),
                                              uptrain(sa::mean_pooled_model(multi_head, 1), next_windows, data, most),
                                              uptrain(multi_head, next_windows, data, most)};  // the control
    //< trained
    const int digits = example.precision;
    sa::Report report(example);
    report.text(fmt::format(
        "Chapter 14's model: one attention layer, d = {}, h = {} query heads of width {}, rotary positions;\n{} steps "
        "of {} windows of {} characters, seed {}, Adam α = {}.\nEvery run reads the same windows in the same order.\n"
        "Validation: {} held-out windows, each halfway between two test windows ({} predictions);\nevery choice is "
        "made there.\nHeld-out: chapter 14's {} test windows ({} predictions); each model is scored there once.\n\n",
        width, heads, width / heads, steps, batch_windows, context, seed, learning_rate, held_out_windows - 1,
        data.validation.targets.size(), held_out_windows, data.held_out.targets.size()));
    report.text(trained_table(trained, data, digits));
    report.text(fmt::format(
        "The KV cache: 2 · n_layers · h_kv · d/h · 8 bytes (F64) per position.\n\nThe h_kv = {} model converted: "
        "the key heads of each group mean-pooled into one, and the value heads likewise\n(the start of Ainslie et "
        "al. 2023's uptraining), then at most {} more steps on the windows that follow, with new\nAdam moments, "
        "the number of steps chosen on the validation windows; the control trains the h_kv = {} model\nthe same "
        "way, unpooled.\n\n", heads, most, heads));
    report.text(uptrained_table({"     2  pooled", "     1  pooled", "     4  as is "}, uptrained, digits));
    report.text("\n" + sa::decoding_bytes_table(sa::decoding_shapes(data.vocabulary)));
    if (!example.options.at("--save").empty()) {
        save_models(example.options.at("--save"), data, trained);
    }
    if (!example.options.at("--speed").empty()) {
        write_speed(example.options.at("--speed"), report, data.vocabulary, seed);
    }
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch18-trained",
                         "train chapter 14's model with 4, 2 and 1 key/value heads, and mean-pool the first to fewer",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "training steps of each model, 0 to 5000", "600"},
                    {"--uptrain-steps", "N", "the most steps after mean pooling, 0 to 5000", "200"},
                    {"--text", "FILE", "train on your own plain ASCII text; every tenth line is held out", ""},
                    {"--save", "FILE", "write the h_kv = 2 model to FILE, h_kv = 1 to FILE.multi-query and h_kv = 4 "
                     "to FILE.multi-head (safetensors, F64)", ""},
                    {"--load", "FILE", "score a saved model of any h_kv instead of training", ""},
                    {"--speed", "FILE", "write the measured decoding time per token for each h_kv to FILE (with "
                     "--figures, a plot too)", ""}};
    info.writes = {"--save", "--speed"};  // checked before the training starts
    const std::string own = "the models read the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the models are always causal"}};
    return sa::run_program(info, argc, argv, trained_chapter);
}
