#include "cli.hpp"

#include <algorithm>
#include <charconv>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include <fmt/ranges.h>

#if defined(__EMSCRIPTEN__)
// The book's playground (docs/playground) compiles this file to WebAssembly, whose
// libc++ has no floating-point std::from_chars. fast_float (libfast-float-dev) parses
// the same texts to the same doubles, but does not report a number out of range.
#include <cmath>
#include <fast_float/fast_float.h>
#endif


namespace sa {

UsageError::UsageError(const std::string& message) : std::invalid_argument(message) {}

namespace {

std::vector<std::string_view> split(std::string_view text, char separator)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) {
            return parts;
        }
        start = end + 1;
    }
}

std::string_view trim(std::string_view text)
{
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1);
}

// "1 row", "3 rows".
std::string count(std::size_t number, std::string_view noun)
{
    if (number == 1) {
        return fmt::format("1 {}", noun);
    }
    if (noun.ends_with('y')) {
        return fmt::format("{} {}ies", number, noun.substr(0, noun.size() - 1));
    }
    return fmt::format("{} {}s", number, noun);
}

// Locale-independent: std::from_chars never consults the C locale. Returns what is
// wrong with the text, or an empty string when it is a number.
std::string parse_number(std::string_view text, double& value)
{
    const std::string_view number = !text.empty() && text.front() == '+' ? text.substr(1) : text;
#if defined(__EMSCRIPTEN__)
    auto [end, error] = fast_float::from_chars(number.data(), number.data() + number.size(), value);
    // Out of range as std::from_chars reports it: infinity from digits, or 0 from digits that are not all 0.
    const std::string_view digits = number.substr(0, number.find_first_of("eE"));
    if (error == std::errc() && ((std::isinf(value) && digits.find_first_of("iI") == std::string_view::npos) ||
                                 (value == 0.0 && digits.find_first_of("123456789") != std::string_view::npos))) {
        error = std::errc::result_out_of_range;
    }
#else
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
#endif
    if (number.empty() || end != number.data() + number.size() || error == std::errc::invalid_argument) {
        return fmt::format("\"{}\" is not a number", text);
    }
    if (error == std::errc::result_out_of_range) {
        return fmt::format("\"{}\" is out of the range of a double (about ±1.8e308)", text);
    }
    return {};
}

bool parse_whole(std::string_view text, long low, long high, long& value)
{
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && error == std::errc() && end == text.data() + text.size() && value >= low &&
           value <= high;
}

constexpr std::string_view matrix_format = "rows separated by ';' and entries by ',', e.g. \"2,0;1,2\"";

// A projection needs one row per embedding feature. When the reader changed the
// embeddings but not this matrix, say that it is the program's default that no longer fits.
void check_rows(std::string_view option, const Matrix& matrix, std::size_t expected, bool given)
{
    if (matrix.rows() != expected) {
        throw UsageError(fmt::format("{}: expected {} (one per embedding feature), {}", option, count(expected, "row"),
                                     given ? fmt::format("got {}", matrix.rows())
                                           : fmt::format("but the default has {}; pass your own {}", matrix.rows(),
                                                         option)));
    }
}

}  // namespace

Matrix parse_matrix(std::string_view option, std::string_view text)
{
    if (trim(text).empty()) {
        throw UsageError(fmt::format("{}: the matrix is empty; expected {}", option, matrix_format));
    }
    std::vector<std::vector<double>> rows;
    for (const auto row_text : split(text, ';')) {
        const std::size_t row_number = rows.size() + 1;
        std::vector<double> row;
        for (const auto entry_text : split(row_text, ',')) {
            const auto entry = trim(entry_text);
            double value = 0.0;
            if (const std::string problem = parse_number(entry, value); !problem.empty()) {
                throw UsageError(fmt::format("{} row {}: \"{}\": {}; expected {}", option, row_number, row_text,
                                             problem, matrix_format));
            }
            row.push_back(value);
        }
        if (!rows.empty() && row.size() != rows.front().size()) {
            throw UsageError(fmt::format("{} row {}: \"{}\" has {} but row 1 has {}; every row needs the same number",
                                         option, row_number, row_text, count(row.size(), "entry"),
                                         count(rows.front().size(), "entry")));
        }
        rows.push_back(std::move(row));
    }
    return Matrix::from_rows(rows);
}

Example parse_arguments(const ProgramInfo& info, const std::vector<std::string>& args)
{
    Example example = info.defaults;
    for (const auto& chapter_option : info.options) {
        example.options[chapter_option.name] = chapter_option.default_value;
    }
    bool own_embeddings = false;
    bool own_tokens = false;
    std::vector<std::string> given;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& option = args[i];
        given.push_back(option);
        for (const auto& [unused, reason] : info.unused_options) {
            if (option == unused) {
                throw UsageError(fmt::format("{}: {} does not use this option; {}", option, info.name, reason));
            }
        }
        const auto value = [&](std::string_view expected) -> std::string_view {
            if (i + 1 >= args.size()) {
                throw UsageError(fmt::format("{}: missing value; expected {}", option, expected));
            }
            return args[++i];
        };
        if (option == "--embeddings") {
            example.embeddings = parse_matrix(option, value("a matrix such as \"2,0;1,2;2,0\""));
            own_embeddings = true;
        } else if (option == "--wq") {
            example.w_query = parse_matrix(option, value("a matrix such as \"0,1;1,0\""));
        } else if (option == "--wk") {
            example.w_key = parse_matrix(option, value("a matrix such as \"1,0;0,1\""));
        } else if (option == "--wv") {
            example.w_value = parse_matrix(option, value("a matrix such as \"1,0;0,1\""));
        } else if (option == "--tokens") {
            const auto names = value("names separated by ',', e.g. \"Mouse,Eats,Cheese\"");
            example.tokens.clear();
            for (const auto name : split(names, ',')) {
                if (trim(name).empty()) {
                    throw UsageError(fmt::format("--tokens: \"{}\" has an empty name; expected names separated by ','",
                                                 names));
                }
                example.tokens.emplace_back(trim(name));
            }
            own_tokens = true;
        } else if (option == "--causal") {
            example.causal = true;
        } else if (option == "--precision") {
            const auto text = value("a whole number from 0 to 10");
            long digits = 0;
            if (!parse_whole(text, 0, 10, digits)) {
                throw UsageError(fmt::format("--precision: expected a whole number from 0 to 10, got \"{}\"", text));
            }
            example.precision = static_cast<int>(digits);
        } else if (option == "--seed" && info.uses_seed) {
            const auto text = value("a whole number from 0 to 2147483647");
            if (!parse_whole(text, 0, 2147483647L, example.seed)) {
                throw UsageError(fmt::format("--seed: expected a whole number from 0 to 2147483647, got \"{}\"", text));
            }
        } else if (option == "--figures") {
            example.figures = std::string(value("a folder to write SVG figures into"));
        } else if (const auto own = std::find_if(info.options.begin(), info.options.end(),
                                                 [&](const ProgramOption& entry) { return entry.name == option; });
                   own != info.options.end()) {
            example.options[own->name] = std::string(value(own->help));
        } else {
            throw UsageError(fmt::format("unknown option \"{}\"; run {} --help for the options", option, info.name));
        }
    }
    if (own_embeddings && !own_tokens) {
        example.tokens.clear();
        for (std::size_t row = 1; row <= example.embeddings.rows(); ++row) {
            example.tokens.push_back(fmt::format("t{}", row));
        }
    }
    const auto was_given = [&](std::string_view option) {
        return std::find(given.begin(), given.end(), option) != given.end();
    };
    const std::size_t features = example.embeddings.cols();
    check_rows("--wq", example.w_query, features, was_given("--wq"));
    check_rows("--wk", example.w_key, features, was_given("--wk"));
    check_rows("--wv", example.w_value, features, was_given("--wv"));
    if (example.w_key.cols() != example.w_query.cols()) {
        throw UsageError(fmt::format("--wk: expected {} (d_k, the same as --wq), got {}",
                                     count(example.w_query.cols(), "column"), example.w_key.cols()));
    }
    if (example.tokens.size() != example.embeddings.rows()) {
        throw UsageError(fmt::format("--tokens: expected {} (one per embedding row), got {}",
                                     count(example.embeddings.rows(), "name"), example.tokens.size()));
    }
    return example;
}

std::string usage(const ProgramInfo& info)
{
    std::string text = fmt::format("{}: {}\n\nUsage: {} [options]\n\n", info.name, info.summary, info.name);
    text += "Matrices are written row by row: rows separated by ';', entries by ','.\n";
    text += "With no options the program runs the chapter's own example.\n\n";
    const std::pair<std::string_view, std::string_view> options[] = {
        {"--tokens A,B,C", "one name per embedding row"},
        {"--embeddings M", "E, one row per token (n×d_model)"},
        {"--wq M", "W_Q, one row per embedding feature (d_model×d_k)"},
        {"--wk M", "W_K, one row per embedding feature (d_model×d_k)"},
        {"--wv M", "W_V, one row per embedding feature (d_model×d_v)"},
        {"--causal", "mask the positions after each token"},
        {"--precision N", "decimals to print, 0 to 10 (default 3)"},
        {"--seed N", "seed of the random experiment"},
        {"--figures DIR", "also write the chapter's figures as SVG files into DIR"},
        {"--help", "print this text"},
    };
    for (const auto& [option, help] : options) {
        const std::string_view name = option.substr(0, option.find(' '));
        const bool unused = std::any_of(info.unused_options.begin(), info.unused_options.end(),
                                        [&](const auto& entry) { return entry.first == name; });
        if (!unused && (name != "--seed" || info.uses_seed)) {
            text += fmt::format("  {:<20} {}\n", option, help);
        }
    }
    if (!info.options.empty()) {
        text += fmt::format("\nOptions of {}:\n", info.name);
    }
    for (const auto& own : info.options) {
        text += fmt::format("  {:<20} {} (default {})\n", own.name + " " + own.value, own.help, own.default_value);
    }
    return text;
}

namespace {

std::string_view option_text(const Example& example, std::string_view name)
{
    const auto found = example.options.find(name);
    if (found == example.options.end()) {
        throw std::logic_error(fmt::format("the program reads {} but does not declare it in ProgramInfo::options", name));
    }
    return found->second;
}

}  // namespace

Matrix matrix_option(const Example& example, std::string_view name)
{
    return parse_matrix(name, option_text(example, name));
}

long whole_option(const Example& example, std::string_view name, long low, long high)
{
    const std::string_view text = option_text(example, name);
    long number = 0;
    if (!parse_whole(text, low, high, number)) {
        throw UsageError(fmt::format("{}: expected a whole number from {} to {}, got \"{}\"", name, low, high, text));
    }
    return number;
}

std::string choice_option(const Example& example, std::string_view name, const std::vector<std::string>& choices)
{
    const std::string_view text = option_text(example, name);
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
        throw UsageError(fmt::format("{}: expected one of {}, got \"{}\"", name, fmt::join(choices, ", "), text));
    }
    return std::string(text);
}

int run_program(const ProgramInfo& info, int argc, char** argv,
                const std::function<std::string(const Example&)>& body)
{
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (const auto& arg : args) {
        if (arg == "--help" || arg == "-h") {
            std::cout << usage(info);
            return 0;
        }
    }
    try {
        const Example example = parse_arguments(info, args);
        const std::string output = body(example);
        std::cout << output;
        std::cout.flush();
        return std::cout ? 0 : 1;
    } catch (const std::exception& error) {
        std::cerr << info.name << ": " << error.what() << '\n';
        return 2;
    }
}

}  // namespace sa
