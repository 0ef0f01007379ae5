#include "generation_options.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "cli.hpp"
#include "svg.hpp"

namespace sa {

namespace {

double temperature_option(const Example& example)
{
    const std::string& text = example.options.at("--temperature");
    char* end = nullptr;
    const double t = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(t) || t <= 0.0 || t > 100.0) {
        throw UsageError(fmt::format("--temperature: expected a number above 0 and at most 100, got '{}'; "
                                     "τ -> 0 is the greedy choice, ask for it with --greedy", text));
    }
    return t;
}

std::size_t top_k_option(const Example& example, std::size_t v)
{
    const std::string& text = example.options.at("--top-k");
    if (text == "all") {
        return v;
    }
    char* end = nullptr;
    const long k = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || k < 1 || static_cast<std::size_t>(k) > v) {
        throw UsageError(fmt::format("--top-k: expected a whole number from 1 to d_vocab = {} (the vocabulary) or "
                                     "all, got '{}'", v, text));
    }
    return static_cast<std::size_t>(k);
}

}  // namespace

SamplingRule sampling_rule(const Example& example, std::size_t vocabulary)
{
    if (!flag_option(example, "--greedy")) {
        return {false, temperature_option(example), top_k_option(example, vocabulary)};
    }
    for (const char* option : {"--temperature", "--top-k"}) {
        if (example.given.contains(option)) {
            throw UsageError(fmt::format("--greedy and {}: choose one; --greedy takes the largest logit (the "
                                         "limit τ -> 0) and reads no temperature or top-k", option));
        }
    }
    return {true, 1.0, vocabulary};
}

std::vector<std::size_t> prompt_tokens(const Vocabulary& vocabulary, const std::string& prompt)
{
    check_ascii(prompt, "--prompt");  // a byte of UTF-8 is named by its code, never printed alone
    std::string outside;
    for (const char c : prompt) {
        const std::string label = "'" + character_label(c) + "'";
        if (vocabulary.token_of_byte[static_cast<unsigned char>(c)] < 0 && outside.find(label) == std::string::npos) {
            outside += (outside.empty() ? "" : ", ") + label;
        }
    }
    if (prompt.empty()) {
        throw UsageError("--prompt: the prompt is empty; expected at least one character for the model to "
                         "continue");
    }
    if (!outside.empty()) {
        throw UsageError(fmt::format("--prompt: the characters {} are not in the model's vocabulary of {} "
                                     "characters; use only characters of its training text", outside,
                                     vocabulary.characters.size()));
    }
    return encode(vocabulary, prompt);
}

void write_generation_speed(const std::string& path, const Report& report, const LanguageModel& model,
                            const std::vector<std::size_t>& prompt, const SamplingRule& rule, std::int64_t seed,
                            const std::vector<std::size_t>& lengths)
{
    std::string text = "Measured on the machine that built this copy: characters generated per second.\n"
                       "  length   with the cache   recomputing   ratio\n";
    Series cached_speed{.name = "with the KV cache"};
    Series full_speed{.name = "recomputing the text at every step"};
    for (const std::size_t length : lengths) {
        std::array<double, 2> seconds{};
        for (const bool cached : {true, false}) {
            const auto start = std::chrono::steady_clock::now();
            const auto bits = static_cast<std::uint64_t>(seed);
            if (generate_text(model, prompt, length, rule, bits, cached, Window::whole).tokens.size() != length) {
                throw std::logic_error("generate returned the wrong length");
            }
            seconds[cached ? 0 : 1] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        const double n = static_cast<double>(length);
        text += fmt::format("  {:>6}   {:>14.0f}   {:>11.0f}   {:>5.1f}\n", length, n / seconds[0], n / seconds[1],
                            seconds[1] / seconds[0]);
        cached_speed.x.push_back(n);
        cached_speed.y.push_back(n / seconds[0]);
        full_speed.x.push_back(n);
        full_speed.y.push_back(n / seconds[1]);
    }
    std::ofstream out(path);
    out << text;
    if (!out) {
        throw UsageError(fmt::format("--speed: cannot write the file {}", path));
    }
    report.line_plot("measured-speed.svg",
                     {.title = "Generation speed, measured on the machine that built this copy",
                      .x_label = "characters generated", .y_label = "characters per second",
                      .series = {cached_speed, full_speed}, .log_x = true, .log_y = true, .log_x_base = 10,
                      .log_y_base = 10});
}

}  // namespace sa
