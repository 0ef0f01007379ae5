#include "latent_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "grouped_query.hpp"
#include "head_tiles.hpp"
#include "masking.hpp"

namespace sa {

namespace {

Matrix spread_random(std::size_t rows, std::size_t cols, double spread, SplitMix64& generator)
{
    Matrix matrix = random_matrix(rows, cols, generator);
    for (std::size_t i = 0; i < rows * cols; ++i) {
        matrix.data()[i] *= spread;
    }
    return matrix;
}

void check_latent_shape(const LatentModelShape& s)
{
    if (s.vocabulary < 2 || s.heads == 0 || s.width % s.heads != 0 || s.context == 0) {
        throw std::invalid_argument(fmt::format("random_latent_model: V = {}, d = {}, h = {}, context {}; V needs at "
                                                "least 2 characters, h must divide d and the context be at least 1",
                                                s.vocabulary, s.width, s.heads, s.context));
    }
    if (s.latent == 0 || s.latent > s.width) {
        throw std::invalid_argument(fmt::format("random_latent_model: d_c = {} for d = {}; the latent is narrower "
                                                "than the model, 1 ≤ d_c ≤ d", s.latent, s.width));
    }
    if (s.rotary == 0 || s.rotary % 2 != 0) {
        throw std::invalid_argument(fmt::format("random_latent_model: d_R = {}; the rotary part turns pairs, so d_R "
                                                "must be even and at least 2", s.rotary));
    }
}

// Turns (or, with `back`, turns back) each window's rows from position 0, h heads side by side.
Matrix rope_windows(const Matrix& matrix, std::size_t heads, std::size_t window, bool back)
{
    Matrix turned(matrix.rows(), matrix.cols());
    for (std::size_t first = 0; first < matrix.rows(); first += window) {
        const std::size_t rows = std::min(window, matrix.rows() - first);
        Matrix part(rows, matrix.cols());
        std::copy(matrix.data() + first * matrix.cols(), matrix.data() + (first + rows) * matrix.cols(), part.data());
        const Matrix done = back ? rope_heads_backward(part, heads, 0) : rope_heads(part, heads, 0);
        std::copy(done.data(), done.data() + rows * matrix.cols(), turned.data() + first * matrix.cols());
    }
    return turned;
}

// What the layer's forward pass keeps for its backward pass, over all the batch's rows.
struct LatentTrace {
    Matrix input, latent;            // X, C
    Matrix queries, keys, values;    // each head [q^C | q^R], [k^C | k^R], [v | 0]: d_h + d_R wide
    std::vector<double> weights;     // each window's and head's A, as chapter 14's trace keeps them
    Matrix joined;                   // the heads' outputs side by side, N×(h d_v)
    Matrix stream;                   // X + joined W_O
};

// Each window's heads through chapter 14's tiled kernel: the values padded to the keys' width, whose
// root is then √(d_h + d_R), the scale of latent attention.
void heads_forward(LatentTrace& t, std::size_t heads, std::size_t window, std::size_t value_width)
{
    const std::size_t rows = t.input.rows();
    const std::size_t head_dim = t.queries.cols() / heads;
    t.weights.assign(rows * window * heads, 0.0);
    Matrix padded_out(rows, t.queries.cols(), 0.0);
    for (std::size_t first = 0; first < rows; first += window) {
        const std::size_t length = std::min(window, rows - first);
        for (std::size_t a = 0; a < heads; ++a) {
            const std::size_t at = first * t.queries.cols() + a * head_dim;
            const HeadWindow head{t.queries.data() + at, t.keys.data() + at, t.values.data() + at, t.queries.cols(),
                                  length, head_dim};
            head_forward_tiled(head, t.weights.data() + first * window * heads + a * length * length,
                               padded_out.data() + at);
        }
    }
    t.joined = deinterleave_heads(padded_out, heads, value_width)[0];
}

LatentTrace layer_trace(const LatentModel& model, const std::vector<std::size_t>& tokens, std::size_t window)
{
    const LatentWeights& w = model.layer;
    const std::size_t heads = model.shape.heads;
    const std::size_t value_width = model.shape.width / heads;
    LatentTrace t;
    t.input = embed(model.embedding, tokens);
    t.latent = multiply(t.input, w.w_down);
    const Matrix rotary_queries = rope_windows(multiply(t.input, w.w_query_rotary), heads, window, false);
    const Matrix rotary_keys = rope_windows(multiply(t.input, w.w_key_rotary), 1, window, false);
    t.queries = interleave_heads(multiply(t.input, w.w_query), rotary_queries, heads, false);
    t.keys = interleave_heads(multiply(t.latent, w.w_up_key), rotary_keys, heads, true);
    t.values = interleave_heads(multiply(t.latent, w.w_up_value),
                                Matrix(tokens.size(), t.queries.cols() / heads - value_width, 0.0), heads, true);
    heads_forward(t, heads, window, value_width);
    t.stream = multiply(t.joined, w.w_out);
    add_in_place(t.stream, t.input);  // the residual stream
    return t;
}

// dY at the layer's output back to its matrices and to X (returned, with the residual's dY in it).
Matrix layer_backward(const LatentModel& model, const LatentTrace& t, std::size_t window, const Matrix& d_stream,
                      LatentWeights& d)
{
    const LatentWeights& w = model.layer;
    const std::size_t heads = model.shape.heads;
    const std::size_t head_dim = t.queries.cols() / heads;
    const std::size_t content = model.shape.width / heads;  // d_h = d_v
    d.w_out = multiply_transposed_lhs(t.joined, d_stream);
    const Matrix d_joined = interleave_heads(multiply_transposed_rhs(d_stream, w.w_out),
                                             Matrix(t.input.rows(), head_dim - content, 0.0), heads, true);
    Matrix d_queries(t.queries.rows(), t.queries.cols());
    Matrix d_keys(t.keys.rows(), t.keys.cols());
    Matrix d_values(t.values.rows(), t.values.cols());
    for (std::size_t first = 0; first < t.input.rows(); first += window) {
        const std::size_t length = std::min(window, t.input.rows() - first);
        for (std::size_t a = 0; a < heads; ++a) {
            const std::size_t at = first * t.queries.cols() + a * head_dim;
            const HeadWindow head{t.queries.data() + at, t.keys.data() + at, t.values.data() + at, t.queries.cols(),
                                  length, head_dim};
            head_backward_tiled(head, t.weights.data() + first * window * heads + a * length * length,
                                d_joined.data() + at, {d_queries.data() + at, d_keys.data() + at, d_values.data() + at});
        }
    }
    const std::vector<Matrix> d_query = deinterleave_heads(d_queries, heads, content);  // dQ^C, dQ^R
    const std::vector<Matrix> d_key = deinterleave_heads(d_keys, heads, content);        // dK^C, each head's dK^R
    const Matrix d_value = deinterleave_heads(d_values, heads, content)[0];
    const Matrix d_rotary_queries = rope_windows(d_query[1], heads, window, true);
    const Matrix d_rotary_keys = rope_windows(sum_kv_heads(d_key[1], 1, heads), 1, window, true);
    d.w_query = multiply_transposed_lhs(t.input, d_query[0]);
    d.w_query_rotary = multiply_transposed_lhs(t.input, d_rotary_queries);
    d.w_key_rotary = multiply_transposed_lhs(t.input, d_rotary_keys);
    d.w_up_key = multiply_transposed_lhs(t.latent, d_key[0]);
    d.w_up_value = multiply_transposed_lhs(t.latent, d_value);
    Matrix d_latent = multiply_transposed_rhs(d_key[0], w.w_up_key);
    add_in_place(d_latent, multiply_transposed_rhs(d_value, w.w_up_value));
    d.w_down = multiply_transposed_lhs(t.input, d_latent);
    Matrix d_input = d_stream;
    add_in_place(d_input, multiply_transposed_rhs(d_query[0], w.w_query));
    add_in_place(d_input, multiply_transposed_rhs(d_rotary_queries, w.w_query_rotary));
    add_in_place(d_input, multiply_transposed_rhs(d_latent, w.w_down));
    add_in_place(d_input, multiply_transposed_rhs(d_rotary_keys, w.w_key_rotary));
    return d_input;
}

}  // namespace

std::size_t latent_parameter_count(const LatentModelShape& s)
{
    return 2 * s.vocabulary * s.width + 2 * s.width * s.width + s.width * s.heads * s.rotary + s.width * s.rotary +
           s.width * s.latent + 2 * s.latent * s.width;
}

LatentModel random_latent_model(const LatentModelShape& shape, SplitMix64& generator)
{
    check_latent_shape(shape);
    const std::size_t d = shape.width;
    const double stream = 1.0 / std::sqrt(static_cast<double>(d));
    const double latent = 1.0 / std::sqrt(static_cast<double>(shape.latent));
    LatentModel model{shape, spread_random(shape.vocabulary, d, 1.0, generator), {}, {}};
    model.layer.w_query = spread_random(d, d, stream, generator);
    model.layer.w_query_rotary = spread_random(d, shape.heads * shape.rotary, stream, generator);
    model.layer.w_down = spread_random(d, shape.latent, stream, generator);
    model.layer.w_up_key = spread_random(shape.latent, d, latent, generator);
    model.layer.w_up_value = spread_random(shape.latent, d, latent, generator);
    model.layer.w_key_rotary = spread_random(d, shape.rotary, stream, generator);
    model.layer.w_out = spread_random(d, d, stream, generator);
    model.unembedding = spread_random(d, shape.vocabulary, 0.01, generator);
    return model;
}

std::vector<Matrix*> latent_parameters(LatentModel& model)
{
    LatentWeights& w = model.layer;
    return {&model.embedding, &w.w_query,    &w.w_query_rotary, &w.w_down,           &w.w_up_key,
            &w.w_up_value,    &w.w_key_rotary, &w.w_out,        &model.unembedding};
}

std::vector<std::string> latent_parameter_names()
{
    return {"embedding",         "layers.0.w_query",      "layers.0.w_query_rotary",
            "layers.0.w_down",   "layers.0.w_up_key",     "layers.0.w_up_value",
            "layers.0.w_key_rotary", "layers.0.w_out",    "unembedding"};
}

Matrix latent_logits(const LatentModel& model, const std::vector<std::size_t>& tokens, std::size_t window)
{
    if (window == 0 || tokens.empty()) {
        throw std::invalid_argument("latent_logits: no tokens, or a window of 0 rows");
    }
    return multiply(layer_trace(model, tokens, window).stream, model.unembedding);
}

LatentModel latent_gradient(const LatentModel& model, const Batch& batch, double* loss)
{
    if (batch.window == 0 || batch.inputs.empty()) {
        throw std::invalid_argument("latent_gradient: no tokens, or a window of 0 rows");
    }
    const LatentTrace trace = layer_trace(model, batch.inputs, batch.window);
    const CrossEntropy entropy = cross_entropy(multiply(trace.stream, model.unembedding), batch.targets);
    if (loss != nullptr) {
        *loss = entropy.loss;
    }
    LatentModel grads{model.shape, {}, {}, multiply_transposed_lhs(trace.stream, entropy.d_logits)};
    const Matrix d_stream = multiply_transposed_rhs(entropy.d_logits, model.unembedding);
    const Matrix d_input = layer_backward(model, trace, batch.window, d_stream, grads.layer);
    grads.embedding = embedding_backward(d_input, batch.inputs, model.shape.vocabulary);
    return grads;
}

double evaluate_latent(const LatentModel& model, const Batch& batch)
{
    constexpr std::size_t windows_at_once = 16;
    const std::size_t chunk = windows_at_once * batch.window;
    double total = 0.0;
    for (std::size_t first = 0; first < batch.inputs.size(); first += chunk) {
        const std::size_t last = std::min(batch.inputs.size(), first + chunk);
        const std::vector<std::size_t> inputs(batch.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                              batch.inputs.begin() + static_cast<std::ptrdiff_t>(last));
        const std::vector<std::size_t> targets(batch.targets.begin() + static_cast<std::ptrdiff_t>(first),
                                               batch.targets.begin() + static_cast<std::ptrdiff_t>(last));
        total += cross_entropy(latent_logits(model, inputs, batch.window), targets).loss *
                 static_cast<double>(last - first);
    }
    return total / static_cast<double>(batch.inputs.size());
}

LatentTrainer make_latent_trainer(LatentModel model, const AdamSettings& settings)
{
    LatentTrainer trainer{std::move(model), {}, settings, 0};
    for (Matrix* parameter : latent_parameters(trainer.model)) {
        trainer.moments.push_back(zero_moments(*parameter));
    }
    return trainer;
}

double latent_training_step(LatentTrainer& trainer, const Batch& batch)
{
    double loss = 0.0;
    LatentModel grads = latent_gradient(trainer.model, batch, &loss);
    ++trainer.steps;
    const std::vector<Matrix*> weights = latent_parameters(trainer.model);
    const std::vector<Matrix*> gradients = latent_parameters(grads);
    for (std::size_t i = 0; i < weights.size(); ++i) {
        adam_step(*weights[i], *gradients[i], trainer.moments[i], trainer.steps, trainer.settings);
    }
    return loss;
}

}  // namespace sa
