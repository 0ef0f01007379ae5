// Chapter 11, Gradients: the backward pass of every step, checked, and the seed's claim measured.
#include <algorithm>

#include "attention.hpp"
#include "cli.hpp"
#include "gradient_check.hpp"
#include "gradient_experiment.hpp"
#include "masking.hpp"
#include "mixing.hpp"
#include "plots.hpp"
#include "projection.hpp"
#include "report.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"
#include "tables.hpp"

namespace {

constexpr const char* default_upstream = "0,1;0,0;0,0";  // L = o_Mouse,f2

// On the reader's numbers the default dO keeps its loss, the first token's feature 2
// (feature 1 when d_v = 1), in the shape of their outputs, n×d_v.
std::string fit_upstream(const sa::Example& example)
{
    const std::size_t n = example.embeddings.rows();
    const std::size_t d_v = example.w_value.cols();
    if (n == 3 && d_v == 2) {
        return "";
    }
    sa::Matrix upstream(n, d_v, 0.0);
    upstream(0, std::min<std::size_t>(1, d_v - 1)) = 1.0;
    return sa::matrix_text(upstream);
}

// The forward pass of chapter 7, step by step, and the gradient arriving at its outputs.
struct Forward {
    sa::Matrix queries;
    sa::Matrix keys;
    sa::Matrix values;
    std::size_t key_dim;
    std::size_t n;
    sa::Matrix mask;
    sa::Matrix weights;
    sa::Matrix outputs;
    sa::Matrix upstream;
};

Forward forward_pass(const sa::Example& example)
{
    const sa::Matrix& embeddings = example.embeddings;
    const sa::Matrix queries = sa::project(embeddings, example.w_query);
    const sa::Matrix keys = sa::project(embeddings, example.w_key);
    const sa::Matrix values = sa::project(embeddings, example.w_value);
    const std::size_t key_dim = queries.cols();
    const std::size_t n = embeddings.rows();
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    const sa::Matrix masked = sa::apply_mask(sa::scale(sa::scores(queries, keys), key_dim), mask);
    const sa::Matrix weights = sa::softmax_rows(masked);
    const sa::Matrix outputs = sa::mix(weights, values);
    const sa::Matrix upstream = sa::matrix_option(example, "--upstream");
    if (upstream.rows() != outputs.rows() || upstream.cols() != outputs.cols()) {
        throw sa::UsageError(fmt::format("--upstream: dO must have the shape of the outputs O, {} (one row per token, "
                                         "one column per value feature), got {}", sa::shape(outputs),
                                         sa::shape(upstream)));
    }
    return {queries, keys, values, key_dim, n, mask, weights, outputs, upstream};
}

// The backward pass, last step first, and the one call that does it all.
struct Backward {
    sa::MixGrads mixed;
    sa::Matrix d_masked;
    sa::Matrix d_scores;
    sa::ScoreGrads scored;
    sa::Matrix d_w_query;
    sa::Matrix d_w_key;
    sa::Matrix d_w_value;
    sa::AttentionGrads one_call;
    bool same;
};

Backward backward_pass(const sa::Example& example, const Forward& forward)
{
    const sa::Matrix& embeddings = example.embeddings;
    const auto& [queries, keys, values, key_dim, n, mask, weights, outputs, upstream] = forward;
    //> backward-pass
    // Backward, last step first: each call takes the gradient of its output.
    const sa::MixGrads mixed = sa::mix_backward(weights, values, upstream);        // dA, dV
    const sa::Matrix d_masked = sa::softmax_rows_backward(weights, mixed.d_weights);  // dS'
    const sa::Matrix d_scaled = sa::apply_mask_backward(d_masked, mask);
    const sa::Matrix d_scores = sa::scale_backward(d_scaled, key_dim);                // dS
    const sa::ScoreGrads scored = sa::scores_backward(queries, keys, d_scores);      // dQ, dK
    const sa::Matrix d_w_query = sa::project_backward(embeddings, example.w_query, scored.d_queries).d_weights;
    const sa::Matrix d_w_key = sa::project_backward(embeddings, example.w_key, scored.d_keys).d_weights;
    const sa::Matrix d_w_value = sa::project_backward(embeddings, example.w_value, mixed.d_values).d_weights;
    //< backward-pass
    const sa::AttentionGrads one_call =
        sa::attention_backward(embeddings, example.w_query, example.w_key, example.w_value, mask, upstream);
    const bool same = sa::identical(one_call.d_w_query, d_w_query) && sa::identical(one_call.d_w_key, d_w_key) &&
                      sa::identical(one_call.d_w_value, d_w_value) && sa::identical(one_call.d_masked, d_masked);
    return {mixed, d_masked, d_scores, scored, d_w_query, d_w_key, d_w_value, one_call, same};
}

std::vector<std::string> features(const sa::Matrix& matrix)
{
    return sa::feature_labels(matrix.cols());
}

void report_backward(sa::Report& report, const sa::Example& example, const Forward& forward, const Backward& back)
{
    const auto& tokens = example.tokens;
    const auto model = features(example.embeddings);
    report.table("Weights A", forward.weights, tokens, tokens);
    report.table("Outputs O = A·V", forward.outputs, tokens, features(forward.outputs));
    report.table("Upstream gradient dO = ∂L/∂O, the loss L = Σ dO∘O", forward.upstream, tokens,
                 features(forward.upstream));
    report.table("dA = dO·Vᵀ", back.mixed.d_weights, tokens, tokens);
    report.table("dV = Aᵀ·dO", back.mixed.d_values, tokens, features(forward.values));
    report.table("dS' = A∘(dA − rowsum(dA∘A)), at the softmax's input", back.d_masked, tokens, tokens);
    report.table(fmt::format("dS = dS'/√d_k, d_k = {}", forward.key_dim), back.d_scores, tokens, tokens);
    report.table("dQ = dS·K", back.scored.d_queries, tokens, features(forward.queries));
    report.table("dK = dSᵀ·Q", back.scored.d_keys, tokens, features(forward.keys));
    report.table("dW_Q = Eᵀ·dQ", back.d_w_query, model, features(back.d_w_query));
    report.table("dW_K = Eᵀ·dK", back.d_w_key, model, features(back.d_w_key));
    report.table("dW_V = Eᵀ·dV", back.d_w_value, model, features(back.d_w_value));
    report.table("dE = dQ·W_Qᵀ + dK·W_Kᵀ + dV·W_Vᵀ", back.one_call.d_embeddings, tokens, model);
    report.text(fmt::format("One call to sa::attention_backward == step by step, bit for bit: {}\n\n", back.same));
    const sa::Matrix over_weights = sa::rowsum_product(back.mixed.d_weights, forward.weights);  // rowsum(dA∘A)
    const sa::Matrix over_outputs = sa::rowsum_product(forward.upstream, forward.outputs);      // rowsum(dO∘O)
    sa::Matrix both(forward.n, 2);
    for (std::size_t i = 0; i < forward.n; ++i) {
        both(i, 0) = over_weights(i, 0);
        both(i, 1) = over_outputs(i, 0);
    }
    report.table("rowsum(dA∘A) and rowsum(dO∘O), row by row", both, tokens, {"dA∘A", "dO∘O"});
}

std::string gradients_chapter(const sa::Example& example)
{
    const Forward forward = forward_pass(example);
    const Backward back = backward_pass(example, forward);
    const sa::Matrix& embeddings = example.embeddings;
    const auto& [queries, keys, values, key_dim, n, mask, weights, outputs, upstream] = forward;
    //> check
    constexpr double step = 1e-5;
    const auto checks = sa::gradient_checks(embeddings, example.w_query, example.w_key, example.w_value, mask,
                                            upstream, step);
    //< check
    //> experiment
    sa::SplitMix64 generator(static_cast<std::uint64_t>(example.seed));
    std::vector<sa::StarvationRow> starvation;
    for (const std::size_t dimension : {2, 16, 64, 256, 1024}) {
        starvation.push_back(sa::gradient_starvation(dimension, 8, 8, 4, 101, generator));
    }
    //< experiment

    sa::Report report(example);
    report_backward(report, example, forward, back);
    report.text(fmt::format("Central differences, step h = {:g}, against every analytic gradient:\n", step));
    report.text(sa::gradient_check_table(checks) + "\n");
    report.text(fmt::format("Random e, W_Q, K, V and dO, seed {}; d_model = 8, d_v = 4\n\n", example.seed));
    report.text(sa::starvation_table(starvation, example.precision));
    report.heatmap("d-masked.svg", {.title = "dS', the gradient at the softmax's input", .values = back.d_masked,
                                    .row_labels = example.tokens, .col_labels = example.tokens,
                                    .scale_label = "gradient"});
    report.line_plot("starvation.svg", sa::starvation_plot(starvation));
    return report.str();
}

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch11-gradients", "push a gradient back through every step, check it, and measure why d_k "
                                           "needs the 1/√d_k", sa::mouse_eats_cheese()};
    info.uses_seed = true;
    info.options = {{"--upstream", "M", "dO, the gradient arriving at the outputs (n×d_v)", default_upstream, fit_upstream}};
    return sa::run_program(info, argc, argv, gradients_chapter);
}
