#include "sampling.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "exercise.hpp"

namespace sa {

std::size_t greedy_choice(const std::vector<double>& logits)
{
    if (logits.empty()) {
        throw std::invalid_argument("greedy_choice: no logits; expected one per character");
    }
    std::size_t best = 0;
    for (std::size_t j = 1; j < logits.size(); ++j) {
        if (logits[j] > logits[best]) {
            best = j;
        }
    }
    return best;
}

//> rule-probabilities
std::vector<double> rule_probabilities(const std::vector<double>& logits, double temperature, std::size_t top_k)
{
    // BEGIN SOLUTION rule_probabilities: chapter 16, Generating text
    const std::size_t v = logits.size();
    if (v == 0 || !(temperature > 0.0) || top_k == 0 || top_k > v) {
        throw std::invalid_argument(fmt::format(
            "rule_probabilities: {} logits, temperature {}, top-k {}; expected at least one "
            "logit, a temperature above 0 and k from 1 to {}", v, temperature, top_k, v));
    }
    // The k-th largest logit: every logit at or above it is kept, so a logit tied with it is kept too.
    std::vector<double> sorted = logits;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(top_k - 1), sorted.end(),
                     std::greater<>());
    const double kth = sorted[top_k - 1];
    const double largest = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(v, 0.0);
    double total = 0.0;
    for (std::size_t j = 0; j < v; ++j) {
        if (logits[j] >= kth) {
            p[j] = std::exp((logits[j] - largest) / temperature);  // at most e^0 = 1: no overflow
            total += p[j];
        }
    }
    for (double& entry : p) {
        entry /= total;
    }
    return p;
    // END SOLUTION
}
//< rule-probabilities

//> inverse-cdf
std::size_t inverse_cdf_draw(const std::vector<double>& probabilities, double uniform)
{
    // BEGIN SOLUTION inverse_cdf_draw: chapter 16, Generating text
    if (!(uniform >= 0.0 && uniform < 1.0)) {
        throw std::invalid_argument(
            fmt::format("inverse_cdf_draw: u = {}; expected a number in [0, 1)", uniform));
    }
    std::size_t last_possible = probabilities.size();
    double cumulative = 0.0;
    for (std::size_t j = 0; j < probabilities.size(); ++j) {
        if (probabilities[j] > 0.0) {
            last_possible = j;
        }
        cumulative += probabilities[j];
        if (probabilities[j] > 0.0 && uniform < cumulative) {
            return j;
        }
    }
    if (last_possible == probabilities.size()) {
        throw std::invalid_argument(
            "inverse_cdf_draw: no probability above 0; expected a distribution");
    }
    return last_possible;  // rounding left the last cumulative sum at or below u
    // END SOLUTION
}
//< inverse-cdf

//> sample-character
std::size_t sample_character(const std::vector<double>& logits, double temperature, std::size_t top_k,
                             double uniform)
{
    return inverse_cdf_draw(rule_probabilities(logits, temperature, top_k), uniform);
}
//< sample-character

}  // namespace sa
