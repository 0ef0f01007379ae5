#include "gradient_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "mixing.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

double frobenius_norm(const Matrix& matrix)
{
    double squares = 0.0;
    for (std::size_t i = 0; i < matrix.rows(); ++i) {
        for (std::size_t j = 0; j < matrix.cols(); ++j) {
            squares += matrix(i, j) * matrix(i, j);
        }
    }
    return std::sqrt(squares);
}

double median(std::vector<double> numbers)
{
    if (numbers.empty()) {
        throw std::invalid_argument("median: there are no numbers; a median needs at least 1");
    }
    std::sort(numbers.begin(), numbers.end());
    const std::size_t middle = numbers.size() / 2;
    return numbers.size() % 2 == 1 ? numbers[middle] : (numbers[middle - 1] + numbers[middle]) / 2.0;
}

namespace {

GradientSize summarise(const std::vector<double>& at_scores, const std::vector<double>& at_w_query)
{
    double scores_sum = 0.0;
    double w_query_sum = 0.0;
    for (std::size_t i = 0; i < at_scores.size(); ++i) {
        scores_sum += at_scores[i];
        w_query_sum += at_w_query[i];
    }
    const auto count = static_cast<double>(at_scores.size());
    return {median(at_scores), scores_sum / count, median(at_w_query), w_query_sum / count};
}

}  // namespace

//> gradient-starvation
StarvationRow gradient_starvation(std::size_t key_dim, std::size_t keys, std::size_t model_dim,
                                  std::size_t value_dim, std::size_t trials, SplitMix64& generator)
{
    //{ checks its arguments
    if (key_dim == 0 || keys == 0 || model_dim == 0 || value_dim == 0 || trials == 0) {
        throw std::invalid_argument(fmt::format("gradient_starvation: d_k = {}, {} keys, d_model = {}, d_v = {}, "
                                                "{} trials; each must be at least 1",
                                                key_dim, keys, model_dim, value_dim, trials));
    }
    //}
    std::vector<double> scores_size[2];   // [raw, scaled]: ‖dS'‖ of each trial
    std::vector<double> w_query_size[2];  // ‖dW_Q‖ of each trial
    const double spread = std::sqrt(static_cast<double>(model_dim));
    for (std::size_t trial = 0; trial < trials; ++trial) {
        const Matrix embedding = random_matrix(1, model_dim, generator);  // e: 1×d_model
        Matrix w_query = random_matrix(model_dim, key_dim, generator);    // W_Q: d_model×d_k
        for (std::size_t f = 0; f < model_dim; ++f) {
            for (std::size_t d = 0; d < key_dim; ++d) {
                w_query(f, d) /= spread;  // so that each entry of q has variance 1
            }
        }
        const Matrix key_rows = random_matrix(keys, key_dim, generator);  // K: m×d_k
        const Matrix values = random_matrix(keys, value_dim, generator);  // V: m×d_v
        const Matrix upstream = random_matrix(1, value_dim, generator);   // dO: 1×d_v
        const Matrix query = project(embedding, w_query);
        const Matrix raw = scores(query, key_rows);
        for (const int scaled : {0, 1}) {
            const Matrix weights = softmax_rows(scaled ? scale(raw, key_dim) : raw);
            const Matrix d_weights = mix_backward(weights, values, upstream).d_weights;
            const Matrix d_softmax_input = softmax_rows_backward(weights, d_weights);  // dS'
            const Matrix d_raw = scaled ? scale_backward(d_softmax_input, key_dim) : d_softmax_input;
            const Matrix d_query = scores_backward(query, key_rows, d_raw).d_queries;
            const Matrix d_w_query = project_backward(embedding, w_query, d_query).d_weights;
            scores_size[scaled].push_back(frobenius_norm(d_softmax_input));
            w_query_size[scaled].push_back(frobenius_norm(d_w_query));
        }
    }
    return {key_dim, keys, trials, summarise(scores_size[0], w_query_size[0]),
            summarise(scores_size[1], w_query_size[1])};
}
//< gradient-starvation

}  // namespace sa
