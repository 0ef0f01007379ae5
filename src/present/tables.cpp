#include "tables.hpp"

#include <stdexcept>

namespace sa {

std::string loss_table(const std::vector<std::size_t>& checkpoints, const std::vector<double>& training_loss,
                       const std::vector<double>& held_out_loss, int precision)
{
    if (held_out_loss.size() != checkpoints.size()) {
        throw std::invalid_argument(fmt::format("loss_table: {} checkpoints but {} held-out losses; they must pair up",
                                                checkpoints.size(), held_out_loss.size()));
    }
    Matrix losses(checkpoints.size(), 2);
    std::vector<std::string> labels;
    for (std::size_t row = 0; row < checkpoints.size(); ++row) {
        if (checkpoints[row] >= training_loss.size()) {
            throw std::invalid_argument(fmt::format("loss_table: checkpoint {} but only {} training losses",
                                                    checkpoints[row], training_loss.size()));
        }
        losses(row, 0) = training_loss[checkpoints[row]];
        losses(row, 1) = held_out_loss[row];
        labels.push_back(fmt::format("step {}", checkpoints[row]));
    }
    return "Loss L (mean squared error):\n" + format_table(losses, labels, {"training", "held-out"}, precision) +
           "\n";
}

std::string variance_table(const std::vector<VarianceRow>& rows, int precision)
{
    Matrix table(rows.size(), 2);
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        table(i, 0) = rows[i].raw_variance;
        table(i, 1) = rows[i].scaled_variance;
        labels.push_back(fmt::format("d_k = {}", rows[i].key_dim));
    }
    const std::size_t pairs = rows.empty() ? 0 : rows.front().pairs;
    return fmt::format("Sample variance of the dot product over {} random pairs (q, k):\n", pairs) +
           format_table(table, labels, {"q·k", "q·k / √d_k"}, precision) + "\n";
}

std::string saturation_table(const std::vector<SaturationRow>& rows, int precision)
{
    if (rows.empty()) {
        return {};
    }
    std::string out = fmt::format("Largest softmax weight p of one query against {} keys, over {} queries:\n",
                                  rows.front().keys, rows.front().trials);
    const std::vector<std::string> columns{"mean p", "mean p(1−p)", fmt::format("share p > {}", all_or_nothing)};
    for (const bool scaled : {false, true}) {
        Matrix table(rows.size(), 3);
        std::vector<std::string> labels;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const SoftmaxStats& stats = scaled ? rows[i].scaled : rows[i].raw;
            table(i, 0) = stats.largest;
            table(i, 1) = stats.gradient;
            table(i, 2) = stats.saturated;
            labels.push_back(fmt::format("d_k = {}", rows[i].key_dim));
        }
        out += scaled ? "scaled, softmax(q·Kᵀ / √d_k):\n" : "raw, softmax(q·Kᵀ):\n";
        out += format_table(table, labels, columns, precision) + "\n";
    }
    return out;
}

std::string starvation_table(const std::vector<StarvationRow>& rows, int precision)
{
    if (rows.empty()) {
        return {};
    }
    const int width = precision + 8;  // "-1." + digits + "e-05" and a space
    std::string out = fmt::format("Size of the gradient, one query against {} keys, over {} queries:\n",
                                  rows.front().keys, rows.front().trials);
    for (const bool scaled : {false, true}) {
        out += scaled ? "scaled, softmax(q·Kᵀ / √d_k):\n" : "raw, softmax(q·Kᵀ):\n";
        out += fmt::format("  {:<11}{:>{}}{:>{}}{:>{}}{:>{}}\n", "", "median |dS'|", width + 2, "mean |dS'|",
                           width + 2, "median |dW_Q|", width + 3, "mean |dW_Q|", width + 2);
        for (const auto& row : rows) {
            const GradientSize& size = scaled ? row.scaled : row.raw;
            const std::string label = fmt::format("d_k = {}", row.key_dim);
            out += fmt::format("  {:<11}{:>{}.{}e}{:>{}.{}e}{:>{}.{}e}{:>{}.{}e}\n", label, size.scores_median,
                               width + 2, precision, size.scores_mean, width + 2, precision, size.w_query_median,
                               width + 3, precision, size.w_query_mean, width + 2, precision);
        }
        out += "\n";
    }
    return out;
}

std::string gradient_check_table(const std::vector<GradientCheck>& checks)
{
    if (checks.empty()) {
        return {};
    }
    const Tolerance& tolerance = checks.front().tolerance;
    std::string out = fmt::format("An entry agrees when |a − n| ≤ atol + rtol·max(|a|, |n|); rtol = {:.0e}, "
                                  "atol = {:.1e}\n", tolerance.rtol, tolerance.atol);
    for (const auto& check : checks) {
        out += fmt::format("  {:<5} {:>5}  {}\n", check.name, shape(check.analytic),
                           check.agrees() ? std::string("agrees")
                                          : fmt::format("DIFFERS: {:.3g} times its tolerance", check.used));
    }
    return out;
}

}  // namespace sa
