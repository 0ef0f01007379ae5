// The playground's entry point: one chapter program, compiled to WebAssembly, run in
// the reader's browser on the reader's numbers.
//
// The chapter's main.cpp is compiled unchanged. The book build renames two names in
// that one file only: main() becomes book_chapter_main(), and its call to
// sa::run_program() becomes a call to sa::book_playground_run_program() below, which
// keeps the ProgramInfo (the page builds its fields from it) and then calls the real
// sa::run_program(). Parsing the options, the chapter's computation, the report and
// the one-line errors are therefore the native program's own code path; this file
// only turns the reader's arguments into argv and collects stdout, stderr and the
// figures that --figures writes into the module's in-memory file system. A chapter that
// reads files the build made (the King James text, a saved model) gets them from the page
// through put_file(), at the paths its build gave it (docs/playground/playground.cmake).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"

int book_chapter_main(int argc, char** argv);  // the chapter's main(), renamed by the build

namespace sa {

namespace {

ProgramInfo described;    // the ProgramInfo of the last call, for describe()
bool describing = false;  // true while describe() asks main() for its ProgramInfo

constexpr const char* figures_folder = "/figures";

// "A,B,C": names as the command line takes them.
std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) {
        text += (text.empty() ? "" : ",") + name;
    }
    return text;
}

// Runs the chapter's main() on argv; returns its status.
int call_main(const std::vector<std::string>& args)
{
    std::vector<std::string> storage = args;
    std::vector<char*> argv;
    for (auto& arg : storage) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    return book_chapter_main(static_cast<int>(storage.size()), argv.data());
}

}  // namespace

/// \brief Stands in for sa::run_program() in the chapter's main(): keeps \p info, then runs it.
int book_playground_run_program(const ProgramInfo& info, int argc, char** argv,
                                const std::function<std::string(const Example&)>& body)
{
    described = info;
    if (describing) {
        return 0;
    }
    return run_program(info, argc, argv, body);
}

namespace {

// The program's name, summary, defaults and options, for the page's fields.
emscripten::val describe()
{
    describing = true;
    call_main({"program"});
    describing = false;
    const Example& defaults = described.defaults;
    emscripten::val result = emscripten::val::object();
    result.set("name", described.name);
    result.set("summary", described.summary);
    emscripten::val values = emscripten::val::object();
    values.set("--tokens", joined(defaults.tokens));
    values.set("--embeddings", matrix_text(defaults.embeddings));
    values.set("--wq", matrix_text(defaults.w_query));
    values.set("--wk", matrix_text(defaults.w_key));
    values.set("--wv", matrix_text(defaults.w_value));
    values.set("--causal", defaults.causal);
    values.set("--precision", std::to_string(defaults.precision));
    values.set("--seed", std::to_string(defaults.seed));
    result.set("defaults", values);
    result.set("usesSeed", described.uses_seed);
    emscripten::val unused = emscripten::val::array();
    for (const auto& [option, reason] : described.unused_options) {
        unused.call<void>("push", option);
    }
    result.set("unused", unused);
    emscripten::val options = emscripten::val::array();
    for (const auto& own : described.options) {
        emscripten::val option = emscripten::val::object();
        option.set("name", own.name);
        option.set("value", own.value);
        option.set("help", own.help);
        option.set("defaultValue", own.default_value);
        options.call<void>("push", option);
    }
    result.set("options", options);
    return result;
}

// One run of the chapter program with the reader's arguments (without the program
// name): {status, stdout, stderr, figures: {file name: SVG text}}.
emscripten::val run(emscripten::val reader_arguments)
{
    std::filesystem::remove_all(figures_folder);
    std::filesystem::create_directory(figures_folder);
    std::vector<std::string> args = {described.name.empty() ? "program" : described.name};
    for (const auto& arg : emscripten::vecFromJSArray<std::string>(reader_arguments)) {
        args.push_back(arg);
    }
    args.push_back("--figures");
    args.push_back(figures_folder);

    std::ostringstream out;
    std::ostringstream err;
    std::streambuf* const cout_buffer = std::cout.rdbuf(out.rdbuf());
    std::streambuf* const cerr_buffer = std::cerr.rdbuf(err.rdbuf());
    int status = 0;
    try {
        status = call_main(args);
    } catch (...) {
        std::cout.rdbuf(cout_buffer);
        std::cerr.rdbuf(cerr_buffer);
        throw;
    }
    std::cout.rdbuf(cout_buffer);
    std::cerr.rdbuf(cerr_buffer);
    std::cout.clear();

    emscripten::val figures = emscripten::val::object();
    if (status == 0) {
        for (const auto& entry : std::filesystem::directory_iterator(figures_folder)) {
            std::ifstream file(entry.path(), std::ios::binary);
            std::ostringstream svg;
            svg << file.rdbuf();
            figures.set(entry.path().filename().string(), svg.str());
        }
    }
    emscripten::val result = emscripten::val::object();
    result.set("status", status);
    result.set("stdout", out.str());
    result.set("stderr", err.str());
    result.set("figures", figures);
    return result;
}

// Writes one file the chapter program reads into the module's in-memory file system, with
// its folders: bytes is a Uint8Array.
void put_file(const std::string& path, const emscripten::val& bytes)
{
    const std::vector<std::uint8_t> data = emscripten::convertJSArrayToNumberVector<std::uint8_t>(bytes);
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (!folder.empty()) {
        std::filesystem::create_directories(folder);
    }
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

}  // namespace

}  // namespace sa

EMSCRIPTEN_BINDINGS(book_playground)
{
    emscripten::function("describe", &sa::describe);
    emscripten::function("run", &sa::run);
    emscripten::function("put_file", &sa::put_file);
}
