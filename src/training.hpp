/// \file training.hpp
/// \brief Chapter 12: W_Q, W_K and W_V learned by gradient descent on a task that needs attention.
///
/// The task: every sentence holds the three words Mouse, Eats and Cheese once each, in a
/// random order, and each word carries a random value. Each word must output the value
/// carried by the word that follows it in the cycle Mouse → Eats → Cheese → Mouse. No word
/// can do that from its own embedding: the value it needs sits on another token and changes
/// from sentence to sentence.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief One example of the task: a sentence's embeddings and the outputs the layer should give.
struct Sentence {
    std::vector<std::string> tokens = {};  ///< the words, in the order of the sentence
    Matrix embeddings = {};                ///< E, n×d_model, one row per word
    Matrix targets = {};                   ///< T, n×d_v, the output each word should give
    /// For each word, the position of the word whose value it must output: the ideal
    /// attention puts all of row i's weight on column sources[i].
    std::vector<std::size_t> sources = {};
};

/// \brief The words of the task, in the order of the cycle: each one looks for the next,
///        and the last for the first.
inline const std::vector<std::string> cycle_words = {"Mouse", "Eats", "Cheese"};

/// \brief How many features of a value each word carries.
inline constexpr std::size_t carried_features = 2;

/// \brief Draws sentences of the chapter's task from the book's generator.
///
/// Each sentence holds the words of cycle_words once each, shuffled (Fisher–Yates, the
/// position drawn as next() modulo the count). A word's embedding has 3 + 2 = 5 features:
/// a one-hot code of which word it is (Mouse, Eats, Cheese), then the value it carries,
/// two SplitMix64::unit_variance() numbers. The target of word w is the value carried by the
/// word after w in the cycle: \f$ t_{Mouse} = c_{Eats} \f$, \f$ t_{Eats} = c_{Cheese} \f$,
/// \f$ t_{Cheese} = c_{Mouse} \f$.
///
/// Shapes: each sentence has E 3×5 and T 3×2.
/// \param count how many sentences
/// \param generator the generator; it advances by 2 draws for the shuffle and 6 for the values
///        of each sentence
/// \return the sentences
[[nodiscard]] std::vector<Sentence> cycle_sentences(std::size_t count, SplitMix64& generator);

/// \brief The three projection matrices of one attention layer, the parameters that training changes.
struct Projections {
    Matrix w_query = {};  ///< W_Q, d_model×d_k
    Matrix w_key = {};    ///< W_K, d_model×d_k
    Matrix w_value = {};  ///< W_V, d_model×d_v
};

/// \brief A random start for training: every entry is \f$ s \cdot u \f$, with \f$ u \f$ from
///        SplitMix64::unit_variance(), so uniform on \f$ [-\sqrt 3\, s, \sqrt 3\, s] \f$.
///
/// Drawn in the order W_Q, W_K, W_V, each row by row (random_matrix()).
/// \param model_dim d_model, the embedding width
/// \param key_dim d_k
/// \param value_dim d_v
/// \param spread s, the standard deviation of each entry
/// \param generator the generator; it advances by d_model·(2 d_k + d_v) draws
/// \return W_Q (d_model×d_k), W_K (d_model×d_k) and W_V (d_model×d_v)
[[nodiscard]] Projections random_projections(std::size_t model_dim, std::size_t key_dim, std::size_t value_dim,
                                             double spread, SplitMix64& generator);

/// \brief The attention weights of a layer on one sentence,
///        \f$ A = \mathrm{softmax}\!\left(E W_Q (E W_K)^\top / \sqrt{d_k}\right) \f$, without a mask.
/// \param layer W_Q, W_K (W_V is not used)
/// \param embeddings E, n×d_model
/// \return A, n×n; row i holds how much word i attends to each word
/// \throws ShapeError if E does not fit W_Q or W_K
[[nodiscard]] Matrix layer_weights(const Projections& layer, const Matrix& embeddings);

/// \brief The outputs of a layer on one sentence, \f$ O = \mathrm{Attention}(E W_Q, E W_K, E W_V) \f$,
///        computed by attention() without a mask.
/// \param layer the projections
/// \param embeddings E, n×d_model
/// \return O, n×d_v
/// \throws ShapeError if E does not fit the projections
[[nodiscard]] Matrix layer_outputs(const Projections& layer, const Matrix& embeddings);

/// \brief The mean squared error of a layer over sentences:
///        \f$ L = \frac{1}{N} \sum_{s=1}^{N} \frac{1}{n_s d_v} \sum_{i,d} (O^{(s)}_{id} - T^{(s)}_{id})^2 \f$.
///
/// Each sentence counts equally, whatever its length. Shapes: every sentence's T must be n×d_v.
/// \param layer the projections
/// \param sentences at least one sentence
/// \return L, 0 only when every output equals its target
/// \throws std::invalid_argument if there are no sentences
/// \throws ShapeError if a sentence does not fit the layer
[[nodiscard]] double mean_loss(const Projections& layer, const std::vector<Sentence>& sentences);

/// \brief One step of plain gradient descent on W_Q, W_K and W_V:
///        \f$ W \leftarrow W - \eta \, \partial L / \partial W \f$ for each, with L from mean_loss().
///
/// For each sentence the gradient at the outputs is
/// \f$ dO^{(s)} = \frac{2}{N n_s d_v} (O^{(s)} - T^{(s)}) \f$, and attention_backward()
/// (chapter 11) turns it into \f$ dW_Q \f$, \f$ dW_K \f$ and \f$ dW_V \f$ for that sentence;
/// the step adds them over the sentences, then moves every entry of each W against its
/// gradient. No mask is used: every word may look at every word.
///
/// Edges: a learning rate of 0 leaves the layer as it was. A NaN in a sentence reaches the
/// loss and every entry of the layer it touches; it is never skipped.
/// \param layer the projections; changed in place
/// \param sentences the training sentences, at least one
/// \param learning_rate \f$ \eta \f$, the size of the step
/// \return L before the step, the loss the gradient belongs to
/// \throws std::invalid_argument if there are no sentences
/// \throws ShapeError if a sentence does not fit the layer; the message names train_step and the
///         shapes, e.g. "train_step: T is 3×3 but the outputs are 3×2; T needs one row per word and
///         d_v columns"
double train_step(Projections& layer, const std::vector<Sentence>& sentences, double learning_rate);

/// \brief Counts the sentences a layer solves: every output within \p tolerance of its target,
///        \f$ |O_{id} - T_{id}| \le \varepsilon \f$ for every word i and feature d.
/// \param layer the projections
/// \param sentences the sentences to try
/// \param tolerance \f$ \varepsilon \f$, the largest error allowed in any output feature
/// \return how many sentences pass; a NaN output never passes
/// \throws ShapeError if a sentence does not fit the layer
[[nodiscard]] std::size_t solved_sentences(const Projections& layer, const std::vector<Sentence>& sentences,
                                           double tolerance);

/// \brief Counts the words whose largest attention weight falls on their source,
///        \f$ \arg\max_j A_{ij} = \f$ Sentence::sources[i], with A from layer_weights().
///
/// A tie counts against the word: the source must have more weight than every other word.
/// \param layer the projections
/// \param sentences the sentences to try; each needs one source per word
/// \return how many words, over all the sentences, look hardest at the right word
/// \throws ShapeError if a sentence does not fit the layer
/// \throws std::invalid_argument if a sentence does not have one source per word
[[nodiscard]] std::size_t right_words(const Projections& layer, const std::vector<Sentence>& sentences);

}  // namespace sa
