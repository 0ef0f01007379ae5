#include "training.hpp"

#include <cmath>
#include <stdexcept>

#include "attention.hpp"
#include "exercise.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

namespace {

// A whole number from 0 to count - 1. The modulo is very slightly uneven for a count that
// does not divide 2^64, far below anything a 3-word shuffle could show.
std::size_t draw_below(SplitMix64& generator, std::size_t count)
{
    return static_cast<std::size_t>(generator.next() % count);
}

void check_targets(const char* operation, const Projections& layer, const Sentence& sentence)
{
    if (sentence.targets.rows() != sentence.embeddings.rows() || sentence.targets.cols() != layer.w_value.cols()) {
        throw ShapeError(fmt::format("{}: T is {} but the outputs are {}×{}; T needs one row per word and d_v "
                                     "columns", operation, shape(sentence.targets), sentence.embeddings.rows(),
                                     layer.w_value.cols()));
    }
}

// One sentence's mean squared error, (1 / (n d_v)) Σ (O - T)²; mean_loss() and train_step()
// both add these up in the same order, so their losses agree to the last bit.
double sentence_loss(const char* operation, const Matrix& outputs, const Projections& layer,
                     const Sentence& sentence)
{
    check_targets(operation, layer, sentence);
    double squares = 0.0;
    for (std::size_t i = 0; i < outputs.rows(); ++i) {
        for (std::size_t d = 0; d < outputs.cols(); ++d) {
            const double error = outputs(i, d) - sentence.targets(i, d);
            squares += error * error;
        }
    }
    return squares / static_cast<double>(outputs.rows() * outputs.cols());
}

}  // namespace

//> cycle-sentences
std::vector<Sentence> cycle_sentences(std::size_t count, SplitMix64& generator)
{
    const std::size_t words = cycle_words.size();
    std::vector<Sentence> sentences;
    for (std::size_t s = 0; s < count; ++s) {
        // Which word stands at each position: a Fisher–Yates shuffle of 0, 1, 2.
        std::vector<std::size_t> word_at(words);
        for (std::size_t p = 0; p < words; ++p) {
            word_at[p] = p;
        }
        for (std::size_t p = words - 1; p > 0; --p) {
            std::swap(word_at[p], word_at[draw_below(generator, p + 1)]);
        }
        Sentence sentence;
        sentence.embeddings = Matrix(words, words + carried_features);
        sentence.targets = Matrix(words, carried_features);
        std::vector<std::size_t> position_of(words);
        for (std::size_t p = 0; p < words; ++p) {
            sentence.tokens.push_back(cycle_words[word_at[p]]);
            position_of[word_at[p]] = p;
            sentence.embeddings(p, word_at[p]) = 1.0;  // which word: one-hot
            for (std::size_t f = 0; f < carried_features; ++f) {
                sentence.embeddings(p, words + f) = generator.unit_variance();  // the value it carries
            }
        }
        // Each word's target is the value carried by the next word of the cycle.
        for (std::size_t p = 0; p < words; ++p) {
            const std::size_t source = position_of[(word_at[p] + 1) % words];
            sentence.sources.push_back(source);
            for (std::size_t f = 0; f < carried_features; ++f) {
                sentence.targets(p, f) = sentence.embeddings(source, words + f);
            }
        }
        sentences.push_back(sentence);
    }
    return sentences;
}
//< cycle-sentences

Projections random_projections(std::size_t model_dim, std::size_t key_dim, std::size_t value_dim, double spread,
                               SplitMix64& generator)
{
    Projections layer;
    for (Matrix* weights : {&layer.w_query, &layer.w_key, &layer.w_value}) {
        const std::size_t cols = weights == &layer.w_value ? value_dim : key_dim;
        *weights = random_matrix(model_dim, cols, generator);
        for (std::size_t r = 0; r < model_dim; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
                (*weights)(r, c) = spread * (*weights)(r, c);
            }
        }
    }
    return layer;
}

Matrix layer_weights(const Projections& layer, const Matrix& embeddings)
{
    const Matrix queries = project(embeddings, layer.w_query);
    const Matrix keys = project(embeddings, layer.w_key);
    return softmax_rows(scale(scores(queries, keys), queries.cols()));
}

Matrix layer_outputs(const Projections& layer, const Matrix& embeddings)
{
    return attention(project(embeddings, layer.w_query), project(embeddings, layer.w_key),
                     project(embeddings, layer.w_value));
}

//> mean-loss
double mean_loss(const Projections& layer, const std::vector<Sentence>& sentences)
{
    //{ checks that there is a sentence
    if (sentences.empty()) {
        throw std::invalid_argument("mean_loss: no sentences; the mean needs at least one");
    }
    //}
    double total = 0.0;
    for (const Sentence& sentence : sentences) {
        total += sentence_loss("mean_loss", layer_outputs(layer, sentence.embeddings), layer, sentence);
    }
    return total / static_cast<double>(sentences.size());
}
//< mean-loss

//> train-step
double train_step(Projections& layer, const std::vector<Sentence>& sentences, double learning_rate)
{
    // BEGIN SOLUTION train_step: chapter 12, Training
    if (sentences.empty()) {
        throw std::invalid_argument("train_step: no sentences; a step needs at least one");
    }
    double loss = 0.0;
    Projections gradient{Matrix(layer.w_query.rows(), layer.w_query.cols()),
                         Matrix(layer.w_key.rows(), layer.w_key.cols()),
                         Matrix(layer.w_value.rows(), layer.w_value.cols())};
    const double sentence_count = static_cast<double>(sentences.size());
    for (const Sentence& sentence : sentences) {
        // dL/dO for this sentence's share of the mean: 2 (O - T) / (N n d_v).
        const Matrix outputs = layer_outputs(layer, sentence.embeddings);
        loss += sentence_loss("train_step", outputs, layer, sentence);  // the same sum as mean_loss()
        const double share = sentence_count * static_cast<double>(outputs.rows() * outputs.cols());
        Matrix d_outputs(outputs.rows(), outputs.cols());
        for (std::size_t i = 0; i < outputs.rows(); ++i) {
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                d_outputs(i, d) = 2.0 * (outputs(i, d) - sentence.targets(i, d)) / share;
            }
        }
        const Matrix no_mask(outputs.rows(), outputs.rows(), 0.0);
        const AttentionGrads grads = attention_backward(sentence.embeddings, layer.w_query, layer.w_key,
                                                        layer.w_value, no_mask, d_outputs);
        const Matrix* from[] = {&grads.d_w_query, &grads.d_w_key, &grads.d_w_value};
        Matrix* into[] = {&gradient.w_query, &gradient.w_key, &gradient.w_value};
        for (std::size_t w = 0; w < 3; ++w) {
            for (std::size_t r = 0; r < into[w]->rows(); ++r) {
                for (std::size_t c = 0; c < into[w]->cols(); ++c) {
                    (*into[w])(r, c) += (*from[w])(r, c);
                }
            }
        }
    }
    // Every entry of W_Q, W_K and W_V takes a step downhill.
    Matrix* weights[] = {&layer.w_query, &layer.w_key, &layer.w_value};
    const Matrix* slopes[] = {&gradient.w_query, &gradient.w_key, &gradient.w_value};
    for (std::size_t w = 0; w < 3; ++w) {
        for (std::size_t r = 0; r < weights[w]->rows(); ++r) {
            for (std::size_t c = 0; c < weights[w]->cols(); ++c) {
                (*weights[w])(r, c) -= learning_rate * (*slopes[w])(r, c);
            }
        }
    }
    return loss / sentence_count;
    // END SOLUTION
}
//< train-step

std::size_t solved_sentences(const Projections& layer, const std::vector<Sentence>& sentences, double tolerance)
{
    std::size_t solved = 0;
    for (const Sentence& sentence : sentences) {
        const Matrix outputs = layer_outputs(layer, sentence.embeddings);
        check_targets("solved_sentences", layer, sentence);
        bool all_close = true;
        for (std::size_t i = 0; i < outputs.rows(); ++i) {
            for (std::size_t d = 0; d < outputs.cols(); ++d) {
                // Written so that a NaN error fails the test instead of passing it.
                all_close = all_close && std::fabs(outputs(i, d) - sentence.targets(i, d)) <= tolerance;
            }
        }
        solved += all_close ? 1 : 0;
    }
    return solved;
}

std::size_t right_words(const Projections& layer, const std::vector<Sentence>& sentences)
{
    std::size_t right = 0;
    for (const Sentence& sentence : sentences) {
        const Matrix weights = layer_weights(layer, sentence.embeddings);
        if (sentence.sources.size() != weights.rows()) {
            throw std::invalid_argument(fmt::format("right_words: {} sources for {} words; each word needs one",
                                                    sentence.sources.size(), weights.rows()));
        }
        for (std::size_t i = 0; i < weights.rows(); ++i) {
            bool largest = true;
            for (std::size_t j = 0; j < weights.cols(); ++j) {
                largest = largest && (j == sentence.sources[i] || weights(i, j) < weights(i, sentence.sources[i]));
            }
            right += largest ? 1 : 0;
        }
    }
    return right;
}

}  // namespace sa
