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

}  // namespace sa
