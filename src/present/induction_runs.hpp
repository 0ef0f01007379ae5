/// \file induction_runs.hpp
/// \brief Chapter 15's bookkeeping, shared by its three programs: the data they measure on, the
///        files in which the training program leaves its models for the two that read them, the
///        trainings side by side on the cores, and the sequence the page's panel scores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "char_text.hpp"
#include "copying.hpp"
#include "language_model.hpp"
#include "safetensors.hpp"
#include "training_files.hpp"

namespace sa {

/// \brief How much of each kind of data chapter 15 measures on (its settings).
struct InductionSizes {
    std::size_t context = 0;           ///< the characters of a window
    std::size_t test_windows = 0;      ///< repeated-letter sequences
    std::size_t shorter_period = 0;    ///< the letters of the shorter sequences
    std::size_t held_out_windows = 0;  ///< held-out windows, spread evenly over the held-out text
    std::size_t span_windows = 0;      ///< held-out windows with a copied span, for the test and for validation
    std::size_t span_shortest = 0;     ///< the spans' shortest length
    std::size_t span_longest = 0;      ///< and their longest
};

/// \brief The text and the batches chapter 15's programs train and measure on.
struct InductionData {
    std::vector<std::size_t> training;         ///< the training text's tokens
    std::vector<std::size_t> letters;          ///< the tokens of A-Z and a-z
    Batch held_out;                            ///< the measured held-out windows
    Batch test;                                ///< the repeated-letter sequences (period context / 2)
    Batch shorter;                             ///< the same with InductionSizes::shorter_period letters
    std::size_t vocabulary_size = 0;           ///< d_vocab
    std::vector<std::size_t> held_out_tokens;  ///< the held-out text's tokens
    CopiedSpans spans;       ///< held-out windows with a span copied later in each: the test, scored once
    CopiedSpans validation;  ///< the same from other held-out windows: every choice, and the printout while training
};

/// \brief The data of chapter 15, drawn from the seed: the test sequences from seed + 1, the copied
///        spans from seed + 2 and their validation windows from seed + 4 (seed + 3 is the copying
///        training's).
/// \param corpus the text
/// \param vocabulary its characters
/// \param seed the run's seed
/// \param sizes how much of each
/// \return the data
/// \throws UsageError naming `--text` if the text is too short for a window or has fewer than
///         context / 2 distinct letters
[[nodiscard]] InductionData induction_data(const Corpus& corpus, const Vocabulary& vocabulary, std::uint64_t seed,
                                           const InductionSizes& sizes);

/// \brief The lines that name the text, the test sequences and the held-out windows.
/// \param corpus the text
/// \param data its data
/// \param seed the run's seed
/// \param sizes the sizes the data was drawn with
/// \return four lines and a blank one
[[nodiscard]] std::string induction_data_text(const Corpus& corpus, const InductionData& data, std::uint64_t seed,
                                              const InductionSizes& sizes);

/// \brief The five models chapter 15 trains.
struct InductionModels {
    LanguageModel mixed;      ///< the chapter's model: the letters mix
    LanguageModel plain;      ///< the same model on text alone
    LanguageModel copying;    ///< two wider heads: the letters mix, then repeated text
    LanguageModel control;    ///< the chapter's model, then the same second phase
    LanguageModel one_layer;  ///< one layer, the letters mix, the same steps and seed
};

/// \brief What the programs that read the models need to know of the training that made them.
struct InductionRun {
    std::uint64_t seed = 0;                     ///< the seed of the training and of the data
    std::string text;                           ///< the reader's text (`--text`), empty for the King James text
    std::size_t steps = 0;                      ///< the first phase's steps
    std::size_t copy_steps = 0;                 ///< the copying models' second phase
    std::vector<std::size_t> copy_checkpoints;  ///< where the copying model's validation copy loss was measured
    std::vector<double> copy_losses;            ///< that loss there, in nats per character
};

/// \brief Writes the models and the run: FILE (the chapter's model), FILE.without-mix, FILE.copying,
///        FILE.copying-control, FILE.one-layer (safetensors, F64) and FILE.run (text: one
///        "name value" line each, the losses in the shortest decimals that read back the same
///        double); then one note line on stderr, so that the output with `--save` is the output
///        without it.
/// \param path FILE, as given to `--save`
/// \param vocabulary the characters, token 0 first
/// \param models the models
/// \param run the run
/// \throws UsageError `--save: cannot write the file PATH` if a file cannot be written
void save_induction_models(const std::string& path, const std::string& vocabulary, const InductionModels& models,
                           const InductionRun& run);

/// \brief Models saved by save_induction_models(), with their run, text and vocabulary.
struct SavedInduction {
    InductionRun run;         ///< the run
    Corpus corpus;            ///< the text it trained on
    Vocabulary vocabulary;    ///< its characters
    InductionModels models;   ///< the models
};

/// \brief Reads what save_induction_models() wrote, and the text the models were trained on.
/// \param path FILE, as given to `--load` (a name that starts with build/ is the build's, book_file())
/// \param training the King James training text's file, named as book_file() takes it
/// \param held_out the King James held-out text's file
/// \param context the window the programs measure on; the chapter's model must read at least that
/// \return the run, the text and the models
/// \throws UsageError naming `--load` and the file, e.g. `--load FILE: cannot read the file FILE`,
///         `--load FILE.run: line 2 is not "steps N"`
[[nodiscard]] SavedInduction load_induction_models(const std::string& path, const std::string& training,
                                                   const std::string& held_out, std::size_t context);

/// \brief Chapter 14's saved model, the one-layer control, where it can stand beside chapter 15's:
///        on the King James text only, with the same characters and a context of at least \p context.
/// \param path the file, named as book_file() takes it
/// \param text the reader's text (`--text`), empty for the King James text
/// \param vocabulary the text's vocabulary
/// \param context the context needed
/// \return the model, or none where it is missing, broken, or another text's
[[nodiscard]] std::optional<LanguageModel> control_model(const std::string& path, const std::string& text,
                                                         const Vocabulary& vocabulary, std::size_t context);

/// \brief Runs jobs that share nothing side by side, one thread each, and rethrows the first
///        failure; in the WebAssembly playground, which has one thread, one after the other. The
///        results are the same bits either way.
/// \param jobs the jobs
void side_by_side(const std::vector<std::function<void()>>& jobs);

/// \brief The reader's characters, repeated once, as one window with its targets (the page's panel,
///        `--sequence`): the character after the second copy is the first again.
/// \param saved the model and its vocabulary
/// \param vocabulary the vocabulary made from it
/// \param sequence the characters, 2 to context / 2 of them
/// \return one window of 2 × the sequence's length
/// \throws UsageError naming `--sequence`: a byte that is not ASCII, too few or too many characters,
///         or characters outside the model's vocabulary (each named once)
[[nodiscard]] Batch sequence_batch(const SavedModel& saved, const Vocabulary& vocabulary, const std::string& sequence);

}  // namespace sa
