#include "cli.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>
#include <system_error>

#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__EMSCRIPTEN__)
// The book's playground (docs/playground) compiles this file to WebAssembly, whose
// libc++ has no floating-point std::from_chars. fast_float (libfast-float-dev) parses
// the same texts to the same doubles, but does not report a number out of range.
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

// Blanks around an entry, a name or a number do not count (see parse_matrix).
std::string_view trim(std::string_view text)
{
    constexpr std::string_view blanks = " \t\n\r\v\f";
    const auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(blanks);
    return text.substr(first, last - first + 1);
}

// The reader's text inside a message, in quotes. A line break or another control
// character is written as an escape, so that the message stays on one line.
std::string quoted(std::string_view text)
{
    std::string out = "\"";
    for (const char character : text) {
        const auto byte = static_cast<unsigned char>(character);
        if (character == '\n') {
            out += "\\n";
        } else if (character == '\t') {
            out += "\\t";
        } else if (byte < 0x20 || byte == 0x7f) {
            out += fmt::format("\\x{:02x}", byte);
        } else {
            out += character;
        }
    }
    return out + "\"";
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

// One '+' may stand before a number, as in "+1"; a second sign ("+-1") may not.
std::string_view without_plus(std::string_view text)
{
    return text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+' ? text.substr(1) : text;
}

// Locale-independent: std::from_chars never consults the C locale. Returns what is
// wrong with the text, or an empty string when it is a number.
std::string parse_number(std::string_view text, double& value)
{
    const std::string_view number = without_plus(text);
#if defined(__EMSCRIPTEN__)
    // emscripten's libc++ has no floating-point std::from_chars; fast_float parses the same
    // way but does not report out of range, so check that as std::from_chars reports it:
    // infinity from digits, or 0 from digits that are not all 0.
    auto [end, error] = fast_float::from_chars(number.data(), number.data() + number.size(), value);
    const std::string_view digits = number.substr(0, number.find_first_of("eE"));
    if (error == std::errc() && ((std::isinf(value) && digits.find_first_of("iI") == std::string_view::npos) ||
                                 (value == 0.0 && digits.find_first_of("123456789") != std::string_view::npos))) {
        error = std::errc::result_out_of_range;
    }
#else
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
#endif
    if (end != number.data() + number.size() || error == std::errc::invalid_argument) {
        return fmt::format("{} is not a number", quoted(text));
    }
    if (error == std::errc::result_out_of_range) {
        return fmt::format("{} is out of the range of a double (about ±1.8e308)", quoted(text));
    }
    return {};
}

bool parse_whole(std::string_view text, long low, long high, long& value)
{
    const std::string_view number = without_plus(trim(text));
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    return !number.empty() && error == std::errc() && end == number.data() + number.size() && value >= low &&
           value <= high;
}

constexpr std::string_view matrix_format = "rows separated by ';' and entries by ',', e.g. \"2,0;1,2\"";

}  // namespace

Matrix parse_matrix(std::string_view option, std::string_view text)
{
    if (trim(text).empty()) {
        throw UsageError(fmt::format("{}: the matrix is empty; expected {}", option, matrix_format));
    }
    const std::vector<std::string_view> row_texts = split(text, ';');
    std::vector<std::vector<double>> rows;
    for (const auto row_text : row_texts) {
        const std::size_t row_number = rows.size() + 1;
        if (trim(row_text).empty()) {
            throw UsageError(fmt::format("{} row {} is empty{}; expected {}", option, row_number,
                                         row_number == row_texts.size() ? " (the matrix ends with ';')" : "",
                                         matrix_format));
        }
        std::vector<double> row;
        for (const auto entry_text : split(row_text, ',')) {
            const auto entry = trim(entry_text);
            double value = 0.0;
            const std::string problem = entry.empty() ? fmt::format("entry {} is empty", row.size() + 1)
                                                      : parse_number(entry, value);
            if (!problem.empty()) {
                throw UsageError(fmt::format("{} row {}: {}: {}; expected {}", option, row_number, quoted(row_text),
                                             problem, matrix_format));
            }
            if (!std::isfinite(value)) {  // a table of NaN teaches nothing, and would still end in "true"
                throw UsageError(fmt::format("{} row {}: {}: entry {} is {}; expected a finite number (NaN and "
                                             "infinities are refused)", option, row_number, quoted(row_text),
                                             row.size() + 1, quoted(entry)));
            }
            row.push_back(value);
        }
        if (!rows.empty() && row.size() != rows.front().size()) {
            throw UsageError(fmt::format("{} row {}: {} has {} but row 1 has {}; every row needs the same number",
                                         option, row_number, quoted(row_text), count(row.size(), "entry"),
                                         count(rows.front().size(), "entry")));
        }
        rows.push_back(std::move(row));
    }
    return Matrix::from_rows(rows);
}

std::string matrix_text(const Matrix& matrix)
{
    std::string text;
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            text += fmt::format("{}{}", c == 0 ? (r == 0 ? "" : ";") : ",", matrix(r, c));
        }
    }
    return text;
}

namespace {

// The options every program knows. One table serves the parser and --help.
struct CommonOption {
    std::string_view name;
    std::string_view placeholder;  // empty for a flag, which takes no value
    std::string_view help;
    std::string_view expected;     // what the value looks like, for "missing value"
};

constexpr std::array<CommonOption, 10> common_options{{
    {"--tokens", "A,B,C", "one name per embedding row", "names separated by ',', e.g. \"Mouse,Eats,Cheese\""},
    {"--embeddings", "M", "E, one row per token (n×d_model)", "a matrix such as \"2,0;1,2;2,0\""},
    {"--wq", "M", "W_Q, one row per embedding feature (d_model×d_k)", "a matrix such as \"0,1;1,0\""},
    {"--wk", "M", "W_K, one row per embedding feature (d_model×d_k)", "a matrix such as \"1,0;0,1\""},
    {"--wv", "M", "W_V, one row per embedding feature (d_model×d_v)", "a matrix such as \"1,0;0,1\""},
    {"--causal", "", "mask the positions after each token", ""},
    {"--precision", "N", "decimals to print, 0 to 10 (default 3)", "a whole number from 0 to 10"},
    {"--seed", "N", "seed of the random experiment, 0 to 2147483647", "a whole number from 0 to 2147483647"},
    {"--figures", "DIR", "also write the chapter's figures as SVG files into DIR", "a folder to write SVG figures into"},
    {"--help", "", "print this text", ""},
}};

bool reads(const ProgramInfo& info, std::string_view option)
{
    if (option == "--seed" && !info.uses_seed) {
        return false;
    }
    return std::none_of(info.unused_options.begin(), info.unused_options.end(),
                        [&](const auto& unused) { return unused.first == option; });
}

// Each option the reader gave, with its text ("" for a flag). An option given twice
// keeps its last value.
using GivenOptions = std::map<std::string, std::string, std::less<>>;

GivenOptions read_options(const ProgramInfo& info, const std::vector<std::string>& args)
{
    GivenOptions given;
    for (std::size_t i = 0; i < args.size(); ++i) {
        // "--wq=0,1;1,0" is the same as "--wq 0,1;1,0".
        const std::string_view arg = args[i];
        const std::size_t equals = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
        const std::string_view name = arg.substr(0, equals);
        for (const auto& [unused, reason] : info.unused_options) {
            if (name == unused) {
                throw UsageError(fmt::format("{}: {} does not use this option; {}", unused, info.name, reason));
            }
        }
        const auto common = std::find_if(common_options.begin(), common_options.end(),
                                         [&](const CommonOption& option) { return option.name == name; });
        const auto own = std::find_if(info.options.begin(), info.options.end(),
                                      [&](const ProgramOption& option) { return option.name == name; });
        if ((common == common_options.end() || !reads(info, name)) && own == info.options.end()) {
            throw UsageError(fmt::format("unknown option {}; run {} --help for the options", quoted(name), info.name));
        }
        const bool is_common = common != common_options.end() && reads(info, name);
        const std::string_view expected = is_common ? common->expected : own->help;
        if (is_common ? common->placeholder.empty() : own->value.empty()) {  // a flag
            if (equals != std::string_view::npos) {
                throw UsageError(fmt::format("{}: takes no value, got {}", name, quoted(arg.substr(equals + 1))));
            }
            given[std::string(name)] = "";
        } else if (equals != std::string_view::npos) {
            given[std::string(name)] = arg.substr(equals + 1);
        } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
            given[std::string(name)] = args[++i];
        } else {
            throw UsageError(fmt::format("{}: missing value; expected {}", name, expected));
        }
    }
    return given;
}

std::vector<std::string> parse_tokens(std::string_view text)
{
    std::vector<std::string> names;
    for (const auto name : split(text, ',')) {
        if (trim(name).empty()) {
            throw UsageError(fmt::format("--tokens: name {} of {} is empty; expected names separated by ','",
                                         names.size() + 1, quoted(text)));
        }
        names.emplace_back(trim(name));
    }
    // A name given twice is labelled with its position, "the#1" and "the#4", so
    // that the rows and columns of every table can be told apart.
    std::vector<std::string> labels = names;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (std::count(names.begin(), names.end(), names[i]) > 1) {
            labels[i] = fmt::format("{}#{}", names[i], i + 1);
        }
    }
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (std::find(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(i), labels[i]) !=
            labels.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw UsageError(fmt::format("--tokens: {} names two tokens, even after labelling repeated names with "
                                         "their position; rename one",
                                         quoted(labels[i])));
        }
    }
    return labels;
}

void check_rows(std::string_view option, const Matrix& matrix, std::size_t expected)
{
    if (matrix.rows() != expected) {
        throw UsageError(fmt::format("{}: expected {} (one per embedding feature), got {}", option,
                                     count(expected, "row"), matrix.rows()));
    }
}

// W_Q, W_K and W_V after the reader's options. A matrix the reader gave must have
// one row per embedding feature, and W_Q and W_K the same number of columns (d_k).
// A default that no longer fits becomes the identity of the shape needed; the
// names of those the program reads are returned, for the note run_program prints.
std::vector<std::string> fit_projections(const ProgramInfo& info, const GivenOptions& given, Example& example)
{
    const std::size_t d_model = example.embeddings.cols();
    const bool own_wq = given.contains("--wq");
    const bool own_wk = given.contains("--wk");
    const bool own_wv = given.contains("--wv");
    if (own_wq) {
        check_rows("--wq", example.w_query, d_model);
    }
    if (own_wk) {
        check_rows("--wk", example.w_key, d_model);
    }
    if (own_wv) {
        check_rows("--wv", example.w_value, d_model);
    }
    if (own_wq && own_wk && !info.grouped_keys && example.w_key.cols() != example.w_query.cols()) {
        throw UsageError(fmt::format("--wk: expected {} (d_k, the same as --wq), got {}",
                                     count(example.w_query.cols(), "column"), example.w_key.cols()));
    }
    const bool default_wq_fits = example.w_query.rows() == d_model;
    const std::size_t d_k = own_wq ? example.w_query.cols()
                            : own_wk && !info.grouped_keys ? example.w_key.cols()
                            : default_wq_fits ? example.w_query.cols()
                                              : d_model;
    // Grouped keys (chapter 18): the default W_K keeps its own width beside the default W_Q; beside
    // the reader's W_Q it becomes the identity of W_Q's width, one key/value head per query head.
    const bool default_wk_kept = info.grouped_keys && !own_wq && default_wq_fits && example.w_key.rows() == d_model;
    const std::size_t key_cols = default_wk_kept ? example.w_key.cols() : d_k;
    const std::size_t d_v = example.w_value.rows() == d_model ? example.w_value.cols() : d_model;
    std::vector<std::string> adapted;
    const auto fit = [&](std::string_view option, std::string_view name, Matrix& matrix, std::size_t cols) {
        if (matrix.rows() != d_model || matrix.cols() != cols) {
            matrix = identity(d_model, cols);
            if (reads(info, option)) {
                adapted.push_back(fmt::format("{} ({})", name, shape(matrix)));
            }
        }
    };
    if (!own_wq) {
        fit("--wq", "W_Q", example.w_query, d_k);
    }
    if (!own_wk) {
        fit("--wk", "W_K", example.w_key, key_cols);
    }
    if (!own_wv) {
        fit("--wv", "W_V", example.w_value, d_v);
    }
    return adapted;
}

// The parsed example, the projections whose defaults were replaced, and the program's
// own options whose defaults were, each with its new text ("--parts 2").
struct CommandLine {
    Example example;
    std::vector<std::string> adapted = {};
    std::vector<std::string> fitted = {};
};

// The text given for an option, or null when the command line does not have it.
const std::string* given_text(const GivenOptions& given, std::string_view option)
{
    const auto found = given.find(option);
    return found == given.end() ? nullptr : &found->second;
}

// The worked example's options: its embeddings and tokens, the three projections and the mask.
void read_example_options(const GivenOptions& given, Example& example)
{
    const auto text_of = [&](std::string_view option) { return given_text(given, option); };
    if (const std::string* text = text_of("--embeddings")) {
        example.embeddings = parse_matrix("--embeddings", *text);
        example.tokens.clear();
        for (std::size_t row = 1; row <= example.embeddings.rows(); ++row) {
            example.tokens.push_back(fmt::format("t{}", row));
        }
    }
    if (const std::string* text = text_of("--tokens")) {
        example.tokens = parse_tokens(*text);
    }
    if (const std::string* text = text_of("--wq")) {
        example.w_query = parse_matrix("--wq", *text);
    }
    if (const std::string* text = text_of("--wk")) {
        example.w_key = parse_matrix("--wk", *text);
    }
    if (const std::string* text = text_of("--wv")) {
        example.w_value = parse_matrix("--wv", *text);
    }
    example.causal = example.causal || given.contains("--causal");
}

CommandLine read_command_line(const ProgramInfo& info, const std::vector<std::string>& args)
{
    const GivenOptions given = read_options(info, args);
    const auto text_of = [&](std::string_view option) { return given_text(given, option); };
    CommandLine result{info.defaults};
    Example& example = result.example;
    for (const auto& own : info.options) {
        const std::string* text = text_of(own.name);
        example.options[own.name] = text == nullptr ? own.default_value : own.value.empty() ? "on" : *text;
        if (text != nullptr) {
            example.given.insert(own.name);
        }
    }
    read_example_options(given, example);
    if (const std::string* text = text_of("--precision")) {
        long digits = 0;
        if (!parse_whole(*text, 0, 10, digits)) {
            throw UsageError(fmt::format("--precision: expected a whole number from 0 to 10, got {}", quoted(*text)));
        }
        example.precision = static_cast<int>(digits);
    }
    if (const std::string* text = text_of("--seed")) {
        if (!parse_whole(*text, 0, 2147483647L, example.seed)) {
            throw UsageError(fmt::format("--seed: expected a whole number from 0 to 2147483647, got {}", quoted(*text)));
        }
    }
    if (const std::string* text = text_of("--figures")) {
        example.figures = *text;
    }
    result.adapted = fit_projections(info, given, example);
    if (example.tokens.size() != example.embeddings.rows()) {
        throw UsageError(fmt::format("--tokens: expected {} (one per embedding row), got {}",
                                     count(example.embeddings.rows(), "name"), example.tokens.size()));
    }
    for (const auto& own : info.options) {  // in order: a fit may read the options before it
        if (own.fit && !given.contains(own.name)) {
            if (const std::string fitted = own.fit(example); !fitted.empty()) {
                example.options[own.name] = fitted;
                result.fitted.push_back(fmt::format("{} {}", own.name, fitted));
            }
        }
    }
    return result;
}

}  // namespace

Example parse_arguments(const ProgramInfo& info, const std::vector<std::string>& args)
{
    return read_command_line(info, args).example;
}

std::string usage(const ProgramInfo& info)
{
    std::string text = fmt::format("{}: {}\n\nUsage: {} [options]\n\n", info.name, info.summary, info.name);
    if (reads(info, "--embeddings")) {  // the benchmark, for one, draws its own numbers
        text += "Matrices are written row by row: rows separated by ';', entries by ','.\n";
        text += "Every entry is a finite number; nan and inf are refused.\n";
        text += "With no options the program runs the chapter's own example. A projection\n";
        text += "you do not give keeps the example's while it fits your numbers; when it\n";
        text += "does not, it is the identity of the shape they need (ones on the diagonal).\n";
        if (std::any_of(info.options.begin(), info.options.end(), [](const auto& own) { return bool(own.fit); })) {
            text += "The program's own options below follow the same rule: one you do not\n";
            text += "give keeps its default while that fits, and otherwise takes the value\n";
            text += "your numbers need.\n";
        }
        text += "A note on stderr names each default that was replaced.\n";
        text += "\n";
    }
    for (const auto& option : common_options) {
        if (option.name == "--help" || reads(info, option.name)) {
            const std::string name = option.placeholder.empty() ? std::string(option.name)
                                                                 : fmt::format("{} {}", option.name, option.placeholder);
            text += fmt::format("  {:<20} {}\n", name, option.help);
        }
    }
    if (!info.options.empty()) {
        text += fmt::format("\nOptions of {}:\n", info.name);
    }
    for (const auto& own : info.options) {
        // A flag, or an option with no default (a file written only when asked for), shows no default.
        text += own.value.empty() ? fmt::format("  {:<20} {}\n", own.name, own.help)
                : own.default_value.empty() ? fmt::format("  {:<20} {}\n", own.name + " " + own.value, own.help)
                                            : fmt::format("  {:<20} {} (default {})\n", own.name + " " + own.value,
                                                          own.help, own.default_value);
    }
    return text;
}

namespace {

// "a", "a and b", "a, b and c"; with \p serial, "a, b, and c" (items that are lists themselves).
std::string and_list(const std::vector<std::string>& items, bool serial = false)
{
    if (items.size() < 2) {
        return items.empty() ? std::string() : items.front();
    }
    return fmt::format("{}{} and {}", fmt::join(items.begin(), items.end() - 1, ", "), serial ? "," : "", items.back());
}

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
        throw UsageError(fmt::format("{}: expected a whole number from {} to {}, got {}", name, low, high, quoted(text)));
    }
    return number;
}

std::size_t rotary_heads_option(const Example& example, std::size_t width)
{
    const auto heads = static_cast<std::size_t>(whole_option(example, "--heads", 1, 32));
    if (width % heads != 0 || (width / heads) % 2 != 0) {
        std::vector<std::string> fit;
        for (std::size_t h = 1; h <= 32 && width / h >= 2; ++h) {
            if (width % h == 0 && (width / h) % 2 == 0) {
                fit.push_back(std::to_string(h));
            }
        }
        if (fit.empty()) {
            throw UsageError(fmt::format("--heads: d = {} is too narrow to cut into slices of an even width", width));
        }
        std::string choices = fit.back();
        if (fit.size() > 1) {
            fit.pop_back();
            choices = fmt::format("{} or {}", fmt::join(fit, ", "), choices);
        }
        throw UsageError(fmt::format("--heads: {} heads do not cut d = {} into slices of an even width; choose {}",
                                     heads, width, choices));
    }
    return heads;
}

std::vector<long> whole_list_option(const Example& example, std::string_view name, long low, long high)
{
    const std::string_view text = option_text(example, name);
    std::vector<long> numbers;
    for (const auto entry : split(text, ',')) {
        long number = 0;
        if (!parse_whole(entry, low, high, number)) {
            throw UsageError(fmt::format("{}: entry {} of {} is {}; expected whole numbers from {} to {} separated "
                                         "by ',', e.g. \"{},{}\"", name, numbers.size() + 1, quoted(text),
                                         trim(entry).empty() ? "empty" : quoted(entry), low, high, low, high));
        }
        numbers.push_back(number);
    }
    return numbers;
}

bool flag_option(const Example& example, std::string_view name)
{
    return option_text(example, name) == "on";
}

std::string choice_option(const Example& example, std::string_view name, const std::vector<std::string>& choices)
{
    const std::string_view text = trim(option_text(example, name));
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
        throw UsageError(fmt::format("{}: expected one of {}, got {}", name, fmt::join(choices, ", "),
                                     quoted(option_text(example, name))));
    }
    return std::string(text);
}

namespace {

// Whether a path exists, and whether it is a folder (POSIX, as the playground's file system has it).
bool exists(const std::string& path, bool* folder = nullptr)
{
    struct stat info = {};
    const bool found = ::stat(path.c_str(), &info) == 0;
    if (folder != nullptr) {
        *folder = found && S_ISDIR(info.st_mode);
    }
    return found;
}

bool writable(const std::string& path)
{
    return ::access(path.c_str(), W_OK) == 0;
}

}  // namespace

std::string output_problem(const std::string& path, bool folder)
{
    bool is_folder = false;
    const bool found = exists(path, &is_folder);
    if (folder) {
        if (!found) {
            return "it does not exist; create it first";
        }
        return !is_folder ? "it is a file, not a folder" : writable(path) ? "" : "it is not writable";
    }
    if (is_folder) {
        return "it is a folder; give a file name";
    }
    const std::size_t slash = path.rfind('/');
    const std::string into = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    bool into_folder = false;
    if (!exists(into, &into_folder)) {
        return fmt::format("the folder {} does not exist", into);
    }
    if (!into_folder) {
        return fmt::format("{} is not a folder", into);
    }
    if (found) {  // the run would replace it
        return writable(path) ? "" : "it is not writable";
    }
    return writable(into) ? "" : fmt::format("the folder {} is not writable", into);
}

namespace {

// Every file the run would write, checked before it starts (output_problem()).
void check_outputs(const ProgramInfo& info, const Example& example)
{
    if (!example.figures.empty()) {
        if (const std::string problem = output_problem(example.figures, true); !problem.empty()) {
            throw UsageError(fmt::format("--figures: cannot write into the folder {}: {}", example.figures, problem));
        }
    }
    for (const std::string& option : info.writes) {
        const auto given = example.options.find(option);
        if (given == example.options.end() || given->second.empty()) {
            continue;
        }
        if (const std::string problem = output_problem(given->second, false); !problem.empty()) {
            throw UsageError(fmt::format("{}: cannot write the file {}: {}", option, given->second, problem));
        }
    }
}

}  // namespace

void keep_freed_memory()
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int run_program(const ProgramInfo& info, int argc, char** argv,
                const std::function<std::string(const Example&)>& body)
{
    keep_freed_memory();
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (const auto& arg : args) {
        if (arg == "--help" || arg == "-h") {
            std::cout << usage(info);
            return 0;
        }
    }
    try {
        const CommandLine command_line = read_command_line(info, args);
        check_outputs(info, command_line.example);
        const std::string output = body(command_line.example);
        std::cout << output;
        std::cout.flush();
        const auto& adapted = command_line.adapted;
        std::vector<std::string> phrases;  // "the identity for W_Q (2×2) and W_V (2×2)", "--parts 2"
        if (!adapted.empty()) {
            phrases.push_back(fmt::format("the identity for {}", and_list(adapted)));
        }
        phrases.insert(phrases.end(), command_line.fitted.begin(), command_line.fitted.end());
        if (!phrases.empty()) {
            const bool several = adapted.size() + command_line.fitted.size() > 1;
            std::cerr << fmt::format("{}: note: using {}, as {} not fit your numbers\n", info.name,
                                     and_list(phrases, adapted.size() > 1), several ? "their defaults do" : "its default does");
        }
        return std::cout ? 0 : 1;
    } catch (const std::exception& error) {
        // One write, not four: under mpirun the launcher's own message, sent when another process
        // ends, could otherwise fall between the program's name and the reason.
        std::cerr << fmt::format("{}: {}\n", info.name, error.what());
        return 2;
    }
}

}  // namespace sa
