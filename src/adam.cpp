#include "adam.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "dense.hpp"
#include "exercise.hpp"

namespace sa {

AdamMoments zero_moments(const Matrix& parameter)
{
    return {Matrix(parameter.rows(), parameter.cols()), Matrix(parameter.rows(), parameter.cols())};
}

//> adam-step
void adam_step(Matrix& parameter, const Matrix& gradient, AdamMoments& moments, std::size_t step,
               const AdamSettings& settings)
{
    // BEGIN SOLUTION adam_step: chapter 14, Predicting the next character
    if (gradient.rows() != parameter.rows() || gradient.cols() != parameter.cols() ||
        moments.first.rows() != parameter.rows() || moments.first.cols() != parameter.cols() ||
        moments.second.rows() != parameter.rows() || moments.second.cols() != parameter.cols()) {
        throw ShapeError(fmt::format("adam_step: the parameter is {}, its gradient {}, m {} and v {}; all four must "
                                     "have the same shape", shape(parameter), shape(gradient),
                                     shape(moments.first), shape(moments.second)));
    }
    if (step == 0) {
        throw std::invalid_argument("adam_step: step 0; Adam counts its steps from 1");
    }
    const double t = static_cast<double>(step);
    const double correction1 = 1.0 - std::pow(settings.beta1, t);
    const double correction2 = 1.0 - std::pow(settings.beta2, t);
#pragma omp parallel for num_threads(static_cast<int>(product_threads())) if (product_threads() > 1) schedule(static)
    for (std::ptrdiff_t row = 0; row < static_cast<std::ptrdiff_t>(parameter.rows()); ++row) {
        const auto r = static_cast<std::size_t>(row);
        for (std::size_t c = 0; c < parameter.cols(); ++c) {
            const double g = gradient(r, c);
            double& m = moments.first(r, c);
            double& v = moments.second(r, c);
            m = settings.beta1 * m + (1.0 - settings.beta1) * g;
            v = settings.beta2 * v + (1.0 - settings.beta2) * g * g;
            const double m_hat = m / correction1;
            const double v_hat = v / correction2;
            parameter(r, c) -= settings.learning_rate * m_hat / (std::sqrt(v_hat) + settings.epsilon);
        }
    }
    // END SOLUTION
}
//< adam-step

double sparse_move_bound(const AdamSettings& settings, std::size_t step)
{
    if (step == 0) {
        throw std::invalid_argument("sparse_move_bound: step 0; Adam counts its steps from 1");
    }
    const double t = static_cast<double>(step);
    return (1.0 - settings.beta1) / (1.0 - std::pow(settings.beta1, t)) *
           std::sqrt(1.0 - std::pow(settings.beta2, t)) / std::sqrt(1.0 - settings.beta2);
}

double move_bound(const AdamSettings& settings, std::size_t step)
{
    const double sparse = sparse_move_bound(settings, step);
    const double ratio = settings.beta1 * settings.beta1 / settings.beta2;
    double sum = 0.0;
    double term = 1.0;
    for (std::size_t j = 0; j < step; ++j) {
        sum += term;
        term *= ratio;
    }
    return sparse * std::sqrt(sum);
}

}  // namespace sa
