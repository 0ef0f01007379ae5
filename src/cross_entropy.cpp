#include "cross_entropy.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "dense.hpp"
#include "exercise.hpp"

namespace sa {

//> cross-entropy
CrossEntropy cross_entropy(const Matrix& logits, const std::vector<std::size_t>& targets)
{
    // BEGIN SOLUTION cross_entropy: chapter 14, Predicting the next character
    if (logits.rows() == 0 || targets.size() != logits.rows()) {
        throw std::invalid_argument(fmt::format("cross_entropy: Z is {} but there are {} targets; give one target "
                                                "per row, and at least one", shape(logits), targets.size()));
    }
    const std::size_t n = logits.rows();
    for (std::size_t i = 0; i < n; ++i) {
        if (targets[i] >= logits.cols()) {
            throw std::invalid_argument(fmt::format("cross_entropy: target {} of row {} is not below d_vocab = {}",
                                                    targets[i], i, logits.cols()));
        }
    }
    const double count = static_cast<double>(n);
    CrossEntropy result{0.0, Matrix(n, logits.cols())};
    std::vector<double> row_loss(n);  // row i's (Z_it − max) − log Σ_j exp(Z_ij − max)
    // The rows are independent: a training step's threads (product_threads()) share them.
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t r = 0; r < static_cast<std::ptrdiff_t>(n); ++r) {
        const auto i = static_cast<std::size_t>(r);
        double row_max = logits(i, 0);
        for (std::size_t j = 1; j < logits.cols(); ++j) {
            row_max = std::fmax(row_max, logits(i, j));
        }
        double total = 0.0;
        for (std::size_t j = 0; j < logits.cols(); ++j) {
            result.d_logits(i, j) = std::exp(logits(i, j) - row_max);
            total += result.d_logits(i, j);
        }
        row_loss[i] = (logits(i, targets[i]) - row_max) - std::log(total);
        for (std::size_t j = 0; j < logits.cols(); ++j) {
            const double target = j == targets[i] ? 1.0 : 0.0;
            result.d_logits(i, j) = (result.d_logits(i, j) / total - target) / count;
        }
    }
    for (const double loss : row_loss) {  // summed in row order, whatever the threads
        result.loss -= loss;
    }
    result.loss /= count;
    return result;
    // END SOLUTION
}
//< cross-entropy

}  // namespace sa
