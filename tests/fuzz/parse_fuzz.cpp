// A libFuzzer target for the command line: whatever the reader types, parse_arguments
// returns an example that fits together, or throws a UsageError or ShapeError whose
// message is one line. Anything else (another exception, a crash, a sanitizer report,
// a message of two lines) stops the run. tools/fuzz.sh builds and runs it.
//
// An input is a command line with one argument per line. Each input is also tried
// whole, as the value of a matrix, a name list and a number, so that values holding
// line breaks are covered too.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

namespace {

[[noreturn]] void fail(std::string_view what, const std::vector<std::string>& args)
{
    std::cerr << "contract broken: " << what << "\narguments:";
    for (const auto& arg : args) {
        std::cerr << " [" << arg << "]";
    }
    std::cerr << '\n';
    std::abort();
}

// The three kinds of program: Part I's plain one, one with a seed, unused options and
// options of its own, and one whose defaults are not square.
std::vector<sa::ProgramInfo> programs()
{
    sa::ProgramInfo plain{"plain", "the worked example", sa::mouse_eats_cheese()};
    sa::ProgramInfo own{"own", "a seed, unused options and options of its own", sa::mouse_eats_cheese()};
    own.uses_seed = true;
    own.unused_options = {{"--causal", "no mask here"}, {"--wv", "no values here"}};
    own.options = {{"--heads", "H", "number of heads", "2"},
                   {"--wo", "M", "output projection", "1,0;0,1"},
                   {"--positions", "P", "position encoding", "none"}};
    sa::Example wide = sa::mouse_eats_cheese();
    wide.tokens = {"a", "b"};
    wide.embeddings = sa::Matrix{{1, 0, 2}, {0, 1, 1}};
    wide.w_query = sa::Matrix{{1, 0}, {0, 1}, {1, 1}};
    wide.w_key = sa::Matrix{{0, 1}, {1, 0}, {1, 1}};
    wide.w_value = sa::Matrix{{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}};
    // The benchmarks' kind (chapters/13-at-scale/benchmark_kernels.cpp): flags of their own, a list of
    // sizes, none of the example's options, and a default fitted to the reader's numbers.
    sa::ProgramInfo tool{"tool", "flags and a list of its own", sa::mouse_eats_cheese()};
    tool.unused_options = {{"--tokens", "no example"}, {"--embeddings", "no example"}, {"--wq", "no example"}};
    tool.options = {{"--smoke", "", "a short run", ""},
                    {"--sizes", "N,N", "sizes", "preset"},
                    {"--parts", "P", "workers", "3", [](const sa::Example& example) {
                         return example.tokens.size() < 3 ? std::to_string(example.tokens.size()) : std::string();
                     }}};
    return {plain, own, sa::ProgramInfo{"wide", "defaults of 3 features, d_k 2, d_v 4", wide}, tool};
}

// What a returned example promises: the shapes fit, the names are one per row, no two
// names are the same, and every number is finite.
void check_example(const sa::ProgramInfo& info, const sa::Example& example, const std::vector<std::string>& args)
{
    const std::size_t d_model = example.embeddings.cols();
    if (example.embeddings.empty() || example.tokens.size() != example.embeddings.rows()) {
        fail("the token names do not match the embedding rows", args);
    }
    if (example.w_query.rows() != d_model || example.w_key.rows() != d_model ||
        example.w_key.cols() != example.w_query.cols()) {
        fail("W_Q and W_K do not fit the embeddings", args);
    }
    const bool reads_values = info.name != "own";
    if (reads_values && example.w_value.rows() != d_model) {
        fail("W_V does not fit the embeddings", args);
    }
    for (std::size_t i = 0; i < example.tokens.size(); ++i) {
        for (std::size_t j = i + 1; j < example.tokens.size(); ++j) {
            if (example.tokens[i] == example.tokens[j] || example.tokens[i].empty()) {
                fail("two tokens have the same name, or a name is empty", args);
            }
        }
    }
    if (example.precision < 0 || example.precision > 10 || example.seed < 0) {
        fail("the precision or the seed is out of its range", args);
    }
    for (const sa::Matrix* matrix : {&example.embeddings, &example.w_query, &example.w_key, &example.w_value}) {
        for (std::size_t i = 0; i < matrix->rows() * matrix->cols(); ++i) {
            if (!std::isfinite(matrix->data()[i])) {
                fail("a matrix holds NaN or an infinity", args);
            }
        }
    }
}

template <typename Call>
void expect_contract(const std::vector<std::string>& args, Call call)
{
    try {
        call();
    } catch (const sa::UsageError& error) {
        const std::string_view message = error.what();
        if (message.empty() || message.find_first_of("\n\r") != std::string_view::npos) {
            fail("a UsageError message is empty or longer than one line", args);
        }
    } catch (const sa::ShapeError& error) {
        const std::string_view message = error.what();
        if (message.empty() || message.find_first_of("\n\r") != std::string_view::npos) {
            fail("a ShapeError message is empty or longer than one line", args);
        }
    } catch (const std::exception& error) {
        fail(std::string("an exception other than UsageError or ShapeError: ") + error.what(), args);
    } catch (...) {
        fail("an exception that is not a std::exception", args);
    }
}

void run_all(const std::vector<sa::ProgramInfo>& infos, const std::vector<std::string>& args)
{
    for (const auto& info : infos) {
        expect_contract(args, [&] {
            const sa::Example example = sa::parse_arguments(info, args);
            check_example(info, example, args);
            if (info.name == "own") {
                (void)sa::whole_option(example, "--heads", 1, 8);
                (void)sa::matrix_option(example, "--wo");
                (void)sa::choice_option(example, "--positions", {"none", "sinusoidal", "rope"});
            }
            if (info.name == "tool") {
                (void)sa::flag_option(example, "--smoke");
                if (example.options.at("--sizes") != "preset") {
                    (void)sa::whole_list_option(example, "--sizes", 1, 32768);
                }
                (void)sa::whole_option(example, "--parts", 1, static_cast<long>(example.tokens.size()));
            }
        });
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::vector<sa::ProgramInfo> infos = programs();
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> args;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        args.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    if (!text.empty() && text.back() == '\n') {
        args.pop_back();  // a file's last line break ends the last argument
    }
    run_all(infos, args);
    for (const char* option : {"--embeddings", "--wq", "--tokens", "--precision", "--seed", "--heads", "--sizes"}) {
        run_all(infos, {option, text});
    }
    expect_contract({text}, [&] { (void)sa::parse_matrix("--wq", text); });
    return 0;
}
