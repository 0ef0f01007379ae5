/// \file language_model.hpp
/// \brief Chapter 14: an attention-only character language model. Each character's vector is its
///        row of W_E; each layer adds causal multi-head attention with rotary positions to the
///        residual stream; W_U turns the last stream into logits over the vocabulary.
///
/// The model takes any number of layers. The forward pass of one layer, layer_forward(), is a
/// function of its own, so that a later chapter can run it on a few new positions at a time.
/// Rows of the stream come in windows: each window is a separate piece of text, whose positions
/// count from 0 and whose characters see only earlier characters of the same window.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "adam.hpp"
#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief The sizes of a model.
struct ModelShape {
    std::size_t vocabulary = 0;  ///< V, the number of distinct characters
    std::size_t width = 64;      ///< d, the width of the residual stream
    std::size_t heads = 4;       ///< h, the heads of each layer; d/h must be even (rotary pairs)
    std::size_t layers = 1;      ///< how many attention layers
    std::size_t context = 64;    ///< the longest window the model is trained on
    /// \f$ h_{kv} \f$, the key/value heads of each layer, which the query heads share in groups of
    /// \f$ h/h_{kv} \f$ (chapter 18); it divides h. 0, the default, means h: a key head and a value
    /// head per query head, chapter 14's model
    std::size_t kv_heads = 0;
};

/// \brief The key/value heads of each layer of a model of this shape: ModelShape::kv_heads, or h
///        where it is 0.
/// \param shape the sizes
/// \return \f$ h_{kv} \f$
[[nodiscard]] std::size_t kv_head_count(const ModelShape& shape);

/// \brief Refuses a model whose query heads share key/value heads, for a step written for one
///        key/value head per query head (chapter 16's cache, chapter 15's circuits, the model file).
/// \param shape the model's sizes
/// \param step the step's name, which the message starts with
/// \throws std::invalid_argument if \f$ h_{kv} < h \f$, in one line, e.g. "empty_cache: the model's 4
///         query heads share 2 key/value heads; this step needs one key/value head per query head"
void require_own_kv_heads(const ModelShape& shape, const std::string& step);

/// \brief The four matrices of one attention layer, each d×d; with \f$ h_{kv} < h \f$ key/value
///        heads, W_K and W_V are d×(\f$ h_{kv} \f$ d/h).
struct AttentionLayer {
    Matrix w_query = {};  ///< W_Q
    Matrix w_key = {};    ///< W_K, the \f$ h_{kv} \f$ key heads side by side
    Matrix w_value = {};  ///< W_V, the \f$ h_{kv} \f$ value heads side by side
    Matrix w_out = {};    ///< W_O, the heads' outputs side by side back to the stream
};

/// \brief An attention-only language model; also the shape of its gradient.
struct LanguageModel {
    ModelShape shape = {};               ///< the sizes
    Matrix embedding = {};               ///< W_E, V×d
    std::vector<AttentionLayer> layers;  ///< one per layer, first to last
    Matrix unembedding = {};             ///< W_U, d×V
};

/// \brief The number of parameters of a model of this shape:
///        \f$ V d \f$ (W_E) \f$ + 2 d^2 + 2 d \, h_{kv} d/h \f$ per layer (W_Q and W_O, then W_K and W_V)
///        \f$ + d V \f$ (W_U); with \f$ h_{kv} = h \f$ that is \f$ 4 d^2 \f$ per layer.
/// \param shape the sizes
/// \return the count, e.g. 24448 for V = 63, d = 64 and one layer, 20352 with \f$ h_{kv} = h/2 \f$
[[nodiscard]] std::size_t parameter_count(const ModelShape& shape);

/// \brief A model at its random start, drawn from the book's generator in a fixed order:
///        W_E, then each layer's W_Q, W_K, W_V, W_O, then W_U, each row by row.
///
/// Entries are SplitMix64::unit_variance() times a spread: 1 for W_E, \f$ 1/\sqrt d \f$ for the
/// layers (so a product with a unit vector keeps its size), 0.01 for W_U (so the first logits are
/// near 0 and the first loss near \f$ \ln V \f$).
/// \param shape the sizes; V at least 2, d a multiple of h with d/h even, \f$ h_{kv} \f$ a divisor of h
/// \param generator the generator; it advances by one draw per entry
/// \return the model
/// \throws std::invalid_argument if the shape cannot be built; the message names the sizes, e.g.
///         "h = 4 query heads do not split into h_kv = 3 equal groups"
[[nodiscard]] LanguageModel random_model(const ModelShape& shape, SplitMix64& generator);

/// \brief A model of the same shape with every entry 0, e.g. to sum gradients into.
/// \param shape the sizes
/// \return the zero model
[[nodiscard]] LanguageModel zero_model(const ModelShape& shape);

/// \brief Every parameter matrix, in the order of random_model(): W_E, each layer's W_Q, W_K, W_V,
///        W_O, W_U.
/// \param model the model
/// \return pointers into the model
[[nodiscard]] std::vector<Matrix*> parameters(LanguageModel& model);

/// \brief The names of the parameters, in the order of parameters(): "embedding",
///        "layers.0.w_query", "layers.0.w_key", "layers.0.w_value", "layers.0.w_out", …, "unembedding".
/// \param shape the sizes
/// \return the names
[[nodiscard]] std::vector<std::string> parameter_names(const ModelShape& shape);

/// \brief What one layer's forward pass keeps for its backward pass.
struct LayerTrace {
    Matrix input = {};              ///< X, the stream entering the layer, N×d
    Matrix queries = {};            ///< Q = X W_Q with rotary positions, N×d
    /// K = X W_K with rotary positions, N×d: with \f$ h_{kv} < h \f$, the key heads repeated, one
    /// per query head (as repeat_kv_heads() does)
    Matrix keys = {};
    Matrix values = {};             ///< V = X W_V, N×d, repeated as K is
    std::vector<double> weights;    ///< each window's and head's weights A, window×window, window by window
    Matrix joined = {};             ///< C, the heads' outputs side by side, N×d
};

/// \brief One layer: \f$ Y = X + \mathrm{MultiHead}(\mathrm{rope}(X W_Q), \mathrm{rope}(X W_K), X W_V)\, \f$
///        with a causal mask in each window, written out as \f$ Y = X + C\, W_O \f$.
///
/// Head i uses columns \f$ [i \cdot d/h, (i+1) \cdot d/h) \f$ (chapter 9); its queries and keys turn by
/// rope() (chapter 10) with \f$ d/h \f$ features and the position inside the window; its scores are
/// divided by \f$ \sqrt{d/h} \f$. The result equals multi_head_attention() on the same slices up to rounding.
/// Where W_K and W_V hold \f$ h_{kv} < h \f$ heads (their columns tell), K and V are repeated
/// one head per query head (as repeat_kv_heads() does, chapter 18) and the step is the same.
/// \param layer the layer's matrices
/// \param input X, N×d, windows of \p window rows one after another (the last may be shorter)
/// \param heads h
/// \param window the rows of each window
/// \param trace where to keep what the backward pass needs; may be null
/// \return Y, N×d
[[nodiscard]] Matrix layer_forward(const AttentionLayer& layer, const Matrix& input, std::size_t heads,
                                   std::size_t window, LayerTrace* trace);

/// \brief The whole forward pass of a batch, with what the backward pass needs.
struct ForwardTrace {
    std::vector<std::size_t> tokens;   ///< the input tokens, N
    std::size_t window = 0;            ///< the rows of each window
    std::vector<LayerTrace> layers;    ///< one per layer
    Matrix stream = {};                ///< the residual stream after the last layer, N×d
    Matrix logits = {};                ///< Z = stream · W_U, N×V
};

/// \brief Runs the model on windows of tokens: embed(), each layer_forward(), then the logits.
/// \param model the model
/// \param tokens the input tokens, windows of \p window one after another
/// \param window the rows of each window, at least 1
/// \return the trace; its logits row i scores the character after token i
[[nodiscard]] ForwardTrace forward(const LanguageModel& model, const std::vector<std::size_t>& tokens,
                                   std::size_t window);

/// \brief The gradient of the loss at every parameter, from its gradient at the logits.
///
/// \f$ dW_U = S^\top dZ \f$ and \f$ dS = dZ\, W_U^\top \f$; each layer, last first, passes dY on to
/// its input unchanged (the residual) plus the gradient through attention; the stream's gradient
/// at the start goes to W_E by embedding_backward(). With \f$ h_{kv} < h \f$ the gradient of a
/// shared key (or value) head is the sum over its group's query heads (as sum_kv_heads() adds).
/// \param model the model the trace was made with
/// \param trace from forward()
/// \param d_logits dZ, N×V, e.g. from cross_entropy()
/// \return the gradient, in a model's shape
[[nodiscard]] LanguageModel backward(const LanguageModel& model, const ForwardTrace& trace, const Matrix& d_logits);

/// \brief Windows of text with the character to predict after each position.
struct Batch {
    std::vector<std::size_t> inputs;   ///< the tokens read, window after window
    std::vector<std::size_t> targets;  ///< for each input, the token after it in the text
    std::size_t window = 0;            ///< the rows of each window
};

/// \brief Windows at random places: each starts at next() modulo (n − window), so its window + 1
///        characters lie inside the text.
/// \param tokens the training text's tokens, more than \p window
/// \param count how many windows
/// \param window the characters read by each
/// \param generator advances by one draw per window
/// \return the batch
/// \throws std::invalid_argument if the text is not longer than a window
[[nodiscard]] Batch random_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window,
                                 SplitMix64& generator);

/// \brief Windows spread evenly over a text, the same on every call: window w starts at
///        \f$ \lfloor w (n - \text{window} - 1) / (\text{count} - 1) \rfloor \f$ (at 0 for one window).
/// \param tokens the text's tokens, more than \p window
/// \param count how many windows, at least 1
/// \param window the characters read by each
/// \return the batch
/// \throws std::invalid_argument if the text is not longer than a window or count is 0
[[nodiscard]] Batch even_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window);

/// \brief The positions a batch predicts, in the text: input i of window w predicts the character
///        at its window's start + i + 1. The n-gram baselines are measured on the same positions.
/// \param tokens the text the batch was cut from (by even_batch())
/// \param count the windows
/// \param window the characters read by each
/// \return the positions, in the order of the batch's targets
[[nodiscard]] std::vector<std::size_t> even_batch_positions(const std::vector<std::size_t>& tokens,
                                                            std::size_t count, std::size_t window);

/// \brief Validation windows beside even_batch()'s test windows: count − 1 windows, window w
///        starting halfway between the starts of even_batch()'s windows w and w + 1,
///        \f$ \lfloor (s_w + s_{w+1}) / 2 \rfloor \f$. No window shares a character with one of
///        even_batch(tokens, count, window).
/// \param tokens the text's tokens
/// \param count the windows of the even_batch() it goes beside, at least 2
/// \param window the characters read by each
/// \return the batch
/// \throws std::invalid_argument if count is below 2, or the text is too short for the windows to
///         lie apart (starts less than 2 (window + 1) apart)
[[nodiscard]] Batch halfway_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window);

/// \brief The model's mean cross-entropy on a batch, in nats per character, computed 16 windows
///        at a time and summed in the batch's order.
/// \param model the model
/// \param batch the windows and their targets
/// \return the loss
[[nodiscard]] double evaluate(const LanguageModel& model, const Batch& batch);

/// \brief A model with Adam's moments and step count: everything training changes.
struct Trainer {
    LanguageModel model;                 ///< the parameters
    std::vector<AdamMoments> moments;    ///< one per parameter, in the order of parameters()
    AdamSettings settings;               ///< Adam's settings
    std::size_t steps = 0;               ///< steps taken
    /// threads one step may use (see ProductThreads): 1 by default, for a program that trains
    /// several models at once; the bits of every step are the same for any count
    std::size_t threads = 1;
};

/// \brief A trainer for a model: zero moments, no step taken.
///
/// training_step() keeps its traces and gradients on its thread from step to step, but still
/// allocates and frees a few matrices a step (the embedded rows, the loss's gradient). With the
/// GNU C library, the first trainer asks it to keep 64 MiB spare at the top of the heap, so that
/// those buffers are reused rather than handed back to the system and faulted in again as fresh
/// pages on every step; nothing else changes.
/// \param model the model
/// \param settings Adam's settings
/// \return the trainer
[[nodiscard]] Trainer make_trainer(LanguageModel model, const AdamSettings& settings);

/// \brief One training step: forward(), cross_entropy(), backward(), then adam_step() on every parameter.
///
/// The trace and the gradient are kept on the calling thread from one step to the next (a few
/// megabytes per thread that has trained), so that a step reuses the memory of the step before;
/// the numbers are those of forward() and backward().
/// \param trainer the model and its optimiser; changed in place
/// \param batch the windows to learn from
/// \return the loss on the batch before the step
double training_step(Trainer& trainer, const Batch& batch);

/// \brief How far one training step moved the model's entries, in units of Adam's α.
struct StepMoves {
    double largest = 0.0;         ///< the largest \f$ |w_{after} - w_{before}| / \alpha \f$ over every entry
    std::size_t parameter = 0;    ///< the largest move's matrix, its index in parameters()
    std::size_t row = 0;          ///< its row
    std::size_t column = 0;       ///< its column
    std::size_t above_alpha = 0;  ///< how many entries moved by more than α
};

/// \brief The moves of every entry between two models of one shape, e.g. before and after
///        training_step(): the largest (the first in the order of parameters(), row by row, on a
///        tie) and how many exceed α.
/// \param before the model before the step
/// \param after the model after it
/// \param learning_rate α, the unit of the moves, above 0
/// \return the moves
/// \throws ShapeError if the two models' matrices differ in shape
/// \throws std::invalid_argument if α is not above 0
[[nodiscard]] StepMoves step_moves(const LanguageModel& before, const LanguageModel& after, double learning_rate);

/// \brief Text drawn from the model one character at a time: each character is drawn from the
///        softmax of the logits after the last (at most context) characters, by the first
///        cumulative probability above uniform().
/// \param model the model
/// \param prompt the tokens to start from, at least one
/// \param length how many characters to draw
/// \param generator advances by one draw per character
/// \return the drawn tokens, without the prompt
[[nodiscard]] std::vector<std::size_t> sample(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                              std::size_t length, SplitMix64& generator);

/// \brief Each head's attention weights of one layer on one window of text, for showing.
/// \param model the model
/// \param layer which layer, from 0
/// \param tokens the window, at most the model's context
/// \return one n×n matrix per head, with 0 above the diagonal (the causal mask)
[[nodiscard]] std::vector<Matrix> head_attention(const LanguageModel& model, std::size_t layer,
                                                 const std::vector<std::size_t>& tokens);

}  // namespace sa
