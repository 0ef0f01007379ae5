#include "mixing.hpp"

#include "exercise.hpp"

namespace sa {

//> mix
Matrix mix(const Matrix& weights, const Matrix& values)
{
    // BEGIN SOLUTION mix: chapter 6, Mixing
    if (weights.cols() != values.rows()) {
        throw ShapeError(fmt::format("mix: A is {} but V is {}; V needs one row per key ({})", shape(weights),
                                     shape(values), weights.cols()));
    }
    // A: n×m, V: m×d_v -> O: n×d_v
    Matrix outputs(weights.rows(), values.cols());
    for (std::size_t query = 0; query < weights.rows(); ++query) {
        for (std::size_t key = 0; key < weights.cols(); ++key) {
            const double weight = weights(query, key);
            for (std::size_t d = 0; d < values.cols(); ++d) {
                outputs(query, d) += weight * values(key, d);
            }
        }
    }
    return outputs;
    // END SOLUTION
}
//< mix

//> mix-backward
MixGrads mix_backward(const Matrix& weights, const Matrix& values, const Matrix& d_outputs)
{
    // BEGIN SOLUTION mix_backward: chapter 11, Gradients
    if (weights.cols() != values.rows()) {
        throw ShapeError(fmt::format("mix_backward: A is {} but V is {}; V needs one row per key ({})",
                                     shape(weights), shape(values), weights.cols()));
    }
    if (d_outputs.rows() != weights.rows() || d_outputs.cols() != values.cols()) {
        throw ShapeError(fmt::format("mix_backward: dO is {} but O = A·V is {}×{}; dO needs the shape of the outputs",
                                     shape(d_outputs), weights.rows(), values.cols()));
    }
    MixGrads grads{Matrix(weights.rows(), weights.cols()), Matrix(values.rows(), values.cols())};
    for (std::size_t query = 0; query < weights.rows(); ++query) {
        for (std::size_t key = 0; key < weights.cols(); ++key) {
            for (std::size_t d = 0; d < values.cols(); ++d) {
                grads.d_weights(query, key) += d_outputs(query, d) * values(key, d);  // dA = dO·Vᵀ
                grads.d_values(key, d) += weights(query, key) * d_outputs(query, d);  // dV = Aᵀ·dO
            }
        }
    }
    return grads;
    // END SOLUTION
}
//< mix-backward

}  // namespace sa
