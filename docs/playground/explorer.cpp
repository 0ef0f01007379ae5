// The attention explorer's entry point (docs/_static/explorer.js): a saved model of the book,
// run once on the reader's text by the library's own forward pass, with every layer's and head's
// attention weights and the next-character probabilities after each position, as one JSON text.
// Linked into the playground module of a chapter whose page shows the explorer
// (docs/playground/playground.cmake); the page asks for it once per text, never once per hover.
// sample() is chapter 16's sampler on one row of those logits: the probabilities a rule draws from
// and the character it draws with the seed's n-th uniform number, as generate_text() draws it.
#include <emscripten/bind.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "char_text.hpp"
#include "cli.hpp"
#include "circuits.hpp"
#include "language_model.hpp"
#include "random.hpp"
#include "safetensors.hpp"
#include "sampling.hpp"
#include "softmax.hpp"
#include "training_files.hpp"

namespace sa {

namespace {

// A JSON string: the characters of the model's vocabulary are printable ASCII, tab and newline.
std::string json_string(const std::string& text)
{
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            quoted += '\\';
            quoted += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            quoted += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
            quoted += c;
        }
    }
    return quoted + "\"";
}

// The tokens of the reader's text, refused in one line where the model cannot read it.
std::vector<std::size_t> text_tokens(const SavedModel& saved, const Vocabulary& vocabulary, const std::string& text)
{
    check_ascii(text, "the text");
    const std::size_t longest = saved.model.shape.context;
    if (text.empty() || text.size() > longest) {
        throw UsageError(fmt::format("the text: expected 1 to {} characters (the model's context), got {}", longest,
                                     text.size()));
    }
    for (const char c : text) {
        if (vocabulary.token_of_byte[static_cast<unsigned char>(c)] < 0) {
            throw UsageError(fmt::format("the text: the character '{}' is not in the model's vocabulary of {} "
                                         "characters; use only characters of its training text",
                                         character_label(c), vocabulary.characters.size()));
        }
    }
    return encode(vocabulary, text);
}

// Each layer's heads' weights, row i holding columns 0 … i (the rest is the causal mask's 0):
// [layer][head][i][j]. Each number in the shortest form that reads back as the same double.
std::string weights_json(const ForwardTrace& trace, std::size_t heads, std::size_t n)
{
    std::string json = "[";
    for (std::size_t l = 0; l < trace.layers.size(); ++l) {
        const std::vector<Matrix> weights = trace_attention(trace.layers[l], heads, n, 0);
        json += l == 0 ? "[" : ",[";
        for (std::size_t h = 0; h < heads; ++h) {
            json += h == 0 ? "[" : ",[";
            for (std::size_t i = 0; i < n; ++i) {
                json += i == 0 ? "[" : ",[";
                for (std::size_t j = 0; j <= i; ++j) {
                    json += fmt::format("{}{}", j == 0 ? "" : ",", weights[h](i, j));
                }
                json += "]";
            }
            json += "]";
        }
        json += "]";
    }
    return json + "]";
}

// A matrix as rows of numbers, each in the shortest form that reads back as the same double.
std::string rows_json(const Matrix& matrix)
{
    std::string json = "[";
    for (std::size_t i = 0; i < matrix.rows(); ++i) {
        json += i == 0 ? "[" : ",[";
        for (std::size_t t = 0; t < matrix.cols(); ++t) {
            json += fmt::format("{}{}", t == 0 ? "" : ",", matrix(i, t));
        }
        json += "]";
    }
    return json + "]";
}

// A list of numbers as JSON, each in the shortest form that reads back as the same double.
std::string list_json(const std::vector<double>& values)
{
    std::string json = "[";
    for (std::size_t j = 0; j < values.size(); ++j) {
        json += fmt::format("{}{}", j == 0 ? "" : ",", values[j]);
    }
    return json + "]";
}

// The model at \p path on \p text, with the head (ablated_layer, ablated_head) zeroed where
// ablated_layer is not negative (as the chapter's ablation does): {"layers", "heads", "context",
// "vocabulary", "text", "ablated", "weights", "probabilities" (softmax_rows() of the logits), "logits"},
// or {"error": one line}.
std::string explore(const std::string& path, const std::string& text, int ablated_layer, int ablated_head)
{
    try {
        const SavedModel saved = load_safetensors(read_file(path, "the model"));
        const Vocabulary vocabulary = make_vocabulary(saved.vocabulary);
        const std::vector<std::size_t> tokens = text_tokens(saved, vocabulary, text);
        const LanguageModel& model = saved.model;
        const bool ablated = ablated_layer >= 0;
        if (ablated && (static_cast<std::size_t>(ablated_layer) >= model.layers.size() || ablated_head < 0 ||
                        static_cast<std::size_t>(ablated_head) >= model.shape.heads)) {
            throw UsageError(fmt::format("the ablation: layer {} head {} is not in the model ({} layers of {} heads)",
                                         ablated_layer, ablated_head, model.layers.size(), model.shape.heads));
        }
        const ForwardTrace trace =
            ablated ? ablated_forward(model, tokens, tokens.size(),
                                      {static_cast<std::size_t>(ablated_layer), static_cast<std::size_t>(ablated_head)})
                    : forward(model, tokens, tokens.size());
        return fmt::format("{{\"layers\":{},\"heads\":{},\"context\":{},\"vocabulary\":{},\"text\":{},\"ablated\":{},"
                           "\"weights\":{},\"probabilities\":{},\"logits\":{}}}", model.layers.size(), model.shape.heads,
                           model.shape.context, json_string(vocabulary.characters), json_string(text),
                           ablated ? fmt::format("[{},{}]", ablated_layer, ablated_head) : "null",
                           weights_json(trace, model.shape.heads, tokens.size()), rows_json(softmax_rows(trace.logits)),
                           rows_json(trace.logits));
    } catch (const std::exception& error) {
        return "{\"error\":" + json_string(error.what()) + "}";
    }
}

// One step of chapter 16's sampler on the logits z after a position: the probabilities the rule draws
// from (rule_probabilities(), or all of it on greedy_choice()) and the character it draws with u, the
// (draw + 1)-th uniform number of SplitMix64(seed), as generate_text() draws its (draw + 1)-th character:
// {"probabilities", "uniform", "drawn"}, or {"error": one line}.
std::string sample(const std::vector<double>& logits, double temperature, int top_k, bool greedy, double seed,
                   int draw)
{
    try {
        if (!(seed >= 0.0 && seed <= 9007199254740992.0 && std::floor(seed) == seed) || draw < 0) {
            throw UsageError(fmt::format("the seed: expected a whole number from 0 to 2^53, got {}", seed));
        }
        SplitMix64 generator(static_cast<std::uint64_t>(seed));
        double uniform = generator.uniform();
        for (int n = 0; n < draw; ++n) {
            uniform = generator.uniform();
        }
        std::vector<double> probabilities(logits.size(), 0.0);
        std::size_t drawn = 0;
        if (greedy) {
            drawn = greedy_choice(logits);
            probabilities[drawn] = 1.0;
        } else {
            probabilities = rule_probabilities(logits, temperature, static_cast<std::size_t>(std::max(top_k, 0)));
            drawn = inverse_cdf_draw(probabilities, uniform);
        }
        return fmt::format("{{\"probabilities\":{},\"uniform\":{},\"drawn\":{}}}", list_json(probabilities), uniform,
                           drawn);
    } catch (const std::exception& error) {
        return "{\"error\":" + json_string(error.what()) + "}";
    }
}

// The logits of one row, from the page's list of numbers.
std::string sample_row(const emscripten::val& logits, double temperature, int top_k, bool greedy, double seed,
                       int draw)
{
    return sample(emscripten::vecFromJSArray<double>(logits), temperature, top_k, greedy, seed, draw);
}

}  // namespace

}  // namespace sa

EMSCRIPTEN_BINDINGS(book_explorer)
{
    emscripten::function("explore", &sa::explore);
    emscripten::function("sample", &sa::sample_row);
}
