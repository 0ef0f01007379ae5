#include "char_text.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

namespace sa {

namespace {

std::size_t line_of(const std::string& text, std::size_t position)
{
    std::size_t line = 1;
    for (std::size_t i = 0; i < position; ++i) {
        line += text[i] == '\n' ? 1 : 0;
    }
    return line;
}

// Whether the model reads this byte: printable ASCII, a tab, a newline or a carriage return.
bool plain(char character)
{
    const auto byte = static_cast<unsigned char>(character);
    return (byte >= 0x20 && byte < 0x7f) || byte == '\n' || byte == '\t' || byte == '\r';
}

// A character as a message names it; a byte that is not plain ASCII by its code, since
// printed alone it would be garbled (the first byte of "é" in UTF-8 is 0xC3).
std::string quoted(char character)
{
    if (!plain(character)) {
        return fmt::format("byte 0x{:02X}", static_cast<unsigned char>(character));
    }
    return character == '\n' ? "a newline" : fmt::format("'{}'", character_label(character));
}

}  // namespace

Vocabulary make_vocabulary(const std::string& text)
{
    std::array<bool, 256> seen{};
    for (const char character : text) {
        seen[static_cast<unsigned char>(character)] = true;
    }
    Vocabulary vocabulary;
    vocabulary.token_of_byte.fill(-1);
    for (std::size_t byte = 0; byte < seen.size(); ++byte) {
        if (seen[byte]) {
            vocabulary.token_of_byte[byte] = static_cast<int>(vocabulary.characters.size());
            vocabulary.characters.push_back(static_cast<char>(byte));
        }
    }
    return vocabulary;
}

std::vector<std::size_t> encode(const Vocabulary& vocabulary, const std::string& text)
{
    std::vector<std::size_t> tokens;
    tokens.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const int token = vocabulary.token_of_byte[static_cast<unsigned char>(text[i])];
        if (token < 0) {
            throw std::invalid_argument(fmt::format("encode: {} on line {} is not in the vocabulary of {} characters",
                                                    quoted(text[i]), line_of(text, i),
                                                    vocabulary.characters.size()));
        }
        tokens.push_back(static_cast<std::size_t>(token));
    }
    return tokens;
}

std::string decode(const Vocabulary& vocabulary, const std::vector<std::size_t>& tokens)
{
    std::string text;
    text.reserve(tokens.size());
    for (const std::size_t token : tokens) {
        text.push_back(vocabulary.characters.at(token));
    }
    return text;
}

std::string character_label(char character)
{
    if (character == '\n') {
        return "\\n";
    }
    if (character == ' ') {
        return "␣";
    }
    if (character == '\t') {
        return "\\t";
    }
    if (character == '\r') {
        return "\\r";
    }
    return std::string(1, character);
}

void check_ascii(const std::string& text, const std::string& name)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!plain(text[i])) {
            throw std::invalid_argument(fmt::format("{}: {} on line {} is not plain ASCII; the model reads ASCII text "
                                                    "only (printable characters, tabs and newlines)",
                                                    name, quoted(text[i]), line_of(text, i)));
        }
    }
}

void check_plain_text(const std::string& text, const std::string& name)
{
    if (text.empty()) {
        throw std::invalid_argument(fmt::format("{}: the file is empty; give a plain text of at least 10 lines", name));
    }
    check_ascii(text, name);
}

TextSplit split_every_tenth_line(const std::string& text, const std::string& name)
{
    if (make_vocabulary(text).characters.size() == 1) {
        throw std::invalid_argument(fmt::format("{}: the text holds one distinct character ({}); there is nothing to "
                                                "predict, give a text with at least two", name, quoted(text[0])));
    }
    TextSplit split;
    std::size_t line = 1;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t newline = text.find('\n', start);
        const std::size_t end = newline == std::string::npos ? text.size() : newline + 1;
        (line % 10 == 0 ? split.held_out : split.training).append(text, start, end - start);
        start = end;
        ++line;
    }
    if (line <= 10) {
        throw std::invalid_argument(fmt::format("{}: the text has {} line{}; it needs at least 10, since every tenth "
                                                "line is held out to measure the model",
                                                name, line - 1, line == 2 ? "" : "s"));
    }
    check_split(split, name);
    return split;
}

void check_split(const TextSplit& split, const std::string& name)
{
    const Vocabulary vocabulary = make_vocabulary(split.training);
    if (vocabulary.characters.size() < 2) {
        throw std::invalid_argument(fmt::format("{}: the training text holds one distinct character ({}); there is "
                                                "nothing to predict, give a text with at least two",
                                                name, quoted(vocabulary.characters.at(0))));
    }
    for (std::size_t i = 0; i < split.held_out.size(); ++i) {
        if (vocabulary.token_of_byte[static_cast<unsigned char>(split.held_out[i])] < 0) {
            throw std::invalid_argument(fmt::format("{}: the held-out text (every tenth line) holds {} on its line {}, "
                                                    "which the training text never uses; every held-out character "
                                                    "must be in the vocabulary, the training text's characters",
                                                    name, quoted(split.held_out[i]), line_of(split.held_out, i)));
        }
    }
}

BigramCounts count_bigrams(const std::vector<std::size_t>& tokens, std::size_t vocabulary)
{
    BigramCounts counts{vocabulary, std::vector<double>(vocabulary * vocabulary, 0.0),
                        std::vector<double>(vocabulary, 0.0)};
    for (std::size_t j = 1; j < tokens.size(); ++j) {
        counts.pairs.at(tokens[j - 1] * vocabulary + tokens[j]) += 1.0;
        counts.firsts.at(tokens[j - 1]) += 1.0;
    }
    return counts;
}

//> bigram
double bigram_probability(const BigramCounts& counts, std::size_t previous, std::size_t next)
{
    const auto v = static_cast<double>(counts.vocabulary);
    return (counts.pairs.at(previous * counts.vocabulary + next) + 1.0) / (counts.firsts.at(previous) + v);
}
//< bigram

double bigram_loss(const BigramCounts& counts, const std::vector<std::size_t>& tokens,
                   const std::vector<std::size_t>& targets)
{
    if (targets.empty()) {
        throw std::invalid_argument("bigram_loss: no position to predict");
    }
    double total = 0.0;
    for (const std::size_t j : targets) {
        if (j == 0 || j >= tokens.size()) {
            throw std::invalid_argument(fmt::format("bigram_loss: position {} has no previous character in a text "
                                                    "of {}", j, tokens.size()));
        }
        total -= std::log(bigram_probability(counts, tokens[j - 1], tokens[j]));
    }
    return total / static_cast<double>(targets.size());
}

std::vector<std::size_t> all_targets(std::size_t length)
{
    std::vector<std::size_t> targets;
    for (std::size_t j = 1; j < length; ++j) {
        targets.push_back(j);
    }
    return targets;
}

namespace {

// The n − 1 tokens before position j read as digits in base V: the key of their context.
std::uint64_t context_key(const std::vector<std::size_t>& tokens, std::size_t position, std::size_t order,
                          std::size_t vocabulary)
{
    std::uint64_t key = 0;
    for (std::size_t k = position + 1 - order; k < position; ++k) {
        key = key * vocabulary + tokens[k];
    }
    return key;
}

// The most sequences count_ngrams() counts in an array (8 MiB of counts) rather than straight into its map:
// V^n up to n = 3 for the book's 63 characters, where a text of millions of characters repeats each many times.
constexpr std::uint64_t dense_sequences = std::uint64_t{1} << 20;

void check_tokens_below(const std::vector<std::size_t>& tokens, std::size_t first, std::size_t last,
                        std::size_t vocabulary, const char* function)
{
    for (std::size_t k = first; k <= last; ++k) {
        if (tokens[k] >= vocabulary) {
            throw std::invalid_argument(fmt::format("{}: token {} at position {} is not below V = {}", function,
                                                    tokens[k], k, vocabulary));
        }
    }
}

}  // namespace

NgramCounts count_ngrams(const std::vector<std::size_t>& training, std::size_t order, std::size_t vocabulary)
{
    if (order == 0 || vocabulary == 0) {
        throw std::invalid_argument(fmt::format("count_ngrams: order {} and V = {}; both must be at least 1", order,
                                                vocabulary));
    }
    std::uint64_t largest = 1;  // V^n, the number of keys of the sequences
    for (std::size_t k = 0; k < order; ++k) {
        if (largest > UINT64_MAX / vocabulary) {
            throw std::invalid_argument(fmt::format("count_ngrams: V^n = {}^{} does not fit in 64 bits; choose a "
                                                    "smaller order", vocabulary, order));
        }
        largest *= vocabulary;
    }
    if (!training.empty()) {
        check_tokens_below(training, 0, training.size() - 1, vocabulary, "count_ngrams");
    }
    NgramCounts counts{order, vocabulary, {}, {}};
    if (largest <= dense_sequences) {  // counted in an array, then the sequences seen kept
        std::vector<double> dense(largest, 0.0);
        for (std::size_t j = order - 1; j < training.size(); ++j) {
            dense[context_key(training, j, order, vocabulary) * vocabulary + training[j]] += 1.0;
        }
        for (std::uint64_t sequence = 0; sequence < largest; ++sequence) {
            if (dense[sequence] != 0.0) {
                counts.sequences.emplace(sequence, dense[sequence]);
            }
        }
    } else {
        for (std::size_t j = order - 1; j < training.size(); ++j) {
            counts.sequences[context_key(training, j, order, vocabulary) * vocabulary + training[j]] += 1.0;
        }
    }
    // count(context) = Σ_next count(context, next): one addition per distinct sequence, not per position
    // (whole numbers, so the sum is exact in any order).
    for (const auto& [sequence, count] : counts.sequences) {
        counts.contexts[sequence / vocabulary] += count;
    }
    return counts;
}

//> ngram
double ngram_probability(const NgramCounts& counts, const std::vector<std::size_t>& tokens, std::size_t position)
{
    if (position + 1 < counts.order || position >= tokens.size()) {
        throw std::invalid_argument(fmt::format("ngram_probability: position {} does not have the {} tokens before "
                                                "it that order {} reads, in a text of {}", position, counts.order - 1,
                                                counts.order, tokens.size()));
    }
    check_tokens_below(tokens, position + 1 - counts.order, position, counts.vocabulary, "ngram_probability");
    const std::uint64_t context = context_key(tokens, position, counts.order, counts.vocabulary);
    const auto seen = [](const std::unordered_map<std::uint64_t, double>& map, std::uint64_t key) {
        const auto found = map.find(key);
        return found == map.end() ? 0.0 : found->second;
    };
    const double together = seen(counts.sequences, context * counts.vocabulary + tokens[position]);
    return (together + 1.0) / (seen(counts.contexts, context) + static_cast<double>(counts.vocabulary));
}
//< ngram

double ngram_loss(const NgramCounts& counts, const std::vector<std::size_t>& tokens,
                  const std::vector<std::size_t>& positions)
{
    if (positions.empty()) {
        throw std::invalid_argument("ngram_loss: no position to predict");
    }
    double total = 0.0;
    for (const std::size_t j : positions) {
        total -= std::log(ngram_probability(counts, tokens, j));
    }
    return total / static_cast<double>(positions.size());
}

std::vector<std::size_t> positions_with_context(const std::vector<std::size_t>& positions, std::size_t order)
{
    std::vector<std::size_t> kept;
    for (const std::size_t j : positions) {
        if (j + 1 >= order) {
            kept.push_back(j);
        }
    }
    return kept;
}

}  // namespace sa
