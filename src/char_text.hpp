/// \file char_text.hpp
/// \brief Chapter 14's text: characters as tokens, the vocabulary, the split into training
///        and held-out text, and the counted n-gram baselines every model must beat.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace sa {

/// \brief The distinct characters of a training text, in byte order, and the token of each.
///
/// A token is a character's position in characters: with characters "\n ,ab" the token of
/// 'a' is 3. The book reads plain ASCII text, one byte per character.
struct Vocabulary {
    std::string characters = {};                 ///< the distinct characters, in increasing byte order
    std::array<int, 256> token_of_byte = {};     ///< the token of each byte, −1 for a byte not in the text
};

/// \brief The vocabulary of a text: its distinct characters in byte order.
/// \param text the training text
/// \return the vocabulary; V = characters.size()
[[nodiscard]] Vocabulary make_vocabulary(const std::string& text);

/// \brief The tokens of a text under a vocabulary, one per character.
/// \param vocabulary from make_vocabulary()
/// \param text the text; every character must be in the vocabulary
/// \return the tokens, each from 0 to V − 1
/// \throws std::invalid_argument naming the first character outside the vocabulary and its line
[[nodiscard]] std::vector<std::size_t> encode(const Vocabulary& vocabulary, const std::string& text);

/// \brief The characters of tokens, the inverse of encode().
/// \param vocabulary the vocabulary
/// \param tokens tokens from 0 to V − 1
/// \return the text
/// \throws std::out_of_range if a token is not below V
[[nodiscard]] std::string decode(const Vocabulary& vocabulary, const std::vector<std::size_t>& tokens);

/// \brief A character as a label in a table or figure: "\n" for a newline, "␣" for a space,
///        the character itself otherwise.
/// \param character the character
/// \return the label
[[nodiscard]] std::string character_label(char character);

/// \brief A training text and its held-out text.
struct TextSplit {
    std::string training = {};  ///< the text the model learns from
    std::string held_out = {};  ///< the text it is measured on, never trained on
};

/// \brief Checks that a reader's text holds only what the model reads: printable ASCII, tabs,
///        newlines and carriage returns, one byte per character.
/// \param text the text (a file's bytes, a prompt)
/// \param name how to name it in a message, e.g. `"--prompt"`
/// \throws std::invalid_argument naming the first other byte in hexadecimal and its line, e.g.
///         `--prompt: byte 0xC3 on line 1 is not plain ASCII; the model reads ASCII text only
///         (printable characters, tabs and newlines)`: the first byte of "é" in UTF-8, which a
///         terminal could not show alone
void check_ascii(const std::string& text, const std::string& name);

/// \brief Checks that a file's bytes are plain text the book can read: not empty, and ASCII as
///        check_ascii() takes it.
/// \param text the file's bytes
/// \param name how to name the file in a message, e.g. `"--text book.txt"`
/// \throws std::invalid_argument if the text is empty or holds another byte, naming the byte and
///         its line, e.g. `--text a.bin: byte 0x00 on line 1 is not plain ASCII; the model reads
///         ASCII text only (printable characters, tabs and newlines)`
void check_plain_text(const std::string& text, const std::string& name);

/// \brief The reader's text split by lines: every tenth line (the 10th, 20th, …) is held out,
///        the others are for training; each line keeps its newline.
///
/// It is the rule the book's King James text follows by chapters (every tenth chapter held out),
/// applied to lines because a reader's text has no chapters.
/// \param text the whole text, already checked by check_plain_text()
/// \param name how to name the file in a message
/// \return the split
/// \throws std::invalid_argument if the text holds one distinct character, has fewer than 10 lines, if the training lines hold
///         fewer than two distinct characters, or if a held-out line holds a character the
///         training lines never use (the vocabulary is the training text's characters)
[[nodiscard]] TextSplit split_every_tenth_line(const std::string& text, const std::string& name);

/// \brief Checks that a split can be used: at least two distinct training characters and no
///        held-out character outside the training text's vocabulary.
/// \param split the two texts
/// \param name how to name the text in a message
/// \throws std::invalid_argument naming the problem in one line
void check_split(const TextSplit& split, const std::string& name);

/// \brief Character pairs counted in a training text: count(a, b) is how often b follows a.
struct BigramCounts {
    std::size_t vocabulary = 0;            ///< V
    std::vector<double> pairs = {};        ///< V×V, row a, column b: how often b follows a
    std::vector<double> firsts = {};       ///< V: how often a is followed by anything, the row sums
};

/// \brief Counts every pair of neighbouring tokens.
/// \param tokens the training tokens
/// \param vocabulary V; every token is below it
/// \return the counts
[[nodiscard]] BigramCounts count_bigrams(const std::vector<std::size_t>& tokens, std::size_t vocabulary);

/// \brief The bigram's probability with add-one (Laplace) smoothing:
///        \f$ P(b \mid a) = \frac{\mathrm{count}(a, b) + 1}{\mathrm{count}(a) + V} \f$.
///
/// Every pair gets one extra, imagined sighting, so a pair never seen in training still has a
/// small probability instead of 0 (whose loss would be infinite).
/// \param counts from count_bigrams()
/// \param previous a
/// \param next b
/// \return \f$ P(b \mid a) \f$
[[nodiscard]] double bigram_probability(const BigramCounts& counts, std::size_t previous, std::size_t next);

/// \brief The mean cross-entropy of the bigram on chosen characters of a text, in nats:
///        \f$ -\frac{1}{|T|} \sum_{j \in T} \ln P(t_j \mid t_{j-1}) \f$.
/// \param counts from count_bigrams()
/// \param tokens the text's tokens
/// \param targets the positions j ≥ 1 to predict, in the order they are summed
/// \return the loss in nats per character
/// \throws std::invalid_argument if there is no target or one is 0 or past the end
[[nodiscard]] double bigram_loss(const BigramCounts& counts, const std::vector<std::size_t>& tokens,
                                 const std::vector<std::size_t>& targets);

/// \brief Every position of a text from the second on: 1, 2, …, n − 1.
/// \param length n, the number of tokens
/// \return the positions
[[nodiscard]] std::vector<std::size_t> all_targets(std::size_t length);

/// \brief Counted n-grams of one order n ≥ 1: how often each run of n − 1 tokens (the context) was
///        followed by each token, in a training text.
///
/// The counts are kept in hash maps keyed by the tokens read as digits in base V, so a model of
/// order 5 over a text of millions of characters holds only the contexts the text has. Order 1
/// has one, empty context, followed by every token of the text.
struct NgramCounts {
    std::size_t order = 0;       ///< n: the context is the n − 1 tokens before the predicted one
    std::size_t vocabulary = 0;  ///< V
    /// count(context, next), keyed by context · V + next
    std::unordered_map<std::uint64_t, double> sequences = {};
    /// count(context), keyed by the context: how often it was followed by anything
    std::unordered_map<std::uint64_t, double> contexts = {};
};

/// \brief Counts every run of n tokens of a training text: each position j ≥ n − 1 adds one to
///        count(t_{j−n+1} … t_{j−1}, t_j) and one to count(t_{j−n+1} … t_{j−1}).
/// \param training the training tokens, each below V
/// \param order n, at least 1
/// \param vocabulary V, at least 1
/// \return the counts, made once and read by every ngram_loss() on them
/// \throws std::invalid_argument if n is 0, V is 0, \f$ V^n \f$ does not fit in 64 bits, or a
///         token is not below V
[[nodiscard]] NgramCounts count_ngrams(const std::vector<std::size_t>& training, std::size_t order,
                                       std::size_t vocabulary);

/// \brief The n-gram's probability of the token at one position, with add-one (Laplace)
///        smoothing: \f$ P(t_j \mid c) = \frac{\mathrm{count}(c, t_j) + 1}{\mathrm{count}(c) + V} \f$,
///        where c is the n − 1 tokens before position j.
///
/// A context never seen in training gives every token 1/V. Order 2 is bigram_probability().
/// \param counts from count_ngrams()
/// \param tokens the evaluated text's tokens, each below V
/// \param position j, from n − 1 to the last token
/// \return \f$ P(t_j \mid c) \f$
/// \throws std::invalid_argument if j has fewer than n − 1 tokens before it or is past the end,
///         or if one of the tokens read is not below V
[[nodiscard]] double ngram_probability(const NgramCounts& counts, const std::vector<std::size_t>& tokens,
                                       std::size_t position);

/// \brief The mean cross-entropy of counted n-grams on chosen positions of a text, in nats:
///        \f$ -\frac{1}{|T|} \sum_{j \in T} \ln P(t_j \mid t_{j-n+1} \dots t_{j-1}) \f$, each term
///        from ngram_probability(), summed in the order of the positions.
/// \param counts from count_ngrams() on the training tokens
/// \param tokens the evaluated text's tokens
/// \param positions T, the positions j ≥ n − 1 to predict
/// \return the loss in nats per character
/// \throws std::invalid_argument if there is no position, or one has fewer than n − 1 tokens
///         before it or is past the end
[[nodiscard]] double ngram_loss(const NgramCounts& counts, const std::vector<std::size_t>& tokens,
                                const std::vector<std::size_t>& positions);

/// \brief The positions among \p positions that have at least n − 1 tokens before them, j ≥ n − 1:
///        those an n-gram of order n can predict, in their order.
/// \param positions the positions, e.g. from even_batch_positions()
/// \param order n, at least 1
/// \return the positions kept
[[nodiscard]] std::vector<std::size_t> positions_with_context(const std::vector<std::size_t>& positions,
                                                              std::size_t order);

}  // namespace sa
