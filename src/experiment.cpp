#include "experiment.hpp"

#include <cmath>
#include <stdexcept>

#include "scaling.hpp"
#include "scores.hpp"

namespace sa {

double sample_variance(const Matrix& values)
{
    const std::size_t count = values.rows() * values.cols();
    if (count < 2) {
        throw std::invalid_argument(
            fmt::format("sample_variance: a {} matrix has {} entries; a variance needs at least 2", shape(values), count));
    }
    double sum = 0.0;
    for (std::size_t r = 0; r < values.rows(); ++r) {
        for (std::size_t c = 0; c < values.cols(); ++c) {
            sum += values(r, c);
        }
    }
    const double mean = sum / static_cast<double>(count);
    double squares = 0.0;
    for (std::size_t r = 0; r < values.rows(); ++r) {
        for (std::size_t c = 0; c < values.cols(); ++c) {
            const double deviation = values(r, c) - mean;
            squares += deviation * deviation;
        }
    }
    return squares / static_cast<double>(count - 1);
}

double largest_weight(const Matrix& row_scores, std::size_t row)
{
    if (row >= row_scores.rows() || row_scores.cols() == 0) {
        throw std::out_of_range(fmt::format("largest_weight: no row {} with entries in a {} matrix", row,
                                            shape(row_scores)));
    }
    double row_max = row_scores(row, 0);
    for (std::size_t j = 1; j < row_scores.cols(); ++j) {
        row_max = std::fmax(row_max, row_scores(row, j));
    }
    double total = 0.0;
    for (std::size_t j = 0; j < row_scores.cols(); ++j) {
        total += std::exp(row_scores(row, j) - row_max);  // the largest term is e^0 = 1
    }
    return 1.0 / total;
}

//> score-variance
VarianceRow score_variance(std::size_t key_dim, std::size_t pairs, SplitMix64& generator)
{
    //{ checks its arguments
    if (key_dim == 0 || pairs < 2) {
        throw std::invalid_argument(
            fmt::format("score_variance: d_k = {} and {} pairs; need d_k ≥ 1 and at least 2 pairs", key_dim, pairs));
    }
    //}
    const Matrix queries = random_matrix(pairs, key_dim, generator);  // pairs×d_k
    const Matrix keys = random_matrix(pairs, key_dim, generator);     // pairs×d_k
    Matrix raw(pairs, 1);  // one dot product per pair: q_i·k_i
    for (std::size_t i = 0; i < pairs; ++i) {
        for (std::size_t d = 0; d < key_dim; ++d) {
            raw(i, 0) += queries(i, d) * keys(i, d);
        }
    }
    const Matrix scaled = scale(raw, key_dim);
    return {key_dim, pairs, sample_variance(raw), sample_variance(scaled)};
}
//< score-variance

//> softmax-saturation
SaturationRow softmax_saturation(std::size_t key_dim, std::size_t keys, std::size_t trials, SplitMix64& generator)
{
    //{ checks its arguments
    if (key_dim == 0 || keys == 0 || trials == 0) {
        throw std::invalid_argument(fmt::format(
            "softmax_saturation: d_k = {}, {} keys, {} trials; each must be at least 1", key_dim, keys, trials));
    }
    //}
    SaturationRow row{key_dim, keys, trials, {}, {}};
    const auto add = [](SoftmaxStats& stats, double p) {
        stats.largest += p;
        stats.gradient += p * (1.0 - p);  // ∂p/∂s for the largest weight's own score
        stats.saturated += p > all_or_nothing ? 1.0 : 0.0;
    };
    for (std::size_t trial = 0; trial < trials; ++trial) {
        const Matrix query = random_matrix(1, key_dim, generator);    // 1×d_k
        const Matrix key_rows = random_matrix(keys, key_dim, generator);  // m×d_k
        const Matrix raw = scores(query, key_rows);                   // 1×m
        add(row.raw, largest_weight(raw, 0));
        add(row.scaled, largest_weight(scale(raw, key_dim), 0));
    }
    for (SoftmaxStats* stats : {&row.raw, &row.scaled}) {
        stats->largest /= static_cast<double>(trials);
        stats->gradient /= static_cast<double>(trials);
        stats->saturated /= static_cast<double>(trials);
    }
    return row;
}
//< softmax-saturation

}  // namespace sa
