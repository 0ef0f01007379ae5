/// \file training_files.hpp
/// \brief Chapters 14 to 16: the files a training program reads, each refused in one line that
///        names the option and the problem: a text to train on, and a saved model.
#pragma once

#include <string>

#include "char_text.hpp"
#include "safetensors.hpp"

namespace sa {

/// \brief A file's bytes.
/// \param path the file
/// \param option how to name it in a message, e.g. "--text"
/// \return the bytes
/// \throws UsageError "OPTION: cannot read the file PATH" if it cannot be opened
[[nodiscard]] std::string read_file(const std::string& path, const std::string& option);

/// \brief A training text with its held-out part, and a line that names it.
struct Corpus {
    std::string name;  ///< how the output names the text
    TextSplit split;   ///< the training text and the held-out text
};

/// \brief The text a program trains on: the book's King James text, already split by chapter, or
///        the reader's own file (--text), checked to be plain text and split every tenth line.
/// \param path the reader's file, or empty for the King James text
/// \param training the King James training text's file
/// \param held_out the King James held-out text's file
/// \return the corpus
/// \throws UsageError naming --text and the problem, if the file cannot be read, is not plain
///         text or is too short to split
[[nodiscard]] Corpus load_corpus(const std::string& path, const std::string& training, const std::string& held_out);

/// \brief A model saved by save_safetensors(), which must read the same characters as the text.
/// \param path the file (given with --load)
/// \param vocabulary the text's vocabulary
/// \return the model and its vocabulary
/// \throws UsageError naming --load and the problem: an unreadable or broken file, or another
///         vocabulary
[[nodiscard]] SavedModel load_model(const std::string& path, const Vocabulary& vocabulary);

}  // namespace sa
