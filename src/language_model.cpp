#include "language_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdexcept>

#include <fmt/format.h>

#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "head_tiles.hpp"

namespace sa {

namespace {

Matrix scaled_random(std::size_t rows, std::size_t cols, double spread, SplitMix64& generator)
{
    Matrix matrix = random_matrix(rows, cols, generator);
    double* entry = matrix.data();
    for (std::size_t i = 0; i < rows * cols; ++i) {
        entry[i] *= spread;
    }
    return matrix;
}

// cos(p θ_i) and sin(p θ_i) for positions p < window and pairs i < d/(2h), computed as
// rope() computes them, so the turned vectors are rope()'s bit for bit.
struct RotaryTable {
    std::size_t pairs = 0;
    std::vector<double> cosine;
    std::vector<double> sine;
    std::size_t window = 0;  // what it was made for
    std::size_t head_dim = 0;
};

RotaryTable rotary_table(std::size_t window, std::size_t head_dim)
{
    RotaryTable table{head_dim / 2, {}, {}, window, head_dim};
    const double d = static_cast<double>(head_dim);
    for (std::size_t p = 0; p < window; ++p) {
        for (std::size_t i = 0; i < table.pairs; ++i) {
            const double theta = std::pow(10000.0, -2.0 * static_cast<double>(i) / d);
            table.cosine.push_back(std::cos(static_cast<double>(p) * theta));
            table.sine.push_back(std::sin(static_cast<double>(p) * theta));
        }
    }
    return table;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Compiled twice, for processors with 512-bit registers and for any other; the processor picks
// when the program starts. Each is the same operations, only more at once in one.
#define BOOK_WIDE_CLONES __attribute__((target_clones("avx512f", "default")))
#else
#define BOOK_WIDE_CLONES
#endif

// Turns every head's pairs (2i, 2i+1) of each row by its angle; back = true turns by minus the
// angle, which is the backward pass of the turn (a rotation's transpose is its inverse).
BOOK_WIDE_CLONES void rotate(Matrix& matrix, std::size_t heads, std::size_t window, const RotaryTable& table,
                             bool back)
{
    const std::size_t d = matrix.cols();
    const std::size_t head_dim = d / heads;
    // Each row turns on its own, so the rows may be shared among the threads of the products.
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t row_index = 0; row_index < static_cast<std::ptrdiff_t>(matrix.rows()); ++row_index) {
        const auto r = static_cast<std::size_t>(row_index);
        const std::size_t p = r % window;
        double* row = matrix.data() + r * d;
        for (std::size_t h = 0; h < heads; ++h) {
            for (std::size_t i = 0; i < table.pairs; ++i) {
                const double c = table.cosine[p * table.pairs + i];
                const double s = back ? -table.sine[p * table.pairs + i] : table.sine[p * table.pairs + i];
                double* pair = row + h * head_dim + 2 * i;
                const double x = pair[0];
                const double y = pair[1];
                pair[0] = x * c - y * s;
                pair[1] = x * s + y * c;
            }
        }
    }
}

struct Slice {
    std::size_t first_row;  // the window's first row
    std::size_t rows;       // its length
    std::size_t column;     // the head's first column
    std::size_t head_dim;
    std::size_t weights;    // where its weights start in LayerTrace::weights; row i holds A(i, 0..i)
};

// One head's columns of one window's rows, as the tiled head kernels read them.
HeadWindow head_window(const LayerTrace& t, const Slice& s)
{
    const std::size_t at = s.first_row * t.queries.cols() + s.column;
    return {t.queries.data() + at, t.keys.data() + at, t.values.data() + at, t.queries.cols(), s.rows, s.head_dim};
}

std::size_t window_count(std::size_t rows, std::size_t window)
{
    return (rows + window - 1) / window;
}

Slice slice_of(const LayerTrace& t, std::size_t w, std::size_t h, std::size_t heads, std::size_t window)
{
    const std::size_t rows = t.input.rows();
    const std::size_t head_dim = t.input.cols() / heads;
    const std::size_t first = w * window;
    const std::size_t length = std::min(window, rows - first);
    // Window w's heads come one after another; a window of n rows keeps n×n weights per head.
    const std::size_t offset = first * window * heads + h * length * length;
    return {first, length, h * head_dim, head_dim, offset};
}

// The table for this window and head width: the one kept, or made anew when it was made for others.
const RotaryTable& rotary_table_for(RotaryTable& kept, std::size_t window, std::size_t head_dim)
{
    if (kept.window != window || kept.head_dim != head_dim || kept.pairs == 0) {
        kept = rotary_table(window, head_dim);
    }
    return kept;
}

// A matrix of this shape whose entries will all be overwritten: the one given, its storage kept,
// where it has the shape already.
void shape_buffer(Matrix& matrix, std::size_t rows, std::size_t cols)
{
    if (matrix.rows() != rows || matrix.cols() != cols || matrix.empty()) {
        matrix = Matrix(rows, cols);
    }
}

void check_shape(const ModelShape& shape)
{
    if (shape.vocabulary < 2 || shape.width == 0 || shape.heads == 0 || shape.width % shape.heads != 0 ||
        (shape.width / shape.heads) % 2 != 0 || shape.context == 0) {
        throw std::invalid_argument(fmt::format("language model: d_vocab = {}, d = {}, h = {}, context {}; "
                                                "d_vocab needs at least 2, and d/h must be a whole even number "
                                                "(rotary pairs)",
                                                shape.vocabulary, shape.width, shape.heads, shape.context));
    }
    if (shape.heads % kv_head_count(shape) != 0) {
        throw std::invalid_argument(fmt::format("language model: h = {} query heads do not split into h_kv = {} "
                                                "equal groups; h_kv must divide h",
                                                shape.heads, kv_head_count(shape)));
    }
}

// The columns of W_K and of W_V: h_kv heads of width d/h.
std::size_t kv_width(const ModelShape& shape)
{
    return kv_head_count(shape) * (shape.width / shape.heads);
}

}  // namespace

std::size_t kv_head_count(const ModelShape& shape)
{
    return shape.kv_heads == 0 ? shape.heads : shape.kv_heads;
}

void require_own_kv_heads(const ModelShape& shape, const std::string& step)
{
    if (kv_head_count(shape) != shape.heads) {
        throw std::invalid_argument(fmt::format("{}: the model's {} query heads share {} key/value heads; this step "
                                                "needs one key/value head per query head",
                                                step, shape.heads, kv_head_count(shape)));
    }
}

LanguageModel random_model(const ModelShape& shape, SplitMix64& generator)
{
    check_shape(shape);
    const std::size_t d = shape.width;
    const double spread = 1.0 / std::sqrt(static_cast<double>(d));
    LanguageModel model{shape, scaled_random(shape.vocabulary, d, 1.0, generator), {}, {}};
    for (std::size_t l = 0; l < shape.layers; ++l) {
        AttentionLayer layer;
        layer.w_query = scaled_random(d, d, spread, generator);
        layer.w_key = scaled_random(d, kv_width(shape), spread, generator);
        layer.w_value = scaled_random(d, kv_width(shape), spread, generator);
        layer.w_out = scaled_random(d, d, spread, generator);
        model.layers.push_back(layer);
    }
    model.unembedding = scaled_random(d, shape.vocabulary, 0.01, generator);
    return model;
}

LanguageModel zero_model(const ModelShape& shape)
{
    const std::size_t d = shape.width;
    LanguageModel model{shape, Matrix(shape.vocabulary, d), {}, Matrix(d, shape.vocabulary)};
    for (std::size_t l = 0; l < shape.layers; ++l) {
        model.layers.push_back({Matrix(d, d), Matrix(d, kv_width(shape)), Matrix(d, kv_width(shape)), Matrix(d, d)});
    }
    return model;
}

std::vector<Matrix*> parameters(LanguageModel& model)
{
    std::vector<Matrix*> all{&model.embedding};
    for (AttentionLayer& layer : model.layers) {
        all.insert(all.end(), {&layer.w_query, &layer.w_key, &layer.w_value, &layer.w_out});
    }
    all.push_back(&model.unembedding);
    return all;
}

std::size_t parameter_count(const ModelShape& shape)
{
    const std::size_t per_layer = 2 * shape.width * shape.width + 2 * shape.width * kv_width(shape);
    return shape.vocabulary * shape.width + shape.layers * per_layer + shape.width * shape.vocabulary;
}

std::vector<std::string> parameter_names(const ModelShape& shape)
{
    std::vector<std::string> names{"embedding"};
    for (std::size_t l = 0; l < shape.layers; ++l) {
        for (const char* matrix : {"w_query", "w_key", "w_value", "w_out"}) {
            names.push_back(fmt::format("layers.{}.{}", l, matrix));
        }
    }
    names.emplace_back("unembedding");
    return names;
}

namespace {

// Query head a's columns of a matrix of h heads side by side hold key/value head ⌊a h_kv / h⌋ of
// `shared`, which has h_kv heads of the same width: chapter 18's repeat_kv_heads(), kept here so
// that the model needs nothing of chapter 18's steps (nor its exercise) when h_kv = h.
Matrix repeated_heads(const Matrix& shared, std::size_t kv_heads, std::size_t heads)
{
    const std::size_t width = shared.cols() / kv_heads;
    Matrix repeated(shared.rows(), heads * width);
    for (std::size_t r = 0; r < shared.rows(); ++r) {
        for (std::size_t a = 0; a < heads; ++a) {
            const double* from = shared.data() + r * shared.cols() + (a / (heads / kv_heads)) * width;
            std::copy(from, from + width, repeated.data() + r * repeated.cols() + a * width);
        }
    }
    return repeated;
}

// Its backward: each key/value head's gradient is the sum of its copies', added in the order of
// the query heads (chapter 18's sum_kv_heads()).
Matrix summed_heads(const Matrix& repeated, std::size_t kv_heads, std::size_t heads)
{
    const std::size_t width = repeated.cols() / heads;
    Matrix summed(repeated.rows(), kv_heads * width, 0.0);
    for (std::size_t r = 0; r < repeated.rows(); ++r) {
        for (std::size_t a = 0; a < heads; ++a) {
            const double* from = repeated.data() + r * repeated.cols() + a * width;
            double* to = summed.data() + r * summed.cols() + (a / (heads / kv_heads)) * width;
            for (std::size_t c = 0; c < width; ++c) {
                to[c] += from[c];
            }
        }
    }
    return summed;
}

// K and V of h_kv < h heads (W_K and W_V of chapter 18) become h heads, one per query head.
void repeat_shared_heads(std::size_t heads, LayerTrace& t)
{
    const std::size_t kv_heads = t.keys.cols() / (t.queries.cols() / heads);
    if (kv_heads != heads) {
        t.keys = repeated_heads(t.keys, kv_heads, heads);
        t.values = repeated_heads(t.values, kv_heads, heads);
    }
}

}  // namespace

//> layer-forward
namespace {

// The layer's pass on t.input, which is already there, into `output`. The trace's matrices and
// `output` keep their storage where they have the right shape (see training_step()); every entry
// of each is written. t.weights is made anew, all zeros, when its size is not that of this input;
// else only each window's and head's entries on and below the diagonal are written.
void layer_pass(const AttentionLayer& layer, LayerTrace& t, std::size_t heads, std::size_t window,
                const RotaryTable& table, Matrix& output)
{
    const Matrix& input = t.input;
    multiply_into(input, layer.w_query, t.queries);
    multiply_into(input, layer.w_key, t.keys);
    multiply_into(input, layer.w_value, t.values);
    //{ with h_kv < h key/value heads (chapter 18), repeats each once per query head of its group
    repeat_shared_heads(heads, t);
    //}
    rotate(t.queries, heads, window, table, false);
    rotate(t.keys, heads, window, table, false);
    if (t.weights.size() != input.rows() * window * heads) {
        t.weights.assign(input.rows() * window * heads, 0.0);
    }
    shape_buffer(t.joined, input.rows(), input.cols());  // every entry is written by one head
    const auto slices = static_cast<std::ptrdiff_t>(window_count(input.rows(), window) * heads);
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t k = 0; k < slices; ++k) {  // each window's head: A = softmax(Q Kᵀ / √(d/h), causal), C = A V
        const Slice s = slice_of(t, static_cast<std::size_t>(k) / heads, static_cast<std::size_t>(k) % heads, heads, window);
        head_forward_tiled(head_window(t, s), t.weights.data() + s.weights,
                           t.joined.data() + s.first_row * t.joined.cols() + s.column);
    }
    multiply_add_into(t.joined, layer.w_out, input, output);  // the residual stream: X + C W_O
}

}  // namespace

Matrix layer_forward(const AttentionLayer& layer, const Matrix& input, std::size_t heads, std::size_t window,
                     LayerTrace* trace)
{
    LayerTrace local;
    LayerTrace& t = trace != nullptr ? *trace : local;
    t.input = input;
    t.weights.assign(input.rows() * window * heads, 0.0);
    Matrix output;
    layer_pass(layer, t, heads, window, rotary_table(window, input.cols() / heads), output);
    return output;
}
//< layer-forward

namespace {

// The matrices of the backward pass between two layers, kept from step to step (see training_step()).
struct BackwardBuffers {
    Matrix d_stream;  // dY at a layer's output, then dX at its input
    Matrix d_joined;
    Matrix d_queries;
    Matrix d_keys;
    Matrix d_values;
    RotaryTable table;
};

// dY at a layer's output (b.d_stream) to its parameters' gradients; b.d_stream becomes dX at its input.
void layer_backward(const AttentionLayer& layer, const LayerTrace& t, std::size_t heads, std::size_t window,
                    AttentionLayer& grads, BackwardBuffers& b)
{
    const Matrix& d_output = b.d_stream;
    multiply_transposed_lhs_into(t.joined, d_output, grads.w_out);
    multiply_transposed_rhs_into(d_output, layer.w_out, b.d_joined);
    for (Matrix* d : {&b.d_queries, &b.d_keys, &b.d_values}) {
        shape_buffer(*d, t.input.rows(), t.input.cols());  // every entry is written by one head
    }
    const auto slices = static_cast<std::ptrdiff_t>(window_count(t.input.rows(), window) * heads);
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t k = 0; k < slices; ++k) {  // each window's head writes its own rows and columns
        const Slice s = slice_of(t, static_cast<std::size_t>(k) / heads, static_cast<std::size_t>(k) % heads, heads, window);
        const std::size_t at = s.first_row * t.input.cols() + s.column;
        head_backward_tiled(head_window(t, s), t.weights.data() + s.weights, b.d_joined.data() + at,
                            {b.d_queries.data() + at, b.d_keys.data() + at, b.d_values.data() + at});
    }
    const RotaryTable& table = rotary_table_for(b.table, window, t.input.cols() / heads);
    rotate(b.d_queries, heads, window, table, true);
    rotate(b.d_keys, heads, window, table, true);
    const std::size_t kv_heads = layer.w_key.cols() / (t.input.cols() / heads);
    if (kv_heads != heads) {  // chapter 18: a shared head's gradient is the sum over its query heads
        b.d_keys = summed_heads(b.d_keys, kv_heads, heads);
        b.d_values = summed_heads(b.d_values, kv_heads, heads);
    }
    multiply_transposed_lhs_into(t.input, b.d_queries, grads.w_query);
    multiply_transposed_lhs_into(t.input, b.d_keys, grads.w_key);
    multiply_transposed_lhs_into(t.input, b.d_values, grads.w_value);
    // dX = dY (the residual passes it through unchanged) + dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ, added in
    // that order, in place of dY, which is read no more.
    Matrix& d_input = b.d_stream;
    multiply_add_into(b.d_queries, transpose(layer.w_query), d_input, d_input);
    multiply_add_into(b.d_keys, transpose(layer.w_key), d_input, d_input);
    multiply_add_into(b.d_values, transpose(layer.w_value), d_input, d_input);
}

}  // namespace

//> forward
namespace {

// forward() into a trace kept from call to call; `table` keeps the rotary table.
void forward_into(const LanguageModel& model, const std::vector<std::size_t>& tokens, std::size_t window,
                  ForwardTrace& trace, RotaryTable& table)
{
    //{ checks that there are tokens and a window
    if (window == 0 || tokens.empty()) {
        throw std::invalid_argument("forward: no tokens, or a window of 0 rows");
    }
    //}
    const std::size_t layers = model.layers.size();
    if (trace.window != window || trace.tokens.size() != tokens.size() || trace.layers.size() != layers) {
        trace.layers.assign(layers, {});  // another layout of the weights: made anew, with zeros
    }
    trace.tokens = tokens;
    trace.window = window;
    // Each layer's output is the next layer's input (the last one's, the stream) as it is written.
    (layers > 0 ? trace.layers[0].input : trace.stream) = embed(model.embedding, tokens);
    for (std::size_t l = 0; l < layers; ++l) {
        const RotaryTable& turns = rotary_table_for(table, window, model.shape.width / model.shape.heads);
        layer_pass(model.layers[l], trace.layers[l], model.shape.heads, window, turns,
                   l + 1 < layers ? trace.layers[l + 1].input : trace.stream);
    }
    multiply_into(trace.stream, model.unembedding, trace.logits);
}

}  // namespace

ForwardTrace forward(const LanguageModel& model, const std::vector<std::size_t>& tokens, std::size_t window)
{
    ForwardTrace trace;
    RotaryTable table;
    forward_into(model, tokens, window, trace, table);
    return trace;
}
//< forward

//> backward
namespace {

// backward() into a gradient and buffers kept from call to call.
void backward_into(const LanguageModel& model, const ForwardTrace& trace, const Matrix& d_logits,
                   LanguageModel& grads, BackwardBuffers& b)
{
    grads.shape = model.shape;
    grads.layers.resize(model.layers.size());
    multiply_transposed_lhs_into(trace.stream, d_logits, grads.unembedding);
    multiply_transposed_rhs_into(d_logits, model.unembedding, b.d_stream);
    for (std::size_t l = model.layers.size(); l-- > 0;) {
        layer_backward(model.layers[l], trace.layers[l], model.shape.heads, trace.window, grads.layers[l], b);
    }
    grads.embedding = embedding_backward(b.d_stream, trace.tokens, model.shape.vocabulary);
}

}  // namespace

LanguageModel backward(const LanguageModel& model, const ForwardTrace& trace, const Matrix& d_logits)
{
    LanguageModel grads;
    BackwardBuffers buffers;
    backward_into(model, trace, d_logits, grads, buffers);
    return grads;
}
//< backward

Batch random_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window,
                   SplitMix64& generator)
{
    if (tokens.size() <= window) {
        throw std::invalid_argument(fmt::format("random_batch: a text of {} characters has no window of {} and "
                                                "the character after it", tokens.size(), window));
    }
    Batch batch{{}, {}, window};
    for (std::size_t w = 0; w < count; ++w) {
        const std::size_t start = generator.next() % (tokens.size() - window);
        batch.inputs.insert(batch.inputs.end(), tokens.begin() + static_cast<std::ptrdiff_t>(start),
                            tokens.begin() + static_cast<std::ptrdiff_t>(start + window));
        batch.targets.insert(batch.targets.end(), tokens.begin() + static_cast<std::ptrdiff_t>(start + 1),
                             tokens.begin() + static_cast<std::ptrdiff_t>(start + window + 1));
    }
    return batch;
}

std::vector<std::size_t> even_batch_positions(const std::vector<std::size_t>& tokens, std::size_t count,
                                              std::size_t window)
{
    if (tokens.size() <= window || count == 0) {
        throw std::invalid_argument(fmt::format("even_batch: a text of {} characters has no {} windows of {} and "
                                                "the character after each", tokens.size(), count, window));
    }
    std::vector<std::size_t> positions;
    const std::size_t last_start = tokens.size() - window - 1;
    for (std::size_t w = 0; w < count; ++w) {
        const std::size_t start = count == 1 ? 0 : w * last_start / (count - 1);
        for (std::size_t i = 0; i < window; ++i) {
            positions.push_back(start + i + 1);
        }
    }
    return positions;
}

Batch even_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window)
{
    Batch batch{{}, {}, window};
    for (const std::size_t position : even_batch_positions(tokens, count, window)) {
        batch.inputs.push_back(tokens[position - 1]);
        batch.targets.push_back(tokens[position]);
    }
    return batch;
}

Batch halfway_batch(const std::vector<std::size_t>& tokens, std::size_t count, std::size_t window)
{
    // even_batch()'s starts lie at least ⌊(n − window − 1)/(count − 1)⌋ apart; a window halfway
    // between two starts that far apart overlaps neither window (with its target).
    if (count < 2 || tokens.size() <= window ||
        (tokens.size() - window - 1) / (count - 1) < 2 * (window + 1)) {
        throw std::invalid_argument(fmt::format("halfway_batch: {} windows of {} in a text of {} characters lie "
                                                "too close for windows between them; give at least 2 windows, "
                                                "2 (window + 1) characters apart",
                                                count, window, tokens.size()));
    }
    const std::vector<std::size_t> tested = even_batch_positions(tokens, count, window);
    Batch batch{{}, {}, window};
    for (std::size_t w = 0; w + 1 < count; ++w) {
        const std::size_t start = (tested[w * window] - 1 + tested[(w + 1) * window] - 1) / 2;
        for (std::size_t i = 0; i < window; ++i) {
            batch.inputs.push_back(tokens[start + i]);
            batch.targets.push_back(tokens[start + i + 1]);
        }
    }
    return batch;
}

double evaluate(const LanguageModel& model, const Batch& batch)
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
        const ForwardTrace trace = forward(model, inputs, batch.window);
        total += cross_entropy(trace.logits, targets).loss * static_cast<double>(last - first);
    }
    return total / static_cast<double>(batch.inputs.size());
}

namespace {

// What training_step() keeps from one step to the next on each thread.
struct StepBuffers {
    ForwardTrace trace;
    RotaryTable table;
    LanguageModel grads;
    BackwardBuffers backward;
};

}  // namespace

Trainer make_trainer(LanguageModel model, const AdamSettings& settings)
{
#ifdef __GLIBC__
    static const int kept = mallopt(M_TOP_PAD, 64 << 20);  // once: the heap keeps 64 MiB spare on top
    static_cast<void>(kept);
#endif
    Trainer trainer{std::move(model), {}, settings, 0};
    for (Matrix* parameter : parameters(trainer.model)) {
        trainer.moments.push_back(zero_moments(*parameter));
    }
    return trainer;
}

//> train-step
double training_step(Trainer& trainer, const Batch& batch)
{
    const ProductThreads threads(trainer.threads);
    // forward() and backward() into matrices kept on this thread from step to step: a step makes
    // the same matrices of the same shapes as the step before, and would otherwise ask for a few
    // megabytes, fill them with zeros and hand them back, every step. The numbers are the same.
    thread_local StepBuffers kept;
    forward_into(trainer.model, batch.inputs, batch.window, kept.trace, kept.table);
    const ForwardTrace& trace = kept.trace;
    const CrossEntropy loss = cross_entropy(trace.logits, batch.targets);
    backward_into(trainer.model, trace, loss.d_logits, kept.grads, kept.backward);
    LanguageModel& grads = kept.grads;
    ++trainer.steps;
    const std::vector<Matrix*> weights = parameters(trainer.model);
    const std::vector<Matrix*> gradients = parameters(grads);
    for (std::size_t i = 0; i < weights.size(); ++i) {
        adam_step(*weights[i], *gradients[i], trainer.moments[i], trainer.steps, trainer.settings);
    }
    return loss.loss;
}
//< train-step

StepMoves step_moves(const LanguageModel& before, const LanguageModel& after, double learning_rate)
{
    if (!(learning_rate > 0.0)) {
        throw std::invalid_argument(fmt::format("step_moves: α = {}; the unit of the moves must be above 0",
                                                learning_rate));
    }
    LanguageModel old_model = before;  // parameters() hands out pointers into a model it may change
    LanguageModel new_model = after;
    const std::vector<Matrix*> olds = parameters(old_model);
    const std::vector<Matrix*> news = parameters(new_model);
    if (olds.size() != news.size()) {
        throw ShapeError(fmt::format("step_moves: {} matrices before and {} after; the models must have one shape",
                                     olds.size(), news.size()));
    }
    StepMoves moves;
    for (std::size_t p = 0; p < olds.size(); ++p) {
        const Matrix& old_value = *olds[p];
        const Matrix& new_value = *news[p];
        if (old_value.rows() != new_value.rows() || old_value.cols() != new_value.cols()) {
            throw ShapeError(fmt::format("step_moves: matrix {} is {} before and {} after; the models must have "
                                         "one shape", p, shape(old_value), shape(new_value)));
        }
        for (std::size_t r = 0; r < old_value.rows(); ++r) {
            for (std::size_t c = 0; c < old_value.cols(); ++c) {
                const double move = std::abs(new_value(r, c) - old_value(r, c)) / learning_rate;
                moves.above_alpha += move > 1.0 ? 1 : 0;
                if (move > moves.largest) {
                    moves = {move, p, r, c, moves.above_alpha};
                }
            }
        }
    }
    return moves;
}

std::vector<std::size_t> sample(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                std::size_t length, SplitMix64& generator)
{
    std::vector<std::size_t> text = prompt;
    for (std::size_t k = 0; k < length; ++k) {
        const std::size_t start = text.size() > model.shape.context ? text.size() - model.shape.context : 0;
        const std::vector<std::size_t> window(text.begin() + static_cast<std::ptrdiff_t>(start), text.end());
        const ForwardTrace trace = forward(model, window, window.size());
        const Matrix& z = trace.logits;
        const std::size_t last = z.rows() - 1;
        double largest = z(last, 0);
        for (std::size_t j = 1; j < z.cols(); ++j) {
            largest = std::fmax(largest, z(last, j));
        }
        std::vector<double> p(z.cols());
        double total = 0.0;
        for (std::size_t j = 0; j < z.cols(); ++j) {
            p[j] = std::exp(z(last, j) - largest);
            total += p[j];
        }
        const double u = generator.uniform() * total;
        std::size_t chosen = z.cols() - 1;
        double running = 0.0;
        for (std::size_t j = 0; j < z.cols(); ++j) {
            running += p[j];
            if (running > u) {
                chosen = j;
                break;
            }
        }
        text.push_back(chosen);
    }
    return {text.begin() + static_cast<std::ptrdiff_t>(prompt.size()), text.end()};
}

std::vector<Matrix> head_attention(const LanguageModel& model, std::size_t layer,
                                   const std::vector<std::size_t>& tokens)
{
    const ForwardTrace trace = forward(model, tokens, tokens.size());
    const LayerTrace& t = trace.layers.at(layer);
    const std::size_t n = tokens.size();
    std::vector<Matrix> weights;
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const Slice s = slice_of(t, 0, h, model.shape.heads, n);
        Matrix a(n, n);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j <= i; ++j) {
                a(i, j) = t.weights[s.weights + i * n + j];
            }
        }
        weights.push_back(a);
    }
    return weights;
}

}  // namespace sa
