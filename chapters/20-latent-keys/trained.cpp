// Chapter 20, Latent keys and values, trained: chapter 14's model with latent attention beside chapter 14's and
// chapter 18's models (h_kv = 4, 2, 1), under the same steps, seed and windows; the latent's width chosen on the
// validation windows, and the chosen model scored once on the held-out windows.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "char_text.hpp"
#include "cli.hpp"
#include "grouped_query.hpp"
#include "induction_runs.hpp"
#include "language_model.hpp"
#include "latent_attention.hpp"
#include "latent_model.hpp"
#include "safetensors.hpp"
#include "report.hpp"
#include "training_files.hpp"

namespace {

constexpr std::size_t width = 64;              // chapter 14's d, h, windows and steps
constexpr std::size_t heads = 4;
constexpr std::size_t context = 64;
constexpr std::size_t batch_windows = 16;
constexpr std::size_t held_out_windows = 128;  // chapter 14's test windows; the validation windows lie between them
constexpr double learning_rate = 1e-2;         // Adam's α
const std::vector<std::size_t> kv_counts = {4, 2, 1};  // chapter 18's h_kv: multi-head, grouped, multi-query

struct Data {
    std::vector<std::size_t> training;
    sa::Batch validation;  // where every choice is made
    sa::Batch held_out;    // chapter 14's test windows: the chosen model is scored there once
    std::size_t vocabulary = 0;
    std::string characters;  // the vocabulary, as a model file keeps it
};

// Chapter 14's windows in chapter 14's order, as chapter 18's program draws them: the seed's generator after the
// draws of chapter 14's model, whatever this model's size.
sa::SplitMix64 window_generator(std::size_t vocabulary, std::uint64_t seed)
{
    sa::SplitMix64 windows(seed);
    const std::size_t draws = sa::parameter_count({vocabulary, width, heads, 1, context});
    for (std::size_t i = 0; i < draws; ++i) {
        static_cast<void>(windows.next());
    }
    return windows;
}

sa::LanguageModel train_grouped(std::size_t kv_heads, const Data& data, std::size_t steps, std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    sa::SplitMix64 windows = window_generator(data.vocabulary, seed);
    const sa::ModelShape shape{data.vocabulary, width, heads, 1, context, kv_heads};
    sa::Trainer trainer = sa::make_trainer(sa::random_model(shape, generator), {.learning_rate = learning_rate});
    for (std::size_t step = 0; step < steps; ++step) {
        static_cast<void>(sa::training_step(trainer, sa::random_batch(data.training, batch_windows, context, windows)));
    }
    return trainer.model;
}

//> train-latent
sa::LatentModel train_latent(std::size_t latent, std::size_t rotary, const Data& data, std::size_t steps,
                             std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    sa::SplitMix64 windows = window_generator(data.vocabulary, seed);  // the same windows as every model here
    const sa::LatentModelShape shape{data.vocabulary, width, heads, context, latent, rotary};
    sa::LatentTrainer trainer =
        sa::make_latent_trainer(sa::random_latent_model(shape, generator), {.learning_rate = learning_rate});
    for (std::size_t step = 0; step < steps; ++step) {
        static_cast<void>(
            sa::latent_training_step(trainer, sa::random_batch(data.training, batch_windows, context, windows)));
    }
    return trainer.model;
}
//< train-latent

Data read_data(const sa::Example& example)
{
    const sa::Corpus corpus = sa::load_corpus(example.options.at("--text"), BOOK_KJV_TRAINING, BOOK_KJV_HELD_OUT);
    const sa::Vocabulary vocabulary = sa::make_vocabulary(corpus.split.training);
    Data data{sa::encode(vocabulary, corpus.split.training), {}, {}, vocabulary.characters.size(),
              vocabulary.characters};
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

struct Results {
    std::vector<sa::LanguageModel> grouped;  // h_kv = 4, 2, 1
    std::vector<sa::LatentModel> latent;     // one per d_c asked for
    std::vector<double> latent_validation;
    std::size_t chosen = 0;                  // the d_c of the lowest validation loss (the first, on a tie)
};

Results train_all(const Data& data, std::size_t steps, const std::vector<long>& latents, std::size_t rotary,
                  std::uint64_t seed)
{
    Results results;
    results.grouped.resize(kv_counts.size());
    results.latent.resize(latents.size());
    std::vector<std::function<void()>> jobs;  // every model trains on its own: side by side on the cores
    for (std::size_t i = 0; i < kv_counts.size(); ++i) {
        jobs.emplace_back([&, i] { results.grouped[i] = train_grouped(kv_counts[i], data, steps, seed); });
    }
    for (std::size_t i = 0; i < latents.size(); ++i) {
        const auto latent = static_cast<std::size_t>(latents[i]);
        jobs.emplace_back([&, i, latent] { results.latent[i] = train_latent(latent, rotary, data, steps, seed); });
    }
    sa::side_by_side(jobs);  // each has its own generators and model: the bits of one after the other
    return results;
}

std::string results_table(const Results& results, const Data& data, int digits)
{
    std::string text = "  model                      parameters  cache per position  validation  held-out\n";
    for (const sa::LanguageModel& model : results.grouped) {
        const std::size_t kv_heads = sa::kv_head_count(model.shape);
        text += fmt::format("  {:<25}  {:>10}  {:>12} bytes  {:>10.{}f}  {:>8.{}f}\n",
                            fmt::format("h_kv = {} ({})", kv_heads, kv_heads == heads ? "chapter 14" : "chapter 18"),
                            sa::parameter_count(model.shape),
                            sa::kv_cache_bytes(1, kv_heads, width / heads, 1, sizeof(double)),
                            sa::evaluate(model, data.validation), digits, sa::evaluate(model, data.held_out), digits);
    }
    for (std::size_t i = 0; i < results.latent.size(); ++i) {
        const sa::LatentModelShape& shape = results.latent[i].shape;
        const std::string held_out = i == results.chosen
                                         ? fmt::format("{:>8.{}f}", sa::evaluate_latent(results.latent[i], data.held_out),
                                                       digits)
                                         : fmt::format("{:>8}", "-");
        text += fmt::format("  {:<25}  {:>10}  {:>12} bytes  {:>10.{}f}  {}{}\n",
                            fmt::format("latent, d_c = {}, d_R = {}", shape.latent, shape.rotary),
                            sa::latent_parameter_count(shape),
                            sa::latent_cache_bytes(1, shape.latent, shape.rotary, 1, sizeof(double)),
                            results.latent_validation[i], digits, held_out, i == results.chosen ? "  chosen" : "");
    }
    return text;
}

// --save: the chosen latent model, whose tensors docs/api.rst names; the note goes to stderr, so that the output
// with --save is the output without it.
void save_latent(const sa::LatentModel& model, const Data& data, const std::string& path)
{
    const std::string bytes = sa::save_latent_safetensors(model, data.characters);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw sa::UsageError(fmt::format("--save: cannot write the file {}", path));
    }
    std::fprintf(stderr, "ch20-trained: note: saved the latent model (d_c = %zu) to %s: %zu bytes, %zu tensors\n",
                 model.shape.latent, path.c_str(), bytes.size(), sa::latent_parameter_names().size());
}

// --load: a saved latent model, scored on the validation and held-out windows instead of any training.
std::string loaded_chapter(const sa::Example& example, const Data& data, const std::string& path)
{
    sa::SavedLatentModel saved;
    try {
        saved = sa::load_latent_safetensors(sa::read_file(path, "--load"));
    } catch (const sa::UsageError&) {
        throw;
    } catch (const std::invalid_argument& error) {
        throw sa::UsageError(fmt::format("--load {}: {}", path, error.what()));
    }
    if (saved.vocabulary != data.characters) {
        throw sa::UsageError(fmt::format("--load {}: the model's vocabulary has {} characters, the text's {}, and "
                                         "they differ; load a model trained on this text", path,
                                         saved.vocabulary.size(), data.characters.size()));
    }
    const sa::LatentModelShape& shape = saved.model.shape;
    const int digits = example.precision;
    return fmt::format("A saved latent model: d = {}, h = {}, d_c = {}, d_R = {}, {} parameters, {} bytes of cache "
                       "per position.\nValidation loss {:.{}f}, held-out loss {:.{}f}.\n",
                       shape.width, shape.heads, shape.latent, shape.rotary, sa::latent_parameter_count(shape),
                       sa::latent_cache_bytes(1, shape.latent, shape.rotary, 1, sizeof(double)),
                       sa::evaluate_latent(saved.model, data.validation), digits,
                       sa::evaluate_latent(saved.model, data.held_out), digits);
}

std::string trained_chapter(const sa::Example& example)
{
    const auto steps = static_cast<std::size_t>(sa::whole_option(example, "--steps", 0, 5000));
    const std::vector<long> latents = sa::whole_list_option(example, "--latent-widths", 1, static_cast<long>(width));
    const auto rotary = static_cast<std::size_t>(sa::whole_option(example, "--rotary-width", 2, 64));
    if (rotary % 2 != 0) {
        throw sa::UsageError(fmt::format("--rotary-width: {} is odd; expected an even width from 2 to 64 (the rotary "
                                         "part turns pairs of features)", rotary));
    }
    const auto seed = static_cast<std::uint64_t>(example.seed);
    const Data data = read_data(example);
    if (!example.options.at("--load").empty()) {
        return loaded_chapter(example, data, example.options.at("--load"));
    }
    Results results = train_all(data, steps, latents, rotary, seed);
    //> trained
    for (std::size_t i = 0; i < results.latent.size(); ++i) {
        results.latent_validation.push_back(sa::evaluate_latent(results.latent[i], data.validation));
        if (results.latent_validation[i] < results.latent_validation[results.chosen]) {
            results.chosen = i;  // chosen on the validation windows only
        }
    }
    //< trained
    sa::Report report(example);
    report.text(fmt::format(
        "Chapter 14's model: one attention layer, d = {}, h = {} heads of width {}; {} steps of {} windows of {}\n"
        "characters, seed {}, Adam α = {}. Every model reads the same windows in the same order.\nChapter 14's and "
        "18's heads turn all {} features of each query and key; the latent models turn only\nthe d_R rotary "
        "features, and their content features carry no position.\nValidation: {} held-out windows, each halfway "
        "between two test windows ({} predictions);\nthe latent's width d_c is chosen there (the lowest loss).\n"
        "Held-out: chapter 14's {} test windows ({} predictions); the chosen latent model is scored there once.\n"
        "Cache: per position, in F64.\n\n",
        width, heads, width / heads, steps, batch_windows, context, seed, learning_rate, width / heads,
        held_out_windows - 1, data.validation.targets.size(), held_out_windows, data.held_out.targets.size()));
    report.text(results_table(results, data, example.precision));
    if (!example.options.at("--save").empty() && !results.latent.empty()) {
        save_latent(results.latent[results.chosen], data, example.options.at("--save"));
    }
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch20-trained",
                         "train chapter 14's model with latent attention beside h_kv = 4, 2 and 1 key/value heads",
                         sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--steps", "N", "training steps of each model, 0 to 5000", "600"},
                    {"--latent-widths", "LIST", "the latent widths d_c to train, each from 1 to d = 64", "16,32"},
                    {"--rotary-width", "N", "d_R, the rotary key's and each rotary query's width, even, 2 to 64", "8"},
                    {"--text", "FILE", "train on your own plain ASCII text; every tenth line is held out", ""},
                    {"--save", "FILE", "write the chosen latent model to FILE (safetensors, F64)", ""},
                    {"--load", "FILE", "score a saved latent model instead of training any", ""}};
    info.writes = {"--save"};  // checked before the training starts
    const std::string own = "the models read the characters of a text, not the book's example";
    info.unused_options = {{"--tokens", own}, {"--embeddings", own}, {"--wq", own}, {"--wk", own}, {"--wv", own},
                           {"--causal", "the models are always causal"}};
    return sa::run_program(info, argc, argv, trained_chapter);
}
