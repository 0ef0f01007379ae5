/// \file copying.hpp
/// \brief Chapter 15, copying the Bible: how often a character's last few characters occurred
///        earlier in the same window (the prefix table), windows holding a span of text copied to
///        a later place, what a model's loss and an induction head's weights are on such a span,
///        the training windows that teach a head to match several characters, and a counting
///        rule that copies inside the window.
#pragma once

#include <cstddef>
#include <vector>

#include "char_text.hpp"
#include "circuits.hpp"
#include "language_model.hpp"
#include "random.hpp"

namespace sa {

/// \brief What copying after an earlier match of the last few characters would give, over the
///        positions of a batch's windows.
struct PrefixMatches {
    double matches_per_position = 0.0;  ///< the mean number of earlier places whose last characters match
    double share_matched = 0.0;         ///< the share of positions with at least one such place
    double share_right = 0.0;           ///< over the positions with a match, the mean share of their
                                        ///< matches followed by the character that comes next here
};

/// \brief The prefix table's row for one prefix length.
///
/// In window w, position i (its input \f$ x_i \f$ and its target \f$ t_i \f$, the next character)
/// matches an earlier position j when \f$ x_{j-q} = x_{i-q} \f$ for q = 0 … prefix − 1 (j ≥ prefix − 1,
/// j < i). Copying from the match predicts \f$ t_j \f$, right when \f$ t_j = t_i \f$. A head that
/// splits its weight evenly over the matches is right, on average, share_right of the time.
/// \param batch the windows, e.g. from random_batch()
/// \param first the first position counted in each window (later positions have more to match)
/// \param prefix how many characters must match, at least 1
/// \return the three means
/// \throws std::invalid_argument if prefix is 0 or first is not below the window
[[nodiscard]] PrefixMatches prefix_matches(const Batch& batch, std::size_t first, std::size_t prefix);

/// \brief Windows of text each holding a span copied to a later place in the same window.
struct CopiedSpans {
    Batch batch;                      ///< the windows and their targets
    std::vector<std::size_t> first;   ///< each window's first occurrence: where the span starts
    std::vector<std::size_t> second;  ///< where its copy starts, at least first + length
    std::vector<std::size_t> length;  ///< the span's characters
    std::vector<std::size_t> start = {};  ///< where each window begins in the text
};

/// \brief Windows cut from a text at random places, each with a span of its own text copied to a
///        later place in it, overwriting what was there.
///
/// For each window, in this order: its start is next() mod (n − window), the span's length
/// shortest + next() mod (longest − shortest + 1), its first place next() mod (window − 2·length + 1),
/// and the copy's place first + length + next() mod (window − first − 2·length + 1), so both lie
/// among the window's inputs. The targets follow the changed window. With \p apart, a start whose
/// window (its inputs and the character after them, start … start + window) shares a character of
/// the text with one of apart's windows is drawn again, one draw each time, before the other three:
/// the windows are disjoint from apart's (a validation set beside a test set).
/// \param tokens the text, more than window + 1 tokens
/// \param count how many windows
/// \param window the inputs of each
/// \param shortest the shortest span, at least 1
/// \param longest the longest span, at most window / 2
/// \param generator advances by four draws per window, and one more per start drawn again
/// \param apart windows of the same text to keep clear of, or null
/// \return the windows and where their spans lie
/// \throws std::invalid_argument if the text is too short, the lengths do not fit, or 10000 draws
///         in a row find no start apart from apart's windows
[[nodiscard]] CopiedSpans copied_spans(const std::vector<std::size_t>& tokens, std::size_t count,
                                       std::size_t window, std::size_t shortest, std::size_t longest,
                                       SplitMix64& generator, const CopiedSpans* apart = nullptr);

/// \brief Mean losses on the characters of the spans, at their first occurrence and at their copy.
struct SpanLosses {
    double first = 0.0;   ///< nats per character at the first occurrence
    double second = 0.0;  ///< nats per character at the copy
};

/// \brief The mean loss on span characters skip … length − 1 of every window, where they first
///        occur and where they are copied: the rows just before them predict them.
/// \param losses one loss per row of the batch, e.g. from row_losses()
/// \param spans the windows and their spans
/// \param skip the span's first characters left out (a copy cannot be known before it starts)
/// \return the two means
/// \throws std::invalid_argument if there is not one loss per row, or skip leaves no character
[[nodiscard]] SpanLosses span_losses(const std::vector<double>& losses, const CopiedSpans& spans, std::size_t skip);

/// \brief Where a head looks from the copy's rows: on the place to copy from, or on the places
///        after other earlier occurrences of the row's character.
struct SpanAttention {
    double on_source = 0.0;      ///< the mean weight on the character after the span's first occurrence
    double on_other = 0.0;       ///< the mean weight on the characters after its other earlier occurrences
    double other_places = 0.0;   ///< the mean number of those other occurrences
};

/// \brief A head's weights from the copy's rows that predict span characters skip … length − 1.
///
/// The row that predicts span character k reads character k − 1 of the copy; the right place to
/// copy from is first + k, just after that character's first occurrence. The other places are the
/// j + 1 with \f$ x_j \f$ equal to the row's character, j before the row, j ≠ first + k − 1.
/// \param trace one layer's trace of a forward pass over the spans' windows (forward(),
///        ablated_forward() or path_ablated_forward())
/// \param heads h
/// \param spans the windows and their spans
/// \param head the head, below h
/// \param skip as in span_losses()
/// \return the means over every such row
/// \throws std::invalid_argument if the head is not below h or the trace is not of the spans' windows
[[nodiscard]] SpanAttention span_attention(const LayerTrace& trace, std::size_t heads, const CopiedSpans& spans,
                                           std::size_t head, std::size_t skip);

/// \brief The in-window copying rule: when the last characters before a position occurred earlier in
///        the window, predict what followed them there, else fall back on counted n-grams.
struct CopyRule {
    std::size_t shortest = 1;  ///< the shortest match the rule copies from, at least 1
    double weight = 0.5;       ///< λ, the probability given to the copy, 0 to 1 (0: the n-gram alone)
};

/// \brief The copying rule's probability of the token at one position of a window.
///
/// With e = p − 1 the last character read, an earlier place j < e matches with length
/// \f$ L_j \f$, the number of q = 0, 1, … with \f$ x_{j-q} = x_{e-q} \f$ before the first that
/// differs or falls before the window. With \f$ m = \max_j L_j \f$ and M the places where
/// \f$ L_j = m \f$: if m ≥ shortest,
/// \f$ P(c) = \lambda \, |\{j \in M : x_{j+1} = c\}| / |M| + (1 - \lambda) P_n(c) \f$, else
/// \f$ P(c) = P_n(c) \f$, with \f$ P_n \f$ from ngram_probability() on the window.
/// \param counts counted n-grams of the training text, from count_ngrams()
/// \param window the window's tokens (its inputs and the character after them)
/// \param position p, from n − 1 (the n-gram reads only the window) to the last token
/// \param rule the shortest match copied from and λ
/// \return P(x_p)
/// \throws std::invalid_argument if λ is not in [0, 1], shortest is 0, or as ngram_probability()
[[nodiscard]] double copy_rule_probability(const NgramCounts& counts, const std::vector<std::size_t>& window,
                                           std::size_t position, const CopyRule& rule);

}  // namespace sa
