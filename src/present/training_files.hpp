/// \file training_files.hpp
/// \brief Chapters 14 to 16: the files a training program reads, each refused in one line that
///        names the option and the problem: a text to train on, and a saved model; and where
///        the program finds the files the book's build made.
#pragma once

#include <string>

#include "char_text.hpp"
#include "safetensors.hpp"

namespace sa {

/// \brief A file's bytes.
/// \param path the file
/// \param option how to name it in a message, e.g. "--text"
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
///        the reader's own file (--text), checked to be plain text and split every tenth line.
/// \param path the reader's file, or empty for the King James text
/// \param training the King James training text's file, named as book_file() takes it
/// \param held_out the King James held-out text's file, named as book_file() takes it
/// \return the corpus
/// \throws UsageError naming --text and the problem, if the file cannot be read, is not plain
///         text or is too short to split
[[nodiscard]] Corpus load_corpus(const std::string& path, const std::string& training, const std::string& held_out);

/// \brief A model saved by save_safetensors(), found as book_file() finds a file the build made.
/// \param path the file (given with --load, or the program's default)
/// \return the model and its vocabulary
/// \throws UsageError naming --load and the problem: an unreadable or broken file
[[nodiscard]] SavedModel load_book_model(const std::string& path);

/// \brief A model saved by save_safetensors(), which must read the same characters as the text.
/// \param path the file (given with --load)
/// \param vocabulary the text's vocabulary
/// \return the model and its vocabulary
/// \throws UsageError naming --load and the problem: an unreadable or broken file, or another
///         vocabulary
[[nodiscard]] SavedModel load_model(const std::string& path, const Vocabulary& vocabulary);

}  // namespace sa
