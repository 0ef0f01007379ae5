/// \file training_files.hpp
/// \brief Chapters 14 to 16: the files a training program reads, each refused in one line that
///        names the option and the problem: a text to train on, a text to measure, and a saved
///        model; where the program finds the files the book's build made; and the files it
///        writes, a model (`--save`) and its measured speed (`--speed`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "char_text.hpp"
#include "safetensors.hpp"

namespace sa {

/// \brief A file's bytes.
/// \param path the file
/// \param option how to name it in a message, e.g. `"--text"`
/// \return the bytes
/// \throws UsageError "OPTION: cannot read the file PATH" if it cannot be opened or is a folder
[[nodiscard]] std::string read_file(const std::string& path, const std::string& option);

/// \brief Where a file the book's build made is, for the program that reads it.
///
/// The book names such a file as its README does, from the repository's folder:
/// `build/text/kjv-training.txt`, `build/ch14/model.safetensors`. The program looks for it in
/// the build folder it belongs to, the folder above its own `bin/` (found through
/// `/proc/self/exe`), and never in the folder it was built in: a moved or copied build reads
/// its own files, and `--help` shows no path of the machine that built it. Where the program
/// cannot tell where it is (the WebAssembly playground), the name is used as it is, relative
/// to the working folder.
/// \param name "build/" and the file's place in the build folder; any other name (an absolute
///        path, or the reader's own file) is returned unchanged
/// \return the path to open
[[nodiscard]] std::string book_file(const std::string& name);

/// \brief A training text with its held-out part, and a line that names it.
struct Corpus {
    std::string name;  ///< how the output names the text
    TextSplit split;   ///< the training text and the held-out text
};

/// \brief The text a program trains on: the book's King James text, already split by chapter, or
///        the reader's own file (`--text`), checked to be plain text and split every tenth line.
/// \param path the reader's file, or empty for the King James text
/// \param training the King James training text's file, named as book_file() takes it
/// \param held_out the King James held-out text's file, named as book_file() takes it
/// \return the corpus
/// \throws UsageError naming `--text` and the problem, if the file cannot be read, is not plain
///         text or is too short to split
[[nodiscard]] Corpus load_corpus(const std::string& path, const std::string& training, const std::string& held_out);

/// \brief A model saved by save_safetensors(), found as book_file() finds a file the build made.
/// \param path the file (given with `--load`, or the program's default)
/// \return the model and its vocabulary
/// \throws UsageError naming `--load` and the problem: an unreadable or broken file
[[nodiscard]] SavedModel load_book_model(const std::string& path);

/// \brief A model saved by save_safetensors(), which must read the same characters as the text.
/// \param path the file (given with `--load`)
/// \param vocabulary the text's vocabulary
/// \return the model and its vocabulary
/// \throws UsageError naming `--load` and the problem: an unreadable or broken file, or another
///         vocabulary
[[nodiscard]] SavedModel load_model(const std::string& path, const Vocabulary& vocabulary);

/// \brief The text of `--eval`, read and checked before any training, so that a bad file never
///        costs a run.
/// \param vocabulary the characters the model knows, those of its training text
/// \param path the file
/// \return its tokens, at least two (one character leaves nothing to predict)
/// \throws UsageError naming `--eval` and the problem: an unreadable file, fewer than two
///         characters, a byte that is not plain text, or a character the model does not know
[[nodiscard]] std::vector<std::size_t> eval_tokens(const Vocabulary& vocabulary, const std::string& path);

/// \brief Writes a model with save_safetensors() to the file of `--save`, and a note on stderr
///        with its size, so that the output with `--save` is the output without it.
/// \param model the model
/// \param characters its vocabulary's characters
/// \param path the file
/// \param program the program's name, which starts the note
/// \throws UsageError `--save: cannot write the file PATH`
void save_model_file(const LanguageModel& model, const std::string& characters, const std::string& path,
                     const std::string& program);

/// \brief Writes the measured training speed to the file of `--speed`: a fact about the machine,
///        not the model, so it never goes into the checked output. Nothing is written for an
///        empty path or a run without steps.
/// \param path the file, or empty
/// \param steps the training steps taken
/// \param windows the windows of one step
/// \param context the characters of one window
/// \param seconds the time the steps took
/// \throws UsageError `--speed: cannot write the file PATH`
void write_training_speed(const std::string& path, std::size_t steps, std::size_t windows, std::size_t context,
                          double seconds);

}  // namespace sa
