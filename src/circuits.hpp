/// \file circuits.hpp
/// \brief Chapter 15: reading a circuit out of a trained model. The test sequences a head's scores
///        (head_scores.hpp) are measured on (random letters repeated once), the training mix that
///        teaches copying, the model with one head ablated (head_ablation.hpp) or one path cut, and
///        the circuits read from the weights.
#pragma once

#include <cstddef>
#include <vector>

#include "char_text.hpp"
#include "head_ablation.hpp"
#include "head_scores.hpp"
#include "language_model.hpp"
#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief The tokens of a vocabulary's letters, A–Z and a–z, in byte order.
/// \param vocabulary the vocabulary
/// \return the letters' tokens
[[nodiscard]] std::vector<std::size_t> letter_tokens(const Vocabulary& vocabulary);

/// \brief A random sequence of distinct letters, repeated cyclically to a length: token i is letter
///        i mod period of the sequence.
///
/// The letters are the first \p period of a Fisher–Yates shuffle of \p letters: for k = 0, 1, …,
/// letter k swaps with letter k + next() mod (count − k).
/// \param letters the tokens to draw from, at least \p period of them, all different
/// \param period how many distinct letters, at least 1
/// \param length the tokens to return
/// \param generator advances by one draw per letter of the period
/// \return the tokens
/// \throws std::invalid_argument if there are fewer letters than \p period or none is asked for
[[nodiscard]] std::vector<std::size_t> cycled_letters(const std::vector<std::size_t>& letters, std::size_t period,
                                                      std::size_t length, SplitMix64& generator);

/// \brief A random sequence of distinct letters repeated once, and its first letter a third time:
///        cycled_letters() with period \p distinct and length 2 · distinct + 1, so that a window of
///        2 · distinct and the character after each of its positions follow the repetition.
/// \param letters the tokens to draw from, at least \p distinct of them, all different
/// \param distinct how many distinct letters, at least 1
/// \param generator advances by one draw per letter
/// \return the tokens
/// \throws std::invalid_argument if there are fewer letters than \p distinct or none is asked for
[[nodiscard]] std::vector<std::size_t> repeated_letters(const std::vector<std::size_t>& letters, std::size_t distinct,
                                                        SplitMix64& generator);

/// \brief Windows of repeated_letters(), each of 2 · distinct characters with the character after each.
/// \param letters the tokens to draw from
/// \param count how many windows
/// \param distinct the distinct letters of each
/// \param generator advances by distinct draws per window
/// \return the batch
[[nodiscard]] Batch repeated_batch(const std::vector<std::size_t>& letters, std::size_t count, std::size_t distinct,
                                   SplitMix64& generator);

/// \brief What the repeating windows of a training mix repeat.
enum class Repeated {
    letters,  ///< distinct random letters, cycled_letters()
    text,     ///< a span of the training text, cycled_text()
};

/// \brief Which windows of a training batch repeat, with which periods, and what they repeat.
struct LetterMix {
    std::size_t every = 0;     ///< windows every−1, 2·every−1, … repeat; 4 makes a quarter; 0 makes none
    std::size_t shortest = 8;  ///< the shortest period
    std::size_t longest = 32;  ///< the longest period, at most the window
    Repeated repeated = Repeated::letters;  ///< what they repeat
};

/// \brief A span of a text repeated cyclically to a length: token i is tokens[start + i mod period],
///        with start = next() mod (n − period).
///
/// Unlike cycled_letters(), the span is text: a character may occur several times in one period,
/// so the current character alone does not say where the copy goes on.
/// \param tokens the text, more than \p period tokens
/// \param period the span's length, at least 1
/// \param length the tokens to return
/// \param generator advances by one draw
/// \return the tokens
/// \throws std::invalid_argument if the period is 0 or not shorter than the text
[[nodiscard]] std::vector<std::size_t> cycled_text(const std::vector<std::size_t>& tokens, std::size_t period,
                                                   std::size_t length, SplitMix64& generator);

/// \brief The training mix: a batch whose windows are text windows, as random_batch() cuts them,
///        except every \p mix.every th, which is a window of cycled_letters() (or of cycled_text(),
///        as mix.repeated says) whose period is shortest + next() mod (longest − shortest + 1).
///
/// The periods vary so that no head can copy by counting back a fixed number of places: only
/// a head that finds the current letter's last occurrence predicts every window.
/// \param tokens the training text's tokens, more than \p window
/// \param letters the letters' tokens, at least mix.longest of them
/// \param count how many windows
/// \param window the characters of each
/// \param mix which windows are letters, and their periods
/// \param generator advances by one draw per text window, 1 + period per window of letters and 2
///        per window of repeated text
/// \return the batch
/// \throws std::invalid_argument if the text or the letters are too short or the periods do not fit
[[nodiscard]] Batch mixed_batch(const std::vector<std::size_t>& tokens, const std::vector<std::size_t>& letters,
                                std::size_t count, std::size_t window, const LetterMix& mix, SplitMix64& generator);

/// \brief Which head to silence: its output (its columns of C, before W_O) is set to 0, or, in
///        ablated_forward() and copy_scores() with a replacement, to that row at every position.
struct HeadAblation {
    std::size_t layer = 0;  ///< the layer, from 0
    std::size_t head = 0;   ///< the head, from 0
    std::vector<double> replacement = {};  ///< empty: zero ablation; d/h values: what the head writes
                                           ///< instead at every position (mean ablation, mean_head_output())
};

/// \brief A head's output averaged over every position of a batch: the mean of its d/h columns of
///        C, the row that mean ablation writes in its place.
/// \param model the model
/// \param batch the windows, e.g. held-out text from even_batch()
/// \param layer the layer, from 0
/// \param head the head, from 0
/// \return d/h means
/// \throws std::invalid_argument if the layer or head does not exist, or its query heads share key/value heads
[[nodiscard]] std::vector<double> mean_head_output(const LanguageModel& model, const Batch& batch, std::size_t layer,
                                                   std::size_t head);

/// \brief forward() with one head's output zeroed in its layer, or replaced by ablation.replacement
///        at every position (\f$ Y = X + C'' W_O \f$, C'' holding the replacement in the head's
///        columns); the other layers as in forward().
/// \param model the model
/// \param tokens the input tokens, windows of \p window one after another
/// \param window the rows of each window
/// \param ablation the head to zero or replace
/// \return the trace
/// \throws std::invalid_argument if the layer or head does not exist, or a replacement is not d/h long,
///         or its query heads share key/value heads
[[nodiscard]] ForwardTrace ablated_forward(const LanguageModel& model, const std::vector<std::size_t>& tokens,
                                           std::size_t window, const HeadAblation& ablation);

/// \brief Which of a layer's three inputs a path ablation changes: the stream its queries, its keys
///        or its values are computed from.
enum class Path {
    query,  ///< Q is computed from the changed stream
    key,    ///< K is computed from the changed stream
    value,  ///< V is computed from the changed stream
};

/// \brief forward() with one head's output removed from one path into the next layer only: the
///        next layer computes its queries, keys or values from the stream without that head's
///        output, and everything else (the other two, the residual) from the whole stream. With
///        ablation.replacement, that one path reads the stream with the head's output replaced by
///        the replacement at every position (mean ablation on one path) instead of zeroed.
///
/// Elhage et al.'s Q-, K- and V-composition: removing a layer-0 head from layer 1's keys alone
/// tests whether layer 1 finds its places by what that head wrote. The changed layer is computed
/// window by window from the chapter 9 and 10 steps (rope() on each head's slice,
/// head_weights(), multi_head_attention() with a causal mask), which equal layer_forward() up to
/// rounding; its trace holds the stream entering it and its weights, in layer_forward()'s layout.
/// \param model the model
/// \param tokens the input tokens, windows of \p window one after another
/// \param window the rows of each window; the tokens hold whole windows
/// \param ablation the head whose output is removed or replaced; its layer must not be the last
/// \param path the one input of the next layer that goes without it
/// \return the trace
/// \throws std::invalid_argument if the head does not exist, its layer is the last, the
///         tokens are not whole windows, a replacement is not d/h long, or the model's query heads
///         share key/value heads
[[nodiscard]] ForwardTrace path_ablated_forward(const LanguageModel& model, const std::vector<std::size_t>& tokens,
                                                std::size_t window, const HeadAblation& ablation, Path path);

/// \brief Each head's attention weights in one window of a layer's trace.
/// \param trace one layer's trace from forward()
/// \param heads h
/// \param window the rows of each window of the trace
/// \param index which window, from 0
/// \return one matrix per head, rows×rows of that window, 0 above the diagonal
[[nodiscard]] std::vector<Matrix> trace_attention(const LayerTrace& trace, std::size_t heads, std::size_t window,
                                                  std::size_t index);

/// \brief Each row's cross-entropy, \f$ -\ln \mathrm{softmax}(z_i)_{t_i} \f$, in nats.
/// \param logits Z, N×V
/// \param targets N tokens below V
/// \return N losses
[[nodiscard]] std::vector<double> row_losses(const Matrix& logits, const std::vector<std::size_t>& targets);

/// \brief What a model does on repeated letters, averaged over a batch of repeated_batch() windows.
struct CopyScores {
    std::vector<std::vector<double>> induction;  ///< [layer][head]: induction_score() with period window/2
    std::vector<std::vector<double>> previous;   ///< [layer][head]: previous_token_score()
    double first_copy_loss = 0.0;   ///< the mean loss on predicting letters 2 … window/2, each new
    double second_copy_loss = 0.0;  ///< the mean loss on the positions window/2 … window−1, each a repeat
};

/// \brief Scores a model, or the model with one head ablated, on repeated letters.
/// \param model the model
/// \param batch from repeated_batch(), windows of even length
/// \param ablation the head to zero, or null for the whole model
/// \return the scores
[[nodiscard]] CopyScores copy_scores(const LanguageModel& model, const Batch& batch, const HeadAblation* ablation);

/// \brief copy_scores() with one head removed from one path into the next layer only, as
///        path_ablated_forward() removes it.
/// \param model the model
/// \param batch from repeated_batch(), windows of even length
/// \param ablation the head to remove; its layer must not be the last
/// \param path the next layer's one input that goes without it
/// \return the scores
/// \throws std::invalid_argument as path_ablated_forward()
[[nodiscard]] CopyScores path_copy_scores(const LanguageModel& model, const Batch& batch, const HeadAblation& ablation,
                                          Path path);

/// \brief A head's OV circuit read from the tokens to the logits, \f$ W_E W_V^\kappa W_O^\kappa W_U \f$,
///        \f$ d_{vocab} \times d_{vocab} \f$ (Elhage et al., 2021).
///
/// \f$ W_V^\kappa \f$ is head κ's d/h columns of \f$ W_V \f$ and \f$ W_O^\kappa \f$ its d/h rows of
/// \f$ W_O \f$. Row a is what the head adds to the logits for each unit of weight it puts on a
/// position holding character a, on the direct path (in a later layer, the position's own
/// embedding, without what earlier layers wrote there).
/// \param model the model
/// \param layer the layer, from 0
/// \param head the head, from 0
/// \return the table, one row per character attended to, one column per logit
/// \throws std::invalid_argument if the layer or head does not exist, or its query heads share key/value heads
[[nodiscard]] Matrix ov_circuit(const LanguageModel& model, std::size_t layer, std::size_t head);

/// \brief A one-layer model's logits cut into Elhage et al.'s paths, exact without LayerNorm or
///        MLP: \f$ Z = X W_U + \sum_\kappa A^\kappa X W_V^\kappa W_O^\kappa W_U \f$ with \f$ X \f$ the embedded tokens.
struct PathLogits {
    Matrix direct;              ///< the direct path: row i is row \f$ t_i \f$ of \f$ W_E W_U \f$, the bigram table, N×V
    std::vector<Matrix> heads;  ///< one per head: row i is \f$ \sum_j A^\kappa_{ij} \f$ row \f$ t_j \f$ of ov_circuit(), N×V
};

/// \brief The paths of a one-layer model's logits: the bigram table's row for each token, and each
///        head's attention weights (from forward()) times its OV circuit's rows for the tokens attended
///        to. Their sum is forward()'s logits up to rounding.
/// \param model a model with one layer
/// \param tokens the input tokens, windows of \p window one after another
/// \param window the rows of each window
/// \return the direct path and one term per head
/// \throws std::invalid_argument if the model has more than one layer, or its query heads share key/value heads
[[nodiscard]] PathLogits path_logits(const LanguageModel& model, const std::vector<std::size_t>& tokens,
                                     std::size_t window);

/// \brief How much an OV circuit copies, on a set of tokens (Elhage et al., 2021; Olsson et al., 2022).
struct OvCopying {
    double ranked_first = 0.0;    ///< the share of the tokens whose own logit is the largest of their row
    double eigenvalue_ratio = 0.0;  ///< \f$ \sum_k \lambda_k / \sum_k |\lambda_k| \f$ over the eigenvalues of the
                                    ///< restricted table: 1 when all are positive, −1 when all are negative
};

/// \brief An OV circuit restricted to some tokens' rows and columns, and how much it copies.
///
/// A head that copies raises the logit of the character it attends to: the restricted table has
/// its largest entry of each row on the diagonal, and its eigenvalues are mostly positive. The
/// eigenvalues are eigenvalues(); their sum is the table's trace, real.
/// \param circuit from ov_circuit()
/// \param tokens the rows and columns kept, e.g. letter_tokens(), at least one, each below the table's size
/// \return the two measures
/// \throws std::invalid_argument if the table is not square or a token is out of range
[[nodiscard]] OvCopying ov_copying(const Matrix& circuit, const std::vector<std::size_t>& tokens);

/// \brief Each head's previous_token_score() averaged over the windows of a text batch.
/// \param model the model
/// \param batch the windows, e.g. from even_batch()
/// \return [layer][head] scores
[[nodiscard]] std::vector<std::vector<double>> previous_token_scores(const LanguageModel& model, const Batch& batch);

}  // namespace sa
