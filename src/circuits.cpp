#include "circuits.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "dense.hpp"
#include "eigenvalues.hpp"
#include "embedding.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "positions.hpp"

namespace sa {

std::vector<std::size_t> letter_tokens(const Vocabulary& vocabulary)
{
    std::vector<std::size_t> letters;
    for (std::size_t t = 0; t < vocabulary.characters.size(); ++t) {
        const char c = vocabulary.characters[t];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
            letters.push_back(t);
        }
    }
    return letters;
}

//> repeated-letters
std::vector<std::size_t> cycled_letters(const std::vector<std::size_t>& letters, std::size_t period,
                                        std::size_t length, SplitMix64& generator)
{
    //{ checks its arguments
    if (period == 0 || letters.size() < period) {
        throw std::invalid_argument(fmt::format(
            "cycled_letters: {} distinct letters asked from {}; ask for at least 1 "
            "and at most as many as there are", period, letters.size()));
    }
    //}
    std::vector<std::size_t> shuffled = letters;
    for (std::size_t k = 0; k < period; ++k) {
        const std::size_t other = k + static_cast<std::size_t>(generator.next() % (shuffled.size() - k));
        std::swap(shuffled[k], shuffled[other]);
    }
    std::vector<std::size_t> sequence;
    for (std::size_t i = 0; i < length; ++i) {
        sequence.push_back(shuffled[i % period]);
    }
    return sequence;
}

std::vector<std::size_t> repeated_letters(const std::vector<std::size_t>& letters, std::size_t distinct,
                                          SplitMix64& generator)
{
    //{ checks its arguments
    if (distinct == 0 || letters.size() < distinct) {
        throw std::invalid_argument(fmt::format(
            "repeated_letters: {} distinct letters asked from {}; ask for at least 1 "
            "and at most as many as there are", distinct, letters.size()));
    }
    //}
    return cycled_letters(letters, distinct, 2 * distinct + 1, generator);
}
//< repeated-letters

namespace {

void append_window(Batch& batch, const std::vector<std::size_t>& tokens, std::size_t start)
{
    const auto first = tokens.begin() + static_cast<std::ptrdiff_t>(start);
    const auto length = static_cast<std::ptrdiff_t>(batch.window);
    batch.inputs.insert(batch.inputs.end(), first, first + length);
    batch.targets.insert(batch.targets.end(), first + 1, first + length + 1);
}

}  // namespace

Batch repeated_batch(const std::vector<std::size_t>& letters, std::size_t count, std::size_t distinct,
                     SplitMix64& generator)
{
    Batch batch{{}, {}, 2 * distinct};
    for (std::size_t w = 0; w < count; ++w) {
        append_window(batch, repeated_letters(letters, distinct, generator), 0);
    }
    return batch;
}

std::vector<std::size_t> cycled_text(const std::vector<std::size_t>& tokens, std::size_t period,
                                     std::size_t length, SplitMix64& generator)
{
    if (period == 0 || period >= tokens.size()) {
        throw std::invalid_argument(fmt::format("cycled_text: a period of {} in a text of {} characters; expected at "
                                                "least 1 and fewer than the text has", period, tokens.size()));
    }
    const auto start = static_cast<std::size_t>(generator.next() % (tokens.size() - period));
    std::vector<std::size_t> sequence;
    for (std::size_t i = 0; i < length; ++i) {
        sequence.push_back(tokens[start + i % period]);
    }
    return sequence;
}

//> mixed-batch
Batch mixed_batch(const std::vector<std::size_t>& tokens, const std::vector<std::size_t>& letters,
                  std::size_t count, std::size_t window, const LetterMix& mix, SplitMix64& generator)
{
    //{ checks its arguments
    const bool few_letters = mix.repeated == Repeated::letters && letters.size() < mix.longest;
    if (tokens.size() <= window || (mix.every != 0 && (mix.shortest == 0 || mix.shortest > mix.longest ||
                                                       mix.longest > window || few_letters))) {
        throw std::invalid_argument(fmt::format(
            "mixed_batch: a window of {} over {} characters, {} letters and periods from {} to {}; "
            "the text must be longer than a window, and the periods from 1 up to the window "
            "and the letters", window, tokens.size(), letters.size(), mix.shortest, mix.longest));
    }
    //}
    Batch batch{{}, {}, window};
    for (std::size_t w = 0; w < count; ++w) {
        if (mix.every != 0 && w % mix.every == mix.every - 1) {
            const std::size_t period = mix.shortest + generator.next() % (mix.longest - mix.shortest + 1);
            const std::vector<std::size_t> repeat = mix.repeated == Repeated::letters
                                                        ? cycled_letters(letters, period, window + 1, generator)
                                                        : cycled_text(tokens, period, window + 1, generator);
            append_window(batch, repeat, 0);
        } else {
            append_window(batch, tokens, static_cast<std::size_t>(generator.next() % (tokens.size() - window)));
        }
    }
    return batch;
}
//< mixed-batch

namespace {

// The ablated layer, its head's columns of C zeroed or, with a replacement, set to it in every row.
Matrix replaced_layer_forward(const AttentionLayer& layer, const Matrix& input, std::size_t heads, std::size_t window,
                              const HeadAblation& ablation, LayerTrace& trace)
{
    Matrix output = ablated_layer_forward(layer, input, heads, window, ablation.head, &trace);
    if (ablation.replacement.empty()) {
        return output;
    }
    const std::size_t width = input.cols() / heads;
    for (std::size_t r = 0; r < trace.joined.rows(); ++r) {
        for (std::size_t c = 0; c < width; ++c) {
            trace.joined(r, ablation.head * width + c) = ablation.replacement[c];
        }
    }
    output = multiply(trace.joined, layer.w_out);
    add_in_place(output, input);  // X + C'' W_O
    return output;
}

}  // namespace

ForwardTrace ablated_forward(const LanguageModel& model, const std::vector<std::size_t>& tokens, std::size_t window,
                             const HeadAblation& ablation)
{
    require_own_kv_heads(model.shape, "ablated_forward");
    const std::size_t width = model.shape.width / std::max<std::size_t>(model.shape.heads, 1);
    if (ablation.layer >= model.layers.size() || ablation.head >= model.shape.heads ||
        (!ablation.replacement.empty() && ablation.replacement.size() != width)) {
        throw std::invalid_argument(fmt::format("ablated_forward: head {} of layer {}, a replacement of {} values; the "
                                                "model has {} layers of {} heads of {} features", ablation.head,
                                                ablation.layer, ablation.replacement.size(), model.layers.size(),
                                                model.shape.heads, width));
    }
    ForwardTrace trace{tokens, window, std::vector<LayerTrace>(model.layers.size()), {}, {}};
    trace.stream = embed(model.embedding, tokens);
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
        trace.stream = l == ablation.layer
                           ? replaced_layer_forward(model.layers[l], trace.stream, model.shape.heads, window, ablation,
                                                    trace.layers[l])
                           : layer_forward(model.layers[l], trace.stream, model.shape.heads, window, &trace.layers[l]);
    }
    trace.logits = multiply(trace.stream, model.unembedding);
    return trace;
}

namespace {

// Rows first … first + count − 1 of a matrix.
Matrix rows_of(const Matrix& matrix, std::size_t first, std::size_t count)
{
    Matrix rows(count, matrix.cols());
    std::copy(matrix.data() + first * matrix.cols(), matrix.data() + (first + count) * matrix.cols(), rows.data());
    return rows;
}

// Each head's slice turned by its positions in the window, as layer_forward() turns it.
Matrix turned(const Matrix& vectors, std::size_t heads)
{
    std::vector<Matrix> slices = split_heads(vectors, heads);
    for (Matrix& slice : slices) {
        slice = rope(slice);
    }
    return concat_heads(slices);
}

//> path-ablation
// A layer whose one path (its queries, keys or values) reads the changed stream, window by window.
Matrix path_layer_forward(const AttentionLayer& layer, const Matrix& input, const Matrix& changed, Path path,
                          std::size_t heads, std::size_t window, LayerTrace& trace)
{
    trace.input = input;
    trace.weights.assign(input.rows() * window * heads, 0.0);
    Matrix output = input;  // the residual: the whole stream
    const Matrix mask = causal_mask(window, window);
    for (std::size_t first = 0; first < input.rows(); first += window) {
        const Matrix whole = rows_of(input, first, window);
        const Matrix without = rows_of(changed, first, window);
        const Matrix queries = turned(multiply(path == Path::query ? without : whole, layer.w_query), heads);
        const Matrix keys = turned(multiply(path == Path::key ? without : whole, layer.w_key), heads);
        const Matrix values = multiply(path == Path::value ? without : whole, layer.w_value);
        const std::vector<Matrix> weights = head_weights(queries, keys, mask, heads);
        for (std::size_t h = 0; h < heads; ++h) {
            std::copy(weights[h].data(), weights[h].data() + window * window,
                      trace.weights.begin() + static_cast<std::ptrdiff_t>(first * window * heads + h * window * window));
        }
        const Matrix mixed = multi_head_attention(queries, keys, values, mask, heads, layer.w_out);
        for (std::size_t i = 0; i < window; ++i) {
            for (std::size_t c = 0; c < input.cols(); ++c) {
                output(first + i, c) += mixed(i, c);
            }
        }
    }
    return output;
}

}  // namespace

ForwardTrace path_ablated_forward(const LanguageModel& model, const std::vector<std::size_t>& tokens,
                                  std::size_t window, const HeadAblation& ablation, Path path)
{
    //{ checks the head, its layer and the windows
    require_own_kv_heads(model.shape, "path_ablated_forward");
    const std::size_t width = model.shape.width / std::max<std::size_t>(model.shape.heads, 1);
    if (ablation.layer + 1 >= model.layers.size() || ablation.head >= model.shape.heads || window == 0 ||
        tokens.size() % window != 0 || (!ablation.replacement.empty() && ablation.replacement.size() != width)) {
        throw std::invalid_argument(fmt::format("path_ablated_forward: head {} of layer {}, {} tokens in windows of {}, "
                                                "a replacement of {} values; the model has {} layers of {} heads of {} "
                                                "features, the head's layer must not be the last, and the tokens must "
                                                "be whole windows", ablation.head, ablation.layer, tokens.size(), window,
                                                ablation.replacement.size(), model.layers.size(), model.shape.heads,
                                                width));
    }
    //}
    ForwardTrace trace{tokens, window, std::vector<LayerTrace>(model.layers.size()), {}, {}};
    trace.stream = embed(model.embedding, tokens);
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
        const AttentionLayer& layer = model.layers[l];
        if (l == ablation.layer + 1) {  // the stream as the next layer's one path sees it: without the head
            LayerTrace changed;  // zeroed, or the replacement written at every position
            const Matrix without = replaced_layer_forward(model.layers[ablation.layer],
                                                          trace.layers[ablation.layer].input, model.shape.heads, window,
                                                          ablation, changed);
            trace.stream = path_layer_forward(layer, trace.stream, without, path, model.shape.heads, window,
                                              trace.layers[l]);
        } else {
            trace.stream = layer_forward(layer, trace.stream, model.shape.heads, window, &trace.layers[l]);
        }
    }
    trace.logits = multiply(trace.stream, model.unembedding);
    return trace;
}
//< path-ablation

std::vector<Matrix> trace_attention(const LayerTrace& trace, std::size_t heads, std::size_t window, std::size_t index)
{
    const std::size_t first = index * window;
    const std::size_t n = std::min(window, trace.input.rows() - first);
    std::vector<Matrix> weights;
    for (std::size_t h = 0; h < heads; ++h) {
        // The layout of LayerTrace::weights: window after window, head after head, n×n each.
        const std::size_t offset = first * window * heads + h * n * n;
        Matrix a(n, n);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j <= i; ++j) {
                a(i, j) = trace.weights[offset + i * n + j];
            }
        }
        weights.push_back(a);
    }
    return weights;
}

std::vector<double> row_losses(const Matrix& logits, const std::vector<std::size_t>& targets)
{
    std::vector<double> losses;
    for (std::size_t i = 0; i < logits.rows(); ++i) {
        double largest = logits(i, 0);
        for (std::size_t j = 1; j < logits.cols(); ++j) {
            largest = std::fmax(largest, logits(i, j));
        }
        double total = 0.0;
        for (std::size_t j = 0; j < logits.cols(); ++j) {
            total += std::exp(logits(i, j) - largest);
        }
        losses.push_back(std::log(total) - (logits(i, targets.at(i)) - largest));
    }
    return losses;
}

namespace {

std::vector<std::vector<double>> zero_table(const LanguageModel& model)
{
    return std::vector<std::vector<double>>(model.layers.size(), std::vector<double>(model.shape.heads, 0.0));
}

}  // namespace

namespace {

// The scores of a forward pass over repeated_batch() windows.
CopyScores scores_of(const LanguageModel& model, const Batch& batch, const ForwardTrace& trace)
{
    const std::size_t n = batch.window;
    const std::size_t period = n / 2;
    const std::size_t windows = batch.inputs.size() / n;
    const std::vector<double> losses = row_losses(trace.logits, batch.targets);
    CopyScores scores{zero_table(model), zero_table(model), 0.0, 0.0};
    for (std::size_t w = 0; w < windows; ++w) {
        for (std::size_t l = 0; l < model.layers.size(); ++l) {
            const std::vector<Matrix> weights = trace_attention(trace.layers[l], model.shape.heads, n, w);
            for (std::size_t h = 0; h < model.shape.heads; ++h) {
                scores.induction[l][h] += induction_score(weights[h], period) / static_cast<double>(windows);
                scores.previous[l][h] += previous_token_score(weights[h]) / static_cast<double>(windows);
            }
        }
        for (std::size_t i = 0; i + 1 < period; ++i) {  // inputs 0 … period−2 predict letters 2 … period
            scores.first_copy_loss += losses[w * n + i] / static_cast<double>(windows * (period - 1));
        }
        for (std::size_t i = period; i < n; ++i) {
            scores.second_copy_loss += losses[w * n + i] / static_cast<double>(windows * (n - period));
        }
    }
    return scores;
}

}  // namespace

CopyScores copy_scores(const LanguageModel& model, const Batch& batch, const HeadAblation* ablation)
{
    const ForwardTrace trace = ablation != nullptr ? ablated_forward(model, batch.inputs, batch.window, *ablation)
                                                   : forward(model, batch.inputs, batch.window);
    return scores_of(model, batch, trace);
}

CopyScores path_copy_scores(const LanguageModel& model, const Batch& batch, const HeadAblation& ablation, Path path)
{
    return scores_of(model, batch, path_ablated_forward(model, batch.inputs, batch.window, ablation, path));
}

std::vector<std::vector<double>> previous_token_scores(const LanguageModel& model, const Batch& batch)
{
    const std::size_t n = batch.window;
    const std::size_t windows = batch.inputs.size() / n;
    const ForwardTrace trace = forward(model, batch.inputs, n);
    std::vector<std::vector<double>> scores = zero_table(model);
    for (std::size_t w = 0; w < windows; ++w) {
        for (std::size_t l = 0; l < model.layers.size(); ++l) {
            const std::vector<Matrix> weights = trace_attention(trace.layers[l], model.shape.heads, n, w);
            for (std::size_t h = 0; h < model.shape.heads; ++h) {
                scores[l][h] += previous_token_score(weights[h]) / static_cast<double>(windows);
            }
        }
    }
    return scores;
}

namespace {

void check_head(const LanguageModel& model, std::size_t layer, std::size_t head, const char* name)
{
    require_own_kv_heads(model.shape, name);
    if (layer >= model.layers.size() || head >= model.shape.heads) {
        throw std::invalid_argument(fmt::format("{}: head {} of layer {}; the model has {} layers of {} heads", name,
                                                head, layer, model.layers.size(), model.shape.heads));
    }
}

}  // namespace

std::vector<double> mean_head_output(const LanguageModel& model, const Batch& batch, std::size_t layer, std::size_t head)
{
    check_head(model, layer, head, "mean_head_output");
    const ForwardTrace trace = forward(model, batch.inputs, batch.window);
    const Matrix& joined = trace.layers[layer].joined;
    const std::size_t width = model.shape.width / model.shape.heads;
    std::vector<double> mean(width, 0.0);
    for (std::size_t r = 0; r < joined.rows(); ++r) {
        for (std::size_t c = 0; c < width; ++c) {
            mean[c] += joined(r, head * width + c);
        }
    }
    for (double& m : mean) {
        m /= static_cast<double>(joined.rows());
    }
    return mean;
}

//> ov-circuit
Matrix ov_circuit(const LanguageModel& model, std::size_t layer, std::size_t head)
{
    check_head(model, layer, head, "ov_circuit");
    const std::size_t width = model.shape.width / model.shape.heads;
    const AttentionLayer& weights = model.layers[layer];
    Matrix w_value(model.shape.width, width);  // W_V^κ: the head's columns of W_V
    Matrix w_out(width, model.shape.width);    // W_O^κ: the head's rows of W_O
    for (std::size_t r = 0; r < model.shape.width; ++r) {
        for (std::size_t c = 0; c < width; ++c) {
            w_value(r, c) = weights.w_value(r, head * width + c);
            w_out(c, r) = weights.w_out(head * width + c, r);
        }
    }
    return multiply(multiply(multiply(model.embedding, w_value), w_out), model.unembedding);
}
//< ov-circuit

//> path-logits
PathLogits path_logits(const LanguageModel& model, const std::vector<std::size_t>& tokens, std::size_t window)
{
    //{ refuses a model whose query heads share key/value heads
    require_own_kv_heads(model.shape, "path_logits");
    //}
    if (model.layers.size() != 1) {
        throw std::invalid_argument(fmt::format("path_logits: a model of {} layers; the paths are cut for one layer",
                                                model.layers.size()));
    }
    const ForwardTrace trace = forward(model, tokens, window);  // for the weights A^κ
    const Matrix bigram = multiply(model.embedding, model.unembedding);  // W_E W_U
    const std::size_t vocabulary = bigram.cols();
    PathLogits paths{Matrix(tokens.size(), vocabulary), {}};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        for (std::size_t c = 0; c < vocabulary; ++c) {
            paths.direct(i, c) = bigram(tokens[i], c);
        }
    }
    for (std::size_t h = 0; h < model.shape.heads; ++h) {
        const Matrix ov = ov_circuit(model, 0, h);
        Matrix term(tokens.size(), vocabulary);
        for (std::size_t w = 0; w * window < tokens.size(); ++w) {
            const Matrix a = trace_attention(trace.layers[0], model.shape.heads, window, w)[h];
            for (std::size_t i = 0; i < a.rows(); ++i) {
                for (std::size_t j = 0; j <= i; ++j) {  // row i: the sum over j of A_ij times row t_j of the table
                    for (std::size_t c = 0; c < vocabulary; ++c) {
                        term(w * window + i, c) += a(i, j) * ov(tokens[w * window + j], c);
                    }
                }
            }
        }
        paths.heads.push_back(std::move(term));
    }
    return paths;
}
//< path-logits

//> ov-copying
OvCopying ov_copying(const Matrix& circuit, const std::vector<std::size_t>& tokens)
{
    const std::size_t n = tokens.size();
    if (circuit.rows() != circuit.cols() || n == 0 ||
        std::any_of(tokens.begin(), tokens.end(), [&](std::size_t t) { return t >= circuit.rows(); })) {
        throw std::invalid_argument(fmt::format("ov_copying: a table of {}×{} and {} tokens; expected a square table "
                                                "and at least one token, each below its size", circuit.rows(),
                                                circuit.cols(), n));
    }
    Matrix kept(n, n);
    double first = 0.0;
    for (std::size_t a = 0; a < n; ++a) {
        std::size_t top = 0;
        for (std::size_t b = 0; b < n; ++b) {
            kept(a, b) = circuit(tokens[a], tokens[b]);
            top = kept(a, b) > kept(a, top) ? b : top;
        }
        first += top == a ? 1.0 : 0.0;  // attending to a raises a's own logit most
    }
    double sum = 0.0, moduli = 0.0;
    for (const std::complex<double>& lambda : eigenvalues(kept)) {
        sum += lambda.real();  // the imaginary parts of a pair cancel
        moduli += std::abs(lambda);
    }
    return {first / static_cast<double>(n), moduli > 0.0 ? sum / moduli : 0.0};
}
//< ov-copying

}  // namespace sa
