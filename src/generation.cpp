#include "generation.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "dense.hpp"
#include "embedding.hpp"
#include "exercise.hpp"
#include "random.hpp"
#include "sampling.hpp"

namespace sa {

namespace {

// θ_i = 10000^(−2i/(d/h)) for the pair (2i, 2i+1) of a head of width d/h, as layer_forward() computes it.
double rotary_theta(std::size_t i, std::size_t head_dim)
{
    return std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
}

// Turns the pair (x, y) at `pair` by the angle whose cosine and sine are c and s.
void turn_pair(double* pair, double c, double s)
{
    const double x = pair[0];
    const double y = pair[1];
    pair[0] = x * c - y * s;
    pair[1] = x * s + y * c;
}

// Turns each head's pairs (2i, 2i+1) of one row by the angle p θ_i, with the expressions
// layer_forward() uses, so the turned row is the one it makes, bit for bit.
// (Unused while decode_next() is an exercise's stub.)
[[maybe_unused]] void rotate_row(Matrix& row, std::size_t heads, std::size_t position)
{
    const std::size_t head_dim = row.cols() / heads;
    for (std::size_t h = 0; h < heads; ++h) {
        for (std::size_t i = 0; i < head_dim / 2; ++i) {
            const double theta = rotary_theta(i, head_dim);
            turn_pair(row.data() + h * head_dim + 2 * i, std::cos(static_cast<double>(position) * theta),
                      std::sin(static_cast<double>(position) * theta));
        }
    }
}

// rotate_row() on each row p of `rows` at position p, each angle's cosine and sine computed once for
// every head.
void rotate_rows(Matrix& rows, std::size_t heads)
{
    const std::size_t head_dim = rows.cols() / heads;
    for (std::size_t i = 0; i < head_dim / 2; ++i) {
        const double theta = rotary_theta(i, head_dim);
        for (std::size_t p = 0; p < rows.rows(); ++p) {
            const double c = std::cos(static_cast<double>(p) * theta);
            const double s = std::sin(static_cast<double>(p) * theta);
            for (std::size_t h = 0; h < heads; ++h) {
                turn_pair(rows.data() + p * rows.cols() + h * head_dim + 2 * i, c, s);
            }
        }
    }
}

// One head's query against every cached key: scores / √(d/h), the softmax in two passes (largest
// first), then the weighted values, each sum over the positions in their order.
[[maybe_unused]] void attend(const KvCache& cache, const double* q, double* out, double* weights)
{
    const std::size_t t = cache.length();
    const std::size_t dk = cache.key_dim;
    const double root = std::sqrt(static_cast<double>(dk));
    double largest = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < t; ++j) {
        const double* k = cache.keys.data() + j * dk;
        double score = 0.0;
        for (std::size_t c = 0; c < dk; ++c) {
            score += q[c] * k[c];
        }
        weights[j] = score / root;
        largest = std::fmax(largest, weights[j]);
    }
    double total = 0.0;
    for (std::size_t j = 0; j < t; ++j) {
        weights[j] = std::exp(weights[j] - largest);
        total += weights[j];
    }
    for (std::size_t j = 0; j < t; ++j) {
        weights[j] /= total;
        const double* v = cache.values.data() + j * dk;
        for (std::size_t c = 0; c < dk; ++c) {
            out[c] += weights[j] * v[c];
        }
    }
}

}  // namespace

GenerationCache empty_cache(const LanguageModel& model)
{
    const std::size_t head_dim = model.shape.width / model.shape.heads;
    KvCache head;
    head.key_dim = head_dim;
    head.value_dim = head_dim;
    const std::size_t kv_heads = kv_head_count(model.shape);  // h, or fewer shared ones (chapter 18)
    return {std::vector<std::vector<KvCache>>(model.layers.size(), std::vector<KvCache>(kv_heads, head)), 0};
}

//> decode-next
DecodedStep decode_next(const LanguageModel& model, GenerationCache& cache, std::size_t token)
{
    // BEGIN SOLUTION decode_next: chapter 16, Generating text
    const std::size_t heads = model.shape.heads;
    if (token >= model.shape.vocabulary || cache.layers.size() != model.layers.size()) {
        throw std::invalid_argument(fmt::format("decode_next: token {} of a vocabulary of {}, a cache of {} layers "
                                                "for a model of {}", token, model.shape.vocabulary,
                                                cache.layers.size(), model.layers.size()));
    }
    const std::size_t position = cache.length;
    const std::size_t head_dim = model.shape.width / heads;
    const std::size_t group = heads / kv_head_count(model.shape);  // query heads per key/value head: 1 until chapter 18
    DecodedStep step;
    Matrix x = embed(model.embedding, {token});  // 1×d, the stream at the new position
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
        const AttentionLayer& layer = model.layers[l];
        Matrix q = multiply(x, layer.w_query);  // one row of Q, K and V per layer
        Matrix k = multiply(x, layer.w_key);
        const Matrix v = multiply(x, layer.w_value);
        rotate_row(q, heads, position);
        rotate_row(k, heads / group, position);
        Matrix joined(1, x.cols());
        Matrix weights(heads, position + 1);
        for (std::size_t h = 0; h < heads; ++h) {
            KvCache& head = cache.layers[l][h / group];  // the key/value head query head h reads
            if (h % group == 0) {  // the first query head of a group appends its key/value head's new row
                const std::size_t first = (h / group) * head_dim;
                head.keys.insert(head.keys.end(), k.data() + first, k.data() + first + head_dim);
                head.values.insert(head.values.end(), v.data() + first, v.data() + first + head_dim);
            }
            attend(head, q.data() + h * head_dim, joined.data() + h * head_dim, weights.data() + h * (position + 1));
        }
        Matrix y = multiply(joined, layer.w_out);
        add_in_place(y, x);  // the residual stream
        x = y;
        step.weights.push_back(weights);
    }
    const Matrix z = multiply(x, model.unembedding);
    step.logits.assign(z.data(), z.data() + z.cols());
    ++cache.length;
    return step;
    // END SOLUTION
}
//< decode-next

GenerationCache prefill(const LanguageModel& model, const std::vector<std::size_t>& tokens)
{
    GenerationCache cache = empty_cache(model);
    if (tokens.empty()) {
        return cache;
    }
    const std::size_t heads = model.shape.heads;
    const std::size_t kv_heads = kv_head_count(model.shape);
    Matrix x = embed(model.embedding, tokens);  // every position's stream at once, t×d
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
        const AttentionLayer& layer = model.layers[l];
        Matrix k = multiply(x, layer.w_key);  // one product for all the rows decode_next() makes one by one
        const Matrix v = multiply(x, layer.w_value);
        rotate_rows(k, kv_heads);
        for (std::size_t h = 0; h < kv_heads; ++h) {  // key/value head h's columns of each row, position after position
            KvCache& head = cache.layers[l][h];
            for (std::size_t p = 0; p < tokens.size(); ++p) {
                const double* key = k.data() + p * k.cols() + h * head.key_dim;
                const double* value = v.data() + p * v.cols() + h * head.value_dim;
                head.keys.insert(head.keys.end(), key, key + head.key_dim);
                head.values.insert(head.values.end(), value, value + head.value_dim);
            }
        }
        if (l + 1 < model.layers.size()) {
            x = layer_forward(layer, x, heads, tokens.size(), nullptr);  // the stream the next layer reads
        }
    }
    cache.length = tokens.size();
    return cache;
}

std::vector<double> recomputed_logits(const LanguageModel& model, const std::vector<std::size_t>& tokens)
{
    const ForwardTrace trace = forward(model, tokens, tokens.size());
    const Matrix& z = trace.logits;
    return {z.data() + (z.rows() - 1) * z.cols(), z.data() + z.rows() * z.cols()};
}

namespace {

// A rolling cache forgets its oldest position in every layer and head: the first row of keys and values.
void drop_oldest(GenerationCache& cache)
{
    for (std::vector<KvCache>& layer : cache.layers) {
        for (KvCache& head : layer) {
            head.keys.erase(head.keys.begin(), head.keys.begin() + static_cast<std::ptrdiff_t>(head.key_dim));
            head.values.erase(head.values.begin(), head.values.begin() + static_cast<std::ptrdiff_t>(head.value_dim));
        }
    }
}

// The logits after the window text[start, end): the tokens not cached yet go through decode_next(), after
// emptying the cache if the window's start moved (every position in it shifted). A rolling cache keeps
// the positions and forgets the oldest key and value once it holds a whole context.
std::vector<double> cached_window_logits(const LanguageModel& model, GenerationCache& cache, std::size_t& cache_start,
                                         const std::vector<std::size_t>& text, Window window, std::size_t& rows)
{
    const std::size_t context = model.shape.context;
    const std::size_t start = window == Window::sliding && text.size() > context ? text.size() - context : 0;
    if (start != cache_start) {
        cache = empty_cache(model);  // a sliding window moved: no cached key is at its position any more
        cache_start = start;
    }
    std::vector<double> logits;
    for (std::size_t i = cache_start + cache.length; i < text.size(); ++i) {
        if (window == Window::rolling && cache.layers[0][0].length() == context) {
            drop_oldest(cache);
        }
        logits = decode_next(model, cache, text[i]).logits;
        ++rows;
    }
    return logits;
}

}  // namespace

//> generate
Generated generate_text(const LanguageModel& model, const std::vector<std::size_t>& prompt, std::size_t length,
                        const SamplingRule& rule, std::uint64_t seed, bool cached, Window window)
{
    //{ checks that the prompt is not empty and that a rolling window has its cache
    if (prompt.empty() || (window == Window::rolling && !cached)) {
        throw std::invalid_argument("generate_text: an empty prompt or a rolling cache without the cache; expected "
                                    "at least one character, and the rolling window with the cache");
    }
    //}
    SplitMix64 generator(seed);
    GenerationCache cache = empty_cache(model);
    std::size_t cache_start = 0;  // where in the text the cached positions start
    std::vector<std::size_t> text = prompt;
    Generated out;
    for (std::size_t n = 0; n < length; ++n) {
        std::vector<double> logits;
        if (cached) {
            logits = cached_window_logits(model, cache, cache_start, text, window, out.rows);
        } else {
            // The window again, every step: the last context characters, or the whole text.
            const std::size_t context = model.shape.context;
            const std::size_t start = window == Window::sliding && text.size() > context ? text.size() - context : 0;
            logits = recomputed_logits(model, {text.begin() + static_cast<std::ptrdiff_t>(start), text.end()});
            out.rows += text.size() - start;
        }
        const std::size_t top_k = rule.top_k == 0 ? logits.size() : rule.top_k;
        text.push_back(rule.greedy ? greedy_choice(logits)
                                   : sample_character(logits, rule.temperature, top_k, generator.uniform()));
    }
    out.tokens.assign(text.begin() + static_cast<std::ptrdiff_t>(prompt.size()), text.end());
    return out;
}
//< generate

std::vector<std::size_t> generate(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                                  std::size_t length, const SamplingRule& rule, std::uint64_t seed, bool cached)
{
    return generate_text(model, prompt, length, rule, seed, cached, Window::sliding).tokens;
}

NameCompletion complete_name(const LanguageModel& model, const std::vector<std::size_t>& prompt,
                             const std::vector<std::size_t>& rest)
{
    NameCompletion out;
    out.wrote = generate(model, prompt, rest.size(), {.greedy = true}, 0, true);
    bool missed = false;
    for (std::size_t k = 0; k < rest.size(); ++k) {
        out.right += out.wrote[k] == rest[k] ? 1 : 0;
        missed = missed || out.wrote[k] != rest[k];
        out.copied += missed ? 0 : 1;
    }
    return out;
}

std::string shuffled_name(const std::string& name, std::uint64_t seed)
{
    std::string letters = name;
    for (char& c : letters) {
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            throw std::invalid_argument(fmt::format("shuffled_name: \"{}\" holds a character that is not a letter "
                                                    "A-Z or a-z; expected a name of letters", name));
        }
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    if (letters.empty()) {
        throw std::invalid_argument("shuffled_name: the name is empty; expected at least one letter");
    }
    SplitMix64 generator(seed);
    for (std::size_t i = letters.size() - 1; i > 0; --i) {
        std::swap(letters[i], letters[generator.next() % (i + 1)]);
    }
    letters[0] = static_cast<char>(letters[0] - 'a' + 'A');
    return letters;
}

std::size_t cache_numbers(const LanguageModel& model, std::size_t positions)
{
    return 2 * model.layers.size() * kv_head_count(model.shape) * (model.shape.width / model.shape.heads) * positions;
}

}  // namespace sa
