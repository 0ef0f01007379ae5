// Chapter 13's training step, measured: one step of chapter 15's model (two attention layers,
// d = 64, h = 4, 16 windows of 64 characters, V = 63), sa::training_step on one thread and on
// every core next to the same step through the book's step functions, window by window, and
// the machine's fp64 peak, all four interleaved round by round (src/present/bench.hpp); each
// time is the minimum of its runs, each speed a share of that peak.
//
//   build/bin/ch13-benchmark-training          chapter 15's 16 windows
//   build/bin/ch13-benchmark-training --quick  the same (the book's build runs it so)
//   build/bin/ch13-benchmark-training --smoke  2 windows (CTest runs it)
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "adam.hpp"
#include "bench.hpp"
#include "cli.hpp"
#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "language_model.hpp"
#include "machine.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "random.hpp"

namespace {

// Rows [first, first + count) of a matrix.
sa::Matrix row_block(const sa::Matrix& matrix, std::size_t first, std::size_t count)
{
    sa::Matrix block(count, matrix.cols());
    std::copy(matrix.data() + first * matrix.cols(), matrix.data() + (first + count) * matrix.cols(), block.data());
    return block;
}

void put_row_block(sa::Matrix& matrix, std::size_t first, const sa::Matrix& block)
{
    std::copy(block.data(), block.data() + block.rows() * block.cols(), matrix.data() + first * matrix.cols());
}

// Rotary positions on each head's slice, counted from the window's first row.
sa::Matrix rope_heads(const sa::Matrix& matrix, std::size_t heads)
{
    std::vector<sa::Matrix> slices = sa::split_heads(matrix, heads);
    for (sa::Matrix& slice : slices) {
        slice = sa::rope(slice);
    }
    return sa::concat_heads(slices);
}

// The gradient through rope_heads(): each pair (2i, 2i+1) turns by R, so the gradient turns
// by Rᵀ, which is S R S with S the swap of the pair's two features.
sa::Matrix rope_heads_backward(const sa::Matrix& gradient, std::size_t heads)
{
    const auto swapped = [](sa::Matrix matrix) {
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c + 1 < matrix.cols(); c += 2) {
                std::swap(matrix(r, c), matrix(r, c + 1));
            }
        }
        return matrix;
    };
    return swapped(rope_heads(swapped(gradient), heads));
}

// One layer on one window, forward: Y = X + MultiHead(rope(X W_Q), rope(X W_K), X W_V) W_O.
sa::Matrix plain_layer(const sa::AttentionLayer& layer, const sa::Matrix& x, std::size_t heads)
{
    const sa::Matrix mask = sa::causal_mask(x.rows(), x.rows());
    const sa::Matrix out = sa::multi_head_attention(rope_heads(sa::project(x, layer.w_query), heads),
                                                    rope_heads(sa::project(x, layer.w_key), heads),
                                                    sa::project(x, layer.w_value), mask, heads, layer.w_out);
    sa::Matrix y = x;
    sa::add_in_place(y, out);
    return y;
}

// One layer on one window, backward: adds the layer's gradients into `grads` and returns dX.
sa::Matrix plain_layer_backward(const sa::AttentionLayer& layer, const sa::Matrix& x, const sa::Matrix& d_y,
                                std::size_t heads, sa::AttentionLayer& grads)
{
    const sa::Matrix mask = sa::causal_mask(x.rows(), x.rows());
    const sa::MultiHeadGrads attention = sa::multi_head_backward(
        rope_heads(sa::project(x, layer.w_query), heads), rope_heads(sa::project(x, layer.w_key), heads),
        sa::project(x, layer.w_value), mask, heads, layer.w_out, d_y);
    const sa::ProjectionGrads query = sa::project_backward(x, layer.w_query, rope_heads_backward(attention.d_queries, heads));
    const sa::ProjectionGrads key = sa::project_backward(x, layer.w_key, rope_heads_backward(attention.d_keys, heads));
    const sa::ProjectionGrads value = sa::project_backward(x, layer.w_value, attention.d_values);
    sa::add_in_place(grads.w_query, query.d_weights);
    sa::add_in_place(grads.w_key, key.d_weights);
    sa::add_in_place(grads.w_value, value.d_weights);
    sa::add_in_place(grads.w_out, attention.d_w_out);
    sa::Matrix d_x = d_y;  // the residual passes dY on unchanged
    sa::add_in_place(d_x, query.d_embeddings);
    sa::add_in_place(d_x, key.d_embeddings);
    sa::add_in_place(d_x, value.d_embeddings);
    return d_x;
}

// The loss's gradient at every parameter, through the step functions, window by window.
sa::LanguageModel plain_gradient(const sa::LanguageModel& model, const sa::Batch& batch)
{
    const std::size_t heads = model.shape.heads;
    const std::size_t window = batch.window;
    const std::size_t windows = batch.inputs.size() / window;
    std::vector<sa::Matrix> inputs{sa::embed(model.embedding, batch.inputs)};  // each layer's input, then the last stream
    for (const sa::AttentionLayer& layer : model.layers) {
        sa::Matrix stream = inputs.back();
        for (std::size_t w = 0; w < windows; ++w) {
            put_row_block(stream, w * window, plain_layer(layer, row_block(inputs.back(), w * window, window), heads));
        }
        inputs.push_back(std::move(stream));
    }
    const sa::CrossEntropy loss = sa::cross_entropy(sa::project(inputs.back(), model.unembedding), batch.targets);
    sa::LanguageModel grads = sa::zero_model(model.shape);
    sa::ProjectionGrads unembedding = sa::project_backward(inputs.back(), model.unembedding, loss.d_logits);
    grads.unembedding = std::move(unembedding.d_weights);
    sa::Matrix d_stream = std::move(unembedding.d_embeddings);
    for (std::size_t l = model.layers.size(); l-- > 0;) {
        sa::Matrix d_input(d_stream.rows(), d_stream.cols());
        for (std::size_t w = 0; w < windows; ++w) {
            put_row_block(d_input, w * window,
                          plain_layer_backward(model.layers[l], row_block(inputs[l], w * window, window),
                                               row_block(d_stream, w * window, window), heads, grads.layers[l]));
        }
        d_stream = std::move(d_input);
    }
    grads.embedding = sa::embedding_backward(d_stream, batch.inputs, model.shape.vocabulary);
    return grads;
}

// The same step as sa::training_step, with the gradient from plain_gradient().
void plain_training_step(sa::Trainer& trainer, const sa::Batch& batch)
{
    sa::LanguageModel grads = plain_gradient(trainer.model, batch);
    ++trainer.steps;
    const std::vector<sa::Matrix*> weights = sa::parameters(trainer.model);
    const std::vector<sa::Matrix*> gradients = sa::parameters(grads);
    for (std::size_t i = 0; i < weights.size(); ++i) {
        sa::adam_step(*weights[i], *gradients[i], trainer.moments[i], trainer.steps, trainer.settings);
    }
}

// The largest relative difference between two models' parameters, over all of them.
double largest_model_difference(sa::LanguageModel lhs, sa::LanguageModel rhs)
{
    double difference = 0.0;
    double largest = 0.0;
    const std::vector<sa::Matrix*> left = sa::parameters(lhs);
    const std::vector<sa::Matrix*> right = sa::parameters(rhs);
    for (std::size_t i = 0; i < left.size(); ++i) {
        difference = std::max(difference, sa::largest_difference(*left[i], *right[i]));
        largest = std::max(largest, sa::largest_magnitude(*right[i]));
    }
    return difference / largest;
}

// One thread and every core took the same steps from the same model on the same batch, so
// their models must be the same bits (each sum is one thread's, in the same order).
void require_same_bits(sa::Trainer& one, sa::Trainer& every)
{
    const std::vector<sa::Matrix*> by_one = sa::parameters(one.model);
    const std::vector<sa::Matrix*> by_every = sa::parameters(every.model);
    bool same_bits = true;
    for (std::size_t i = 0; i < by_one.size(); ++i) {
        same_bits = same_bits && sa::identical(*by_one[i], *by_every[i]);
    }
    if (!same_bits) {
        throw std::runtime_error(fmt::format("after {} steps each, the model trained on {} threads differs from the "
                                             "one trained on 1; the threads must change no bit", one.steps,
                                             every.threads));
    }
}

// Times one training step at chapter 15's sizes three ways and the peak loop, interleaved, the
// minimum of the runs; prints tokens per second, GFLOP/s and the share of the peak. Returns the
// faster share of sa::training_step's two.
double compare_training(std::size_t windows, int runs, long peak_iterations)
{
    const sa::ModelShape shape{63, 64, 4, 2, 64};  // chapter 15: V = 63, d = 64, h = 4, 2 layers, windows of 64
    sa::SplitMix64 generator(15);
    std::vector<std::size_t> text(20000);
    for (std::size_t& token : text) {
        token = static_cast<std::size_t>(generator.next() % shape.vocabulary);
    }
    const sa::Batch batch = sa::random_batch(text, windows, shape.context, generator);
    const sa::LanguageModel model = sa::random_model(shape, generator);
    const sa::ForwardTrace trace = sa::forward(model, batch.inputs, batch.window);
    const sa::LanguageModel fast_grads = sa::backward(model, trace, sa::cross_entropy(trace.logits, batch.targets).d_logits);
    const double agreement = largest_model_difference(plain_gradient(model, batch), fast_grads);
    sa::Trainer one = sa::make_trainer(model, {.learning_rate = 0.01});
    sa::Trainer plain = one;
    sa::Trainer every = one;
    every.threads = static_cast<std::size_t>(omp_get_num_procs());
    // The library's step takes milliseconds, the step functions' nearly a second: the first
    // runs four times as often, in the same rounds, so that its minimum is as steady as the
    // kernels' (a step's working set lives in the cache the cores share with other programs).
    // The peak loop runs in the same rounds, as often.
    const int fast_runs = 4 * runs;
    double peak_operations = 0.0;
    const std::vector<sa::bench::Runs> timed = sa::bench::time_interleaved(
        {[&] { peak_operations = sa::bench::peak_loop(peak_iterations); },
         [&] { static_cast<void>(sa::training_step(one, batch)); },
         [&] { static_cast<void>(sa::training_step(every, batch)); }, [&] { plain_training_step(plain, batch); }},
        {fast_runs, fast_runs, fast_runs, runs}, sa::bench::now);
    const double peak = peak_operations / sa::bench::minimum(timed[0].wall) / 1e9;
    const double operations = sa::bench::training_step_operations(shape, windows);
    const double tokens = static_cast<double>(batch.inputs.size());
    fmt::print("One training step of chapter 15's model (2 layers, d = 64, h = 4, {} windows of {}, V = {}):\n"
               "{:.0f} operations in its forward and backward products; the minimum of {} interleaved runs of\n"
               "each sa::training_step and of the peak loop, and {} of the step functions. The fp64 peak: {:.2f} GFLOP/s.\n",
               windows, shape.context, shape.vocabulary, operations, fast_runs, runs, peak);
    const std::string names[] = {"sa::training_step, 1 thread", fmt::format("sa::training_step, {} threads", every.threads),
                                 "the step functions, window by window"};
    for (std::size_t m = 0; m < 3; ++m) {
        const double seconds = sa::bench::minimum(timed[m + 1].wall);
        fmt::print("  {:<36} {:>9.2f} ms {:>10.0f} tokens/s {:>8.2f} GFLOP/s  {:.3f} of the peak\n", names[m],
                   seconds * 1e3, tokens / seconds, operations / seconds / 1e9, operations / seconds / 1e9 / peak);
    }
    require_same_bits(one, every);
    fmt::print("  (the step functions' gradient and the library's differ by {:.1e} relative to the largest entry;\n"
               "  after {} steps each, the model trained on {} threads has every bit of the one trained on 1)\n",
               agreement, one.steps, every.threads);
    return operations / std::min(sa::bench::minimum(timed[1].wall), sa::bench::minimum(timed[2].wall)) / 1e9 / peak;
}

std::string run_benchmark(const sa::Example& example)
{
    const sa::bench::RunLength length = sa::bench::run_length(example);  // every option checked first
    const bool smoke = length == sa::bench::RunLength::smoke;
    const std::size_t windows = smoke ? 2 : 16;  // the smoke test: an eighth of chapter 15's batch
    const long peak_iterations = smoke ? 200000 : length == sa::bench::RunLength::quick ? 2000000 : 10000000;
    fmt::print("{} cores, load average (1 minute) at the start: {}\n", omp_get_num_procs(),
               sa::bench::load_average_text("/proc/loadavg"));
    sa::bench::warm_up(peak_iterations / 10);
    const double share = compare_training(windows, smoke ? 3 : 5, peak_iterations);
    fmt::print("\nGoals, as ratios measured in this run:\n"
               "  training: sa::training_step, {} windows of 64, runs at {:.3f} of the fp64 peak, the faster of one\n"
               "  thread and every core (goal: at least 0.35 at chapter 15's 16 windows)\n",
               windows, share);
    // The same share alone on a line, in one fixed form, for anyone who measures it (grep '^training step:').
    fmt::print("training step: {:.3f} of peak\n", share);
    fmt::print("Load average (1 minute) at the end: {}\n", sa::bench::load_average_text("/proc/loadavg"));
    return "";  // printed as it goes
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info = sa::bench::benchmark_program(
        "ch13-benchmark-training",
        "time one training step of chapter 15's model, the library's and the step functions', against the fp64 peak",
        {}, false);
    return sa::run_program(info, argc, argv, run_benchmark);
}
