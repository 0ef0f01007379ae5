#include "training_files.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "cli.hpp"

namespace sa {

std::string read_file(const std::string& path, const std::string& option)
{
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        throw UsageError(fmt::format("{}: cannot read the file {}: it is a folder; give a file", option, path));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw UsageError(fmt::format("{}: cannot read the file {}", option, path));
    }
    std::ostringstream text;  // the whole file in one copy (a character at a time took a twentieth of chapter 14's run)
    text << in.rdbuf();
    return text.str();
}

std::string book_file(const std::string& name)
{
    const std::string_view in_build = "build/";
    if (!name.starts_with(in_build)) {
        return name;
    }
    std::error_code error;
    const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error || !program.is_absolute()) {
        return name;  // no place of its own (the playground): relative to the working folder
    }
    // build/bin/PROGRAM: the build folder is the folder above the program's.
    return (program.parent_path().parent_path() / name.substr(in_build.size())).string();
}

Corpus load_corpus(const std::string& path, const std::string& training, const std::string& held_out)
{
    if (path.empty()) {
        return {"the King James Bible, one verse per line; every tenth chapter held out",
                {read_file(book_file(training), "the King James text"),
                 read_file(book_file(held_out), "the King James text")}};
    }
    const std::string option = "--text " + path;
    const std::string text = read_file(path, "--text");
    try {
        check_plain_text(text, option);
        return {path + "; every tenth line held out", split_every_tenth_line(text, option)};
    } catch (const std::invalid_argument& error) {
        throw UsageError(error.what());
    }
}

namespace {

// The model in a file's bytes, a broken file refused by --load and its path as given.
SavedModel parsed_model(const std::string& bytes, const std::string& path)
{
    try {
        return load_safetensors(bytes);
    } catch (const std::invalid_argument& error) {
        throw UsageError(fmt::format("--load {}: {}", path, error.what()));
    }
}

}  // namespace

SavedModel load_book_model(const std::string& path)
{
    return parsed_model(read_file(book_file(path), "--load"), path);
}

SavedModel load_model(const std::string& path, const Vocabulary& vocabulary)
{
    const SavedModel saved = parsed_model(read_file(path, "--load"), path);
    if (saved.vocabulary != vocabulary.characters) {
        throw UsageError(fmt::format("--load {}: the model's vocabulary has {} characters, the text's {}, and they "
                                     "differ; load a model trained on this text", path, saved.vocabulary.size(),
                                     vocabulary.characters.size()));
    }
    return saved;
}

std::vector<std::size_t> eval_tokens(const Vocabulary& vocabulary, const std::string& path)
{
    const std::string option = "--eval " + path;
    const std::string text = read_file(path, "--eval");
    if (text.size() < 2) {  // not check_plain_text()'s advice, which is for a text to train on
        throw UsageError(fmt::format("{}: {}, nothing to predict; give at least two characters", option,
                                     text.empty() ? "the file is empty" : "one character"));
    }
    check_plain_text(text, option);  // its message names the option and the byte
    std::vector<std::size_t> tokens;
    try {
        tokens = encode(vocabulary, text);
    } catch (const std::invalid_argument& error) {
        throw UsageError(fmt::format("{}: {}; the model knows only the characters of its training text", option,
                                     error.what()));
    }
    return tokens;
}

void save_model_file(const LanguageModel& model, const std::string& characters, const std::string& path,
                     const std::string& program)
{
    const std::string bytes = save_safetensors(model, characters);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw UsageError(fmt::format("--save: cannot write the file {}", path));
    }
    std::fprintf(stderr, "%s: note: saved the model to %s: %zu bytes, %zu tensors\n", program.c_str(), path.c_str(),
                 bytes.size(), parameter_names(model.shape).size());
}

void write_training_speed(const std::string& path, std::size_t steps, std::size_t windows, std::size_t context,
                          double seconds)
{
    if (path.empty() || steps == 0) {
        return;
    }
    std::ofstream out(path);
    out << fmt::format("{:.0f} training tokens per second: {} steps of {} windows of {} characters in {:.1f} s, "
                       "measured on the machine that built this copy\n",
                       static_cast<double>(steps * windows * context) / seconds, steps, windows, context, seconds);
    if (!out) {
        throw UsageError(fmt::format("--speed: cannot write the file {}", path));
    }
}

}  // namespace sa
