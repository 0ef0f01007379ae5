#include "induction_runs.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "circuits.hpp"
#include "cli.hpp"

namespace sa {

InductionData induction_data(const Corpus& corpus, const Vocabulary& vocabulary, std::uint64_t seed,
                             const InductionSizes& sizes)
{
    const std::size_t context = sizes.context;
    InductionData data;
    data.training = encode(vocabulary, corpus.split.training);
    const std::vector<std::size_t> held_out = encode(vocabulary, corpus.split.held_out);
    data.letters = letter_tokens(vocabulary);
    if (data.training.size() <= context + 1 || held_out.size() <= context + 1) {
        throw UsageError(fmt::format("--text: the training text has {} characters and the held-out text {}; each "
                                     "needs more than {}, a window and the character after it",
                                     data.training.size(), held_out.size(), context + 1));
    }
    if (data.letters.size() < context / 2) {
        throw UsageError(fmt::format("--text: the training text has {} distinct letters (A-Z, a-z); the test "
                                     "sequences need {}: each is {} distinct letters in a random order, twice",
                                     data.letters.size(), context / 2, context / 2));
    }
    data.held_out = even_batch(held_out, sizes.held_out_windows, context);
    SplitMix64 test_generator(seed + 1);  // the test sequences: not the training generator's draws
    data.test = repeated_batch(data.letters, sizes.test_windows, context / 2, test_generator);
    data.shorter = repeated_batch(data.letters, sizes.test_windows, sizes.shorter_period, test_generator);
    data.held_out_tokens = held_out;
    data.vocabulary_size = vocabulary.characters.size();
    SplitMix64 span_generator(seed + 2);  // the copied spans: neither training's nor the letters' draws
    data.spans = copied_spans(held_out, sizes.span_windows, context, sizes.span_shortest, sizes.span_longest,
                              span_generator);
    SplitMix64 validation_generator(seed + 4);  // after the copying training's seed + 3
    data.validation = copied_spans(held_out, sizes.span_windows, context, sizes.span_shortest, sizes.span_longest,
                                   validation_generator, &data.spans);
    return data;
}

std::string induction_data_text(const Corpus& corpus, const InductionData& data, std::uint64_t seed,
                                const InductionSizes& sizes)
{
    return fmt::format("Text: {}.\nTraining text: {} characters; d_vocab = {}; {} letters.\n"
                       "Test sequences: {} of 32 distinct random letters repeated once (seed {}).\n"
                       "Measured on held-out text: {} windows of {} characters.\n\n", corpus.name,
                       data.training.size(), data.vocabulary_size, data.letters.size(), sizes.test_windows,
                       seed + 1, sizes.held_out_windows, sizes.context);
}

namespace {

// Writes one file; throws a one-line error if it cannot be written.
void write_file(const std::string& bytes, const std::string& path)
{
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw UsageError(fmt::format("--save: cannot write the file {}", path));
    }
}

// The models' files beside FILE, in the order they are written and read.
const char* const model_suffixes[] = {"", ".without-mix", ".copying", ".copying-control", ".one-layer"};

std::string run_text(const InductionRun& run)
{
    std::string text = fmt::format("seed {}\nsteps {}\ncopy-steps {}\n", run.seed, run.steps, run.copy_steps);
    for (std::size_t i = 0; i < run.copy_checkpoints.size(); ++i) {
        text += fmt::format("copy-loss {} {}\n", run.copy_checkpoints[i], run.copy_losses[i]);  // {}: the shortest exact
    }
    return text + "text " + run.text + "\n";
}

// The value of line `line` (from 1) of a run file, which must be "name value".
std::string run_value(const std::vector<std::string>& lines, std::size_t line, const std::string& name,
                      const std::string& file)
{
    if (line > lines.size() || !lines[line - 1].starts_with(name + " ")) {
        throw UsageError(fmt::format("--load {}: line {} is not \"{} ...\"; the file was not written by "
                                     "ch15-induction-head --save", file, line, name));
    }
    return lines[line - 1].substr(name.size() + 1);
}

std::size_t run_number(const std::string& value, const std::string& file, std::size_t line)
{
    char* end = nullptr;
    const unsigned long long number = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || value.front() == '-' || number > 1000000000000ULL) {
        throw UsageError(fmt::format("--load {}: line {} holds \"{}\"; expected a whole number", file, line, value));
    }
    return static_cast<std::size_t>(number);
}

InductionRun read_run(const std::string& file)
{
    std::istringstream in(read_file(file, "--load"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    InductionRun run;
    run.seed = run_number(run_value(lines, 1, "seed", file), file, 1);
    run.steps = run_number(run_value(lines, 2, "steps", file), file, 2);
    run.copy_steps = run_number(run_value(lines, 3, "copy-steps", file), file, 3);
    std::size_t line = 4;
    for (; line <= lines.size() && lines[line - 1].starts_with("copy-loss "); ++line) {
        const std::string value = run_value(lines, line, "copy-loss", file);
        const std::size_t space = value.find(' ');
        run.copy_checkpoints.push_back(run_number(value.substr(0, space), file, line));
        const std::string loss = space == std::string::npos ? "" : value.substr(space + 1);
        char* end = nullptr;
        run.copy_losses.push_back(std::strtod(loss.c_str(), &end));
        if (loss.empty() || *end != '\0') {
            throw UsageError(fmt::format("--load {}: line {} holds no loss after the step", file, line));
        }
    }
    run.text = run_value(lines, line, "text", file);
    return run;
}

}  // namespace

void save_induction_models(const std::string& path, const std::string& vocabulary, const InductionModels& models,
                           const InductionRun& run)
{
    const LanguageModel* const saved[] = {&models.mixed, &models.plain, &models.copying, &models.control,
                                          &models.one_layer};
    for (std::size_t m = 0; m < std::size(saved); ++m) {
        write_file(save_safetensors(*saved[m], vocabulary), path + model_suffixes[m]);
    }
    write_file(run_text(run), path + ".run");
    std::fprintf(stderr, "ch15-induction-head: note: saved %s\n",
                 fmt::format("{0}, {0}.without-mix, {0}.copying, {0}.copying-control, {0}.one-layer and {0}.run",
                             path).c_str());
}

SavedInduction load_induction_models(const std::string& path, const std::string& training,
                                     const std::string& held_out, std::size_t context)
{
    const std::string file = book_file(path);
    static_cast<void>(read_file(file, "--load"));  // a missing model is named before its run file
    SavedInduction saved;
    saved.run = read_run(file + ".run");
    saved.corpus = load_corpus(saved.run.text, training, held_out);
    saved.vocabulary = make_vocabulary(saved.corpus.split.training);
    LanguageModel* const models[] = {&saved.models.mixed, &saved.models.plain, &saved.models.copying,
                                     &saved.models.control, &saved.models.one_layer};
    for (std::size_t m = 0; m < std::size(models); ++m) {
        *models[m] = load_model(file + model_suffixes[m], saved.vocabulary).model;
    }
    if (saved.models.mixed.shape.context < context) {
        throw UsageError(fmt::format("--load {}: the model was trained on windows of {}; the test sequences need "
                                     "{}", path, saved.models.mixed.shape.context, context));
    }
    return saved;
}

std::optional<LanguageModel> control_model(const std::string& path, const std::string& text,
                                           const Vocabulary& vocabulary, std::size_t context)
{
    std::ifstream in(book_file(path), std::ios::binary);
    if (!text.empty() || !in) {
        return std::nullopt;
    }
    try {
        SavedModel saved = load_safetensors({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
        if (saved.vocabulary == vocabulary.characters && saved.model.shape.context >= context) {
            return std::move(saved.model);
        }
    } catch (const std::invalid_argument&) {  // a broken file: no control, said so in the output
    }
    return std::nullopt;
}

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

Batch sequence_batch(const SavedModel& saved, const Vocabulary& vocabulary, const std::string& sequence)
{
    check_ascii(sequence, "--sequence");  // a byte of UTF-8 is named by its code, never printed alone
    const std::size_t longest = saved.model.shape.context / 2;
    if (sequence.size() < 2 || sequence.size() > longest) {
        throw UsageError(fmt::format("--sequence: expected 2 to {} characters (twice that fills the model's "
                                     "context of {}), got {}", longest, saved.model.shape.context, sequence.size()));
    }
    std::string outside;
    std::size_t count = 0;
    for (const char c : sequence) {
        const std::string label = "'" + character_label(c) + "'";
        if (vocabulary.token_of_byte[static_cast<unsigned char>(c)] < 0 && outside.find(label) == std::string::npos) {
            outside += (outside.empty() ? "" : ", ") + label;
            ++count;
        }
    }
    if (count > 0) {
        const bool one = count == 1;
        throw UsageError(fmt::format("--sequence: {} {} {} not in the model's vocabulary of {} characters; use "
                                     "only characters of its training text", one ? "the character" :
                                     "the characters", outside, one ? "is" : "are", vocabulary.characters.size()));
    }
    std::vector<std::size_t> tokens = encode(vocabulary, sequence + sequence);
    tokens.push_back(tokens.front());  // the character after the second copy: the third begins
    return {{tokens.begin(), tokens.end() - 1}, {tokens.begin() + 1, tokens.end()}, 2 * sequence.size()};
}

}  // namespace sa
